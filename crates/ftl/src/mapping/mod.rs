//! Logical-to-physical mapping schemes (SPEC F2, F5): page-level ([`page`]), block-level
//! ([`block`]), FAST-style hybrid log-block ([`hybrid`]) and zoned ([`zoned`], NVMe ZNS). Each implements [`Mapping`], the
//! contract the controller calls with whole logical pages; [`Mapper`] is the active scheme
//! (an enum, so the controller's hot path calls the scheme directly, without a virtual call;
//! a new scheme adds a variant and one line per method in `dispatch!`).

pub(crate) mod block;
pub(crate) mod dftl;
pub(crate) mod hybrid;
pub(crate) mod page;
pub(crate) mod superblock;
pub(crate) mod table;
pub mod txn;
pub mod zoned;

use crate::address::{BlockId, Lpa, PlaneId, Ppa};
use crate::config::Level;
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use nandlab_nand::Geometry;

/// What a mapping scheme does for the controller.
pub(crate) trait Mapping {
    /// Writes one whole logical page (its program carries `tag`).
    fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()>;
    /// Forgets `lpa` (TRIM).
    fn trim(&mut self, flash: &mut Flash, lpa: Lpa);
    /// Forgets the `count` logical pages from `first` (a TRIM of whole pages): the same as
    /// [`Mapping::trim`] of each in LPA order; a scheme may do it in one pass (the zoned
    /// mapping's zone reset).
    fn trim_range(&mut self, flash: &mut Flash, first: Lpa, count: u32) {
        for lpa in first.0..first.0 + count {
            self.trim(flash, Lpa(lpa));
        }
    }
    /// The TRIM request whose pages [`Mapping::trim`] just forgot is decided: work it causes
    /// (the zoned mapping's zone erase) carries `tag`.
    #[inline]
    fn trim_done(&mut self, _flash: &mut Flash, _tag: Tag) {}
    /// The physical page holding `lpa`, if it is mapped.
    fn locate(&self, lpa: Lpa) -> Option<Ppa>;
    /// Maps `lpa` to the physical page `same_as` is mapped to (a duplicate write found by a
    /// dedup stage): no program; the page is then shared, reference counted.
    fn share(&mut self, _flash: &mut Flash, lpa: Lpa, _same_as: Lpa) -> FtlResult<()> {
        Err(FtlError::BadRequest {
            message: format!(
                "a duplicate write of lpa {lpa} needs shared physical pages: only ftl.mapping = \"page\" has them"
            ),
        })
    }
    /// Paired-page padding at a Flush: pads every open write frontier to the end of the word
    /// lines holding data (`Flash::pad_word_lines`); the pads carry `tag`.
    fn pad_open_blocks(&mut self, _flash: &mut Flash, _tag: Tag) {}
    /// How many logical pages map to `ppa` (0: invalid).
    fn refcount(&self, ppa: Ppa) -> u32;
    /// One background GC step (below the collector's idle threshold); whether it did something.
    fn collect_idle(&mut self, _flash: &mut Flash) -> FtlResult<bool> {
        Ok(false)
    }
    /// Co-design hint: LPAs of the valid pages of the next block to be erased.
    fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<Lpa>);
    /// The block the next GC erases, when the scheme can tell.
    fn next_victim_block(&self, _flash: &Flash) -> Option<BlockId> {
        None
    }
    /// Full consistency check of the mapping against the block table.
    fn check(&self, flash: &Flash) -> Result<(), String>;
    /// Prefetch hint for a request on `lpa` two admissions ahead.
    #[inline]
    fn prefetch_far(&self, _lpa: Lpa) {}
    /// Prefetch hint for a write of `lpa` admitted next (after `prefetch_far`).
    #[inline]
    fn prefetch_near(&self, _lpa: Lpa) {}
}

/// The active mapping scheme.
#[derive(Debug)]
pub(crate) enum Mapper {
    Page(page::PageFtl),
    Block(block::BlockFtl),
    Hybrid(hybrid::HybridFtl),
    Zoned(zoned::ZonedFtl),
}

macro_rules! dispatch {
    ($self:ident, $m:ident => $call:expr) => {
        match $self {
            Mapper::Page($m) => $call,
            Mapper::Block($m) => $call,
            Mapper::Hybrid($m) => $call,
            Mapper::Zoned($m) => $call,
        }
    };
}

impl Mapping for Mapper {
    #[inline]
    fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        dispatch!(self, m => m.write(flash, write, tag))
    }
    fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        dispatch!(self, m => m.trim(flash, lpa))
    }
    fn trim_range(&mut self, flash: &mut Flash, first: Lpa, count: u32) {
        dispatch!(self, m => m.trim_range(flash, first, count))
    }
    #[inline]
    fn trim_done(&mut self, flash: &mut Flash, tag: Tag) {
        dispatch!(self, m => m.trim_done(flash, tag))
    }
    #[inline]
    fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        dispatch!(self, m => m.locate(lpa))
    }
    fn share(&mut self, flash: &mut Flash, lpa: Lpa, same_as: Lpa) -> FtlResult<()> {
        dispatch!(self, m => m.share(flash, lpa, same_as))
    }
    fn pad_open_blocks(&mut self, flash: &mut Flash, tag: Tag) {
        dispatch!(self, m => m.pad_open_blocks(flash, tag))
    }
    fn refcount(&self, ppa: Ppa) -> u32 {
        dispatch!(self, m => m.refcount(ppa))
    }
    fn collect_idle(&mut self, flash: &mut Flash) -> FtlResult<bool> {
        dispatch!(self, m => m.collect_idle(flash))
    }
    fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<Lpa>) {
        dispatch!(self, m => m.next_erase_block_valid_lpas(flash, out))
    }
    fn next_victim_block(&self, flash: &Flash) -> Option<BlockId> {
        dispatch!(self, m => m.next_victim_block(flash))
    }
    fn check(&self, flash: &Flash) -> Result<(), String> {
        dispatch!(self, m => m.check(flash))
    }
    #[inline]
    fn prefetch_far(&self, lpa: Lpa) {
        dispatch!(self, m => m.prefetch_far(lpa))
    }
    #[inline]
    fn prefetch_near(&self, lpa: Lpa) {
        dispatch!(self, m => m.prefetch_near(lpa))
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
