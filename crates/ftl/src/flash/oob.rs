//! Out-of-band (OOB) metadata of every programmed page, and which programs have completed.
//!
//! Each program writes, next to the page's data, the LPA it holds (`None` for a metadata page),
//! the write's sequence number and a CRC-32 of both and the data. The sequence number names the
//! host write (assigned when the FTL decides it, in decision order, from 1): a GC move, merge or
//! wear-leveling copy keeps the OOB of the page it copies, as a copyback copies the spare area
//! with the data. Recovery after a power cut rebuilds the mapping from the OOB alone: for each
//! LPA, the programmed page with the highest sequence number (copies of one write are
//! identical).
//!
//! Kept compactly for every physical page in both payload modes (an LPA and a sequence number,
//! each in 32 bits: 8 bytes per page; the sequence column widens to 64 bits the first time a
//! value does not fit, after 2^31 host writes, so no run is limited by it), with the number of
//! the op that programs a page only while its block has a program in flight
//! ([`super::tickets`]); in `full` payload mode the
//! 16-byte record with its CRC is also stored in the page's spare area by
//! [`super::payload::Payload`]. Nothing else is allocated after construction.
//!
//! A program is *durable* when the chip model has completed it. A completion carries a tag, not
//! an address; but a die runs its ops in submission order, so numbering each die's ops as they
//! are handed to the chip model and counting its completions says which have completed: a page
//! is durable when the number of the op that programmed it is at most its die's completion
//! count. That costs a store per submitted program and an increment per completion.

use super::tickets::{BlockTickets, NOT_SUBMITTED};
use crate::address::{BlockId, DieId, Lpa, Ppa};

/// Bytes of the OOB record in a page's spare area (`full` payload mode): LPA (4, little-endian,
/// `u32::MAX` for none), sequence number (8), CRC-32 (4).
pub const OOB_BYTES: usize = 16;

/// Bit of the stored sequence number that marks a copy whose data was already durable on its
/// source page when the copy was decided (the source is erased only after the copy completes).
const DURABLE_SOURCE_BIT: u64 = 1 << 63;

/// The OOB record of one programmed page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageOob {
    /// The logical page the data belongs to; `None` for a metadata page.
    pub lpa: Option<Lpa>,
    /// Sequence number of the host write (from 1, in the order the FTL decided the writes).
    pub sequence: u64,
    /// CRC-32 (IEEE) of the LPA, the sequence number and the page's data ([`oob_crc`]).
    pub crc: u32,
}

impl PageOob {
    /// The 16-byte spare-area form.
    pub fn to_bytes(&self) -> [u8; OOB_BYTES] {
        let mut out = [0u8; OOB_BYTES];
        out[0..4].copy_from_slice(&self.lpa.unwrap_or(Lpa::NONE).0.to_le_bytes());
        out[4..12].copy_from_slice(&self.sequence.to_le_bytes());
        out[12..16].copy_from_slice(&self.crc.to_le_bytes());
        out
    }

    /// Parses the spare-area form.
    pub fn from_bytes(bytes: &[u8; OOB_BYTES]) -> Self {
        let lpa = Lpa(u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")));
        PageOob {
            lpa: lpa.get(),
            sequence: u64::from_le_bytes(bytes[4..12].try_into().expect("8 bytes")),
            crc: u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")),
        }
    }
}

/// CRC-32 of an OOB record: over the LPA and sequence number (little-endian, as stored) and the
/// page's data (`None` in timing-only mode, where no data exists).
pub fn oob_crc(lpa: Option<Lpa>, sequence: u64, data: Option<&[u8]>) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&lpa.unwrap_or(Lpa::NONE).0.to_le_bytes());
    h.update(&sequence.to_le_bytes());
    if let Some(d) = data {
        h.update(d);
    }
    h.finalize()
}

