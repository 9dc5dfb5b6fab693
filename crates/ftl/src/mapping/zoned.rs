//! Where a zoned namespace's zones live on flash (SPEC Z2): the static layout of the zoned
//! mapping, which needs no device GC because a zone is only ever written at its write pointer
//! and erased whole by a reset.
//!
//! The planes of the device, in its striping order, form groups of `planes_per_zone`; zone `z`
//! is block `z / groups` of every plane of group `z % groups` (a superblock), so consecutive
//! zones use different planes. A zone's pages go round its planes: page `p` is page offset
//! `p / planes_per_zone` of the block on plane `p % planes_per_zone` of its group, so every
//! block is programmed in page order and consecutive writes land on different planes (dies,
//! with a channel- or die-first stripe) and proceed in parallel.
//!
//! A zone's capacity is `planes_per_zone × pages_per_block` logical pages; its size is the
//! next power of two (Linux requires power-of-two zone sizes; real ZNS drives report a capacity
//! below the size in the same way). [`ZoneLayout::namespace`] gives the host interface's
//! [`ZonedConfig`] (LBA = one flash page).

use super::Mapping;
use crate::address::{BlockId, Lpa, PlaneId, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use crate::host::zns::ZonedConfig;
use nandlab_nand::Geometry;
use std::fmt;

/// A zone layout that does not fit the device, with the key at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneLayoutError {
    /// The key (of the stack config's zones table).
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ZoneLayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ZoneLayoutError {}

/// The static zone → block layout of a zoned namespace over the whole device.
#[derive(Clone, Debug)]
pub struct ZoneLayout {
    /// Planes in the device's striping order.
    stripe: Vec<PlaneId>,
    planes_per_zone: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    groups: u32,
}

impl ZoneLayout {
    /// The layout of `geometry` with zones of `planes_per_zone` blocks (one per plane) over
    /// the planes in `stripe` order.
    pub fn new(
        geometry: &Geometry,
        stripe: Vec<PlaneId>,
        planes_per_zone: u32,
    ) -> Result<Self, ZoneLayoutError> {
        let planes = geometry.total_planes();
        assert_eq!(
            stripe.len(),
            planes as usize,
            "the stripe names every plane once"
        );
        if planes_per_zone == 0
            || planes_per_zone > planes
            || !planes.is_multiple_of(planes_per_zone)
        {
            return Err(ZoneLayoutError {
                key: "planes_per_zone",
                message: format!(
                    "{planes_per_zone} does not divide the device's {planes} planes (use a divisor of {planes})"
                ),
            });
        }
        Ok(ZoneLayout {
            stripe,
            planes_per_zone,
            blocks_per_plane: geometry.blocks_per_plane,
            pages_per_block: geometry.pages_per_block,
            groups: planes / planes_per_zone,
        })
    }

    /// Number of zones.
    pub fn zone_count(&self) -> u32 {
        self.groups * self.blocks_per_plane
    }

    /// Writable pages of a zone (its capacity).
    pub fn zone_capacity_pages(&self) -> u64 {
        u64::from(self.planes_per_zone) * u64::from(self.pages_per_block)
    }

    /// A zone's size in pages (the capacity rounded up to a power of two).
    pub fn zone_size_pages(&self) -> u64 {
        self.zone_capacity_pages().next_power_of_two()
    }

    /// The host interface's config of a namespace over this layout (one LBA per page), with
    /// the given open and active limits (0: none).
    pub fn namespace(&self, max_open_zones: u32, max_active_zones: u32) -> ZonedConfig {
        let mut config = ZonedConfig::new(self.zone_count(), self.zone_size_pages());
        config.zone_capacity_lbas = self.zone_capacity_pages();
        config.max_open_zones = max_open_zones;
        config.max_active_zones = max_active_zones;
        config
    }

    /// The blocks of `zone`, in the order its pages go round them.
    pub fn blocks(&self, zone: u32) -> impl Iterator<Item = BlockId> + '_ {
        debug_assert!(zone < self.zone_count());
        let group = zone % self.groups;
        let index = zone / self.groups;
        let first = (group * self.planes_per_zone) as usize;
        self.stripe[first..first + self.planes_per_zone as usize]
            .iter()
            .map(move |plane| BlockId(plane.0 * self.blocks_per_plane + index))
    }

    /// The flash page of page `page` of `zone` (below the zone's capacity).
    pub fn ppa(&self, zone: u32, page: u64) -> Ppa {
        debug_assert!(zone < self.zone_count());
        debug_assert!(page < self.zone_capacity_pages());
        let member = (page % u64::from(self.planes_per_zone)) as usize;
        let offset = (page / u64::from(self.planes_per_zone)) as u32;
        let group = zone % self.groups;
        let plane = self.stripe[(group * self.planes_per_zone) as usize + member];
        let block = plane.0 * self.blocks_per_plane + zone / self.groups;
        Ppa(block * self.pages_per_block + offset)
    }

    /// The zone and page in it of a flash page (the inverse of [`ZoneLayout::ppa`]).
    pub fn locate(&self, ppa: Ppa) -> (u32, u64) {
        let block = ppa.0 / self.pages_per_block;
        let offset = ppa.0 % self.pages_per_block;
        let plane = block / self.blocks_per_plane;
        let index = block % self.blocks_per_plane;
        let position = self
            .stripe
            .iter()
            .position(|p| p.0 == plane)
            .expect("every plane is in the stripe") as u32;
        let group = position / self.planes_per_zone;
        let member = position % self.planes_per_zone;
        let zone = index * self.groups + group;
        let page = u64::from(offset) * u64::from(self.planes_per_zone) + u64::from(member);
        (zone, page)
    }
}

