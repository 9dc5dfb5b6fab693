//! The SLC cache's blocks on the chip (SPEC C3; the stage is `frontend/slc.rs`): a set of
//! blocks reserved when the SSD is built (taken out of the free pool like In-Page Logging's
//! ring, so GC, wear-leveling and the mapping leave them alone) and put in SLC mode in the chip
//! model. The stage decides which slot (block index, page) holds which logical page; this side
//! turns its [`LogAreaOp`]s into chip ops: an SLC program, an SLC read, a block erase.

use super::emit::Tag;
use super::{Flash, PageData};
use crate::address::{BlockId, Lpa, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::flash::log_area::LogAreaOp;
use nandlab_nand::OpKind;

/// What the SLC cache did on the chip.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlcArea {
    /// The reserved blocks, by the stage's block index.
    pub blocks: Vec<BlockId>,
}

impl Flash {
    /// Reserves `count` blocks for the SLC cache, round robin over the planes; an error names
    /// `ssd.slc_cache.blocks` when the mapping would keep less than two spare blocks per plane
    /// beyond the `logical_pages` it maps.
    pub fn reserve_slc_area(&mut self, count: u32, logical_pages: u32) -> FtlResult<Vec<BlockId>> {
        let ppb = u64::from(self.blocks.pages_per_block());
        let free = u64::from(self.blocks.free_total());
        let planes = self.blocks.planes();
        let physical = u64::from(planes) * u64::from(self.blocks.blocks_per_plane());
        let spare = physical.saturating_sub(u64::from(logical_pages).div_ceil(ppb));
        let needed = u64::from(count) + 2 * u64::from(planes);
        if count == 0 || needed > free || needed > spare {
            return Err(crate::error::config_error(
                "ssd.slc_cache.blocks",
                format!(
                    "{count} SLC cache blocks: need at least 1, and the mapping two spare blocks \
                     per plane, but the device has {spare} blocks beyond its logical space \
                     ({free} free): lower it or raise ssd.op_fraction"
                ),
            ));
        }
        let mut blocks = Vec::with_capacity(count as usize);
        let mut plane = 0;
        while blocks.len() < count as usize {
            if let Some(b) = self
                .blocks
                .reserve_free(crate::address::PlaneId(plane % planes))
            {
                blocks.push(b);
            }
            plane += 1;
        }
        self.slc_area = Some(SlcArea {
            blocks: blocks.clone(),
        });
        Ok(blocks)
    }

    /// Applies an SLC cache op (`None`: `op` is not one); its chip op carries `tag`. A program
    /// here writes a page without an owner, an erase waits for nothing: the host path gives
    /// both their context ([`Flash::slc_program`], [`Flash::slc_erase`]).
    pub(crate) fn slc_area_op(&mut self, op: LogAreaOp, tag: Tag) -> Option<FtlResult<()>> {
        Some(match op {
            LogAreaOp::SlcProgram { index, page } => self.slc_program(index, page, None, tag),
            LogAreaOp::SlcRead { index, page } => self.slc_block(index).map(|block| {
                let ppa = self.blocks.page(block, page);
                self.emit.push(OpKind::Read, ppa, Ppa::NONE, tag);
            }),
            LogAreaOp::SlcErase { index, .. } => self.slc_erase(index, tag, |_| None, |_| None),
            _ => return None,
        })
    }

    /// The reserved block of the stage's block `index`.
    fn slc_block(&self, index: u32) -> FtlResult<BlockId> {
        self.slc_area
            .as_ref()
            .and_then(|a| a.blocks.get(index as usize).copied())
            .ok_or_else(|| FtlError::BadRequest {
                message: format!("SLC cache op on block {index}, which is not reserved"),
            })
    }

    /// The SLC cache's blocks (dense ids; none without a cache).
    pub(crate) fn slc_block_ids(&self) -> Vec<u32> {
        self.slc_area
            .as_ref()
            .map(|a| a.blocks.iter().map(|b| b.0).collect())
            .unwrap_or_default()
    }

