//! Page payloads in `full` mode: the bytes of every programmed physical page and its spare area
//! (the OOB record, [`super::oob`]), moved by GC and dropped by erases. In `timing-only` mode
//! nothing is stored.
//!
//! Pages live in slots of a slab: large chunks (about [`CHUNK_BYTES`] each, allocated zeroed
//! in one call, so the allocator maps them fresh instead of clearing them page by page) cut
//! into slots of one page and its spare area. A program takes a slot from the free list (slots
//! of erased pages) or the next unused slot, growing the slab by a chunk when all are in use;
//! an erase returns its pages' slots. No allocation per page, nothing freed per erase.
//!
//! **Stale pages** (slot release): by default a page keeps its slot until its block is erased,
//! as on flash, so that a recovery scan after a power cut finds the stale copies too. A device
//! that no power trace will ever scan (`Ssd::set_release_stale_payloads`) releases a page's slot
//! as soon as the mapping invalidates the page (overwrite, TRIM, a dropped or switched
//! transactional shadow): the slab then follows the live set instead of every page programmed
//! since the last erase. A released page keeps its OOB record in the compact table
//! ([`super::oob::OobStore`]: LPA, sequence number, program completion), which is what the
//! simulated behaviour (erase ordering, write states) reads; its bytes and spare area are gone,
//! and reading them is a bug: [`Payload::read`] and [`Payload::oob`] panic on a released page.
//!
//! The CRC of the spare area's OOB record is computed when the record is read
//! ([`Payload::oob`]): a page's bytes never change between its program and its erase, so it is
//! the CRC the program would have stored, without hashing every page programmed.

use super::PageData;
use super::oob::{OOB_BYTES, PageOob, oob_crc};
use crate::address::{Lpa, Ppa};

/// Bytes the slab grows by at a time (rounded to whole slots, at least one).
pub(crate) const CHUNK_BYTES: usize = 4 << 20;

/// Marks a physical page with no slot (erased, or never programmed).
const NO_SLOT: u32 = u32::MAX;
/// Marks a programmed page whose slot was released (stale; see the module notes).
const RELEASED: u32 = u32::MAX - 1;

/// Bytes (data, then the spare area's OOB record) per physical page, or nothing.
#[derive(Debug)]
pub(crate) struct Payload {
    /// Slot of each physical page ([`NO_SLOT`]: none).
    slot_of_page: Vec<u32>,
    /// The slab's chunks, `slots_per_chunk` slots of `slot_bytes` each.
    chunks: Vec<Box<[u8]>>,
    /// Slots of erased pages, reused first.
    free_slots: Vec<u32>,
    /// Slots handed out from the chunks so far (the next unused one).
    slots_used: u32,
    /// Stale pages give their slot back when invalidated ([`Payload::release`]).
    release_stale: bool,
    /// Slots released that way since the store was made.
    released_total: u64,
    /// The last page released and its slot, until the next slot is taken.
    last_released: Option<(Ppa, u32)>,
    /// The page whose released slot the last slot taken was (its bytes still there: a write
    /// merging over that page finds them in place).
    taken_from: Option<Ppa>,
    /// Slots holding a write's bytes before its page is decided ([`Payload::stage`]); at
    /// most one per request in flight.
    staged: Vec<u32>,
    slots_per_chunk: usize,
    /// A page and its spare area.
    slot_bytes: usize,
    /// Slots the store may hold before host writes are refused ([`Payload::room_slots`];
    /// `u32::MAX`: no limit). A soft limit: programs already admitted (GC moves, buffered
    /// pages) still get their slots, so the store can pass it by the pages in flight.
    limit_slots: u32,
    /// Where the limit came from, for the refusal ([`Payload::check_room`]).
    limit_source: String,
    page_size_bytes: usize,
    enabled: bool,
}

