//! Page-level mapping FTL (SPEC F2–F4): host writes go to a per-plane host write frontier,
//! chosen by striping over the planes in the configured allocation order. [`PageFtl`] composes
//! the mapping's own state ([`PageMap`]: the L2P table and the write frontiers) with the
//! garbage collector ([`Collector`], `gc/`) and static wear-leveling ([`WearLeveler`],
//! `wear/`): when a host write needs a block, the collector picks victims and the map moves
//! their valid pages into the plane's GC frontier (so copyback applies) and erases them.

use super::Mapping;
use super::table::PageTable;
use crate::address::{BlockId, Lpa, PlaneId, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::flash::blocks::BlockUse;
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use crate::gc::{Collector, GcSpace};
use crate::wear::{ColdMigration, WearLeveler};

/// How far ahead GC relocation prefetches L2P entries, in pages of the victim block.
const RELOCATE_PREFETCH_PAGES: u32 = 8;

/// The page mapping's own settings, from `FtlConfig`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageConfig {
    /// Free blocks kept device-wide for GC moves (`ftl.gc_device_reserve_blocks`; 0: one per
    /// plane).
    pub device_reserve_blocks: u32,
    /// Superpage width in planes (`ftl.superpage_planes`; 1: per-plane frontiers).
    pub superpage_planes: u32,
}

/// The page-mapping FTL: the map, its garbage collector and its wear-leveler, plus the
/// transactional mode (X-FTL, `mapping/txn.rs`).
#[derive(Debug)]
pub(crate) struct PageFtl {
    pub(crate) map: PageMap,
    pub(crate) gc: Collector,
    pub(crate) wear: WearLeveler,
    /// Transactional mode (X-FTL, `mapping/txn.rs`); `None`: off.
    pub(crate) tx: Option<Box<super::txn::TxMap>>,
}

/// The page mapping's state: the L2P table and the write frontiers (per plane, or per
/// superpage group, `mapping/superblock.rs`).
#[derive(Debug)]
pub(crate) struct PageMap {
    pub table: PageTable,
    /// Per placement id and plane (`id × planes + plane`), the open block host writes go to.
    pub(crate) host_frontier: Vec<Option<BlockId>>,
    /// Per placement id and plane, the open block GC moves go to.
    pub(crate) gc_frontier: Vec<Option<BlockId>>,
    /// Placement ids (1: off).
    pub(crate) placement_ids: u16,
    /// Plane ids in striping order; the write cursor walks it round robin.
    pub(crate) stripe: Vec<PlaneId>,
    pub(crate) cursor: usize,
    /// Free blocks kept device-wide for GC moves (0: one per plane instead).
    pub(crate) device_reserve: u32,
    /// Superpage width in planes (1: off; `mapping/superblock.rs`).
    pub(crate) superpage: u32,
    /// Per placement id and superpage group, the member of the host superblock written next.
    pub(crate) host_next: Vec<u32>,
    /// Per placement id and superpage group, the member of the GC superblock written next.
    pub(crate) gc_next: Vec<u32>,
}

/// The next page of an open write frontier; a frontier that fills up is dropped (set to
/// `None`), so a closed (and later erased and reused) block is never written through a stale
/// frontier.
pub(crate) fn next_in_frontier(
    flash: &mut Flash,
    frontier: &mut Option<BlockId>,
    block: BlockId,
) -> Ppa {
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
    pub fn new(map: PageMap, gc: Collector, wear: WearLeveler) -> Self {
        PageFtl {
            map,
            gc,
            wear,
            tx: None,
        }
    }

    /// A page of `plane`'s host frontier for placement id `id`, after the GC a block opening
    /// calls for; `None` when the plane cannot open a block.
    pub(crate) fn alloc_host(
        &mut self,
        flash: &mut Flash,
        plane: PlaneId,
        id: u16,
    ) -> FtlResult<Option<Ppa>> {
        let map = &mut self.map;
        if map.superpage > 1 {
            if map.super_frontier_open(plane, id) {
                return Ok(Some(map.next_member(flash, plane, id, false)));
            }
            self.gc
                .collect_for_host(&mut self.map, &self.wear, flash, plane)?;
            return Ok(self.map.open_host_super(flash, plane, id));
        }
        let at = map.frontier_index(plane, id);
        let frontier = &mut map.host_frontier[at];
        if let Some(block) = *frontier {
            return Ok(Some(next_in_frontier(flash, frontier, block)));
        }
        self.gc
            .collect_for_host(&mut self.map, &self.wear, flash, plane)?;
        Ok(self.map.open_host(flash, plane, id, at))
    }

    /// Programs a fresh page with `write` and maps `at` to it (`at` may differ from the OOB
    /// LPA of `write`: a shadow).
    pub(crate) fn write_mapped(
        &mut self,
        flash: &mut Flash,
        at: Lpa,
        write: HostWrite<'_>,
        tag: Tag,
    ) -> FtlResult<()> {
        let planes = self.map.stripe.len();
        for _ in 0..planes {
            let plane = self.map.stripe[self.map.cursor];
            self.map.cursor = (self.map.cursor + 1) % planes;
            if let Some(ppa) = self.alloc_host(flash, plane, write.placement)? {
                // (after the allocation's GC, which may have moved the current page)
                let base = if write.data.is_over() {
                    self.locate(super::txn::host_lpa(write.lpa))
                } else {
                    None
                };
                if let Some(old) = self.map.table.map(at, ppa) {
                    flash.invalidate(old);
                }
                flash.blocks.add_valid(ppa);
                flash.program(ppa, write, base, tag);
                if flash.bad_blocks.as_ref().is_some_and(|b| b.programs_fail()) {
                    self.check_program_status(flash, ppa)?;
                }
                return Ok(());
            }
        }
        Err(FtlError::DeviceFull {
            message: format!(
                "no plane of {planes} has a free block or a block with invalid pages to reclaim (writing lpa {})",
                super::txn::host_lpa(write.lpa)
            ),
        })
    }
}

