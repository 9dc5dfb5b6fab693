//! The GC mechanism of the page mapping (SPEC F3): per-plane and device-wide collection when
//! free blocks run low, background (idle) collection, and the relocation of a victim's valid
//! pages into its plane's GC frontier before the erase. Which victim is taken is the policy's
//! business ([`super::VictimPicker`]); the time it all takes emerges from the chip model.

use crate::address::{BlockId, PlaneId, Ppa};
use crate::error::FtlResult;
use crate::flash::Flash;
use crate::mapping::page::PageFtl;

/// How far ahead GC relocation prefetches L2P entries, in pages of the victim block.
const RELOCATE_PREFETCH_PAGES: u32 = 8;

impl PageFtl {
    /// GC of `plane` until it has `threshold` free blocks (or nothing is left to reclaim), then
    /// one static wear-leveling step if the erase-count gap calls for it.
    pub(crate) fn collect(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<()> {
        let mut erased = false;
        // every victim frees at least one page net, so a plane's block count bounds the loop
        for _ in 0..flash.blocks.blocks_per_plane() {
            if flash.blocks.free_count(plane) >= self.threshold_blocks {
                break;
            }
            let Some(victim) = self.picker.take(&flash.blocks, plane) else {
                break;
            };
            flash.counters.gc_runs += 1;
            self.relocate_block(flash, victim)?;
            erased = true;
        }
        if erased {
            self.wear_level(flash, plane)?;
        }
        Ok(())
    }

    /// Device-wide GC: while the device has fewer than threshold × planes free blocks (with a
    /// device-wide reserve: reserve + threshold), the policy's victim among all blocks is
    /// collected (its pages move within its plane; with the device reserve into the device's
    /// one GC block, on any plane). Static
    /// wear-leveling then looks at each collected plane and at `plane`, which asked for a block.
    pub(crate) fn collect_device(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<()> {
        let planes = self.stripe.len() as u32;
        let target = self.device_free_target(self.threshold_blocks);
        for _ in 0..planes * flash.blocks.blocks_per_plane() {
            if flash.blocks.free_total() >= target {
                break;
            }
            let Some(victim) = self.picker.take_device(&flash.blocks) else {
                break;
            };
            flash.counters.gc_runs += 1;
            self.relocate_block(flash, victim)?;
            let victim_plane = flash.blocks.plane_of_block(victim);
            self.wear_level(flash, victim_plane)?;
        }
        self.wear_level(flash, plane)
    }

    /// Free blocks device-wide GC keeps for a per-plane `threshold`: threshold × planes, or
    /// with a device-wide reserve, reserve + threshold (the threshold then counts device-wide).
    fn device_free_target(&self, threshold: u32) -> u32 {
        if self.device_reserve > 0 {
            self.device_reserve + threshold
        } else {
            threshold * self.stripe.len() as u32
        }
    }

    /// One background GC step: collects one victim where free blocks are fewest, if below
    /// `idle_threshold` blocks per plane (device scope: in total). Returns whether it did.
    pub fn collect_idle(&mut self, flash: &mut Flash, idle_threshold: u32) -> FtlResult<bool> {
        let victim = if self.device_gc {
            if flash.blocks.free_total() >= self.device_free_target(idle_threshold) {
                return Ok(false);
            }
            self.picker.take_device(&flash.blocks)
        } else {
            // the plane with the fewest free blocks that has something to reclaim
            let mut best: Option<(PlaneId, u32)> = None;
            for plane in flash.blocks.all_planes() {
                let free = flash.blocks.free_count(plane);
                if free < idle_threshold
                    && best.is_none_or(|(_, f)| free < f)
                    && self.picker.peek(&flash.blocks, plane).is_some()
                {
                    best = Some((plane, free));
                }
            }
            match best {
                Some((plane, _)) => self.picker.take(&flash.blocks, plane),
                None => None,
            }
        };
        let Some(victim) = victim else {
            return Ok(false);
        };
        flash.counters.gc_runs += 1;
        flash.counters.gc_runs_idle += 1;
        self.relocate_block(flash, victim)?;
        self.wear_level(flash, flash.blocks.plane_of_block(victim))?;
        Ok(true)
    }

    /// Moves every valid page of `victim` into its plane's GC frontier (with superblocks: its
    /// group's GC superblock, `mapping/superblock.rs`) and erases it.
    pub(crate) fn relocate_block(&mut self, flash: &mut Flash, victim: BlockId) -> FtlResult<()> {
        if self.superpage > 1 {
            return self.relocate_into_superblock(flash, victim);
        }
        let plane = flash.blocks.plane_of_block(victim);
        let id = flash.placement.of_block(victim);
        let tag = flash.open_job();
        let first = flash.blocks.page(victim, 0).0;
        let end = first + flash.blocks.next_page(victim);
        for ppa in (first..end).map(Ppa) {
            // the L2P entries of the moved pages are random: ask for them a few pages ahead
            if ppa.0 + RELOCATE_PREFETCH_PAGES < end
                && let Some(ahead) = self.table.lpa_of(Ppa(ppa.0 + RELOCATE_PREFETCH_PAGES))
            {
                self.table.prefetch_l2p(ahead);
            }
            if !self.table.is_valid(ppa) {
                continue;
            }
            let target = self.alloc_gc(flash, plane, id)?;
            self.table.relocate(ppa, target);
            flash.blocks.invalidate(ppa);
            flash.blocks.add_valid(target);
            flash.move_page(ppa, target, tag);
        }
        let table = &self.table;
        flash.erase(victim, tag, |lpa| table.ppa_of(lpa));
        if flash.pads() {
            self.drop_closed_frontiers(flash);
        }
        Ok(())
    }
}
