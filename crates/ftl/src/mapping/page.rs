//! Page-level mapping FTL (SPEC F2–F4): host writes go to a per-plane host write frontier,
//! chosen by striping over the planes in the configured allocation order; GC runs per plane
//! when its free blocks drop below the threshold and moves valid pages into the plane's GC
//! frontier (so copyback applies); static wear-leveling migrates the coldest block of a plane
//! whose erase-count gap exceeds the threshold.

use super::table::PageTable;
use crate::error::{FtlError, FtlResult};
use crate::flash::Flash;
use crate::flash::blocks::{BlockUse, NONE};
use crate::flash::emit::Tag;
use crate::gc::VictimPicker;

/// How far ahead GC relocation prefetches L2P entries, in pages of the victim block.
const RELOCATE_PREFETCH_PAGES: u32 = 8;

/// The page-mapping FTL state.
#[derive(Debug)]
pub(crate) struct PageFtl {
    pub table: PageTable,
    host_frontier: Vec<u32>,
    gc_frontier: Vec<u32>,
    /// Plane ids in striping order; the write cursor walks it round robin.
    stripe: Vec<u32>,
    cursor: usize,
    picker: VictimPicker,
    threshold_blocks: u32,
    /// Erase-count gap for static wear-leveling (None: round-robin allocation only).
    wl_gap: Option<u32>,
    /// The co-design hint covers every plane's next victim.
    hint_all_planes: bool,
    /// One device-wide GC stream instead of one per plane.
    device_gc: bool,
}

/// The next page of an open write frontier; a frontier that fills up is dropped (set to
/// `NONE`), so a closed (and later erased and reused) block is never written through a stale
/// frontier.
fn next_in_frontier(flash: &mut Flash, frontier: &mut u32) -> u32 {
    let ppa = flash
        .blocks
        .next_ppa(*frontier)
        .expect("an open frontier has a free page");
    if flash.blocks.state[*frontier as usize] != BlockUse::Open {
        *frontier = NONE;
    }
    ppa
}

impl PageFtl {
    pub fn new(
        logical_pages: u32,
        physical_pages: u32,
        stripe: Vec<u32>,
        picker: VictimPicker,
        threshold_blocks: u32,
        wl_gap: Option<u32>,
    ) -> Self {
        let planes = stripe.len();
        PageFtl {
            table: PageTable::new(logical_pages, physical_pages),
            host_frontier: vec![NONE; planes],
            gc_frontier: vec![NONE; planes],
            stripe,
            cursor: 0,
            picker,
            threshold_blocks,
            wl_gap,
            hint_all_planes: false,
            device_gc: false,
        }
    }

    /// Selects per-plane or device-wide GC (see `FtlConfig::gc_scope`).
    pub fn set_device_gc(&mut self, device: bool) {
        self.device_gc = device;
    }

    /// Writes one whole logical page (the program op carries `tag`).
    pub fn write(
        &mut self,
        flash: &mut Flash,
        lpa: u32,
        tag: Tag,
        data: Option<&[u8]>,
    ) -> FtlResult<()> {
        let planes = self.stripe.len();
        for _ in 0..planes {
            let plane = self.stripe[self.cursor];
            self.cursor = (self.cursor + 1) % planes;
            if let Some(ppa) = self.alloc_host(flash, plane)? {
                let old = self.table.map(lpa, ppa);
                if old != NONE {
                    flash.blocks.invalidate(old);
                }
                flash.blocks.add_valid(ppa);
                flash.program(ppa, tag, data);
                return Ok(());
            }
        }
        Err(FtlError::DeviceFull {
            message: format!(
                "no plane of {planes} has a free block or a block with invalid pages to reclaim (writing lpa {lpa})"
            ),
        })
    }

    /// Forgets `lpa` (TRIM).
    pub fn trim(&mut self, flash: &mut Flash, lpa: u32) {
        let old = self.table.unmap(lpa);
        if old != NONE {
            flash.blocks.invalidate(old);
        }
    }

    pub fn locate(&self, lpa: u32) -> u32 {
        self.table.ppa_of(lpa)
    }

    fn alloc_host(&mut self, flash: &mut Flash, plane: u32) -> FtlResult<Option<u32>> {
        if self.host_frontier[plane as usize] == NONE {
            if self.device_gc {
                self.collect_device(flash, plane)?;
            } else {
                self.collect(flash, plane)?;
            }
            // one free block always stays in reserve for GC moves
            if flash.blocks.free_count(plane) < 2 {
                return Ok(None);
            }
            self.host_frontier[plane as usize] =
                flash.blocks.take_free(plane).expect("free count checked");
        }
        Ok(Some(next_in_frontier(
            flash,
            &mut self.host_frontier[plane as usize],
        )))
    }

