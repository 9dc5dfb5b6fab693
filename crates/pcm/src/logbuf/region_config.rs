//! Configuration of the PCM log region (TOML section `log`) and its validation against the
//! flash shape; errors name the key.

use super::FlashShape;
use crate::error::{PcmResult, argument_error, config_error};
use serde::{Deserialize, Serialize};

/// "No block" in the log region's dense tables.
pub(crate) const NONE: u32 = u32::MAX;
/// Bytes of one row of the F-block → P-block table (three 4-byte integers).
pub const TABLE_ROW_BYTES: u64 = 12;

/// Configuration of the PCM log region (TOML section `log`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRegionConfig {
    /// PCM given to the region (table and P-blocks), bytes.
    pub region_size_bytes: u64,
    /// One log sector, bytes (thesis: 512).
    #[serde(default = "default_sector_size_bytes")]
    pub sector_size_bytes: u64,
    /// Merge a P-block as soon as every one of its sectors holds a delta.
    #[serde(default = "yes")]
    pub merge_when_all_sectors_used: bool,
    /// A merge rewrites every page of the flash block (thesis); otherwise only logged pages.
    #[serde(default = "yes")]
    pub flush_whole_block: bool,
    /// What happens when a page's delta outgrows its sector (the thesis does not say).
    #[serde(default)]
    pub on_sector_overflow: SectorOverflow,
}

/// What to do when a page's delta no longer fits its log sector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectorOverflow {
    /// Merge and flush the page's whole block (every flush stays sequential).
    #[default]
    MergeBlock,
    /// Fold only this page: its merged copy is written alone (a random page write).
    WritePage,
}

fn default_sector_size_bytes() -> u64 {
    512
}
fn yes() -> bool {
    true
}

impl LogRegionConfig {
    /// The thesis's setting (§5.1.1): 512 B sectors in `region_size_bytes` of PCM.
    pub fn thesis(region_size_bytes: u64) -> Self {
        LogRegionConfig {
            region_size_bytes,
            sector_size_bytes: 512,
            merge_when_all_sectors_used: true,
            flush_whole_block: true,
            on_sector_overflow: SectorOverflow::MergeBlock,
        }
    }

    /// P-blocks that fit for `shape`.
    pub fn pblocks(&self, shape: &FlashShape) -> u64 {
        let row = self.sector_size_bytes * u64::from(shape.pages_per_block) + TABLE_ROW_BYTES;
        self.region_size_bytes / row.max(1)
    }

    /// Checks every key against `shape`; the error names the offending one.
    pub fn validate(&self, shape: &FlashShape) -> PcmResult<()> {
        let page = u64::from(shape.page_size_bytes);
        if !(16..=32 * 1024).contains(&page) {
            return Err(argument_error(
                "shape.page_size_bytes",
                format!("{page} is outside 16..=32768"),
            ));
        }
        if shape.pages_per_block == 0 || shape.pages == 0 {
            return Err(argument_error(
                "shape",
                "pages_per_block and pages must be at least 1",
            ));
        }
        let sector = self.sector_size_bytes;
        if sector > page {
            return Err(config_error(
                "log.sector_size_bytes",
                format!("a {sector} B log sector is larger than a {page} B page"),
            ));
        }
        if sector < 8 {
            return Err(config_error(
                "log.sector_size_bytes",
                format!("{sector} B cannot hold a header and a record (at least 8 B)"),
            ));
        }
        let n = self.pblocks(shape);
        if n == 0 || n > u64::from(NONE - 1) {
            return Err(config_error(
                "log.region_size_bytes",
                format!(
                    "{} B holds {n} P-blocks of {} sectors of {sector} B plus a {TABLE_ROW_BYTES} B table row",
                    self.region_size_bytes, shape.pages_per_block
                ),
            ));
        }
        Ok(())
    }
}