impl PageMap {
    pub fn new(
        logical_pages: u32,
        physical_pages: u32,
        stripe: Vec<PlaneId>,
        config: PageConfig,
        placement_ids: u16,
    ) -> Self {
        let planes = stripe.len();
        let frontiers = planes * usize::from(placement_ids);
        let w = config.superpage_planes.max(1);
        debug_assert_eq!(planes % w as usize, 0, "superpage groups tile the planes");
        let stripe = super::superblock::group_stripe(&stripe, w);
        let groups = frontiers / w as usize;
        PageMap {
            table: PageTable::new(logical_pages, physical_pages),
            host_frontier: vec![None; frontiers],
            gc_frontier: vec![None; frontiers],
            placement_ids,
            stripe,
            cursor: 0,
            device_reserve: config.device_reserve_blocks,
            superpage: w,
            host_next: if w > 1 { vec![0; groups] } else { Vec::new() },
            gc_next: if w > 1 { vec![0; groups] } else { Vec::new() },
        }
    }

    /// Index of the write frontiers of placement id `id` on `plane`.
    #[inline]
    pub(crate) fn frontier_index(&self, plane: PlaneId, id: u16) -> usize {
        usize::from(id) * self.stripe.len() + plane.index()
    }

    /// Forgets frontiers whose block paired-page padding filled (closed).
    pub(crate) fn drop_closed_frontiers(&mut self, flash: &Flash) {
        for frontier in self.host_frontier.iter_mut().chain(&mut self.gc_frontier) {
            if frontier.is_some_and(|b| !flash.blocks.is_open(b)) {
                *frontier = None;
            }
        }
    }

    /// Opens a free block of `plane` as the host frontier `at` (placement id `id`) and returns
    /// its first page; `None` when taking it would eat into the GC reserve.
    fn open_host(&mut self, flash: &mut Flash, plane: PlaneId, id: u16, at: usize) -> Option<Ppa> {
        if self.device_reserve > 0 {
            // the device's reserve stays for GC moves: the host takes a block of its plane
            // only while the device has a free block beyond it
            if flash.blocks.free_count(plane) == 0
                || flash.blocks.free_total() <= self.device_reserve
            {
                return None;
            }
        } else if flash.blocks.free_count(plane) < 1 + u32::from(self.placement_ids) {
            // a free block per placement id always stays in reserve for GC moves
            return None;
        }
        let block = flash.blocks.take_free(plane).expect("free count checked");
        flash.placement.open(block, id);
        let frontier = &mut self.host_frontier[at];
        *frontier = Some(block);
        Some(next_in_frontier(flash, frontier, block))
    }

    /// A page for a GC move of data of placement id `id` on `plane`.
    pub(crate) fn alloc_gc(
        &mut self,
        flash: &mut Flash,
        plane: PlaneId,
        id: u16,
    ) -> FtlResult<Ppa> {
        if self.device_reserve > 0 {
            return self.alloc_gc_device(flash, plane);
        }
        // (superblocks: `relocate` calls `alloc_gc_super` instead)
        debug_assert_eq!(self.superpage, 1);
        let at = self.frontier_index(plane, id);
        let frontier = &mut self.gc_frontier[at];
        let block = match *frontier {
            Some(block) => block,
            None => {
                let Some(block) = flash.blocks.take_free(plane) else {
                    return Err(FtlError::DeviceFull {
                        message: format!("plane {plane}: no free block left for GC moves"),
                    });
                };
                flash.placement.open(block, id);
                *frontier = Some(block);
                block
            }
        };
        Ok(next_in_frontier(flash, frontier, block))
    }