/// Compact OOB of every physical page, and which programs have completed.
#[derive(Debug)]
pub(crate) struct OobStore {
    pages_per_block: u32,
    pages_per_die: u32,
    /// `log2(pages_per_die)` when it is a power of two (the die of a page is then a shift).
    die_shift: Option<u32>,
    /// LPA of each programmed page (`Lpa::NONE` for a metadata page; stale on erased pages,
    /// whose sequence number is 0). Raw `u32`s, zero-initialised, so that building a large
    /// device writes nothing here.
    lpa: Vec<u32>,
    /// Sequence number of each programmed page (0: erased), with [`DURABLE_SOURCE_BIT`].
    sequence: Column<SequenceCode>,
    /// Per die, ops handed to the chip model / completed by it (a die runs its ops in
    /// submission order, so op `t` has completed when `t <= completed`).
    submitted: Vec<u64>,
    completed: Vec<u64>,
    /// Per block, programs into it decided but not yet handed to the chip model, and the
    /// largest ticket of those handed over: when the first is 0 and the second at most its
    /// die's completion count, every program the block ever received has completed. A small
    /// array (per block, not per page) that answers most durability questions of the erase
    /// ordering without touching the per-page tickets ([`OobStore::is_durable`]). Per page,
    /// the die-local number of the op that programs it ([`super::tickets::DONE`]: completed
    /// without an op, [`NOT_SUBMITTED`]: decided, still in the controller's queue), kept only
    /// for blocks with a program in flight ([`BlockTickets`]).
    tickets: BlockTickets,
}

/// How a column keeps its `u64` values in 32 bits while they fit.
trait Narrow {
    /// The 32-bit form of `value`, if it has one.
    fn narrow(value: u64) -> Option<u32>;
    fn widen(value: u32) -> u64;
}

/// Sequence numbers: the number in the low 31 bits, [`DURABLE_SOURCE_BIT`] in bit 31.
#[derive(Debug)]
struct SequenceCode;

impl Narrow for SequenceCode {
    #[inline(always)]
    fn narrow(value: u64) -> Option<u32> {
        let number = value & !DURABLE_SOURCE_BIT;
        (number < 1 << 31).then_some(number as u32 | ((value >> 32) as u32 & (1 << 31)))
    }
    #[inline(always)]
    fn widen(value: u32) -> u64 {
        u64::from(value & !(1 << 31)) | (u64::from(value >> 31) << 63)
    }
}

/// A per-page column of `u64` values stored in 32 bits each until one does not fit; then the
/// whole column is widened to 64 bits (once), so no value is ever limited.
#[derive(Debug)]
enum Column<C: Narrow> {
    Narrow(Vec<u32>, std::marker::PhantomData<C>),
    Wide(Vec<u64>),
}

impl<C: Narrow> Column<C> {
    /// `len` values of 0 (zero-initialised: building a large device writes nothing here).
    fn zeros(len: usize) -> Self {
        debug_assert_eq!(C::narrow(0), Some(0));
        Column::Narrow(vec![0; len], std::marker::PhantomData)
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u64 {
        match self {
            Column::Narrow(v, _) => C::widen(v[i]),
            Column::Wide(v) => v[i],
        }
    }

    #[inline(always)]
    fn set(&mut self, i: usize, value: u64) {
        match self {
            Column::Narrow(v, _) => match C::narrow(value) {
                Some(n) => v[i] = n,
                None => self.widen_and_set(i, value),
            },
            Column::Wide(v) => v[i] = value,
        }
    }

    /// Widens the column to 64 bits (the first value that does not fit) and sets it.
    #[cold]
    #[inline(never)]
    fn widen_and_set(&mut self, i: usize, value: u64) {
        if let Column::Narrow(v, _) = self {
            let wide = v.iter().map(|n| C::widen(*n)).collect();
            *self = Column::Wide(wide);
        }
        self.set(i, value);
    }

    /// Sets `range` to 0.
    fn clear(&mut self, range: std::ops::Range<usize>) {
        match self {
            Column::Narrow(v, _) => v[range].fill(0),
            Column::Wide(v) => v[range].fill(0),
        }
    }
}

/// The die of page `ppa` (`die_shift`: `log2(pages_per_die)` when it is a power of two).
#[inline(always)]
fn die_index(ppa: u32, die_shift: Option<u32>, pages_per_die: u32) -> usize {
    (match die_shift {
        Some(shift) => ppa >> shift,
        None => ppa / pages_per_die,
    }) as usize
}

impl OobStore {
    pub fn new(physical_pages: u32, pages_per_block: u32, pages_per_die: u32) -> Self {
        let dies = (physical_pages / pages_per_die) as usize;
        OobStore {
            pages_per_block,
            pages_per_die,
            die_shift: pages_per_die
                .is_power_of_two()
                .then(|| pages_per_die.trailing_zeros()),
            lpa: vec![0; physical_pages as usize],
            sequence: Column::zeros(physical_pages as usize),
            submitted: vec![0; dies],
            completed: vec![0; dies],
            tickets: BlockTickets::new(
                (physical_pages / pages_per_block) as usize,
                pages_per_block,
            ),
        }
    }

