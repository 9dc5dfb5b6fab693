//! What a config costs in memory, estimated before anything is allocated, and the check of that
//! estimate against the process's budget ([`nandlab_core::memory::MemoryBudget`]: the
//! `NANDLAB_MEMORY_BUDGET_BYTES` variable, else half of the machine's memory, else 8 GiB).

use crate::config::{MappingKind, PayloadMode, SsdConfig};
use crate::error::{FtlResult, config_error};
use nandlab_core::memory::{MemoryBudget, format_bytes};

/// Estimates below this are not checked (the check reads the environment and /proc).
const CHECK_THRESHOLD_BYTES: u64 = 256 << 20;

/// Bytes of FTL state per block: valid count, erase count, state, write pointer, close time,
/// free-list entry (and slack).
const BLOCK_STATE_BYTES: u64 = 32;

/// Bytes of the compact OOB table per physical page: an LPA (4) and a sequence number (4)
/// (`flash/oob.rs`; the sequence column doubles only in a run of more than 2^31 host writes).
/// The number of the op that programs a page is kept only while its block has a program in
/// flight (`flash/tickets.rs`), a few blocks at a time.
const OOB_TABLE_BYTES_PER_PAGE: u64 = 8;

/// The parts of a config's memory estimate, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The chip model's tables (per-block state, per-die state).
    pub chip_bytes: u64,
    /// Mapping tables (L2P, P2L, valid bits; block tables for block/hybrid mapping).
    pub mapping_bytes: u64,
    /// Per-block FTL state.
    pub block_state_bytes: u64,
    /// The payload store's index (`ftl.payload = "full"`: a slot number per physical page).
    /// The pages' bytes are not in the estimate: they are stored sparsely, as pages are first
    /// written, up to the budget left after the rest ([`SsdConfig::payload_limit_bytes`]).
    pub payload_bytes: u64,
    /// Bytes the payload store would hold if every physical page kept its bytes and its
    /// spare area's OOB record (full mode; not part of [`MemoryEstimate::total_bytes`]).
    pub payload_all_pages_bytes: u64,
    /// Out-of-band metadata kept per physical page (LPA, write sequence number, number of the
    /// op that programs it), in both payload modes.
    pub oob_bytes: u64,
    /// The DRAM write buffer (its index over the logical pages, and its pages in full mode).
    pub buffer_bytes: u64,
}

impl MemoryEstimate {
    /// The sum of the parts.
    pub fn total_bytes(&self) -> u64 {
        self.chip_bytes
            .saturating_add(self.mapping_bytes)
            .saturating_add(self.block_state_bytes)
            .saturating_add(self.payload_bytes)
            .saturating_add(self.oob_bytes)
            .saturating_add(self.buffer_bytes)
    }
}

impl SsdConfig {
    /// An upper estimate of the memory the SSD built from this config needs, computed from
    /// the geometry and FTL keys without allocating anything. Needs a valid chip config only:
    /// FTL keys out of range saturate the estimate instead of overflowing.
    pub fn memory_estimate(&self) -> FtlResult<MemoryEstimate> {
        let nand = self.nand_config()?;
        let g = &nand.geometry;
        let f = &self.ftl;
        let physical = g.total_pages();
        let logical = crate::config::logical_pages(g, f.op_fraction);
        let blocks = g.total_pages() / u64::from(g.pages_per_block);
        let page = u64::from(g.page_size_bytes);
        let mapping_bytes = match f.mapping.kind {
            // L2P and P2L of u32, and one valid bit per physical page
            MappingKind::Page => logical
                .saturating_mul(4)
                .saturating_add(physical.saturating_mul(4))
                .saturating_add(physical.div_ceil(8)),
            // a physical block per logical block, and page tables of the log blocks
            MappingKind::Block | MappingKind::Hybrid | MappingKind::Zoned => {
                let log_pages = u64::from(f.mapping.random_log_blocks)
                    .saturating_mul(u64::from(g.pages_per_block));
                blocks
                    .saturating_mul(8)
                    .saturating_add(log_pages.min(physical).saturating_mul(8))
            }
        };
        let full = f.payload == PayloadMode::Full;
        // full mode: a slot number (u32) per physical page; the slots themselves (a page and
        // its spare area's OOB record each) are allocated as pages are written
        let (payload_bytes, payload_all_pages_bytes) = if full {
            (
                physical.saturating_mul(4),
                physical.saturating_mul(page.saturating_add(crate::flash::oob::OOB_BYTES as u64)),
            )
        } else {
            (0, 0)
        };
        let buffer_pages = u64::from(f.buffer.pages);
        let buffer_bytes = if buffer_pages == 0 {
            0
        } else {
            let per_page = if full { page.saturating_add(12) } else { 12 };
            logical
                .saturating_mul(4)
                .saturating_add(buffer_pages.saturating_mul(per_page))
        };
        Ok(MemoryEstimate {
            chip_bytes: nand.memory_estimate_bytes(),
            mapping_bytes,
            block_state_bytes: blocks.saturating_mul(BLOCK_STATE_BYTES),
            payload_bytes,
            payload_all_pages_bytes,
            oob_bytes: physical.saturating_mul(OOB_TABLE_BYTES_PER_PAGE),
            buffer_bytes,
        })
    }

    /// Refuses the config when its estimate exceeds `budget`, with an error naming the keys
    /// that size it.
    pub fn check_memory(&self, budget: &MemoryBudget) -> FtlResult<()> {
        let estimate = self.memory_estimate()?;
        let total = estimate.total_bytes();
        if total <= budget.bytes {
            return Ok(());
        }
        let nand = self.nand_config()?;
        Err(config_error(
            "device.geometry",
            format!(
                "a device of {} pages of {} bytes needs about {} before any page is stored, but the memory budget is {}: \
                 lower geometry.blocks_per_plane, pages_per_block, planes_per_die, dies_per_chip, \
                 chips_per_channel or channels",
                nand.geometry.total_pages(),
                nand.geometry.page_size_bytes,
                format_bytes(total),
                budget.describe()
            ),
        ))
    }