/// The FTL keys the zoned mapping needs (one-line errors naming the key): `ftl.zone_planes`
/// only with it; no write buffer (it would write pages out of order).
pub(crate) fn check_config(f: &crate::config::FtlConfig) -> FtlResult<()> {
    use crate::config::MappingKind;
    let error = |key: &str, message: String| Err(crate::error::config_error(key, message));
    if f.mapping.kind != MappingKind::Zoned {
        if f.mapping.zone_planes != 0 {
            return error(
                "ftl.zone_planes",
                format!("{} needs ftl.mapping = \"zoned\"", f.mapping.zone_planes),
            );
        }
        return Ok(());
    }
    if f.buffer.pages > 0 {
        return error(
            "ftl.write_buffer_pages",
            "the zoned mapping takes pages in write-pointer order: no write buffer (set it to 0)"
                .into(),
        );
    }
    Ok(())
}

/// The zoned mapping (`ftl.mapping = "zoned"`): the device is one zoned namespace laid out by
/// a [`ZoneLayout`]. A write must land at its zone's write pointer (the host interface's
/// [`crate::host::zns::Zones`] checks that first and answers violations with an NVMe status; a
/// plain workload that writes elsewhere gets a one-line error). A TRIM invalidates pages; once
/// every written page of a zone is invalid (a zone reset is a TRIM of the written range), the
/// zone's blocks are erased as part of that request, so a reset's latency is its erases. No
/// page is ever moved: the mapping has no GC and its write amplification is exactly 1.
#[derive(Debug)]
pub(crate) struct ZonedFtl {
    layout: ZoneLayout,
    /// log2 of the zone size in pages.
    size_shift: u32,
    capacity: u32,
    pages_per_block: u32,
    /// Per zone, the device's write pointer (pages written since the last reset).
    next: Vec<u32>,
    /// Per zone, written pages not trimmed.
    valid: Vec<u32>,
    /// One bit per page of every zone's capacity: trimmed since written.
    trimmed: Vec<u64>,
    /// Zones whose last valid page a TRIM of the current request invalidated.
    to_erase: Vec<u32>,
}

impl ZonedFtl {
    /// The zoned mapping of `geometry` with zones of `zone_planes` planes (0: all) in
    /// `stripe` order; errors name the key.
    pub fn new(
        geometry: &Geometry,
        stripe: Vec<PlaneId>,
        zone_planes: u32,
    ) -> Result<Self, ZoneLayoutError> {
        let planes = if zone_planes == 0 {
            geometry.total_planes()
        } else {
            zone_planes
        };
        let layout = ZoneLayout::new(geometry, stripe, planes).map_err(|e| ZoneLayoutError {
            key: "ftl.zone_planes",
            message: e.message,
        })?;
        let zones = layout.zone_count();
        let lbas = u64::from(zones) * layout.zone_size_pages();
        if lbas > u64::from(u32::MAX / 2) {
            return Err(ZoneLayoutError {
                key: "ftl.zone_planes",
                message: format!(
                    "{zones} zones of {} pages exceed the device's logical page numbers",
                    layout.zone_size_pages()
                ),
            });
        }
        let capacity = layout.zone_capacity_pages() as u32;
        let bits = zones as usize * capacity as usize;
        Ok(ZonedFtl {
            size_shift: layout.zone_size_pages().trailing_zeros(),
            capacity,
            pages_per_block: geometry.pages_per_block,
            next: vec![0; zones as usize],
            valid: vec![0; zones as usize],
            trimmed: vec![0; bits.div_ceil(64)],
            to_erase: Vec::new(),
            layout,
        })
    }

    /// The layout of the zones.
    pub fn layout(&self) -> &ZoneLayout {
        &self.layout
    }