    /// Whether `block` is one of the SLC cache's (SLC mode: no paired pages).
    pub(crate) fn is_slc_block(&self, block: BlockId) -> bool {
        self.slc_area
            .as_ref()
            .is_some_and(|a| a.blocks.contains(&block))
    }

    /// Programs page `page` of the stage's block `index` with `content`: the LPA, the host
    /// write's sequence number and bytes of the page the slot holds (`None`: no owner). The
    /// OOB names the LPA and carries that sequence number, so a mount after a power cut reads
    /// the cached write back from the SLC block like any other page (the newest copy of its
    /// LPA while it is cached; the same write as its folded copy once folded).
    pub(crate) fn slc_program(
        &mut self,
        index: u32,
        page: u32,
        content: Option<(Lpa, u64, Option<&[u8]>)>,
        tag: Tag,
    ) -> FtlResult<()> {
        let block = self.slc_block(index)?;
        let ppa = self.blocks.page(block, page);
        // a number is drawn as before, so every later write's sequence number stays the same
        let drawn = self.next_sequence();
        let (lpa, sequence, data) = match content {
            Some((lpa, sequence, bytes)) => {
                (lpa, sequence, bytes.map_or(PageData::Zeros, PageData::Page))
            }
            None => (Lpa::NONE, drawn, PageData::Zeros),
        };
        let owner = (lpa != Lpa::NONE).then_some(lpa);
        self.payload.write(ppa, data, None, owner, sequence);
        self.oob.program(ppa, lpa, sequence, !self.emit.enabled);
        self.blocks.set_next_page(block, page + 1);
        self.counters.flash_pages_programmed += 1;
        self.emit.push(OpKind::Program, ppa, Ppa::NONE, tag);
        self.trace_content(ppa);
        Ok(())
    }

    /// Erases the stage's block `index` (every page of it folded or stale). Like a GC erase
    /// ([`Flash::erase`]) it waits until the newest copy of each LPA it holds a page of is on
    /// flash: a folded page's program in the main area (with paired-page padding, to the end of
    /// its word line), or the SLC program of a newer cached write (`slot_of`: its slot) in
    /// another cache block. A newer write whose slot is in this block is programmed after the
    /// erase, so the erase waits for the LPA's main-area copy (`locate`) instead. Erasing
    /// first would let a power cut take the last copy of a durable write.
    pub(crate) fn slc_erase(
        &mut self,
        index: u32,
        tag: Tag,
        slot_of: impl Fn(Lpa) -> Option<(u32, u32)>,
        locate: impl Fn(Lpa) -> Option<Ppa>,
    ) -> FtlResult<()> {
        let block = self.slc_block(index)?;
        let first = self.blocks.page(block, 0);
        self.erases_decided += 1;
        if self.emit.enabled {
            let firsts: Vec<Ppa> = self
                .slc_area
                .as_ref()
                .map(|a| a.blocks.iter().map(|&b| self.blocks.page(b, 0)).collect())
                .unwrap_or_default();
            self.note_erase_waits(block, first, |lpa| match slot_of(lpa) {
                // a newer write that took a slot of this very block (the fold made room
                // for it): its SLC program comes after this erase, so what must be on
                // flash first is the copy the fold passed down to the main area (issue
                // 34: on another die, the erase ran first and a cut lost or resurrected
                // the durable write, `nandlab crash --controller` cases 1432, 6014 and
                // 7010 of seed 1)
                Some((i, _)) if i == index => locate(lpa),
                Some((i, p)) => firsts.get(i as usize).map(|f| Ppa(f.0 + p)),
                None => locate(lpa),
            });
        }
        self.payload
            .clear_block(first, self.blocks.pages_per_block());
        self.oob.erase(block);
        self.blocks.set_next_page(block, 0);
        self.blocks.count_erase(block);
        self.counters.erases += 1;
        self.erased_since_gates = true;
        self.emit.push(OpKind::Erase, first, Ppa::NONE, tag);
        Ok(())
    }
}