impl Payload {
    pub fn new(enabled: bool, total_pages: usize, page_size_bytes: usize) -> Self {
        assert!(
            total_pages < RELEASED as usize,
            "payload store: {total_pages} pages do not fit a u32 slot number"
        );
        let slot_bytes = page_size_bytes + OOB_BYTES;
        Payload {
            slot_of_page: if enabled {
                vec![NO_SLOT; total_pages]
            } else {
                Vec::new()
            },
            chunks: Vec::new(),
            free_slots: Vec::new(),
            slots_used: 0,
            release_stale: false,
            released_total: 0,
            last_released: None,
            taken_from: None,
            staged: Vec::new(),
            slots_per_chunk: (CHUNK_BYTES / slot_bytes).max(1),
            slot_bytes,
            limit_slots: u32::MAX,
            limit_source: String::new(),
            page_size_bytes,
            enabled,
        }
    }
    /// Whether the store has a limit ([`Payload::set_limit_bytes`]).
    #[inline]
    pub fn limited(&self) -> bool {
        self.enabled && self.limit_slots != u32::MAX
    }
    /// Limits the store to `bytes` of slots ([`Payload::room_slots`]); `source` says where
    /// the limit came from (a memory budget's description).
    pub fn set_limit_bytes(&mut self, bytes: u64, source: String) {
        self.limit_slots = (bytes / self.slot_bytes as u64).min(u64::from(u32::MAX - 1)) as u32;
        self.limit_source = source;
    }
    /// Whether `pages` more pages fit under the limit; the refusal says how much is stored
    /// and what frees room.
    pub fn check_room(&self, pages: u64) -> Result<(), String> {
        if pages <= self.room_slots() {
            return Ok(());
        }
        let held = u64::from(self.slots_used) - self.free_slots.len() as u64;
        let release = if self.release_stale {
            "trim data the host no longer needs"
        } else {
            "stale pages keep their bytes until their block is erased on this device"
        };
        Err(format!(
            "page payloads reached their share of the memory budget: {held} pages of {} bytes stored, \
             {} more fit and the write needs {pages}; {release}, use ftl.payload = \"timing-only\" \
             or raise the budget ({})",
            self.page_size_bytes,
            self.room_slots(),
            self.limit_source
        ))
    }
    /// Slots still available under the limit: free slots plus unused ones the limit allows
    /// (`u64::MAX` without a limit or in timing-only mode).
    pub fn room_slots(&self) -> u64 {
        if !self.enabled || self.limit_slots == u32::MAX {
            return u64::MAX;
        }
        self.free_slots.len() as u64 + u64::from(self.limit_slots.saturating_sub(self.slots_used))
    }
    /// Bytes the slab has allocated so far (it grows by chunks as pages are first written;
    /// slots freed by erases and released stale pages are reused, not returned).
    pub fn allocated_bytes(&self) -> u64 {
        (self.chunks.len() * self.slots_per_chunk * self.slot_bytes) as u64
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// Turns slot release for stale pages on or off (pages released before stay released).
    /// (Timing-only mode keeps no slots: it stays off.)
    pub fn set_release_stale(&mut self, on: bool) {
        self.release_stale = on && self.enabled;
    }
    pub fn releases_stale(&self) -> bool {
        self.release_stale
    }
    /// Slots released for stale pages since the store was made (0: every programmed page not
    /// erased since still has its bytes).
    pub fn released_total(&self) -> u64 {
        self.released_total
    }
    /// Slots staged and not yet taken by a program ([`Payload::stage`]).
    #[cfg(test)]
    pub fn staged_count(&self) -> usize {
        self.staged.len()
    }
    /// Slots holding a page's bytes now (handed out and not back on the free list).
    #[cfg(test)]
    pub fn slots_in_use(&self) -> u64 {
        u64::from(self.slots_used) - self.free_slots.len() as u64
    }
    /// Stale page `ppa` was invalidated by the mapping: with release on (full mode), its slot
    /// goes back to the free list at once instead of at its block's erase.
    #[inline]
    pub fn release(&mut self, ppa: Ppa) {
        if self.release_stale {
            self.release_slot(ppa);
        }
    }
    #[inline(never)]
    fn release_slot(&mut self, ppa: Ppa) {
        let at = &mut self.slot_of_page[ppa.index()];
        assert!(
            *at < RELEASED,
            "payload store: releasing ppa {ppa}, which holds no slot"
        );
        self.free_slots.push(*at);
        self.last_released = Some((ppa, *at));
        *at = RELEASED;
        self.released_total += 1;
    }
    /// The panic for a read of a released page's bytes or spare area (a recovery scan or a
    /// read of a stale page on a device that releases them: a bug, see the module notes).
    #[cold]
    #[inline(never)]
    fn released(ppa: Ppa) -> ! {
        panic!(
            "payload store: ppa {ppa} is stale and its bytes were released (Ssd::set_release_stale_payloads); nothing may read them"
        )
    }
    /// Where `slot` lives: its chunk, and its first byte in that chunk.
    #[inline]
    fn place(&self, slot: u32) -> (usize, usize) {
        let slot = slot as usize;
        (
            slot / self.slots_per_chunk,
            (slot % self.slots_per_chunk) * self.slot_bytes,
        )
    }
    /// Bytes and spare area of `slot`.
    #[inline]
    fn slot(&self, slot: u32) -> &[u8] {
        let (chunk, at) = self.place(slot);
        &self.chunks[chunk][at..at + self.slot_bytes]
    }
    #[inline]
    fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let (chunk, at) = self.place(slot);
        &mut self.chunks[chunk][at..at + self.slot_bytes]
    }
    /// A free slot for a page about to be programmed at `ppa` (its content is stale: the
    /// caller overwrites all of it).
    #[inline]
    fn take_slot(&mut self, ppa: Ppa) -> u32 {
        debug_assert_eq!(
            self.slot_of_page[ppa.index()],
            NO_SLOT,
            "payload written twice at ppa {ppa}"
        );
        let slot = self.take_free_slot();
        self.slot_of_page[ppa.index()] = slot;
        slot
    }
    /// A free slot (erased or released pages' first, else the next unused one).
    #[inline]
    fn take_free_slot(&mut self) -> u32 {
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                if self.slots_used as usize == self.chunks.len() * self.slots_per_chunk {
                    self.grow();
                }
                self.slots_used += 1;
                self.slots_used - 1
            }
        };
        self.taken_from = match self.last_released.take() {
            Some((page, s)) if s == slot => Some(page),
            _ => None,
        };
        slot
    }
    /// Copies one page `data` of a write whose page is decided later (a controller's
    /// processing time away) into a slot of its own; the program then takes that slot as it
    /// is ([`PageData::Staged`]), so the bytes are copied once, not into a request buffer and
    /// again into the store. Full mode only.
    pub fn stage(&mut self, data: &[u8]) -> u32 {
        assert!(self.enabled, "payload store: staging in timing-only mode");
        assert_eq!(
            data.len(),
            self.page_size_bytes,
            "payload store: staging a partial page"
        );
        let slot = self.take_free_slot();
        self.slot_mut(slot)[..data.len()].copy_from_slice(data);
        self.staged.push(slot);
        slot
    }
    /// Gives back staged `slot` if no program took it (a write that failed before its
    /// program).
    pub fn unstage(&mut self, slot: u32) {
        if let Some(i) = self.staged.iter().position(|&s| s == slot) {
            self.staged.swap_remove(i);
            self.free_slots.push(slot);
        }
    }
    /// Binds staged `slot` to `ppa` (its program).
    fn bind_staged(&mut self, ppa: Ppa, slot: u32) {
        let i = self
            .staged
            .iter()
            .position(|&s| s == slot)
            .unwrap_or_else(|| panic!("payload store: slot {slot} is not staged (ppa {ppa})"));
        self.staged.swap_remove(i);
        let at = &mut self.slot_of_page[ppa.index()];
        assert_eq!(*at, NO_SLOT, "payload written twice at ppa {ppa}");
        *at = slot;
    }
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        // zeroed in one allocation: a fresh mapping, cleared by the OS as it is first touched
        self.chunks
            .push(vec![0u8; self.slots_per_chunk * self.slot_bytes].into_boxed_slice());
    }
    /// Stores `data` at `ppa`, with its OOB record (LPA, sequence number; the CRC is computed
    /// when read) in the spare area. A merge ([`PageData::Over`]) starts from the bytes of
    /// `base` (zeros when `None`): copied from its slot, or none copied when `base` is the
    /// page whose slot was just released and is the one taken now (an overwrite in the same
    /// write: the old bytes are already in place, only the new ones are written).
    #[inline]
    pub fn write(
        &mut self,
        ppa: Ppa,
        data: PageData<'_>,
        base: Option<Ppa>,
        lpa: Option<Lpa>,
        sequence: u64,
    ) {
        if self.enabled {
            self.write_full(ppa, data, base, lpa, sequence);
        }
    }

    #[inline(never)]
    fn write_full(
        &mut self,
        ppa: Ppa,
        data: PageData<'_>,
        base: Option<Ppa>,
        lpa: Option<Lpa>,
        sequence: u64,
    ) {
        let size = self.page_size_bytes;
        let slot = match data {
            PageData::Staged(slot) => {
                self.bind_staged(ppa, slot);
                slot
            }
            _ => self.take_slot(ppa),
        };
        match data {
            PageData::Staged(_) => {}
            PageData::Page(d) => {
                debug_assert_eq!(d.len(), size);
                self.slot_mut(slot)[..size].copy_from_slice(d);
            }
            PageData::Zeros => self.slot_mut(slot)[..size].fill(0),
            PageData::Over { start, bytes } => {
                self.fill_base(slot, base);
                let start = start as usize;
                assert!(start + bytes.len() <= size, "a merge past the page's end");
                self.slot_mut(slot)[start..start + bytes.len()].copy_from_slice(bytes);
            }
        }
        let spare = &mut self.slot_mut(slot)[size..];
        let oob = PageOob {
            lpa,
            sequence,
            crc: 0,
        };
        spare.copy_from_slice(&oob.to_bytes());
    }
    /// Puts the bytes of page `base` (zeros: `None`) into `slot`, just taken.
    fn fill_base(&mut self, slot: u32, base: Option<Ppa>) {
        let size = self.page_size_bytes;
        let Some(base) = base else {
            self.slot_mut(slot)[..size].fill(0);
            return;
        };
        match self.slot_of_page[base.index()] {
            RELEASED => assert_eq!(
                self.taken_from,
                Some(base),
                "payload store: merging over ppa {base}, whose bytes were released"
            ),
            NO_SLOT => panic!("payload store: merging over ppa {base}, which holds no bytes"),
            from => self.copy_slot(from, slot, size),
        }
    }
    /// Copies the first `n` bytes of slot `from` to slot `to`.
    fn copy_slot(&mut self, from: u32, to: u32, n: usize) {
        let (from_chunk, from_at) = self.place(from);
        let (to_chunk, to_at) = self.place(to);
        if from_chunk == to_chunk {
            self.chunks[to_chunk].copy_within(from_at..from_at + n, to_at);
        } else {
            let (a, b) = if from_chunk < to_chunk {
                let (lo, hi) = self.chunks.split_at_mut(to_chunk);
                (
                    &lo[from_chunk][from_at..from_at + n],
                    &mut hi[0][to_at..to_at + n],
                )
            } else {
                let (lo, hi) = self.chunks.split_at_mut(from_chunk);
                (
                    &hi[0][from_at..from_at + n],
                    &mut lo[to_chunk][to_at..to_at + n],
                )
            };
            b.copy_from_slice(a);
        }
    }
    pub fn read(&self, ppa: Ppa) -> Option<&[u8]> {
        if !self.enabled {
            return None;
        }
        match self.slot_of_page[ppa.index()] {
            NO_SLOT => None,
            RELEASED => Self::released(ppa),
            slot => Some(&self.slot(slot)[..self.page_size_bytes]),
        }
    }
    /// The OOB record in the spare area of `ppa` (full mode, programmed pages), with the CRC
    /// of its LPA, sequence number and the page's bytes.
    pub fn oob(&self, ppa: Ppa) -> Option<PageOob> {
        let slot = *self.slot_of_page.get(ppa.index())?;
        match slot {
            NO_SLOT => return None,
            RELEASED => Self::released(ppa),
            _ => {}
        }
        let (bytes, spare) = self.slot(slot).split_at(self.page_size_bytes);
        let mut oob = PageOob::from_bytes(spare.try_into().expect("spare area"));
        oob.crc = oob_crc(oob.lpa, oob.sequence, Some(bytes));
        Some(oob)
    }
    /// Copies the bytes and spare area of `source` to `target` (a GC move). The source keeps
    /// them until its block is erased, as on flash: a recovery scan after a power cut between
    /// the copy and the erase finds both. A store that releases stale pages hands the source's
    /// slot to `target` instead (no copy; the source is released).
    #[inline]
    pub fn relocate(&mut self, source: Ppa, target: Ppa) {
        if self.enabled {
            self.relocate_full(source, target);
        }
    }

    #[inline(never)]
    fn relocate_full(&mut self, source: Ppa, target: Ppa) {
        let from = self.slot_of_page[source.index()];
        assert!(
            from < RELEASED,
            "moving a page with no payload (ppa {source})"
        );
        if self.release_stale {
            // nothing reads a stale page on a store that releases them (no recovery scan):
            // the bytes stay where they are and the slot changes page (no copy); the source is
            // released, so its erase frees nothing twice
            debug_assert_eq!(
                self.slot_of_page[target.index()],
                NO_SLOT,
                "payload written twice at ppa {target}"
            );
            self.slot_of_page[target.index()] = from;
            self.slot_of_page[source.index()] = RELEASED;
            self.released_total += 1;
            return;
        }
        let to = self.take_slot(target);
        self.copy_slot(from, to, self.slot_bytes);
    }
    /// Drops the pages of the block whose first page is `first` (their slots are reused).
    pub fn clear_block(&mut self, first: Ppa, pages_per_block: u32) {
        if !self.enabled {
            return;
        }
        let first = first.index();
        for slot in &mut self.slot_of_page[first..first + pages_per_block as usize] {
            if *slot < RELEASED {
                self.free_slots.push(*slot);
            }
            *slot = NO_SLOT;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 64;

    /// A store of `pages` pages whose slab grows by three slots at a time.
    fn small_store(pages: usize) -> Payload {
        let mut p = Payload::new(true, pages, PAGE);
        p.slots_per_chunk = 3;
        p
    }
    fn page(fill: u8) -> Vec<u8> {
        (0..PAGE).map(|i| fill.wrapping_add(i as u8)).collect()
    }

    #[test]
    fn pages_read_back_across_chunks_with_their_oob_and_crc() {
        let mut p = small_store(16);
        for i in 0..10u32 {
            p.write(
                Ppa(i),
                PageData::Page(&page(i as u8)),
                None,
                Some(Lpa(100 + i)),
                u64::from(i) + 1,
            );
        }
        p.write(Ppa(12), PageData::Zeros, None, None, 11);
        assert_eq!(p.chunks.len(), 4, "11 slots in chunks of 3");
        for i in 0..10u32 {
            assert_eq!(p.read(Ppa(i)), Some(&page(i as u8)[..]));
            let oob = p.oob(Ppa(i)).unwrap();
            assert_eq!(
                (oob.lpa, oob.sequence),
                (Some(Lpa(100 + i)), u64::from(i) + 1)
            );
            assert_eq!(
                oob.crc,
                oob_crc(oob.lpa, oob.sequence, Some(&page(i as u8)))
            );
        }
        assert_eq!(p.read(Ppa(12)), Some(&[0u8; PAGE][..]));
        assert_eq!(
            p.oob(Ppa(12)).unwrap().crc,
            oob_crc(None, 11, Some(&[0u8; PAGE]))
        );
        assert_eq!((p.read(Ppa(10)), p.oob(Ppa(10))), (None, None));
        assert_eq!(p.oob(Ppa(99)), None, "past the device");
    }

    #[test]
    fn relocation_copies_within_and_across_chunks_and_keeps_the_source() {
        let mut p = small_store(16);
        p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(7)), 5);
        p.write(Ppa(1), PageData::Page(&page(2)), None, Some(Lpa(8)), 6);
        p.relocate(Ppa(0), Ppa(2)); // same chunk
        p.relocate(Ppa(1), Ppa(3)); // next chunk, forward
        p.relocate(Ppa(3), Ppa(4));
        p.clear_block(Ppa(0), 2);
        p.write(Ppa(5), PageData::Page(&page(3)), None, Some(Lpa(9)), 7); // reuses a freed slot of chunk 0
        p.relocate(Ppa(4), Ppa(6)); // back into chunk 0
        assert_eq!(p.read(Ppa(2)), Some(&page(1)[..]));
        assert_eq!(
            p.read(Ppa(4)),
            Some(&page(2)[..]),
            "the source keeps its copy"
        );
        assert_eq!(p.read(Ppa(6)), Some(&page(2)[..]));
        assert_eq!(
            p.oob(Ppa(6)),
            p.oob(Ppa(1 + 2)),
            "the OOB moves with the data"
        );
        assert_eq!(p.read(Ppa(5)), Some(&page(3)[..]));
        assert_eq!(
            p.chunks.len(),
            2,
            "erased slots are reused before the slab grows"
        );
    }

    #[test]
    fn an_erase_frees_the_block_and_the_slots_are_reused() {
        let mut p = small_store(8);
        for round in 0..5u8 {
            for i in 0..4u32 {
                p.write(Ppa(i), PageData::Page(&page(round)), None, Some(Lpa(i)), 1);
            }
            assert!(p.read(Ppa(3)).is_some());
            p.clear_block(Ppa(0), 4);
            assert!((0..4).all(|i| p.read(Ppa(i)).is_none()));
        }
        assert_eq!((p.slots_used, p.chunks.len()), (4, 2), "four slots, ever");
    }

    #[test]
    fn a_released_slot_is_reused_and_its_erase_frees_nothing_twice() {
        let mut p = small_store(8);
        p.set_release_stale(true);
        p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(0)), 1);
        p.write(Ppa(1), PageData::Page(&page(2)), None, Some(Lpa(0)), 2);
        p.release(Ppa(0));
        assert_eq!((p.slots_in_use(), p.released_total()), (1, 1));
        p.write(Ppa(2), PageData::Page(&page(3)), None, Some(Lpa(0)), 3);
        assert_eq!(p.slots_used, 2, "the released slot was reused");
        p.release(Ppa(1));
        p.clear_block(Ppa(0), 4);
        assert_eq!(p.free_slots.len(), 2, "each slot once on the free list");
        assert_eq!(p.slots_in_use(), 0);
        assert_eq!((p.read(Ppa(0)), p.oob(Ppa(0))), (None, None), "erased");
        // off: a stale page keeps its slot until the erase
        p.set_release_stale(false);
        p.write(Ppa(4), PageData::Page(&page(4)), None, Some(Lpa(1)), 4);
        p.release(Ppa(4));
        assert_eq!(p.read(Ppa(4)), Some(&page(4)[..]));
    }

    /// A merge starts from the base page's bytes: copied from a live base, in place when the
    /// base was just released and its slot is the one taken, zeros without a base.
    #[test]
    fn merges_start_from_the_base_page() {
        let over = |bytes: &'static [u8]| PageData::Over { start: 4, bytes };
        let expect = |base: &[u8]| {
            let mut e = base.to_vec();
            e[4..7].copy_from_slice(&[9, 9, 9]);
            e
        };
        for release in [false, true] {
            let mut p = small_store(8);
            p.set_release_stale(release);
            p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(0)), 1);
            // an overwrite: the mapping invalidates the base, then programs the merge
            p.release(Ppa(0));
            p.write(Ppa(1), over(&[9, 9, 9]), Some(Ppa(0)), Some(Lpa(0)), 2);
            assert_eq!(p.read(Ppa(1)), Some(&expect(&page(1))[..]));
            assert_eq!(p.slots_used, if release { 1 } else { 2 }, "in place");
            // a live base (a transaction's page over the committed one): copied
            p.write(Ppa(2), over(&[9, 9, 9]), Some(Ppa(1)), Some(Lpa(0)), 3);
            assert_eq!(p.read(Ppa(2)), p.read(Ppa(1)));
            p.write(Ppa(3), over(&[9, 9, 9]), None, Some(Lpa(1)), 4);
            assert_eq!(p.read(Ppa(3)), Some(&expect(&[0; PAGE])[..]));
            let oob = p.oob(Ppa(3)).unwrap();
            assert_eq!((oob.lpa, oob.sequence), (Some(Lpa(1)), 4));
        }
    }

    #[test]
    #[should_panic(expected = "whose bytes were released")]
    fn a_merge_over_a_released_page_whose_slot_went_elsewhere_panics() {
        let mut p = small_store(8);
        p.set_release_stale(true);
        p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(0)), 1);
        p.release(Ppa(0));
        p.write(Ppa(1), PageData::Page(&page(2)), None, Some(Lpa(1)), 2); // took the slot
        let over = PageData::Over {
            start: 0,
            bytes: &[1],
        };
        p.write(Ppa(2), over, Some(Ppa(0)), Some(Lpa(0)), 3);
    }

    /// A staged page is copied once and bound by its program; an unused one goes back.
    #[test]
    fn a_staged_slot_is_taken_by_its_program_or_given_back() {
        let mut p = small_store(8);
        let a = p.stage(&page(5));
        let b = p.stage(&page(6));
        assert_eq!((p.staged_count(), p.slots_used), (2, 2));
        p.write(Ppa(3), PageData::Staged(a), None, Some(Lpa(9)), 4);
        assert_eq!(p.read(Ppa(3)), Some(&page(5)[..]));
        let oob = p.oob(Ppa(3)).unwrap();
        assert_eq!((oob.lpa, oob.sequence), (Some(Lpa(9)), 4));
        p.unstage(b);
        p.unstage(a); // bound already: nothing happens
        assert_eq!((p.staged_count(), p.slots_in_use()), (0, 1));
        p.write(Ppa(4), PageData::Page(&page(7)), None, Some(Lpa(1)), 5);
        assert_eq!(p.slots_used, 2, "the slot given back was reused");
    }

    #[test]
    #[should_panic(expected = "is not staged")]
    fn a_slot_staged_once_is_bound_once() {
        let mut p = small_store(8);
        let a = p.stage(&page(1));
        p.write(Ppa(0), PageData::Staged(a), None, Some(Lpa(0)), 1);
        p.write(Ppa(1), PageData::Staged(a), None, Some(Lpa(0)), 2);
    }

    /// With release on, a GC move hands the slot over: no new slot, the source released, and
    /// the erase of the source's block frees nothing twice.
    #[test]
    fn a_move_on_a_releasing_store_hands_the_slot_over() {
        let mut p = small_store(8);
        p.set_release_stale(true);
        p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(7)), 1);
        p.relocate(Ppa(0), Ppa(5));
        assert_eq!(p.read(Ppa(5)), Some(&page(1)[..]));
        assert_eq!(p.oob(Ppa(5)).unwrap().lpa, Some(Lpa(7)));
        assert_eq!((p.slots_used, p.released_total()), (1, 1));
        p.clear_block(Ppa(0), 4);
        assert_eq!(p.slots_in_use(), 1, "the moved page keeps its slot");
        p.clear_block(Ppa(4), 4);
        assert_eq!((p.slots_in_use(), p.free_slots.len()), (0, 1));
    }

    #[test]
    #[should_panic(expected = "stale and its bytes were released")]
    fn a_moved_source_is_not_read_on_a_releasing_store() {
        let mut p = small_store(8);
        p.set_release_stale(true);
        p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(7)), 1);
        p.relocate(Ppa(0), Ppa(5));
        let _ = p.read(Ppa(0));
    }

    #[test]
    #[should_panic(expected = "stale and its bytes were released")]
    fn reading_a_released_page_panics() {
        let mut p = small_store(8);
        p.set_release_stale(true);
        p.write(Ppa(0), PageData::Page(&page(1)), None, Some(Lpa(0)), 1);
        p.release(Ppa(0));
        let _ = p.oob(Ppa(0));
    }

    #[test]
    fn timing_only_stores_nothing() {
        let mut p = Payload::new(false, 8, PAGE);
        p.set_release_stale(true);
        assert!(!p.releases_stale());
        p.write(Ppa(0), PageData::Page(&page(0)), None, None, 1);
        assert_eq!((p.read(Ppa(0)), p.oob(Ppa(0))), (None, None));
        assert!(p.chunks.is_empty());
    }
}