    fn alloc_gc(&mut self, flash: &mut Flash, plane: u32) -> FtlResult<u32> {
        if self.gc_frontier[plane as usize] == NONE {
            let Some(block) = flash.blocks.take_free(plane) else {
                return Err(FtlError::DeviceFull {
                    message: format!("plane {plane}: no free block left for GC moves"),
                });
            };
            self.gc_frontier[plane as usize] = block;
        }
        Ok(next_in_frontier(
            flash,
            &mut self.gc_frontier[plane as usize],
        ))
    }

    /// GC of `plane` until it has `threshold` free blocks (or nothing is left to reclaim), then
    /// one static wear-leveling step if the erase-count gap calls for it.
    fn collect(&mut self, flash: &mut Flash, plane: u32) -> FtlResult<()> {
        let mut erased = false;
        // every victim frees at least one page net, so a plane's block count bounds the loop
        for _ in 0..flash.blocks.blocks_per_plane {
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

    /// Device-wide GC: while the device has fewer than threshold × planes free blocks, the
    /// policy's victim among all blocks is collected (its pages move within its plane). Static
    /// wear-leveling then looks at each collected plane and at `plane`, which asked for a block.
    fn collect_device(&mut self, flash: &mut Flash, plane: u32) -> FtlResult<()> {
        let planes = self.stripe.len() as u32;
        let target = self.threshold_blocks * planes;
        let free = |flash: &Flash| (0..planes).map(|p| flash.blocks.free_count(p)).sum::<u32>();
        for _ in 0..planes * flash.blocks.blocks_per_plane {
            if free(flash) >= target {
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

    /// One background GC step: collects one victim where free blocks are fewest, if below
    /// `idle_threshold` blocks per plane (device scope: in total). Returns whether it did.
    pub fn collect_idle(&mut self, flash: &mut Flash, idle_threshold: u32) -> FtlResult<bool> {
        let planes = self.stripe.len() as u32;
        let victim = if self.device_gc {
            let free: u32 = (0..planes).map(|p| flash.blocks.free_count(p)).sum();
            if free >= idle_threshold * planes {
                return Ok(false);
            }
            self.picker.take_device(&flash.blocks)
        } else {
            // the plane with the fewest free blocks that has something to reclaim
            let mut best: Option<(u32, u32)> = None;
            for plane in 0..planes {
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

    /// One static wear-leveling step on `plane` if its erase-count gap calls for it.
    fn wear_level(&mut self, flash: &mut Flash, plane: u32) -> FtlResult<()> {
        if let Some(gap) = self.wl_gap
            && flash.blocks.free_count(plane) >= 2
            && let Some(coldest) = crate::wear::static_wl_candidate(&flash.blocks, plane, gap)
        {
            flash.counters.wl_migrations += 1;
            self.migrate_cold_block(flash, coldest)?;
        }
        Ok(())
    }

    /// Static wear-leveling: moves the valid pages of the least-worn block into the most-worn
    /// free block of the plane (which then rests under cold data) and erases the cold block.
    fn migrate_cold_block(&mut self, flash: &mut Flash, cold: u32) -> FtlResult<()> {
        let plane = flash.blocks.plane_of_block(cold);
        let Some(worn) = flash.blocks.take_most_worn_free(plane) else {
            return Ok(());
        };
        let tag = flash.open_job();
        let ppb = flash.blocks.pages_per_block;
        let first = cold * ppb;
        for ppa in first..first + flash.blocks.next_page[cold as usize] {
            if !self.table.is_valid(ppa) {
                continue;
            }
            let target = flash
                .blocks
                .next_ppa(worn)
                .expect("a block holds any block's data");
            self.table.relocate(ppa, target);
            flash.blocks.invalidate(ppa);
            flash.blocks.add_valid(target);
            flash.move_page(ppa, target, tag);
        }
        if flash.blocks.state[worn as usize] == BlockUse::Open {
            flash.blocks.close(worn);
        }
        flash.erase(cold, tag);
        Ok(())
    }

    /// Moves every valid page of `victim` into its plane's GC frontier and erases it.
    fn relocate_block(&mut self, flash: &mut Flash, victim: u32) -> FtlResult<()> {
        let plane = flash.blocks.plane_of_block(victim);
        let tag = flash.open_job();
        let ppb = flash.blocks.pages_per_block;
        let first = victim * ppb;
        let end = first + flash.blocks.next_page[victim as usize];
        for ppa in first..end {
            // the L2P entries of the moved pages are random: ask for them a few pages ahead
            if ppa + RELOCATE_PREFETCH_PAGES < end {
                let ahead = self.table.lpa_of(ppa + RELOCATE_PREFETCH_PAGES);
                if ahead != NONE {
                    self.table.prefetch_l2p(ahead);
                }
            }
            if !self.table.is_valid(ppa) {
                continue;
            }
            let target = self.alloc_gc(flash, plane)?;
            self.table.relocate(ppa, target);
            flash.blocks.invalidate(ppa);
            flash.blocks.add_valid(target);
            flash.move_page(ppa, target, tag);
        }
        flash.erase(victim, tag);
        Ok(())
    }

    /// The plane whose GC comes first if host writes continue: the fewest host page writes
    /// until its host frontier is full with fewer than `threshold` free blocks (ties: the
    /// plane reached first by the write cursor).
    pub fn next_gc_plane(&self, flash: &Flash) -> u32 {
        let planes = self.stripe.len();
        let ppb = u64::from(flash.blocks.pages_per_block);
        let mut best: Option<(u64, u32)> = None;
        for step in 0..planes {
            let plane = self.stripe[(self.cursor + step) % planes];
            let frontier = self.host_frontier[plane as usize];
            let left_in_frontier = if frontier == NONE {
                0
            } else {
                ppb - u64::from(flash.blocks.next_page[frontier as usize])
            };
            // blocks the host can still take before a need finds free < threshold
            let spare_blocks = u64::from(
                (flash.blocks.free_count(plane) + 1).saturating_sub(self.threshold_blocks),
            );
            let pages = left_in_frontier + spare_blocks * ppb;
            let writes = pages * planes as u64 + step as u64;
            if best.is_none_or(|(w, _)| writes < w) {
                best = Some((writes, plane));
            }
        }
        best.map_or(0, |(_, p)| p)
    }

    /// Co-design hint (SPEC F7): the LPAs of the valid pages of the block GC erases next.
    pub fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<u32>) {
        out.clear();
        if self.device_gc {
            self.picker.commit_device(&flash.blocks);
            if let Some(victim) = self.picker.peek_device(&flash.blocks) {
                self.push_valid_lpas(flash, victim, out);
            }
            return;
        }
        let first = self.next_gc_plane(flash);
        let planes = self.stripe.len();
        let start = self.stripe.iter().position(|&p| p == first).unwrap_or(0);
        let count = if self.hint_all_planes { planes } else { 1 };
        for step in 0..count {
            let plane = self.stripe[(start + step) % planes];
            self.picker.commit(&flash.blocks, plane);
            if let Some(victim) = self.picker.peek(&flash.blocks, plane) {
                self.push_valid_lpas(flash, victim, out);
            }
        }
    }

    fn push_valid_lpas(&self, flash: &Flash, block: u32, out: &mut Vec<u32>) {
        let ppb = flash.blocks.pages_per_block;
        for ppa in block * ppb..(block + 1) * ppb {
            let lpa = self.table.lpa_of(ppa);
            if lpa != NONE {
                out.push(lpa);
            }
        }
    }

    /// Makes the hint cover the next victim of every plane (see `FtlConfig::hint_all_planes`).
    pub fn set_hint_all_planes(&mut self, all: bool) {
        self.hint_all_planes = all;
    }

    /// The block the next GC erases (per the active policy), if any.
    pub fn next_victim_block(&self, flash: &Flash) -> Option<u32> {
        if self.device_gc {
            return self.picker.peek_device(&flash.blocks);
        }
        self.picker.peek(&flash.blocks, self.next_gc_plane(flash))
    }

    /// Full consistency check of the tables against the block counts.
    pub fn check(&self, flash: &Flash) -> Result<(), String> {
        let per_block = self.table.check(flash.blocks.pages_per_block)?;
        for (block, (&mapped, &counted)) in per_block.iter().zip(&flash.blocks.valid).enumerate() {
            if mapped != counted {
                return Err(format!(
                    "block {block}: {mapped} pages mapped but valid count {counted}"
                ));
            }
        }
        Ok(())
    }
}
