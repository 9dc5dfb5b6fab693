//! FAST-style hybrid log-block mapping (SPEC F5, paper 001 §3.1.1; Lee et al., "A log
//! buffer-based flash translation layer using fully-associative sector translation", 2007).
//!
//! Data blocks are block-mapped (as in [`super::block`]). Updates that cannot go in place
//! go to log blocks: one *sequential* log block (SW), owned by one logical block and written
//! from offset 0 in order, and up to `random_log_blocks` *random* log blocks (RW), shared by
//! all logical blocks and page-mapped. Merges:
//! - **switch**: the SW block is full (all offsets written in order) → it becomes the data
//!   block; the old data block is erased;
//! - **partial**: a new SW is needed while the current one is partly written → the missing
//!   offsets are copied into it, then it is switched;
//! - **full**: the RW log is full → for every logical block with a valid page in the oldest RW
//!   block, a fresh block is built from the latest copy of each page; the RW block (then
//!   invalid) and the old data blocks are erased.
//!
//! The next block a full merge erases is the oldest RW block, which is what the co-design hint
//! reports once the RW log is full.

use super::Mapping;
use super::block::{DataBlocks, lbns_per_plane};
use crate::address::{BlockId, Lpa, PlaneId, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::flash::blocks::BlockUse;
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use nandlab_nand::Geometry;
use std::collections::VecDeque;

/// The hybrid FTL state.
#[derive(Debug)]
pub(crate) struct HybridFtl {
    blocks: DataBlocks,
    /// Sequential log block: (owner LBN, block).
    sequential: Option<(u32, BlockId)>,
    /// Random log blocks, oldest first; the last one is being written.
    random: VecDeque<BlockId>,
    random_max: u32,
    /// Round-robin cursor over the stripe for placing random log blocks.
    cursor: usize,
    /// Scratch list of logical blocks to merge.
    merge_list: Vec<u32>,
}

impl HybridFtl {
    pub fn new(
        geometry: &Geometry,
        logical_pages: u32,
        stripe: Vec<PlaneId>,
        _threshold: u32,
        random_log_blocks: u32,
    ) -> Self {
        // every log block might sit in one plane, and a merge needs one more free block
        let lbns = lbns_per_plane(geometry, logical_pages, random_log_blocks + 2);
        HybridFtl {
            blocks: DataBlocks::new(geometry, lbns, stripe),
            sequential: None,
            random: VecDeque::with_capacity(random_log_blocks as usize + 1),
            random_max: random_log_blocks,
            cursor: 0,
            merge_list: Vec::new(),
        }
    }
    pub fn logical_pages(&self) -> u32 {
        self.blocks.logical_pages()
    }

    /// A free page of the random log, full-merging the oldest random log block if needed.
    fn random_page(&mut self, flash: &mut Flash) -> FtlResult<Ppa> {
        if let Some(&last) = self.random.back()
            && flash.blocks.is_open(last)
        {
            return Ok(flash
                .blocks
                .next_ppa(last)
                .expect("an open log block has a free page"));
        }
        if self.random.len() as u32 >= self.random_max {
            let victim = self.random.pop_front().expect("log is full");
            self.full_merge_log(flash, victim)?;
        }
        let planes = self.blocks.stripe.len();
        // place the new log block in the plane with the most free blocks (ties: round robin)
        let mut best: Option<(PlaneId, u32)> = None;
        for step in 0..planes {
            let plane = self.blocks.stripe[(self.cursor + step) % planes];
            let free = flash.blocks.free_count(plane);
            if best.is_none_or(|(_, f)| free > f) {
                best = Some((plane, free));
            }
        }
        self.cursor = (self.cursor + 1) % planes;
        let log = take_free(flash, best.map_or(PlaneId(0), |(p, _)| p))?;
        self.random.push_back(log);
        Ok(flash.blocks.next_ppa(log).expect("fresh block"))
    }

    /// Full merge of every logical block with a valid page in `victim`, then its erase.
    fn full_merge_log(&mut self, flash: &mut Flash, victim: BlockId) -> FtlResult<()> {
        self.merge_list.clear();
        for ppa in flash.blocks.written_pages(victim) {
            if let Some(lpa) = self.blocks.table.lpa_of(ppa) {
                let (lbn, _) = self.blocks.split(lpa);
                if !self.merge_list.contains(&lbn) {
                    self.merge_list.push(lbn);
                }
            }
        }
        let list = std::mem::take(&mut self.merge_list);
        for &lbn in &list {
            flash.counters.merges_full += 1;
            if self.sequential.is_some_and(|(owner, _)| owner == lbn) {
                // the merge takes the latest copies, the sequential log included
                let (_, log) = self.sequential.take().expect("checked");
                self.blocks.full_merge(flash, lbn, None)?;
                self.erase_if_empty(flash, log);
            } else {
                self.blocks.full_merge(flash, lbn, None)?;
            }
        }
        self.merge_list = list;
        let tag = flash.open_job();
        let table = &self.blocks.table;
        flash.erase(victim, tag, |lpa| table.ppa_of(lpa));
        Ok(())
    }

    fn erase_if_empty(&mut self, flash: &mut Flash, block: BlockId) {
        if flash.blocks.valid(block) == 0 {
            let tag = flash.open_job();
            let table = &self.blocks.table;
            flash.erase(block, tag, |lpa| table.ppa_of(lpa));
        }
    }

    /// Switch (full, in-order) or partial merge of the sequential log block.
    fn merge_sequential(&mut self, flash: &mut Flash) -> FtlResult<()> {
        let Some((lbn, log)) = self.sequential.take() else {
            return Ok(());
        };
        let ppb = self.blocks.pages_per_block;
        let written = flash.blocks.next_page(log);
        let job = flash.open_job();
        if written == ppb {
            flash.counters.merges_switch += 1;
        } else {
            flash.counters.merges_partial += 1;
            for offset in written..ppb {
                let lpa = self.blocks.lpa(lbn, offset);
                if self.blocks.table.ppa_of(lpa).is_some() {
                    self.blocks.move_lpa(flash, lpa, log, offset, job);
                }
            }
            // a partly written data block stays open: later offsets may still go in place
        }
        let old = self.blocks.data[lbn as usize];
        self.blocks.data[lbn as usize] = Some(log);
        if let Some(old) = old {
            // pages of the old data block are superseded by the log or were just copied; any
            // still-valid page would be older than a random-log copy only if absent there,
            // and those were moved above
            debug_assert_eq!(flash.blocks.valid(old), 0);
            let table = &self.blocks.table;
            flash.erase(old, job, |lpa| table.ppa_of(lpa));
        }
        Ok(())
    }
}

impl Mapping for HybridFtl {
    fn refcount(&self, ppa: Ppa) -> u32 {
        u32::from(self.blocks.table.is_valid(ppa))
    }
    fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        self.blocks.table.ppa_of(lpa)
    }
    fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        self.blocks.trim(flash, lpa);
    }
    fn check(&self, flash: &Flash) -> Result<(), String> {
        self.blocks.check(flash)
    }

    fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        let (lbn, offset) = self.blocks.split(write.lpa);
        // 1. in place: no data block yet, or the offset is beyond the write pointer
        let block = match self.blocks.data[lbn as usize] {
            Some(block) => block,
            None => {
                let fresh = take_free(flash, self.blocks.plane_of_lbn(lbn))?;
                self.blocks.data[lbn as usize] = Some(fresh);
                fresh
            }
        };
        let owns_sequential = self.sequential.is_some_and(|(owner, _)| owner == lbn);
        if !owns_sequential && offset >= flash.blocks.next_page(block) {
            let ppa = flash.blocks.next_ppa_at(block, offset);
            self.blocks.program(flash, write, ppa, tag);
            return Ok(());
        }
        // 2. offset 0 starts a new sequential log block for this logical block
        if offset == 0 {
            self.merge_sequential(flash)?;
            let log = take_free(flash, self.blocks.plane_of_lbn(lbn))?;
            self.sequential = Some((lbn, log));
            let ppa = flash.blocks.next_ppa_at(log, 0);
            self.blocks.program(flash, write, ppa, tag);
            return Ok(());
        }
        // 3. the next offset of the sequential log block
        if let Some((owner, log)) = self.sequential
            && owner == lbn
            && offset == flash.blocks.next_page(log)
        {
            let ppa = flash.blocks.next_ppa_at(log, offset);
            self.blocks.program(flash, write, ppa, tag);
            if flash.blocks.state(log) == BlockUse::Closed {
                self.merge_sequential(flash)?;
            }
            return Ok(());
        }
        // 4. random log
        let ppa = self.random_page(flash)?;
        self.blocks.program(flash, write, ppa, tag);
        Ok(())
    }

    /// The hint: once the random log is full, the next full merge erases its oldest block.
    fn next_erase_block_valid_lpas(&mut self, flash: &Flash, out: &mut Vec<Lpa>) {
        out.clear();
        if (self.random.len() as u32) < self.random_max {
            return;
        }
        if let Some(&victim) = self.random.front() {
            let table = &self.blocks.table;
            out.extend(
                flash
                    .blocks
                    .written_pages(victim)
                    .filter_map(|ppa| table.lpa_of(ppa)),
            );
        }
    }
}

fn take_free(flash: &mut Flash, plane: PlaneId) -> FtlResult<BlockId> {
    flash
        .blocks
        .take_free(plane)
        .ok_or_else(|| FtlError::DeviceFull {
            message: format!("plane {plane}: no free block for a data or log block"),
        })
}