    /// Logical pages of the namespace (zones × zone size; the pages between a zone's capacity
    /// and its size are never written).
    pub fn logical_pages(&self) -> u32 {
        self.layout.zone_count() << self.size_shift
    }

    #[inline]
    fn split(&self, lpa: Lpa) -> (u32, u32) {
        (
            lpa.0 >> self.size_shift,
            lpa.0 & ((1 << self.size_shift) - 1),
        )
    }

    #[inline]
    fn bit(&self, zone: u32, page: u32) -> usize {
        zone as usize * self.capacity as usize + page as usize
    }

    fn is_trimmed(&self, zone: u32, page: u32) -> bool {
        let b = self.bit(zone, page);
        self.trimmed[b / 64] >> (b % 64) & 1 == 1
    }

    /// Whether any page bit in `[a, b)` is set.
    fn any_trimmed(&self, a: usize, b: usize) -> bool {
        let mut any = false;
        for_words(a, b, |w, mask| any |= self.trimmed[w] & mask != 0);
        any
    }

    /// Sets (or clears) the page bits `[a, b)` a word at a time.
    fn set_trimmed(&mut self, a: usize, b: usize, on: bool) {
        let trimmed = &mut self.trimmed;
        for_words(a, b, |w, mask| {
            if on {
                trimmed[w] |= mask;
            } else {
                trimmed[w] &= !mask;
            }
        });
    }

    /// Trims pages `[from, to)` of `zone` (those below its write pointer), as [`Mapping::trim`]
    /// of each in page order does. When none of them was trimmed before and stale payloads
    /// keep their slots until the erase, in one pass: each of the zone's blocks loses the
    /// range's pages on its plane at once (page `p` is on the zone's block `p % planes`).
    fn trim_pages(&mut self, flash: &mut Flash, zone: u32, from: u32, to: u32) {
        let to = to.min(self.next[zone as usize]);
        if from >= to {
            return;
        }
        let (a, b) = (self.bit(zone, from), self.bit(zone, to));
        if flash.payload.releases_stale() || self.any_trimmed(a, b) {
            for page in from..to {
                self.trim(flash, Lpa(zone << self.size_shift | page));
            }
            return;
        }
        let planes = self.layout.planes_per_zone;
        // pages below `x` on member `m`: p < x with p % planes == m
        let below = |x: u32, m: u32| (x + planes - 1 - m) / planes;
        for (member, block) in self.layout.blocks(zone).enumerate() {
            let m = member as u32;
            let pages = below(to, m) - below(from, m);
            if pages > 0 {
                flash.blocks.invalidate_many(block, pages);
            }
        }
        self.set_trimmed(a, b, true);
        self.valid[zone as usize] -= to - from;
        if self.valid[zone as usize] == 0 {
            self.to_erase.push(zone);
        }
    }

    /// The device's write pointer of `zone` (pages programmed since its last reset, pads
    /// included).
    pub fn write_pointer(&self, zone: u32) -> u32 {
        self.next[zone as usize]
    }

    /// Mount ([`crate::Ssd::load_recovered`]): programs dummy pages (no LPA, trimmed at once)
    /// from the write pointer of `lpa`'s zone up to `lpa`, so that a zone whose mount found a
    /// hole (a write that was never programmed or was torn, below a later intact one: writes
    /// at queue depth > 1 complete out of order) is loaded with its intact pages at their
    /// LBAs and its write pointer past the last of them: it never goes back over acknowledged
    /// data, and every block is still programmed in page order.
    pub fn pad_to(&mut self, flash: &mut Flash, lpa: Lpa, tag: Tag) {
        let (zone, page) = self.split(lpa);
        while self.next[zone as usize] < page.min(self.capacity) {
            let p = self.next[zone as usize];
            let ppa = self.place(flash, zone, p);
            flash.program_pad(ppa, tag);
            let b = self.bit(zone, p);
            self.trimmed[b / 64] |= 1 << (b % 64);
            self.next[zone as usize] += 1;
        }
    }

    /// The physical page of `zone`'s page `page` (its write pointer), its block taken from the
    /// free blocks when the page opens it, and the block's write pointer moved past it.
    #[inline]
    fn place(&self, flash: &mut Flash, zone: u32, page: u32) -> Ppa {
        let ppa = self.layout.ppa(zone, u64::from(page));
        let block = flash.blocks.block_of(ppa);
        let offset = ppa.0 % self.pages_per_block;
        if offset == 0 {
            let taken = flash.blocks.take_block(block);
            debug_assert!(taken, "zone {zone}'s block {block} was not free");
        }
        let got = flash.blocks.next_ppa_at(block, offset);
        debug_assert_eq!(got, ppa);
        ppa
    }

