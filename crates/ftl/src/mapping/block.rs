//! Block-level mapping (SPEC F5, paper 001 §3.1.1): logical block number (LBN) → physical
//! block, page offset fixed. A write lands in place when its offset is at or beyond the
//! block's write pointer (the in-order rule allows skipping forward); otherwise the block is
//! merged into a fresh block of the same plane: pages before the offset are copied, the new
//! page is programmed, pages after it are copied, and the old block is erased.
//!
//! Sequential rewrites take the switch path (a replacement block, as in NFTL and the switch
//! merge of log-block FTLs): a write to offset 0 of a written LBN opens a fresh block of its
//! plane and is programmed there; the LBN's next writes at the offset that follows go there
//! too; when the last offset is written the replacement becomes the LBN's data block and the
//! old block is erased: one erase and no copies for a whole-block rewrite (the PCM log
//! region's merge-and-sequential-flush, paper 001 §3.2.3). Any other write on the plane ends
//! the replacement first: the offsets not yet rewritten are copied from the old block (a
//! partial merge, the cost a full merge would have had), and the old block is erased. A plane
//! has one replacement open at a time (it uses the plane's one reserved free block), and a
//! trim or a read needs nothing special: the page table knows where each page is.
//!
//! LBN `n` lives in plane `stripe[n % planes]`, so merges stay in one plane (copyback applies).
//! [`PageTable`] stays the single record of where each LPA is, so the consistency checks and
//! `locate` are shared with the page mapping.

use super::Mapping;
use super::table::PageTable;
use crate::address::{BlockId, Lpa, PlaneId, Ppa};
use crate::error::FtlResult;
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite};
use nandlab_nand::Geometry;

/// A free block of `plane` for logical block `lbn`, or the device-full error saying what it was
/// `for_what`.
fn take_free(flash: &mut Flash, plane: PlaneId, for_what: &str, lbn: u32) -> FtlResult<BlockId> {
    flash
        .blocks
        .take_free(plane)
        .ok_or_else(|| crate::error::FtlError::DeviceFull {
            message: format!("plane {plane}: no free block {for_what} {lbn}"),
        })
}

/// LBN geometry shared by the block and hybrid mappings.
#[derive(Debug)]
pub(crate) struct DataBlocks {
    pub table: PageTable,
    /// Physical data block of each LBN.
    pub data: Vec<Option<BlockId>>,
    pub stripe: Vec<PlaneId>,
    pub pages_per_block: u32,
}

impl DataBlocks {
    /// `lbns_per_plane` logical blocks in every plane.
    pub fn new(geometry: &Geometry, lbns_per_plane: u32, stripe: Vec<PlaneId>) -> Self {
        let lbns = lbns_per_plane * geometry.total_planes();
        DataBlocks {
            table: PageTable::new(
                lbns * geometry.pages_per_block,
                geometry.total_pages() as u32,
            ),
            data: vec![None; lbns as usize],
            stripe,
            pages_per_block: geometry.pages_per_block,
        }
    }
    pub fn logical_pages(&self) -> u32 {
        self.table.logical_pages()
    }
    pub fn plane_of_lbn(&self, lbn: u32) -> PlaneId {
        self.stripe[lbn as usize % self.stripe.len()]
    }
    /// (logical block number, page offset) of `lpa`.
    pub fn split(&self, lpa: Lpa) -> (u32, u32) {
        (lpa.0 / self.pages_per_block, lpa.0 % self.pages_per_block)
    }
    /// The LPA at `offset` of logical block `lbn`.
    pub fn lpa(&self, lbn: u32, offset: u32) -> Lpa {
        Lpa(lbn * self.pages_per_block + offset)
    }

    /// Records the written LPA at the freshly allocated `ppa` and programs it.
    pub fn program(&mut self, flash: &mut Flash, write: HostWrite<'_>, ppa: Ppa, tag: Tag) {
        let base = if write.data.is_over() {
            self.table.ppa_of(write.lpa)
        } else {
            None
        };
        if let Some(old) = self.table.map(write.lpa, ppa) {
            flash.invalidate(old);
        }
        flash.blocks.add_valid(ppa);
        flash.program(ppa, write, base, tag);
    }

