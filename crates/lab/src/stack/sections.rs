//! The sections of a stack config besides `[nand]` and `[ssd]`: `[run]`, `[engine]` and
//! `[workload]` (`[precondition]` is the FTL's [`nandlab_ftl::Precondition`]).

use nandlab_engine::{CoDesignFallback, ConventionalInsert, QueryMix};
use nandlab_ftl::sched::{ChipWorkloadKind, DriverConfig, SchedulerPolicy};
use nandlab_workload::SyntheticSpec;
use serde::{Deserialize, Serialize};

/// `[run]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// The one seed of the run: the SSD, the workload generators and the query generator derive
    /// their streams from it.
    #[serde(default)]
    pub seed: u64,
}

/// `[engine]`: paper 000's row store on the SSD (conventional unless switched).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSection {
    /// Insert Address Assist.
    #[serde(default)]
    pub iaa: bool,
    /// Update-to-Delete+Insert.
    #[serde(default)]
    pub u2di: bool,
    /// Row size in bytes (paper 000: 119).
    #[serde(default = "default_row_size")]
    pub row_size_bytes: usize,
    /// Queries between refreshes of the next-erase-block LPA list (paper 000: 16).
    #[serde(default = "default_hint_refresh")]
    pub hint_refresh_queries: u32,
    /// Check every live row of every page read against the last value written.
    #[serde(default = "default_true")]
    pub verify: bool,
    /// Where an insert goes without IAA: `first-fit` (default) or `recent-hole`.
    #[serde(default)]
    pub conventional_insert: ConventionalInsert,
    /// Where an insert goes with IAA when no hinted page has a free slot: `rotate-pages`
    /// (default; the next page in rotation, paper 002) or `append` (before issue 30).
    #[serde(default, skip_serializing_if = "is_default_fallback")]
    pub codesign_fallback: CoDesignFallback,
    /// Each page write waits until the SSD is idle, so GC it triggered on any die blocks the
    /// query (paper 000 §2's foreground GC); off: only GC on the write's own die does.
    #[serde(default)]
    pub wait_for_gc: bool,
    /// Host write buffer in pages (paper 000's emulator's host-write path): a page write
    /// returns once the SSD has taken it and its program runs in the background, striped over
    /// the dies; at most this many are in flight (capped at `ftl.queue_depth`); a write that
    /// triggers GC waits until the SSD is idle (foreground GC). 0 (default): every write
    /// completes before it returns.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub write_buffer_pages: u32,
}

impl Default for EngineSection {
    /// The conventional engine of paper 000 (119-byte rows, hint every 16 queries, verified).
    fn default() -> Self {
        EngineSection {
            iaa: false,
            u2di: false,
            row_size_bytes: default_row_size(),
            hint_refresh_queries: default_hint_refresh(),
            verify: true,
            conventional_insert: ConventionalInsert::default(),
            codesign_fallback: CoDesignFallback::default(),
            wait_for_gc: false,
            write_buffer_pages: 0,
        }
    }
}

fn is_default_fallback(fallback: &CoDesignFallback) -> bool {
    *fallback == CoDesignFallback::default()
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn default_row_size() -> usize {
    119
}
fn default_hint_refresh() -> u32 {
    16
}
fn default_true() -> bool {
    true
}

/// `[workload]`: exactly one source of work, chosen by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSection {
    /// Synthetic block I/O (the keys of `nandlab_workload::SyntheticSpec`; `span_bytes = 0`
    /// is the whole logical capacity).
    Synthetic(SyntheticSpec),
    /// A block trace file.
    Trace(TraceWorkload),
    /// A fio job file (a stated subset of fio's keys).
    Fio(FioWorkload),
    /// Paper 000 Fig. 12: fill to a free space, then random Insert/Delete/Update at constant
    /// free space (needs `[engine]`).
    ConstantFreeSpace(ConstantFreeSpaceWorkload),
    /// Paper 000 Table I: free space drifts from a start to an end value (needs `[engine]`).
    DriftingFreeSpace(DriftingFreeSpaceWorkload),
    /// Point lookups in a B+tree leaf level in the SSD's SiM region (paper 004 §V-A; needs
    /// `[ssd.sim]` and `payload = "full"`): search commands and value gathers.
    SimLookup(SimLookupWorkload),
    /// Requests on the bare chips of `[nand]` (paper 003's chip-level workloads, driven by the
    /// host-side chip scheduler; no SSD, so `[ssd]` and the SSD sections do not apply).
    Chip(ChipWorkloadSpec),
}