    /// A page for a GC move under the device-wide reserve: the device's one open GC block,
    /// wherever it is; when none is open, a free block of `plane` (the victim's), else of the
    /// plane with the most free blocks (the reserve is GC's to take).
    fn alloc_gc_device(&mut self, flash: &mut Flash, plane: PlaneId) -> FtlResult<Ppa> {
        let open = self.gc_frontier.iter().position(Option::is_some);
        let at = match open {
            Some(at) => at,
            None => {
                let from = if flash.blocks.free_count(plane) > 0 {
                    plane
                } else {
                    flash
                        .blocks
                        .all_planes()
                        .max_by_key(|&p| (flash.blocks.free_count(p), std::cmp::Reverse(p.0)))
                        .expect("a device has a plane")
                };
                let Some(block) = flash.blocks.take_free(from) else {
                    return Err(FtlError::DeviceFull {
                        message: format!(
                            "no free block left on the device for GC moves (device reserve {} blocks)",
                            self.device_reserve
                        ),
                    });
                };
                flash.placement.open(block, 0);
                let at = self.frontier_index(from, 0);
                self.gc_frontier[at] = Some(block);
                at
            }
        };
        let block = self.gc_frontier[at].expect("an open GC frontier");
        Ok(next_in_frontier(flash, &mut self.gc_frontier[at], block))
    }
}

impl GcSpace for PageMap {
    /// Moves every valid page of `victim` into its plane's GC frontier (with superblocks: its
    /// group's GC superblock, `mapping/superblock.rs`) and erases it.
    fn relocate_block(&mut self, flash: &mut Flash, victim: BlockId) -> FtlResult<()> {
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

    fn stripe(&self) -> &[PlaneId] {
        &self.stripe
    }

    fn cursor(&self) -> usize {
        self.cursor
    }

    fn host_frontier(&self, plane: PlaneId) -> Option<BlockId> {
        self.host_frontier[plane.index()]
    }

    fn superpage(&self) -> u32 {
        self.superpage
    }

    fn group_first(&self, plane: PlaneId) -> u32 {
        PageMap::group_first(self, plane)
    }

    fn push_valid_lpas(&self, flash: &Flash, block: BlockId, out: &mut Vec<Lpa>) {
        let pages = flash.blocks.pages(block, 0..flash.blocks.pages_per_block());
        out.extend(pages.filter_map(|ppa| self.table.lpa_of(ppa)));
    }
}

impl Mapping for PageFtl {
    /// Writes one whole logical page (the program op carries `tag`).
    fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        let lpa = write.lpa;
        if self.tx.is_some() && self.tx_captures(lpa) {
            return self.tx_write(flash, write, tag);
        }
        self.write_mapped(flash, lpa, write, tag)
    }

    /// Forgets `lpa` (TRIM).
    fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        if self.tx.is_some() {
            self.tx_trim(flash, lpa);
        }
        if let Some(old) = self.map.table.unmap(lpa) {
            flash.invalidate(old);
        }
    }

    fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        if self.tx.is_some()
            && let Some(shadow) = self.tx_shadow(lpa)
        {
            return self.map.table.ppa_of(shadow);
        }
        self.map.table.ppa_of(lpa)
    }

    fn pad_open_blocks(&mut self, flash: &mut Flash, tag: Tag) {
        for i in 0..self.map.host_frontier.len() {
            for block in [self.map.host_frontier[i], self.map.gc_frontier[i]]
                .into_iter()
                .flatten()
            {
                flash.pad_word_lines(block, tag);
            }
        }
        self.map.drop_closed_frontiers(flash);
    }

    /// Co-design hint (SPEC F7): the LPAs of the valid pages of the block GC erases next.
    fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<Lpa>) {
        self.gc.hint_valid_lpas(&self.map, flash, out);
    }
    /// The block the next GC erases (per the active policy), if any.
    fn next_victim_block(&self, flash: &Flash) -> Option<BlockId> {
        self.gc.next_victim_block(&self.map, flash)
    }
    /// Full consistency check of the tables against the block counts.
    fn check(&self, flash: &Flash) -> Result<(), String> {
        let per_block = self.map.table.check(flash.blocks.pages_per_block())?;
        for (block, (&mapped, &counted)) in per_block
            .iter()
            .zip(flash.blocks.valid_counts())
            .enumerate()
        {
            if mapped != counted {
                return Err(format!(
                    "block {block}: {mapped} pages mapped but valid count {counted}"
                ));
            }
        }
        Ok(())
    }

    fn share(&mut self, flash: &mut Flash, lpa: Lpa, same_as: Lpa) -> FtlResult<()> {
        let Some(ppa) = self.map.table.ppa_of(same_as) else {
            return Err(FtlError::BadRequest {
                message: format!(
                    "a duplicate write of lpa {lpa} names lpa {same_as}, which is not mapped"
                ),
            });
        };
        if let Some(old) = self.map.table.share(lpa, ppa) {
            flash.invalidate(old);
        }
        flash.counters.host_pages_shared += 1;
        Ok(())
    }

    fn refcount(&self, ppa: Ppa) -> u32 {
        self.map.table.refcount(ppa)
    }

    fn collect_idle(&mut self, flash: &mut Flash) -> FtlResult<bool> {
        self.gc.collect_idle(&mut self.map, &self.wear, flash)
    }

    #[inline]
    fn prefetch_far(&self, lpa: Lpa) {
        self.map.table.prefetch_l2p(lpa);
    }

    #[inline]
    fn prefetch_near(&self, lpa: Lpa) {
        self.map.table.prefetch_old_page(lpa);
    }
}