    /// Moves the valid page of `lpa` (wherever it is) to page `offset` of open `block`.
    pub fn move_lpa(&mut self, flash: &mut Flash, lpa: Lpa, block: BlockId, offset: u32, tag: Tag) {
        let source = self.table.ppa_of(lpa).expect("moving a mapped page");
        let target = flash.blocks.next_ppa_at(block, offset);
        self.table.relocate(source, target);
        flash.blocks.invalidate(source);
        flash.blocks.add_valid(target);
        flash.move_page(source, target, tag);
    }

    /// Rebuilds LBN `lbn` in a fresh block of its plane from the latest copy of every page
    /// (wherever it lives), with `new_page` programmed as new data when given; the old data
    /// block is erased. Returns the new block.
    pub fn full_merge(
        &mut self,
        flash: &mut Flash,
        lbn: u32,
        new_page: Option<(HostWrite<'_>, Tag)>,
    ) -> FtlResult<BlockId> {
        let plane = self.plane_of_lbn(lbn);
        let fresh = take_free(flash, plane, "to merge logical block", lbn)?;
        let job = flash.open_job();
        let ppb = self.pages_per_block;
        for offset in 0..ppb {
            let lpa = self.lpa(lbn, offset);
            match new_page {
                Some((write, tag)) if write.lpa == lpa => {
                    let ppa = flash.blocks.next_ppa_at(fresh, offset);
                    self.program(flash, write, ppa, tag);
                }
                _ => {
                    if self.table.ppa_of(lpa).is_some() {
                        self.move_lpa(flash, lpa, fresh, offset, job);
                    }
                }
            }
        }
        if let Some(old) = self.data[lbn as usize] {
            let table = &self.table;
            flash.erase(old, job, |lpa| table.ppa_of(lpa));
        }
        self.data[lbn as usize] = Some(fresh);
        Ok(fresh)
    }

    /// Forgets `lpa`.
    pub fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        if let Some(old) = self.table.unmap(lpa) {
            flash.invalidate(old);
        }
    }

    pub fn check(&self, flash: &Flash) -> Result<(), String> {
        let per_block = self.table.check(self.pages_per_block)?;
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
        for (lbn, &b) in self.data.iter().enumerate() {
            if let Some(b) = b
                && flash.blocks.plane_of_block(b) != self.plane_of_lbn(lbn as u32)
            {
                return Err(format!(
                    "logical block {lbn} in block {b} outside its plane"
                ));
            }
        }
        Ok(())
    }
}

/// Logical blocks per plane for the block-based mappings: what the over-provisioning allows,
/// but leaving `reserved` blocks of every plane free.
pub(crate) fn lbns_per_plane(geometry: &Geometry, logical_pages: u32, reserved: u32) -> u32 {
    let by_op = logical_pages / geometry.pages_per_block / geometry.total_planes();
    by_op.min(geometry.blocks_per_plane.saturating_sub(reserved))
}

/// A sequential rewrite of a logical block in progress (see the module docs).
#[derive(Clone, Copy, Debug)]
struct Replacement {
    lbn: u32,
    block: BlockId,
    /// The offset the next sequential write must have.
    next_offset: u32,
}

/// The block-mapping FTL.
#[derive(Debug)]
pub(crate) struct BlockFtl {
    blocks: DataBlocks,
    /// Per plane, the replacement block being written, if any.
    replacing: Vec<Option<Replacement>>,
}

impl BlockFtl {
    pub fn new(
        geometry: &Geometry,
        logical_pages: u32,
        stripe: Vec<PlaneId>,
        _threshold: u32,
    ) -> Self {
        // one free block per plane is all a merge needs
        let lbns = lbns_per_plane(geometry, logical_pages, 1);
        BlockFtl {
            blocks: DataBlocks::new(geometry, lbns, stripe),
            replacing: vec![None; geometry.total_planes() as usize],
        }
    }
    pub fn logical_pages(&self) -> u32 {
        self.blocks.logical_pages()
    }

