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
    if f.mapping != MappingKind::Zoned {
        if f.zone_planes != 0 {
            return error(
                "ftl.zone_planes",
                format!("{} needs ftl.mapping = \"zoned\"", f.zone_planes),
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
            let ppa = self.layout.ppa(zone, u64::from(p));
            let block = flash.blocks.block_of(ppa);
            let offset = ppa.0 % self.pages_per_block;
            if offset == 0 {
                let taken = flash.blocks.take_block(block);
                debug_assert!(taken, "zone {zone}'s block {block} was not free");
            }
            let got = flash.blocks.next_ppa_at(block, offset);
            debug_assert_eq!(got, ppa);
            flash.program_pad(ppa, tag);
            let b = self.bit(zone, p);
            self.trimmed[b / 64] |= 1 << (b % 64);
            self.next[zone as usize] += 1;
        }
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
        let ppa = self.layout.ppa(zone, u64::from(page));
        let block = flash.blocks.block_of(ppa);
        let offset = ppa.0 % self.pages_per_block;
        if offset == 0 {
            let taken = flash.blocks.take_block(block);
            debug_assert!(taken, "zone {zone}'s block {block} was not free");
        }
        let got = flash.blocks.next_ppa_at(block, offset);
        debug_assert_eq!(got, ppa);
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

    fn trim_done(&mut self, flash: &mut Flash, tag: Tag) {
        if self.to_erase.is_empty() {
            return;
        }
        let zones = std::mem::take(&mut self.to_erase);
        for &zone in &zones {
            let blocks: Vec<BlockId> = self.layout.blocks(zone).collect();
            for block in blocks {
                if flash.blocks.state(block) != crate::flash::blocks::BlockUse::Free {
                    flash.erase(block, tag, |lpa| self.locate(lpa));
                }
            }
            self.next[zone as usize] = 0;
            let first = self.bit(zone, 0);
            for b in first..first + self.capacity as usize {
                self.trimmed[b / 64] &= !(1 << (b % 64));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn geometry(channels: u32, dies: u32, planes: u32, blocks: u32, pages: u32) -> Geometry {
        let mut g = nandlab_nand::preset("slc").unwrap().geometry;
        g.channels = channels;
        g.chips_per_channel = 1;
        g.dies_per_chip = dies;
        g.planes_per_die = planes;
        g.blocks_per_plane = blocks;
        g.pages_per_block = pages;
        g
    }

    fn plane_first(g: &Geometry) -> Vec<PlaneId> {
        (0..g.total_planes()).map(PlaneId).collect()
    }

    #[test]
    fn zones_are_superblocks_written_round_their_planes() {
        // 2 channels x 2 dies x 2 planes, 4 blocks of 8 pages; zones of 4 planes
        let g = geometry(2, 2, 2, 4, 8);
        let layout = ZoneLayout::new(&g, plane_first(&g), 4).unwrap();
        assert_eq!(layout.zone_count(), 2 * 4);
        assert_eq!(layout.zone_capacity_pages(), 32);
        assert_eq!(layout.zone_size_pages(), 32);
        // zone 0: block 0 of planes 0-3; zone 1: block 0 of planes 4-7; zone 2: block 1 of 0-3
        let blocks = |z| layout.blocks(z).map(|b| b.0).collect::<Vec<_>>();
        assert_eq!(blocks(0), vec![0, 4, 8, 12]);
        assert_eq!(blocks(1), vec![16, 20, 24, 28]);
        assert_eq!(blocks(2), vec![1, 5, 9, 13]);
        // pages 0-3 of zone 0 are offset 0 of its four blocks, page 4 offset 1 of the first
        let ppas: Vec<u32> = (0..5).map(|p| layout.ppa(0, p).0).collect();
        assert_eq!(ppas, vec![0, 32, 64, 96, 1]);
        assert_eq!(layout.locate(Ppa(97)), (0, 7));
    }

    #[test]
    fn capacity_below_a_power_of_two_size() {
        let g = geometry(1, 1, 3, 4, 8);
        let layout = ZoneLayout::new(&g, plane_first(&g), 3).unwrap();
        assert_eq!(layout.zone_capacity_pages(), 24);
        assert_eq!(layout.zone_size_pages(), 32);
        let ns = layout.namespace(2, 3);
        assert_eq!(
            (ns.zone_count, ns.zone_size_lbas, ns.zone_capacity_lbas),
            (4, 32, 24)
        );
        assert_eq!((ns.max_open_zones, ns.max_active_zones), (2, 3));
        ns.validate().unwrap();
    }

    #[test]
    fn planes_per_zone_must_divide_the_planes() {
        let g = geometry(1, 2, 2, 4, 8);
        for bad in [0, 3, 5] {
            let e = ZoneLayout::new(&g, plane_first(&g), bad).unwrap_err();
            assert_eq!(e.key, "planes_per_zone");
        }
        assert_eq!(
            ZoneLayout::new(&g, plane_first(&g), 3)
                .unwrap_err()
                .to_string(),
            "planes_per_zone: 3 does not divide the device's 4 planes (use a divisor of 4)"
        );
    }

    proptest! {
        /// Every page of every zone maps to its own flash page, `locate` inverts it, and a
        /// zone written from its start programs each of its blocks in page order.
        #[test]
        fn the_layout_is_a_bijection_written_in_page_order(
            channels in 1u32..3, dies in 1u32..3, planes in 1u32..5,
            blocks in 1u32..5, pages in 1u32..9, divisor_pick in 0usize..4,
            rotate in 0usize..8,
        ) {
            let g = geometry(channels, dies, planes, blocks, pages);
            let total = g.total_planes();
            let divisors: Vec<u32> = (1..=total).filter(|d| total.is_multiple_of(*d)).collect();
            let k = divisors[divisor_pick % divisors.len()];
            let mut stripe = plane_first(&g);
            let shift = rotate % stripe.len();
            stripe.rotate_left(shift);
            let layout = ZoneLayout::new(&g, stripe, k).unwrap();
            let mut seen = vec![false; g.total_pages() as usize];
            let mut next_offset = vec![0u32; g.total_blocks() as usize];
            for zone in 0..layout.zone_count() {
                let zone_blocks: Vec<u32> = layout.blocks(zone).map(|b| b.0).collect();
                for page in 0..layout.zone_capacity_pages() {
                    let ppa = layout.ppa(zone, page);
                    prop_assert!(!seen[ppa.index()], "page mapped twice");
                    seen[ppa.index()] = true;
                    prop_assert_eq!(layout.locate(ppa), (zone, page));
                    let block = ppa.0 / pages;
                    prop_assert!(zone_blocks.contains(&block));
                    prop_assert_eq!(ppa.0 % pages, next_offset[block as usize]);
                    next_offset[block as usize] += 1;
                }
            }
            prop_assert!(seen.iter().all(|&s| s), "every page belongs to a zone");
        }
    }
}
