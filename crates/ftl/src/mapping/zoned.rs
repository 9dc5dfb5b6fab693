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

use crate::address::{BlockId, PlaneId, Ppa};
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