impl WorkloadSection {
    /// The `kind` value.
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSection::Synthetic(_) => "synthetic",
            WorkloadSection::Trace(_) => "trace",
            WorkloadSection::Fio(_) => "fio",
            WorkloadSection::ConstantFreeSpace(_) => "constant-free-space",
            WorkloadSection::DriftingFreeSpace(_) => "drifting-free-space",
            WorkloadSection::SimLookup(_) => "sim-lookup",
            WorkloadSection::Chip(_) => "chip",
        }
    }

    /// Whether this workload runs queries on the storage engine.
    pub fn needs_engine(&self) -> bool {
        matches!(
            self,
            WorkloadSection::ConstantFreeSpace(_) | WorkloadSection::DriftingFreeSpace(_)
        )
    }
}

/// `kind = "trace"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceWorkload {
    /// The trace file (relative paths: from the config file's folder).
    pub path: String,
    /// `msr`, `blkparse`, `disksim` or `native`.
    pub format: String,
    /// Ignore the recorded times; issue as fast as the queue allows.
    #[serde(default)]
    pub closed_loop: bool,
    /// blkparse: replay Q (queue) lines instead of D (dispatch) lines.
    #[serde(default)]
    pub queue_events: bool,
    /// Keep one device of the trace (MSR DiskNumber, DiskSim devno, blkparse major,minor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// Before the timed replay, write (functionally) the pages the trace reads before writing
    /// them, so that those reads cost a flash read rather than nothing (MQSim fills a trace's
    /// read footprint the same way).
    #[serde(default = "default_true")]
    pub precondition_reads: bool,
    /// Grow `nand.geometry.blocks_per_plane` until the logical capacity covers the trace's
    /// furthest byte, instead of folding requests into a smaller device.
    #[serde(default)]
    pub fit_device: bool,
}

/// `kind = "fio"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioWorkload {
    /// The job file (relative paths: from the config file's folder). Its `iodepth` sets the
    /// host queue depth.
    pub path: String,
    /// Before the timed run, write (functionally) the pages the jobs read before writing them
    /// (a read job on a fresh device otherwise reads nothing from flash).
    #[serde(default = "default_true")]
    pub precondition_reads: bool,
    /// Only these job sections of the file, as fio's `--section` (default: every section;
    /// `[global]` always applies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<String>,
}

/// `kind = "constant-free-space"` (paper 000 Fig. 12 protocol).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantFreeSpaceWorkload {
    /// Free space to fill to and hold (paper: 0.2–0.8).
    pub free_space_fraction: f64,
    /// P(Update); Insert and Delete share the rest equally.
    pub update_fraction: f64,
    /// Queries after the fill before measuring.
    #[serde(default)]
    pub warmup_query_count: u64,
    /// Measured queries (paper: 1.6·10^6).
    pub query_count: u64,
    /// Repeat the warm-up window until the WAF changes by less than 5 % between windows.
    #[serde(default)]
    pub warmup_until_stationary: bool,
}

/// `kind = "drifting-free-space"` (paper 000 Table I protocol).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriftingFreeSpaceWorkload {
    /// Free space after the fill (paper: 0.8).
    pub free_space_fraction_start: f64,
    /// Free space at which the run stops (paper: 0.2).
    pub free_space_fraction_end: f64,
    /// `{ insert, delete, update }` probabilities; P(Insert) must exceed P(Delete).
    pub mix: QueryMix,
    /// Safety bound on the number of queries.
    pub query_count_max: u64,
}

