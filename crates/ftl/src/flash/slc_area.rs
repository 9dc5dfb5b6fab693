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

    /// Applies an SLC cache op (`None`: `op` is not one); its chip op carries `tag`.
    pub(crate) fn slc_area_op(&mut self, op: LogAreaOp, tag: Tag) -> Option<FtlResult<()>> {
        let (index, page) = match op {
            LogAreaOp::SlcProgram { index, page }
            | LogAreaOp::SlcRead { index, page }
            | LogAreaOp::SlcErase { index, page } => (index, page),
            _ => return None,
        };
        let Some(block) = self
            .slc_area
            .as_ref()
            .and_then(|a| a.blocks.get(index as usize).copied())
        else {
            return Some(Err(FtlError::BadRequest {
                message: format!("SLC cache op on block {index}, which is not reserved"),
            }));
        };
        let ppa = self.blocks.page(block, page);
        match op {
            LogAreaOp::SlcProgram { .. } => {
                // the page holds no LPA for the mapping (the stage knows its owner)
                let sequence = self.next_sequence();
                self.payload
                    .write(ppa, PageData::Zeros, None, None, sequence);
                self.oob
                    .program(ppa, Lpa::NONE, sequence, !self.emit.enabled);
                self.blocks.set_next_page(block, page + 1);
                self.counters.flash_pages_programmed += 1;
                self.emit.push(OpKind::Program, ppa, Ppa::NONE, tag);
            }
            LogAreaOp::SlcRead { .. } => self.emit.push(OpKind::Read, ppa, Ppa::NONE, tag),
            _ => {
                let first = self.blocks.page(block, 0);
                self.payload
                    .clear_block(first, self.blocks.pages_per_block());
                self.oob.erase(block);
                self.blocks.set_next_page(block, 0);
                self.blocks.count_erase(block);
                self.counters.erases += 1;
                self.erased_since_gates = true;
                self.emit.push(OpKind::Erase, first, Ppa::NONE, tag);
            }
        }
        Some(Ok(()))
    }
}