    /// The bytes of page payloads the store may hold under `budget` (full mode): what the
    /// budget leaves after the rest of the estimate, or `None` when every physical page fits
    /// (no limit needed). Errors as [`SsdConfig::check_memory`] when the rest does not fit.
    pub fn payload_limit_bytes(&self, budget: &MemoryBudget) -> FtlResult<Option<u64>> {
        self.check_memory(budget)?;
        let estimate = self.memory_estimate()?;
        let left = budget.bytes - estimate.total_bytes();
        Ok((estimate.payload_all_pages_bytes > left).then_some(left))
    }

    /// [`SsdConfig::check_memory`] against this process's budget, for devices large enough to
    /// matter; returns the payload store's limit ([`SsdConfig::payload_limit_bytes`]) and the
    /// budget it came from.
    pub(crate) fn check_memory_budget(&self) -> FtlResult<Option<(u64, MemoryBudget)>> {
        let estimate = self.memory_estimate()?;
        if estimate
            .total_bytes()
            .saturating_add(estimate.payload_all_pages_bytes)
            <= CHECK_THRESHOLD_BYTES
        {
            return Ok(None);
        }
        let budget = MemoryBudget::from_environment()
            .map_err(|message| config_error(nandlab_core::memory::BUDGET_ENV, message))?;
        Ok(self
            .payload_limit_bytes(&budget)?
            .map(|limit| (limit, budget)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::memory::BudgetSource;

    fn budget(bytes: u64) -> MemoryBudget {
        MemoryBudget {
            bytes,
            source: BudgetSource::Environment,
        }
    }

    /// A config of `blocks_per_plane` × 2 planes × 128 pages of 2 KiB (mlc1).
    fn mlc1(blocks_per_plane: u32) -> SsdConfig {
        let mut c = SsdConfig::from_preset("mlc1");
        c.device.overrides = Some(
            toml::from_str(&format!(
                "[geometry]\nblocks_per_plane = {blocks_per_plane}\n"
            ))
            .unwrap(),
        );
        c
    }

    /// Regression (issue 11): a device of 2^31 pages passed validation and then needed about
    /// 16 GB, an allocation abort under a memory limit. The estimate is now computed before
    /// building and checked against the budget, with the geometry keys named.
    #[test]
    fn a_device_beyond_the_budget_is_refused_naming_the_geometry_keys() {
        // 2^31 pages: 2 planes x 2^23 blocks... capped by the block limit, so use 8 dies
        let mut c = mlc1(1 << 20);
        c.device.overrides.as_mut().unwrap()["geometry"]
            .as_table_mut()
            .unwrap()
            .insert("dies_per_chip".into(), 8.into());
        c.validate().unwrap();
        let estimate = c.memory_estimate().unwrap();
        assert!(estimate.mapping_bytes > 8 << 30, "{estimate:?}");
        let err = c.check_memory(&budget(4 << 30)).unwrap_err().to_string();
        assert!(err.contains("device.geometry"), "{err}");
        assert!(err.contains("blocks_per_plane"), "{err}");
        assert!(err.contains("NANDLAB_MEMORY_BUDGET_BYTES"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        assert!(c.check_memory(&budget(64 << 30)).is_ok());
    }

    /// Issue 33: page bytes are stored sparsely, so a full-payload device larger than the
    /// budget is built (only the store's index counts up front) with a limit on the bytes its
    /// pages may hold; a device whose pages all fit gets no limit.
    #[test]
    fn full_payloads_are_sparse_with_a_limit() {
        let mut c = mlc1(4096);
        let timing_only = c.memory_estimate().unwrap();
        assert_eq!(timing_only.payload_bytes, 0);
        assert_eq!(timing_only.payload_all_pages_bytes, 0);
        c.ftl.payload = PayloadMode::Full;
        let full = c.memory_estimate().unwrap();
        // 2 planes x 4096 blocks x 128 pages: a u32 slot each; 2 KiB + OOB each if all stored
        let pages = 2 * 4096 * 128;
        assert_eq!(full.payload_bytes, pages * 4, "{full:?}");
        assert!(full.payload_all_pages_bytes > pages * 2048, "{full:?}");
        assert_eq!(
            full.total_bytes(),
            timing_only.total_bytes() + pages * 4,
            "page bytes are not in the total"
        );
        let fixed = full.total_bytes();
        let limit = c.payload_limit_bytes(&budget(fixed + (64 << 20))).unwrap();
        assert_eq!(limit, Some(64 << 20));
        let all = fixed + full.payload_all_pages_bytes;
        assert_eq!(c.payload_limit_bytes(&budget(all)).unwrap(), None);
        let err = c.check_memory(&budget(fixed - 1)).unwrap_err().to_string();
        assert!(err.contains("before any page is stored"), "{err}");
    }

    /// Every preset with default FTL settings fits a 2 GiB budget (the check never refuses an
    /// ordinary run); the small ones are not even checked.
    #[test]
    fn presets_fit_a_small_budget() {
        for name in nandlab_nand::preset_names() {
            let c = SsdConfig::from_preset(name);
            c.check_memory(&budget(2 << 30))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let slc = SsdConfig::from_preset("slc").memory_estimate().unwrap();
        assert!(slc.total_bytes() < CHECK_THRESHOLD_BYTES, "{slc:?}");
    }
}