    #[cold]
    #[inline(never)]
    fn off_pointer(&self, lpa: Lpa, zone: u32, page: u32) -> FtlError {
        let why = if page >= self.capacity {
            format!("beyond the zone's capacity of {} pages", self.capacity)
        } else {
            format!(
                "not at the zone's write pointer (page {})",
                self.next[zone as usize]
            )
        };
        FtlError::BadRequest {
            message: format!(
                "zoned mapping: write of lpa {lpa} (zone {zone}, page {page}) {why}: a zoned device takes writes only at a zone's write pointer (a workload for ftl.mapping = \"zoned\" writes zones sequentially)"
            ),
        }
    }
}

impl Mapping for ZonedFtl {
    #[inline]
    fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        let (zone, page) = self.split(write.lpa);
        if page >= self.capacity || page != self.next[zone as usize] {
            return Err(self.off_pointer(write.lpa, zone, page));
        }
        let ppa = self.place(flash, zone, page);
        flash.blocks.add_valid(ppa);
        flash.program(ppa, write, None, tag);
        self.next[zone as usize] += 1;
        self.valid[zone as usize] += 1;
        Ok(())
    }

    fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        let (zone, page) = self.split(lpa);
        if page >= self.next[zone as usize] || self.is_trimmed(zone, page) {
            return;
        }
        let b = self.bit(zone, page);
        self.trimmed[b / 64] |= 1 << (b % 64);
        flash.invalidate(self.layout.ppa(zone, u64::from(page)));
        self.valid[zone as usize] -= 1;
        if self.valid[zone as usize] == 0 {
            self.to_erase.push(zone);
        }
    }

    fn trim_range(&mut self, flash: &mut Flash, first: Lpa, count: u32) {
        let (mut lpa, end) = (u64::from(first.0), u64::from(first.0) + u64::from(count));
        while lpa < end {
            let (zone, page) = self.split(Lpa(lpa as u32));
            let zone_end = (u64::from(zone) + 1) << self.size_shift;
            let stop = end.min(zone_end);
            let to = (stop - (u64::from(zone) << self.size_shift)) as u32;
            if (zone as usize) < self.next.len() {
                self.trim_pages(flash, zone, page, to.min(self.capacity));
            }
            lpa = stop;
        }
    }

    fn trim_done(&mut self, flash: &mut Flash, tag: Tag) {
        if self.to_erase.is_empty() {
            return;
        }
        let zones = std::mem::take(&mut self.to_erase);
        for &zone in &zones {
            for block in self.layout.blocks(zone) {
                if flash.blocks.state(block) != crate::flash::blocks::BlockUse::Free {
                    // every written page of the zone is trimmed: no LPA of it is mapped (the
                    // erase waits for no newer copy)
                    flash.erase(block, tag, |_| None);
                }
            }
            self.next[zone as usize] = 0;
            let first = self.bit(zone, 0);
            self.set_trimmed(first, first + self.capacity as usize, false);
        }
        self.to_erase = zones;
        self.to_erase.clear();
    }

    #[inline]
    fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        let (zone, page) = self.split(lpa);
        (page < *self.next.get(zone as usize)? && !self.is_trimmed(zone, page))
            .then(|| self.layout.ppa(zone, u64::from(page)))
    }

    fn refcount(&self, ppa: Ppa) -> u32 {
        let (zone, page) = self.layout.locate(ppa);
        let page = page as u32;
        u32::from(page < self.next[zone as usize] && !self.is_trimmed(zone, page))
    }

    fn next_erase_block_valid_lpas(&mut self, _flash: &Flash, out: &mut Vec<Lpa>) {
        out.clear();
    }

    fn check(&self, flash: &Flash) -> Result<(), String> {
        for zone in 0..self.layout.zone_count() {
            let live = (0..self.next[zone as usize])
                .filter(|&p| !self.is_trimmed(zone, p))
                .count() as u32;
            let on_flash: u32 = self
                .layout
                .blocks(zone)
                .map(|b| flash.blocks.valid(b))
                .sum();
            if live != self.valid[zone as usize] || live != on_flash {
                return Err(format!(
                    "zone {zone}: {live} live pages, counted {}, {on_flash} valid on flash",
                    self.valid[zone as usize]
                ));
            }
        }
        Ok(())
    }
}

/// Calls `f(word, mask)` for the 64-bit words of a bit set that bits `[a, b)` touch, with
/// the mask of those bits in each word.
#[inline]
fn for_words(a: usize, b: usize, mut f: impl FnMut(usize, u64)) {
    let mut i = a;
    while i < b {
        let (word, low) = (i / 64, i % 64);
        let high = (b - word * 64).min(64);
        let width = high - low;
        let mask = if width == 64 {
            u64::MAX
        } else {
            ((1u64 << width) - 1) << low
        };
        f(word, mask);
        i = word * 64 + high;
    }
}

#[cfg(test)]
mod tests;