    /// Records the OOB of a host write programmed at `ppa` (`done`: no op will be timed).
    #[inline]
    pub fn program(&mut self, ppa: Ppa, lpa: Lpa, sequence: u64, done: bool) {
        debug_assert_eq!(
            self.sequence.get(ppa.index()),
            0,
            "ppa {ppa} programmed twice"
        );
        debug_assert!(sequence > 0 && sequence < DURABLE_SOURCE_BIT);
        self.lpa[ppa.index()] = lpa.0;
        self.sequence.set(ppa.index(), sequence);
        self.decided(ppa, done);
    }

    /// One more (partial-page) program of `ppa`, already programmed since its erase (an
    /// In-Page Logging log page): its OOB stays, its program is pending again.
    pub fn reprogram(&mut self, ppa: Ppa, done: bool) {
        debug_assert_ne!(
            self.sequence.get(ppa.index()),
            0,
            "ppa {ppa} not programmed"
        );
        self.decided(ppa, done);
    }

    /// Ticket of a page just decided (`done`: no op will be timed).
    #[inline(always)]
    fn decided(&mut self, ppa: Ppa, done: bool) {
        let (block, offset) = self.block_and_offset(ppa);
        let (completed, die_shift) = (&self.completed, self.die_shift);
        let (pages_per_die, pages_per_block) = (self.pages_per_die, self.pages_per_block);
        // (a block's programs are all done: the test of `block_programs_done`)
        let is_done = |b: usize, unsubmitted: u32, last: u64| {
            let die = die_index(b as u32 * pages_per_block, die_shift, pages_per_die);
            unsubmitted == 0 && last <= completed[die]
        };
        self.tickets.decided(block, offset, done, is_done);
    }

    /// `(block, page offset in it)` of `ppa`.
    #[inline(always)]
    fn block_and_offset(&self, ppa: Ppa) -> (usize, u32) {
        let block = ppa.0 / self.pages_per_block;
        (block as usize, ppa.0 - block * self.pages_per_block)
    }

    /// Copies the OOB of `source` to `target` (GC, merge or wear-leveling move).
    #[inline]
    pub fn copy(&mut self, source: Ppa, target: Ppa, done: bool) {
        debug_assert_eq!(
            self.sequence.get(target.index()),
            0,
            "ppa {target} programmed twice"
        );
        // (a functional copy is durable by itself: no need to look at the source)
        let durable_source = !done && self.is_durable(source);
        let flag = if durable_source {
            DURABLE_SOURCE_BIT
        } else {
            0
        };
        self.lpa[target.index()] = self.lpa[source.index()];
        self.sequence
            .set(target.index(), self.sequence.get(source.index()) | flag);
        self.decided(target, done);
    }

    /// Forgets the OOB of the pages of `block` (erase).
    pub fn erase(&mut self, block: BlockId) {
        let first = block.index() * self.pages_per_block as usize;
        self.sequence
            .clear(first..first + self.pages_per_block as usize);
    }

    /// An op was handed to the chip model on `die`; `programmed` is the page it programs
    /// (`Ppa::NONE` for reads and erases).
    #[inline]
    pub fn submitted(&mut self, die: DieId, programmed: Ppa) {
        let count = &mut self.submitted[die.index()];
        *count += 1;
        if !programmed.is_none() {
            let ticket = *count;
            let (block, offset) = self.block_and_offset(programmed);
            self.tickets.submitted(block, offset, ticket);
        }
    }

    /// The chip model completed the oldest op in flight on `die`.
    #[inline]
    pub fn completed(&mut self, die: DieId) {
        self.completed[die.index()] += 1;
        debug_assert!(self.completed[die.index()] <= self.submitted[die.index()]);
    }

    /// Ops of `die` the chip model has completed since the device was built.
    pub fn completed_ops(&self, die: usize) -> u64 {
        self.completed[die]
    }

    /// `(lpa, sequence)` of a programmed page; `None` when erased.
    pub fn get(&self, ppa: Ppa) -> Option<(Option<Lpa>, u64)> {
        let sequence = self.sequence.get(ppa.index()) & !DURABLE_SOURCE_BIT;
        (sequence != 0).then(|| (Lpa(self.lpa[ppa.index()]).get(), sequence))
    }

    /// The die of `ppa`.
    #[inline]
    pub fn die_of(&self, ppa: Ppa) -> DieId {
        DieId(die_index(ppa.0, self.die_shift, self.pages_per_die) as u32)
    }

