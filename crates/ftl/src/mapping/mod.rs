//! Logical-to-physical mapping schemes (SPEC F2, F5): page-level ([`page`]), block-level
//! ([`block`]) and FAST-style hybrid log-block ([`hybrid`]), behind one dispatch enum
//! ([`Mapper`]) that the controller calls with whole logical pages.

pub(crate) mod block;
pub(crate) mod hybrid;
pub(crate) mod page;
pub(crate) mod table;

use crate::address::{Lpa, PlaneId, Ppa};
use crate::config::Level;
use crate::error::FtlResult;
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use nandlab_nand::Geometry;

/// The active mapping scheme.
#[derive(Debug)]
pub(crate) enum Mapper {
    Page(page::PageFtl),
    Block(block::BlockFtl),
    Hybrid(hybrid::HybridFtl),
}

impl Mapper {
    /// Writes one whole logical page (its program carries `tag`).
    pub fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        match self {
            Mapper::Page(m) => m.write(flash, write, tag),
            Mapper::Block(m) => m.write(flash, write, tag),
            Mapper::Hybrid(m) => m.write(flash, write, tag),
        }
    }
    pub fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        match self {
            Mapper::Page(m) => m.trim(flash, lpa),
            Mapper::Block(m) => m.trim(flash, lpa),
            Mapper::Hybrid(m) => m.trim(flash, lpa),
        }
    }
    /// Prefetch hint for a request on `lpa` two admissions ahead (page mapping only: the
    /// other mappings' tables are small).
    #[inline]
    pub fn prefetch_far(&self, lpa: Lpa) {
        if let Mapper::Page(m) = self {
            m.table.prefetch_l2p(lpa);
        }
    }

    /// Prefetch hint for a write of `lpa` admitted next (after [`Mapper::prefetch_far`]).
    #[inline]
    pub fn prefetch_near(&self, lpa: Lpa) {
        if let Mapper::Page(m) = self {
            m.table.prefetch_old_page(lpa);
        }
    }

    /// One background GC step (page mapping; the others have no background GC).
    pub fn collect_idle(&mut self, flash: &mut Flash, idle_threshold: u32) -> FtlResult<bool> {
        match self {
            Mapper::Page(m) => m.collect_idle(flash, idle_threshold),
            Mapper::Block(_) | Mapper::Hybrid(_) => Ok(false),
        }
    }

    /// The physical page holding `lpa`, if it is mapped.
    pub fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        match self {
            Mapper::Page(m) => m.locate(lpa),
            Mapper::Block(m) => m.locate(lpa),
            Mapper::Hybrid(m) => m.locate(lpa),
        }
    }
    /// Co-design hint: LPAs of the valid pages of the next block to be erased.
    pub fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<Lpa>) {
        match self {
            Mapper::Page(m) => m.next_erase_block_valid_lpas(flash, out),
            Mapper::Block(m) => m.next_erase_block_valid_lpas(flash, out),
            Mapper::Hybrid(m) => m.next_erase_block_valid_lpas(flash, out),
        }
    }
    /// Full consistency check of the mapping against the block table.
    pub fn check(&self, flash: &Flash) -> Result<(), String> {
        match self {
            Mapper::Page(m) => m.check(flash),
            Mapper::Block(m) => m.check(flash),
            Mapper::Hybrid(m) => m.check(flash),
        }
    }
}

/// Dense plane ids in striping order: consecutive entries differ first in `order[0]`, then
/// `order[1]`, … (e.g. channel-chip-die-plane stripes over channels first, CWDP).
pub(crate) fn stripe_order(geometry: &Geometry, order: [Level; 4]) -> Vec<PlaneId> {
    let count = |level: Level| match level {
        Level::Channel => geometry.channels,
        Level::Chip => geometry.chips_per_channel,
        Level::Die => geometry.dies_per_chip,
        Level::Plane => geometry.planes_per_die,
    };
    let total = geometry.total_planes();
    let mut stripe = Vec::with_capacity(total as usize);
    for i in 0..total {
        let mut rest = i;
        let (mut channel, mut chip, mut die, mut plane) = (0, 0, 0, 0);
        for level in order {
            let n = count(level);
            let v = rest % n;
            rest /= n;
            match level {
                Level::Channel => channel = v,
                Level::Chip => chip = v,
                Level::Die => die = v,
                Level::Plane => plane = v,
            }
        }
        let die_id = (channel * geometry.chips_per_channel + chip) * geometry.dies_per_chip + die;
        stripe.push(PlaneId(die_id * geometry.planes_per_die + plane));
    }
    stripe
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_allocation_order;

    fn geometry() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size_bytes: 512,
            spare_bytes_per_page: 0,
        }
    }

    #[test]
    fn channel_first_and_plane_first_striping() {
        let g = geometry();
        // plane id = (channel·2 + die)·2 + plane
        let ids = |order: &str| -> Vec<u32> {
            stripe_order(&g, parse_allocation_order(order).unwrap())
                .iter()
                .map(|p| p.0)
                .collect()
        };
        assert_eq!(ids("channel-die-plane"), vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(ids("plane-die-channel"), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    }

    proptest::proptest! {
        /// Every order is a permutation of the planes.
        #[test]
        fn stripe_is_a_permutation(perm in proptest::sample::subsequence(vec!["channel", "chip", "die", "plane"], 0..=4)) {
            let g = geometry();
            let mut s: Vec<u32> = stripe_order(&g, parse_allocation_order(&perm.join("-")).unwrap())
                .iter()
                .map(|p| p.0)
                .collect();
            s.sort_unstable();
            proptest::prop_assert_eq!(s, (0..8).collect::<Vec<u32>>());
        }
    }
}
