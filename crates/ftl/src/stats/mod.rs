//! Statistics (SPEC F8): counters kept by the FTL, the per-run measurement, and the flat,
//! fio-like [`SsdReport`].

mod report;
pub(crate) mod timeseries;

pub use report::{
    ChipOpModes, EnergySection, EraseBin, EraseSummary, IoSection, PlacementReport, SimSection,
    SsdReport, ValidPageMap,
};
pub use timeseries::TimeSeriesRow;

use crate::host::HostOp;
use nandlab_core::{LatencyHistogram, SimTime};
use nandlab_nand::OpKind;
use serde::Serialize;

/// Event counters of the controller (monotone; a report shows the difference over its run).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)] // counter names say what they count
pub struct FtlCounters {
    /// Whole logical pages the host wrote (after read-modify-write merging).
    pub host_pages_written: u64,
    /// Logical pages the host read.
    pub host_pages_read: u64,
    /// Logical pages discarded by TRIM.
    pub host_pages_trimmed: u64,
    /// Host page writes a dedup stage found duplicate: mapped to an existing physical page,
    /// not programmed (reported only when non-zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub host_pages_shared: u64,
    /// Every page programmed into flash: host writes, GC/WL/merge moves.
    pub flash_pages_programmed: u64,
    /// Valid pages moved by GC, wear-leveling or merges.
    pub gc_page_copies: u64,
    /// Of those, moved by copyback.
    pub copybacks: u64,
    /// Victim blocks collected by GC.
    pub gc_runs: u64,
    /// Of those, collected in the background while the device was idle (before a timed
    /// arrival; `ftl.idle_gc_threshold_blocks`).
    pub gc_runs_idle: u64,
    /// Cold blocks migrated by static wear-leveling.
    pub wl_migrations: u64,
    pub erases: u64,
    /// Old-page reads of partial-page writes.
    pub rmw_reads: u64,
    pub buffer_read_hits: u64,
    pub buffer_write_hits: u64,
    pub buffer_evictions: u64,
    /// Hybrid mapping merges.
    pub merges_switch: u64,
    pub merges_partial: u64,
    pub merges_full: u64,
    /// Blocks rewritten by read reclaim (`flash/read_reclaim.rs`; reported only when
    /// non-zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub read_reclaims: u64,
    /// Valid pages read reclaim moved (counted in `flash_pages_programmed`, not in
    /// `gc_page_copies`; reported only when non-zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub read_reclaim_page_copies: u64,
    /// Host reads (and read-modify-write reads) that failed ECC after every read-retry: their
    /// requests completed with an error status, no data (reported only when non-zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub uncorrectable_host_reads: u64,
    /// GC, wear-leveling and other internal reads that failed ECC (the page moved as read;
    /// reported only when non-zero).
    #[serde(skip_serializing_if = "is_zero")]
    pub uncorrectable_internal_reads: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl FtlCounters {
    /// `self − start`, field by field.
    pub fn since(&self, start: &FtlCounters) -> FtlCounters {
        FtlCounters {
            host_pages_written: self.host_pages_written - start.host_pages_written,
            host_pages_read: self.host_pages_read - start.host_pages_read,
            host_pages_trimmed: self.host_pages_trimmed - start.host_pages_trimmed,
            host_pages_shared: self.host_pages_shared - start.host_pages_shared,
            flash_pages_programmed: self.flash_pages_programmed - start.flash_pages_programmed,
            gc_page_copies: self.gc_page_copies - start.gc_page_copies,
            copybacks: self.copybacks - start.copybacks,
            gc_runs: self.gc_runs - start.gc_runs,
            gc_runs_idle: self.gc_runs_idle - start.gc_runs_idle,
            wl_migrations: self.wl_migrations - start.wl_migrations,
            erases: self.erases - start.erases,
            rmw_reads: self.rmw_reads - start.rmw_reads,
            buffer_read_hits: self.buffer_read_hits - start.buffer_read_hits,
            buffer_write_hits: self.buffer_write_hits - start.buffer_write_hits,
            buffer_evictions: self.buffer_evictions - start.buffer_evictions,
            merges_switch: self.merges_switch - start.merges_switch,
            merges_partial: self.merges_partial - start.merges_partial,
            merges_full: self.merges_full - start.merges_full,
            read_reclaims: self.read_reclaims - start.read_reclaims,
            read_reclaim_page_copies: self.read_reclaim_page_copies
                - start.read_reclaim_page_copies,
            uncorrectable_host_reads: self.uncorrectable_host_reads
                - start.uncorrectable_host_reads,
            uncorrectable_internal_reads: self.uncorrectable_internal_reads
                - start.uncorrectable_internal_reads,
        }
    }

    /// Write amplification: flash pages programmed per host page written.
    pub fn waf(&self) -> f64 {
        if self.host_pages_written == 0 {
            0.0
        } else {
            self.flash_pages_programmed as f64 / self.host_pages_written as f64
        }
    }
}

/// Per-op measurement of one run.
#[derive(Clone, Debug, Default)]
pub(crate) struct OpMeasure {
    pub requests: u64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
}

/// What a run has measured so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Measure {
    pub by_op: [OpMeasure; HostOp::COUNT],
    pub submitted: u64,
    pub completed: u64,
    pub started: SimTime,
    pub last_completion: SimTime,
    pub counters_at_start: FtlCounters,
    pub energy_pj_at_start: [f64; OpKind::COUNT],
    pub idle_energy_pj_at_start: f64,
}

impl Measure {
    pub fn op_mut(&mut self, op: HostOp) -> &mut OpMeasure {
        &mut self.by_op[op_index(op)]
    }
}

pub(crate) fn op_index(op: HostOp) -> usize {
    op.index()
}
