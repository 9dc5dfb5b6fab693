//! What every log buffer reports (the thesis's Figs. 5.5–5.7 metrics come from these).

use crate::device::AccessCost;
use serde::Serialize;

/// Running totals of a log buffer (shared by every [`super::LogBuffer`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LogStats {
    /// Updates asked for.
    pub writes: u64,
    /// Case 1: the page had no flash copy; written to flash directly.
    pub direct_new_page: u64,
    /// The page's delta did not fit a log sector; written to flash directly.
    pub direct_large_delta: u64,
    /// Case 2: a P-block was taken for the update's block.
    pub new_log_block: u64,
    /// Case 3: the page's sector already held a delta.
    pub existing_sector: u64,
    /// Case 4: the block had a P-block, the sector was empty.
    pub new_sector: u64,
    /// Updates that changed no byte.
    pub unchanged: u64,
    /// Log bytes written (encoded deltas).
    pub log_bytes_written: u64,
    /// Merges (each flushes one flash block).
    pub merges: u64,
    /// ... because the block was the replacement victim.
    pub merges_replacement: u64,
    /// ... because a page's delta outgrew its sector.
    pub merges_overflow: u64,
    /// ... because all the block's sectors held a delta.
    pub merges_full: u64,
    /// ... because of `flush_all`.
    pub merges_flush_all: u64,
    /// Pages written to flash by merges (sequential flushes).
    pub pages_flushed: u64,
    /// Pages written to flash one at a time by page-level merges (dPRAM; random writes).
    pub pages_merged_single: u64,
    /// Flash page reads asked for (deltas and merges).
    pub flash_page_reads: u64,
    /// Log sectors written to flash (IPL's in-flash log; partial-page programs).
    pub flash_log_sector_writes: u64,
    /// Flash log pages read (IPL: a read or merge reads the erase unit's log area).
    pub flash_log_page_reads: u64,
    /// Flash blocks erased by merges (IPL; for the others the FTL decides).
    pub flash_erases: u64,
    /// Reads served.
    pub reads: u64,
    /// Reads that merged a log.
    pub reads_merged: u64,
    /// Trims.
    pub trims: u64,
    /// PCM cost of everything.
    pub pcm: AccessCost,
}

impl LogStats {
    /// Flash page writes: merged pages plus direct writes.
    pub fn flash_page_writes(&self) -> u64 {
        self.pages_flushed
            + self.pages_merged_single
            + self.direct_new_page
            + self.direct_large_delta
    }

    /// Share of flash page writes that were part of a sequential block flush.
    pub fn sequential_share(&self) -> f64 {
        let all = self.flash_page_writes();
        if all == 0 {
            0.0
        } else {
            self.pages_flushed as f64 / all as f64
        }
    }
}
