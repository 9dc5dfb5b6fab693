//! The run report: flat and fio-like (`read`/`write` sections with IOPS, bandwidth, latency
//! percentiles and CDF), plus the FTL's own figures.

use super::FtlCounters;
use nandlab_core::LatencySummary;
use nandlab_core::stats::CdfPoint;
use serde::Serialize;

/// One direction of host I/O, as fio reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct IoSection {
    pub requests: u64,
    pub bytes: u64,
    /// Requests per simulated second over the run.
    pub iops: f64,
    /// MiB per simulated second over the run.
    pub bw_mib_s: f64,
    /// Latency percentiles (p50, p90, p99, p99.9, max) in microseconds.
    pub lat: LatencySummary,
    /// Latency CDF, at most ~100 points.
    pub cdf: Vec<CdfPoint>,
}

/// Erase counts over every block (lifetime of the device, preconditioning included).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct EraseSummary {
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    /// Blocks per erase count.
    pub histogram: Vec<EraseBin>,
}

/// `blocks` blocks have been erased `erase_count` times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct EraseBin {
    pub erase_count: u32,
    pub blocks: u32,
}

/// Energy of the run from the chip model, in millijoules.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct EnergySection {
    pub total_mj: f64,
    pub read_mj: f64,
    pub program_mj: f64,
    pub erase_mj: f64,
    pub copyback_mj: f64,
    pub idle_mj: f64,
}

/// Valid pages of every block (paper 000 Fig. 13): `rows` planes × `cols` blocks per plane,
/// row-major in `valid_pages`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct ValidPageMap {
    pub rows: u32,
    pub cols: u32,
    pub pages_per_block: u32,
    pub valid_pages: Vec<u32>,
}

impl ValidPageMap {
    /// Valid pages of block `col` of plane `row`.
    pub fn get(&self, row: u32, col: u32) -> u32 {
        self.valid_pages[(row * self.cols + col) as usize]
    }
    /// As a matrix (one `Vec` per plane).
    pub fn to_matrix(&self) -> Vec<Vec<u32>> {
        self.valid_pages
            .chunks(self.cols.max(1) as usize)
            .map(<[u32]>::to_vec)
            .collect()
    }
}

