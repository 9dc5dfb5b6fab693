//! When and where the collector collects (SPEC F3): per-plane and device-wide collection when
//! free blocks run low, superblock (group) collection, and background (idle) collection. The
//! victim is the policy's business; moving its pages and erasing it is the page mapping's
//! ([`GcSpace::relocate_block`]); each collection ends with a static wear-leveling step.

use super::policy::Domain;
use super::{Collector, GcSpace};
use crate::address::PlaneId;
use crate::error::FtlResult;
use crate::flash::Flash;
use crate::wear::WearLeveler;

impl Collector {
    /// The collection a host write needing a block on `plane` triggers: device-wide, per
    /// superpage group, or per plane.
    pub(crate) fn collect_for_host(
        &mut self,
        map: &mut impl GcSpace,
        wear: &WearLeveler,
        flash: &mut Flash,
        plane: PlaneId,
    ) -> FtlResult<()> {
        if self.device_wide() {
            self.collect_device(map, wear, flash, plane)
        } else if map.superpage() > 1 {
            self.collect_group(map, wear, flash, PlaneId(map.group_first(plane)))
        } else {
            self.collect(map, wear, flash, plane)
        }
    }

    /// GC of `plane` until it has `threshold` free blocks (or nothing is left to reclaim), then
    /// one static wear-leveling step if the erase-count gap calls for it.
    fn collect(
        &mut self,
        map: &mut impl GcSpace,
        wear: &WearLeveler,
        flash: &mut Flash,
        plane: PlaneId,
    ) -> FtlResult<()> {
        let mut erased = false;
        // every victim frees at least one page net, so a plane's block count bounds the loop
        for _ in 0..flash.blocks.blocks_per_plane() {
            if flash.blocks.free_count(plane) >= self.config.threshold_blocks {
                break;
            }
            let Some(victim) = self.take(&flash.blocks, Domain::Plane(plane)) else {
                break;
            };
            flash.counters.gc_runs += 1;
            map.relocate_block(flash, victim)?;
            erased = true;
        }
        if erased {
            wear.level(map, flash, plane)?;
        }
        Ok(())
    }

    /// Device-wide GC: while the device has fewer than threshold × planes free blocks (with a
    /// device-wide reserve: reserve + threshold), the policy's victim among all blocks is
    /// collected (its pages move within its plane; with the device reserve into the device's
    /// one GC block, on any plane). Static wear-leveling then looks at each collected plane
    /// and at `plane`, which asked for a block.
    fn collect_device(
        &mut self,
        map: &mut impl GcSpace,
        wear: &WearLeveler,
        flash: &mut Flash,
        plane: PlaneId,
    ) -> FtlResult<()> {
        let planes = map.stripe().len() as u32;
        let target = self.device_free_target(planes, self.config.threshold_blocks);
        for _ in 0..planes * flash.blocks.blocks_per_plane() {
            if flash.blocks.free_total() >= target {
                break;
            }
            let Some(victim) = self.take(&flash.blocks, Domain::Device) else {
                break;
            };
            flash.counters.gc_runs += 1;
            map.relocate_block(flash, victim)?;
            let victim_plane = flash.blocks.plane_of_block(victim);
            wear.level(map, flash, victim_plane)?;
        }
        wear.level(map, flash, plane)
    }

    /// Free blocks device-wide GC keeps for a per-plane `threshold`: threshold × planes, or
    /// with a device-wide reserve, reserve + threshold (the threshold then counts device-wide).
    fn device_free_target(&self, planes: u32, threshold: u32) -> u32 {
        if self.config.device_reserve_blocks > 0 {
            self.config.device_reserve_blocks + threshold
        } else {
            threshold * planes
        }
    }

    /// Superblock GC: collects on the planes of the group starting at `first` until each has
    /// `threshold` free blocks (or nothing is left to reclaim), a victim at a time on the
    /// plane with the fewest free blocks (its moves fill the group's GC superblock, so every
    /// plane of the group pays for them); then static wear-leveling on each collected plane.
    fn collect_group(
        &mut self,
        map: &mut impl GcSpace,
        wear: &WearLeveler,
        flash: &mut Flash,
        first: PlaneId,
    ) -> FtlResult<()> {
        let w = map.superpage();
        let mut exhausted = 0u64;
        let mut collected = 0u64;
        for _ in 0..w * flash.blocks.blocks_per_plane() {
            let mut best: Option<(u32, u32)> = None;
            for member in 0..w {
                let free = flash.blocks.free_count(PlaneId(first.0 + member));
                if free < self.config.threshold_blocks
                    && exhausted & (1 << member) == 0
                    && best.is_none_or(|(_, f)| free < f)
                {
                    best = Some((member, free));
                }
            }
            let Some((member, _)) = best else {
                break;
            };
            let plane = PlaneId(first.0 + member);
            let Some(victim) = self.take(&flash.blocks, Domain::Plane(plane)) else {
                exhausted |= 1 << member;
                continue;
            };
            flash.counters.gc_runs += 1;
            map.relocate_block(flash, victim)?;
            collected |= 1 << member;
        }
        for member in 0..w {
            if collected & (1 << member) != 0 {
                wear.level(map, flash, PlaneId(first.0 + member))?;
            }
        }
        Ok(())
    }

    /// One background GC step: collects one victim where free blocks are fewest, if below
    /// the idle threshold per plane (device scope: in total). Returns whether it did.
    pub(crate) fn collect_idle(
        &mut self,
        map: &mut impl GcSpace,
        wear: &WearLeveler,
        flash: &mut Flash,
    ) -> FtlResult<bool> {
        let idle_threshold = self.config.idle_threshold_blocks;
        let victim = if self.device_wide() {
            let planes = map.stripe().len() as u32;
            if flash.blocks.free_total() >= self.device_free_target(planes, idle_threshold) {
                return Ok(false);
            }
            self.take(&flash.blocks, Domain::Device)
        } else {
            // the plane with the fewest free blocks that has something to reclaim
            let mut best: Option<(PlaneId, u32)> = None;
            for plane in flash.blocks.all_planes() {
                let free = flash.blocks.free_count(plane);
                if free < idle_threshold
                    && best.is_none_or(|(_, f)| free < f)
                    && self
                        .policy
                        .peek(&flash.blocks, Domain::Plane(plane))
                        .is_some()
                {
                    best = Some((plane, free));
                }
            }
            match best {
                Some((plane, _)) => self.take(&flash.blocks, Domain::Plane(plane)),
                None => None,
            }
        };
        let Some(victim) = victim else {
            return Ok(false);
        };
        flash.counters.gc_runs += 1;
        flash.counters.gc_runs_idle += 1;
        map.relocate_block(flash, victim)?;
        wear.level(map, flash, flash.blocks.plane_of_block(victim))?;
        Ok(true)
    }
}