    /// Continues the plane's replacement with `write` if it is the LBN's next sequential page
    /// (switching the block in after its last page); otherwise ends the replacement. Returns
    /// the write when it still has to be placed.
    fn continue_replacement<'w>(
        &mut self,
        flash: &mut Flash,
        write: HostWrite<'w>,
        tag: Tag,
    ) -> Option<HostWrite<'w>> {
        let d = &mut self.blocks;
        let (lbn, offset) = d.split(write.lpa);
        let plane = d.plane_of_lbn(lbn).index();
        let Some(r) = self.replacing[plane] else {
            return Some(write);
        };
        if r.lbn != lbn || offset != r.next_offset {
            self.end_replacement(flash, plane);
            return Some(write);
        }
        let ppa = flash.blocks.next_ppa_at(r.block, offset);
        d.program(flash, write, ppa, tag);
        if offset + 1 == d.pages_per_block {
            self.replacing[plane] = None;
            self.switch_in(flash, r);
            flash.counters.merges_switch += 1;
        } else {
            self.replacing[plane] = Some(Replacement {
                next_offset: offset + 1,
                ..r
            });
        }
        None
    }

    /// Ends `plane`'s replacement, if any: the offsets not rewritten are copied from the old
    /// block, then the replacement is switched in.
    fn end_replacement(&mut self, flash: &mut Flash, plane: usize) {
        let Some(r) = self.replacing[plane].take() else {
            return;
        };
        let d = &mut self.blocks;
        let job = flash.open_job();
        for offset in r.next_offset..d.pages_per_block {
            let lpa = d.lpa(r.lbn, offset);
            if d.table.ppa_of(lpa).is_some() {
                d.move_lpa(flash, lpa, r.block, offset, job);
            }
        }
        self.switch_in(flash, r);
        flash.counters.merges_partial += 1;
    }

    /// The replacement becomes `r.lbn`'s data block; the old one (no valid page left) is
    /// erased.
    fn switch_in(&mut self, flash: &mut Flash, r: Replacement) {
        let d = &mut self.blocks;
        let old = d.data[r.lbn as usize].replace(r.block);
        if let Some(old) = old {
            debug_assert_eq!(flash.blocks.valid(old), 0, "switching out live data");
            let job = flash.open_job();
            let table = &d.table;
            flash.erase(old, job, |lpa| table.ppa_of(lpa));
        }
    }
}

impl Mapping for BlockFtl {
    fn refcount(&self, ppa: Ppa) -> u32 {
        u32::from(self.blocks.table.is_valid(ppa))
    }
    fn write(&mut self, flash: &mut Flash, write: HostWrite<'_>, tag: Tag) -> FtlResult<()> {
        let Some(write) = self.continue_replacement(flash, write, tag) else {
            return Ok(());
        };
        let d = &mut self.blocks;
        let (lbn, offset) = d.split(write.lpa);
        let block = d.data[lbn as usize];
        if let Some(block) = block
            && offset >= flash.blocks.next_page(block)
        {
            let ppa = flash.blocks.next_ppa_at(block, offset);
            d.program(flash, write, ppa, tag);
            return Ok(());
        }
        if block.is_some() && offset == 0 {
            // the start of a rewrite: a replacement block takes it
            let plane = d.plane_of_lbn(lbn);
            let fresh = take_free(flash, plane, "to rewrite logical block", lbn)?;
            let ppa = flash.blocks.next_ppa_at(fresh, 0);
            d.program(flash, write, ppa, tag);
            let r = Replacement {
                lbn,
                block: fresh,
                next_offset: 1,
            };
            if d.pages_per_block == 1 {
                self.switch_in(flash, r);
                flash.counters.merges_switch += 1;
            } else {
                self.replacing[plane.index()] = Some(r);
            }
            return Ok(());
        }
        if block.is_none() {
            let plane = d.plane_of_lbn(lbn);
            let fresh = take_free(flash, plane, "for logical block", lbn)?;
            d.data[lbn as usize] = Some(fresh);
            let ppa = flash.blocks.next_ppa_at(fresh, offset);
            d.program(flash, write, ppa, tag);
            return Ok(());
        }
        flash.counters.merges_full += 1;
        d.full_merge(flash, lbn, Some((write, tag)))?;
        Ok(())
    }

    fn trim(&mut self, flash: &mut Flash, lpa: Lpa) {
        self.blocks.trim(flash, lpa);
    }
    fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        self.blocks.table.ppa_of(lpa)
    }
    /// Which block a merge erases depends on the next write: no hint.
    fn next_erase_block_valid_lpas(&mut self, _flash: &Flash, out: &mut Vec<Lpa>) {
        out.clear();
    }
    fn check(&self, flash: &Flash) -> Result<(), String> {
        self.blocks.check(flash)
    }
}