    /// The program of `ppa` has completed.
    pub fn is_durable(&self, ppa: Ppa) -> bool {
        let (block, offset) = self.block_and_offset(ppa);
        let ticket = self.tickets.get(block, offset);
        let die = self.die_of(ppa);
        ticket != NOT_SUBMITTED && ticket <= self.completed[die.index()]
    }

    /// Whether every program `ppa`'s block received has completed (then so has the program of
    /// `ppa`; the converse need not hold).
    #[inline]
    fn block_programs_done(&self, ppa: Ppa) -> bool {
        let (unsubmitted, last) = self
            .tickets
            .summary((ppa.0 / self.pages_per_block) as usize);
        unsubmitted == 0 && last <= self.completed[self.die_of(ppa).index()]
    }

    /// [`OobStore::is_durable`], answered from the per-block summary when it can be (no
    /// access to the page's ticket): same result, fewer cache misses on a large device.
    #[inline]
    pub fn is_durable_fast(&self, ppa: Ppa) -> bool {
        self.block_programs_done(ppa) || self.is_durable(ppa)
    }

    /// `ppa` holds a copy (GC, merge or wear-leveling move) of a page whose program had
    /// completed when the copy was decided ([`DURABLE_SOURCE_BIT`]).
    #[inline]
    pub fn copy_of_durable_source(&self, ppa: Ppa) -> bool {
        self.sequence.get(ppa.index()) & DURABLE_SOURCE_BIT != 0
    }

    /// The data of `ppa` is on flash: its program completed, or it is a copy of a page whose
    /// program had completed when the copy was decided (that page stays until the copy is done).
    pub fn data_is_durable(&self, ppa: Ppa) -> bool {
        self.is_durable(ppa) || self.sequence.get(ppa.index()) & DURABLE_SOURCE_BIT != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_bytes_round_trip() {
        for lpa in [Some(Lpa(7)), None] {
            let oob = PageOob {
                lpa,
                sequence: 1 << 40,
                crc: oob_crc(lpa, 1 << 40, Some(b"page")),
            };
            assert_eq!(PageOob::from_bytes(&oob.to_bytes()), oob);
        }
        assert_ne!(
            oob_crc(Some(Lpa(1)), 2, None),
            oob_crc(Some(Lpa(2)), 1, None)
        );
    }

    #[test]
    fn columns_widen_when_a_value_does_not_fit() {
        let mut s = OobStore::new(8, 4, 8);
        s.program(Ppa(0), Lpa(5), (1 << 31) - 1, false);
        s.submitted(DieId(0), Ppa(0));
        s.completed(DieId(0));
        s.copy(Ppa(0), Ppa(1), false);
        assert!(matches!(s.sequence, Column::Narrow(..)));
        assert!(s.copy_of_durable_source(Ppa(1)));
        s.program(Ppa(2), Lpa(6), 1 << 40, false);
        assert!(matches!(s.sequence, Column::Wide(..)));
        assert_eq!(s.get(Ppa(0)), Some((Some(Lpa(5)), (1 << 31) - 1)));
        assert_eq!(s.get(Ppa(1)), Some((Some(Lpa(5)), (1 << 31) - 1)));
        assert!(s.copy_of_durable_source(Ppa(1)) && !s.copy_of_durable_source(Ppa(0)));
        assert_eq!(s.get(Ppa(2)), Some((Some(Lpa(6)), 1 << 40)));
        assert!(!s.is_durable(Ppa(2)));
    }

    #[test]
    fn copies_keep_the_write_and_durability_follows_completions() {
        let mut s = OobStore::new(8, 4, 8);
        s.program(Ppa(0), Lpa(5), 1, false);
        s.program(Ppa(1), Lpa(6), 2, false);
        assert!(!s.is_durable(Ppa(0)));
        s.submitted(DieId(0), Ppa(0));
        s.submitted(DieId(0), Ppa::NONE);
        s.submitted(DieId(0), Ppa(1));
        assert!(!s.is_durable(Ppa(0)));
        s.completed(DieId(0));
        assert!(s.is_durable(Ppa(0)) && !s.is_durable(Ppa(1)));
        s.copy(Ppa(0), Ppa(4), false);
        s.copy(Ppa(1), Ppa(5), false);
        assert_eq!(s.get(Ppa(4)), Some((Some(Lpa(5)), 1)));
        assert!(s.data_is_durable(Ppa(4)) && !s.data_is_durable(Ppa(5)));
        s.erase(BlockId(0));
        assert_eq!(s.get(Ppa(0)), None);
    }
}