/// Chip operations the controller submitted in the run, by mode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[allow(missing_docs)] // fields named with what they count
pub struct ChipOpModes {
    /// Single-plane legacy reads, programs and erases.
    pub legacy: u64,
    /// Multiplane ops (each counts once, whatever its planes).
    pub multiplane: u64,
    pub copyback: u64,
    /// Single-plane cache-mode reads and programs (`ftl.cache_mode`; a multiplane cache op
    /// counts as multiplane).
    pub cache: u64,
    /// The multiplane ops by kind (absent when 0; they sum to `multiplane`).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub multiplane_reads: u64,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub multiplane_programs: u64,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub multiplane_erases: u64,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub multiplane_copybacks: u64,
    /// Page (or block) ops the multiplane ops carry, over all planes (absent when 0).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub multiplane_plane_ops: u64,
    /// Multiplane ops formed from ops already queued on a busy die (decided in different
    /// batches), as opposed to ops decided together (absent when 0).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub multiplane_from_queue: u64,
    /// Host reads sent to the chip ahead of the ops waiting in their die's queue
    /// (`ftl.read_scheduling` = `priority` or `suspend`; absent when 0).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub reads_ahead: u64,
    /// Reads the chip served by suspending a program or erase, or by joining a suspension
    /// (`ftl.read_scheduling = "suspend"`; absent when 0).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub suspended_reads: u64,
    /// Host reads of a page whose GC move had not run yet, served from the page it was
    /// moved from (interleaved GC; absent when 0).
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub reads_of_moving_pages: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl ChipOpModes {
    /// Counts from `start` to `self` (both taken from one run's ever-growing counters).
    pub fn since(&self, start: &ChipOpModes) -> ChipOpModes {
        ChipOpModes {
            legacy: self.legacy - start.legacy,
            multiplane: self.multiplane - start.multiplane,
            copyback: self.copyback - start.copyback,
            cache: self.cache - start.cache,
            multiplane_reads: self.multiplane_reads - start.multiplane_reads,
            multiplane_programs: self.multiplane_programs - start.multiplane_programs,
            multiplane_erases: self.multiplane_erases - start.multiplane_erases,
            multiplane_copybacks: self.multiplane_copybacks - start.multiplane_copybacks,
            multiplane_plane_ops: self.multiplane_plane_ops - start.multiplane_plane_ops,
            multiplane_from_queue: self.multiplane_from_queue - start.multiplane_from_queue,
            reads_ahead: self.reads_ahead - start.reads_ahead,
            suspended_reads: self.suspended_reads - start.suspended_reads,
            reads_of_moving_pages: self.reads_of_moving_pages - start.reads_of_moving_pages,
        }
    }
}

/// Everything one run measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct SsdReport {
    pub seed: u64,
    /// Host requests submitted and completed in the run (always equal after a run).
    pub submitted: u64,
    pub completed: u64,
    /// Simulated time from the run's start to the last host completion, in microseconds.
    pub sim_time_us: f64,
    pub read: IoSection,
    pub write: IoSection,
    pub trim: IoSection,
    pub flush: IoSection,
    /// Flash pages programmed per host page written.
    pub waf: f64,
    pub counters: FtlCounters,
    /// Latency of GC jobs (first move submitted to erase completed).
    pub gc_latency: LatencySummary,
    pub erase_counts: EraseSummary,
    /// Chip ops submitted, by mode.
    pub chip_ops: ChipOpModes,
    pub energy: EnergySection,
    pub valid_page_map: ValidPageMap,
    pub logical_pages: u64,
    pub physical_pages: u64,
    pub page_size_bytes: u32,
    /// Per placement id (present when `ftl.placement_ids` > 1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<PlacementReport>,
    /// Controller busy time and energy (present when the device has controller costs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<crate::controller::ControllerSection>,
    /// The SiM region's commands of the run and its counters since the device was built
    /// (present when `ftl.sim_pages` > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimSection>,
    /// The cached mapping table's counters since the device was built (present when
    /// `ftl.cmt_entries` > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmt: Option<crate::CmtCounters>,
    /// Factory and grown bad blocks since the device was built (present when
    /// `[nand.reliability]` models bad blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_blocks: Option<crate::BadBlockReport>,
    /// Read reclaim since the device was built (present when `[nand.reliability]` sets
    /// `read_disturb_coeff` and `read_reclaim_margin`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_reclaim: Option<crate::ReadReclaimReport>,
    /// The run per interval of simulated time (issue 34 item 5): written by `nandlab run
    /// --out` as `timeseries.csv`, not part of the report's JSON.
    #[serde(skip)]
    pub timeseries: Vec<crate::stats::TimeSeriesRow>,
}

/// The SiM region's part of a report (docs/sim.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SimSection {
    /// Search commands (bytes: the bitmaps returned).
    pub search: IoSection,
    /// Gather commands (bytes: the chunks returned).
    pub gather: IoSection,
    /// What the region did since the device was built.
    pub counters: crate::SearchCounters,
}

impl SsdReport {
    /// JSON text of the report.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("reports serialize")
    }
}

/// One placement id's figures over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct PlacementReport {
    pub id: u16,
    pub host_pages_written: u64,
    pub flash_pages_programmed: u64,
    /// Flash pages programmed per host page written, for this id.
    pub waf: f64,
    /// Blocks holding this id's data now (written, not free).
    pub blocks: u32,
    /// Valid pages of those blocks, as a histogram: `valid_pages_histogram[k]` blocks hold `k`
    /// valid pages (k from 0 to pages per block).
    pub valid_pages_histogram: Vec<u32>,
}
