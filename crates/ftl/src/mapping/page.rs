//! Page-level mapping FTL (SPEC F2–F4): host writes go to a per-plane host write frontier,
//! chosen by striping over the planes in the configured allocation order; GC runs per plane
//! when its free blocks drop below the threshold and moves valid pages into the plane's GC
//! frontier (so copyback applies); static wear-leveling migrates the coldest block of a plane
//! whose erase-count gap exceeds the threshold.

use super::table::PageTable;
use crate::address::{BlockId, Lpa, PlaneId, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use crate::gc::VictimPicker;

/// How far ahead GC relocation prefetches L2P entries, in pages of the victim block.
const RELOCATE_PREFETCH_PAGES: u32 = 8;

/// The page-mapping FTL state.
#[derive(Debug)]
pub(crate) struct PageFtl {
    pub table: PageTable,
    /// Per plane, the open block host writes go to.
    host_frontier: Vec<Option<BlockId>>,
    /// Per plane, the open block GC moves go to.
    gc_frontier: Vec<Option<BlockId>>,
    /// Plane ids in striping order; the write cursor walks it round robin.
    stripe: Vec<PlaneId>,
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
/// `None`), so a closed (and later erased and reused) block is never written through a stale
/// frontier.
fn next_in_frontier(flash: &mut Flash, frontier: &mut Option<BlockId>, block: BlockId) -> Ppa {
    let ppa = flash
        .blocks
        .next_ppa(block)
        .expect("an open frontier has a free page");
    if !flash.blocks.is_open(block) {
        *frontier = None;
    }
    ppa
}

impl PageFtl {
    pub fn new(
        logical_pages: u32,
        physical_pages: u32,
        stripe: Vec<PlaneId>,
        picker: VictimPicker,
        threshold_blocks: u32,
        wl_gap: Option<u32>,
    ) -> Self {
        let planes = stripe.len();
        PageFtl {
            table: PageTable::new(logical_pages, physical_pages),
            host_frontier: vec![None; planes],
            gc_frontier: vec![None; planes],
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
    pub fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        let lpa = write.lpa;
        let planes = self.stripe.len();
        for _ in 0..planes {
            let plane = self.stripe[self.cursor];
            self.cursor = (self.cursor + 1) % planes;
            if let Some(ppa) = self.alloc_host(flash, plane)? {
                if let Some(old) = self.table.map(lpa, ppa) {
                    flash.blocks.invalidate(old);
                }
                flash.blocks.add_valid(ppa);
                flash.program(ppa, write, tag);
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
    pub fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        if let Some(old) = self.table.unmap(lpa) {
            flash.blocks.invalidate(old);
        }
    }

    pub fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        self.table.ppa_of(lpa)
    }

    fn alloc_host(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<Option<Ppa>> {
        let frontier = &mut self.host_frontier[plane.index()];
        if let Some(block) = *frontier {
            return Ok(Some(next_in_frontier(flash, frontier, block)));
        }
        if self.device_gc {
            self.collect_device(flash, plane)?;
        } else {
            self.collect(flash, plane)?;
        }
        // one free block always stays in reserve for GC moves
        if flash.blocks.free_count(plane) < 2 {
            return Ok(None);
        }
        let block = flash.blocks.take_free(plane).expect("free count checked");
        let frontier = &mut self.host_frontier[plane.index()];
        *frontier = Some(block);
        Ok(Some(next_in_frontier(flash, frontier, block)))
    }

    fn alloc_gc(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<Ppa> {
        let frontier = &mut self.gc_frontier[plane.index()];
        let block = match *frontier {
            Some(block) => block,
            None => {
                let Some(block) = flash.blocks.take_free(plane) else {
                    return Err(FtlError::DeviceFull {
                        message: format!("plane {plane}: no free block left for GC moves"),
                    });
                };
                *frontier = Some(block);
                block
            }
        };
        Ok(next_in_frontier(flash, frontier, block))
    }

    /// GC of `plane` until it has `threshold` free blocks (or nothing is left to reclaim), then
    /// one static wear-leveling step if the erase-count gap calls for it.
    fn collect(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<()> {
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
    fn collect_device(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<()> {
        let planes = self.stripe.len() as u32;
        let target = self.threshold_blocks * planes;
        let free = |flash: &Flash| {
            flash
                .blocks
                .all_planes()
                .map(|p| flash.blocks.free_count(p))
                .sum::<u32>()
        };
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
            let free: u32 = flash
                .blocks
                .all_planes()
                .map(|p| flash.blocks.free_count(p))
                .sum();
            if free >= idle_threshold * planes {
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

    /// One static wear-leveling step on `plane` if its erase-count gap calls for it.
    fn wear_level(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<()> {
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
    fn migrate_cold_block(&mut self, flash: &mut Flash, cold: BlockId) -> FtlResult<()> {
        let plane = flash.blocks.plane_of_block(cold);
        let Some(worn) = flash.blocks.take_most_worn_free(plane) else {
            return Ok(());
        };
        let tag = flash.open_job();
        for ppa in flash.blocks.written_pages(cold) {
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
        if flash.blocks.is_open(worn) {
            flash.blocks.close(worn);
        }
        flash.erase(cold, tag);
        Ok(())
    }

    /// Moves every valid page of `victim` into its plane's GC frontier and erases it.
    fn relocate_block(&mut self, flash: &mut Flash, victim: BlockId) -> FtlResult<()> {
        let plane = flash.blocks.plane_of_block(victim);
        let tag = flash.open_job();
        let first = flash.blocks.page(victim, 0).0;
        let end = first + flash.blocks.next_page[victim.index()];
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
    pub fn next_gc_plane(&self, flash: &Flash) -> PlaneId {
        let planes = self.stripe.len();
        let ppb = u64::from(flash.blocks.pages_per_block);
        let mut best: Option<(u64, PlaneId)> = None;
        for step in 0..planes {
            let plane = self.stripe[(self.cursor + step) % planes];
            let left_in_frontier = match self.host_frontier[plane.index()] {
                None => 0,
                Some(frontier) => ppb - u64::from(flash.blocks.next_page[frontier.index()]),
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
        best.map_or(PlaneId(0), |(_, p)| p)
    }

    /// Co-design hint (SPEC F7): the LPAs of the valid pages of the block GC erases next.
    pub fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<Lpa>) {
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

    fn push_valid_lpas(&self, flash: &Flash, block: BlockId, out: &mut Vec<Lpa>) {
        let pages = flash.blocks.pages(block, 0..flash.blocks.pages_per_block);
        out.extend(pages.filter_map(|ppa| self.table.lpa_of(ppa)));
    }

    /// Makes the hint cover the next victim of every plane (see `FtlConfig::hint_all_planes`).
    pub fn set_hint_all_planes(&mut self, all: bool) {
        self.hint_all_planes = all;
    }

    /// The block the next GC erases (per the active policy), if any.
    pub fn next_victim_block(&self, flash: &Flash) -> Option<BlockId> {
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