/// `kind = "sim-lookup"`: a key-value leaf level in the SiM region (paper 004 §V-A, Fig. 8)
/// and open-loop point lookups on it (docs/sim.md "A lookup workload on the SiM region").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimLookupWorkload {
    /// Distinct keys loaded (random 64-bit keys of the seed, never the empty-slot key
    /// `u64::MAX`), each with a random 64-bit value.
    pub records: u64,
    /// Entries per leaf; 0 (default): every searchable slot of a page (512, or 504 with
    /// `ssd.sim.integrity`, whose header chunk is not searchable).
    #[serde(default)]
    pub slots_per_leaf: u32,
    /// Point lookups in the measured run.
    pub request_count: u64,
    /// Which records are looked up: `uniform`, `zipfian` (YCSB's scrambled Zipfian, θ =
    /// 0.99), `hotspot` (YCSB's default: 80 % of the lookups on 20 % of the records) or `zipf`
    /// (a plain Zipf(`zipf_alpha`), paper 004's 0.5, 0.9 and 1.3).
    #[serde(default = "default_distribution")]
    pub distribution: String,
    /// α of `distribution = "zipf"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zipf_alpha: Option<f64>,
    /// Share of lookups of keys that are not loaded (their search must match nothing).
    #[serde(default)]
    pub miss_fraction: f64,
    /// Open-loop arrivals: one lookup every this many ns (give this or `lookups_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interarrival_ns: Option<u64>,
    /// Open-loop arrivals at this rate (rounded to whole ns between arrivals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookups_per_s: Option<f64>,
    /// Closed loop instead: this many clients, each with one lookup in flight, submitting its
    /// next lookup when the previous one completes (give this or the open-loop arrivals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// A hit's value chunk is gathered from the value page when its search completes; off:
    /// a lookup is its search alone.
    #[serde(default = "default_true")]
    pub gather_values: bool,
    /// How a lookup reads the leaf: `sim` (default: a search command on the key page, then a
    /// gather of the value chunk) or `full-page` (paper 004's baseline: host reads of the whole
    /// key page, a host-side scan, then of the whole value page; needs `clients`).
    #[serde(default = "default_lookup_path")]
    pub path: String,
    /// The host page cache as a share of the leaf level's pages (paper 004's "cache
    /// coverage"; 0, the default: no cache). The full-page path keeps the pages it reads and
    /// the pages updates dirty in it; the SiM path's lookups bypass it, so with updates it
    /// holds only their dirty pages (a write buffer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub page_cache_coverage: f64,
    /// What a page-cache hit costs the host, ns (default 2,000: an assumption, see docs/sim.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache_hit_ns: Option<u64>,
    /// Share of the operations on loaded keys that are updates (YCSB's update proportion;
    /// paper 004 Fig. 13's read share is 1 − this; 0, the default: lookups only; needs
    /// `clients`). An update finds its key's slot as a lookup does, brings the value page into
    /// the page cache (a whole-page read on a miss) and dirties it there; a dirty page is
    /// written back when the cache evicts it (docs/sim.md).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub update_fraction: f64,
}

/// `kind = "chip"`: a chip-level workload on the chips of `[nand]` (`nandlab chip`; paper
/// 003 Table II), issued by the host-side chip scheduler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipWorkloadSpec {
    /// `swr`, `srd` (sequential within blocks) or a trace-like mix: `msnfs`, `fin`, `web`,
    /// `usr`, `prn`.
    pub pattern: ChipWorkloadKind,
    /// Requests issued.
    pub request_count: u64,
    /// Request size of `swr` / `srd` (the paper uses 2 KB); 0 (default): one page.
    #[serde(default)]
    pub request_bytes: u32,
    /// Where consecutive pages go: `die-first` (default) or `plane-first`.
    #[serde(default)]
    pub scheduler: SchedulerPolicy,
    /// Cache-mode reads and programs.
    #[serde(default)]
    pub cache: bool,
    /// The dies of a channel work at once (interleaved-die mode; default on).
    #[serde(default = "default_true")]
    pub interleave: bool,
    /// Requests outstanding at the host (default 32).
    #[serde(default = "default_chip_queue_depth")]
    pub queue_depth: u32,
    /// Planes merged into one multiplane op at most (plane-first only); 0 (default): all.
    #[serde(default)]
    pub max_planes_per_op: u32,
}

fn default_chip_queue_depth() -> u32 {
    DriverConfig::default().queue_depth
}

impl ChipWorkloadSpec {
    /// `request_count` requests of `pattern` with the scheduler's defaults.
    pub fn new(pattern: ChipWorkloadKind, request_count: u64) -> Self {
        ChipWorkloadSpec::with_driver(pattern, request_count, 0, &DriverConfig::default())
    }

    /// The workload with the host-side scheduler of `driver`.
    pub fn with_driver(
        pattern: ChipWorkloadKind,
        request_count: u64,
        request_bytes: u32,
        driver: &DriverConfig,
    ) -> Self {
        ChipWorkloadSpec {
            pattern,
            request_count,
            request_bytes,
            scheduler: driver.policy,
            cache: driver.cache,
            interleave: driver.interleave,
            queue_depth: driver.queue_depth,
            max_planes_per_op: driver.max_planes_per_op,
        }
    }

    /// The host-side chip scheduler's config.
    pub fn driver(&self) -> DriverConfig {
        DriverConfig {
            policy: self.scheduler,
            cache: self.cache,
            interleave: self.interleave,
            queue_depth: self.queue_depth,
            max_planes_per_op: self.max_planes_per_op,
        }
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn default_lookup_path() -> String {
    "sim".into()
}

fn default_distribution() -> String {
    "uniform".into()
}