impl PageFtl {
    /// Read reclaim (`flash/read_reclaim.rs`): moves the valid pages of `block` like a GC
    /// victim and erases it; its moves count as read-reclaim copies, not GC copies, and read
    /// each page off the chip (never by copyback: the data goes through ECC). An open
    /// block (a write frontier) is closed first (its frontier opens a new block); not so in
    /// a superblock, nor a block no longer holding data: then `false`, nothing done.
    pub(crate) fn reclaim_block(&mut self, flash: &mut Flash, block: BlockId) -> FtlResult<bool> {
        match flash.blocks.state(block) {
            BlockUse::Closed => {}
            BlockUse::Open if self.map.superpage <= 1 => {
                flash.blocks.close(block);
                self.map.drop_closed_frontiers(flash);
            }
            _ => return Ok(false),
        }
        let copies = flash.counters.gc_page_copies;
        // each page is read off the chip through ECC and read-retry (a disturbed page may
        // need them), never copied back inside the chip as read; a read still failing is
        // counted in `uncorrectable_internal_reads` (issue 34)
        let copyback = std::mem::replace(&mut flash.copyback, false);
        let relocated = self.map.relocate_block(flash, block);
        flash.copyback = copyback;
        relocated?;
        let moved = flash.counters.gc_page_copies - copies;
        flash.counters.gc_page_copies = copies;
        flash.counters.read_reclaim_page_copies += moved;
        flash.counters.read_reclaims += 1;
        if let Some(rr) = &mut flash.read_reclaim {
            rr.reclaimed(moved);
        }
        Ok(true)
    }
}

impl PageFtl {
    /// Program status (`flash/bad_blocks.rs`): if the program of `ppa` failed, the block's
    /// valid pages (the page just written among them) are rewritten elsewhere, like a GC
    /// victim's, and the block is retired. Not in a superblock (there a failure is ignored).
    #[cold]
    #[inline(never)]
    fn check_program_status(&mut self, flash: &mut Flash, ppa: Ppa) -> FtlResult<()> {
        let block = flash.blocks.block_of(ppa);
        let bad = flash.bad_blocks.as_mut().expect("checked by the caller");
        if !bad.program_failed(&flash.blocks, block) {
            return Ok(());
        }
        if self.map.superpage > 1 {
            return Ok(());
        }
        if flash.blocks.is_open(block) {
            flash.blocks.close(block);
            self.map.drop_closed_frontiers(flash);
        }
        self.map.relocate_block(flash, block)?;
        let bad = flash.bad_blocks.as_mut().expect("checked by the caller");
        bad.retire_after_program_failure(&mut flash.blocks, block);
        Ok(())
    }
}

impl ColdMigration for PageMap {
    /// Moves the valid pages of the least-worn block into the most-worn free block of the plane
    /// (which then rests under cold data) and erases the cold block.
    fn migrate_cold_block(&mut self, flash: &mut Flash, cold: BlockId) {
        let plane = flash.blocks.plane_of_block(cold);
        let Some(worn) = flash.blocks.take_most_worn_free(plane) else {
            return;
        };
        let id = flash.placement.of_block(cold);
        flash.placement.open(worn, id);
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
        let table = &self.table;
        flash.erase(cold, tag, |lpa| table.ppa_of(lpa));
        if flash.pads() {
            self.drop_closed_frontiers(flash);
        }
    }
}
