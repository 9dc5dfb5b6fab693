//! Response time against the mapping cache's size (issue 34 item 2, SPEC C2): the shape of
//! Gupta, Kim and Urgaonkar, "DFTL: A Flash Translation Layer Employing Demand-based Selective
//! Caching of Page-level Address Mappings", ASPLOS'09 — with a skewed workload, the response
//! time falls and the hit ratio rises as the cached mapping table (CMT) grows, toward the
//! page-level FTL whose whole table is in DRAM. Shape only: the paper's traces and device are
//! not nandlab's.
//!
//! The device and workload are `examples/ssd-dftl-cache.toml`'s: the `mlc1` chip on 2 channels
//! of 2 dies, 64 blocks per plane, 15 % over-provisioning, 80 % filled; random 4 KiB requests,
//! 70 % reads, Zipf(0.9) over the whole device, 16 outstanding (20,000 at `--quick`, 100,000 by
//! default, 200,000 at full scale). A translation page holds 512 entries; the table has about
//! 57,000. Translation pages reach flash when first written back: the fill writes none, so a
//! miss on a page never written back costs no read (a cold start that the longer runs wash out).

use super::paper::Paper;
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::LabResult;
use crate::stack::Stack;
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ctrl-dftl",
    reference: "SPEC C2; shape of Gupta et al., DFTL, ASPLOS'09",
    title: "response time, hit ratio and translation I/O against the cached mapping table's \
            size under a skewed (Zipf 0.9) workload, beside the all-in-DRAM table",
    run: dftl,
    paper: Paper::None(
        "shape only (Gupta et al., ASPLOS'09: response time falls toward the page-level FTL's \
         as the mapping cache grows); their traces and device differ, no number taken",
    ),
}];

const STACK: &str = r#"
[run]
seed = 2

[nand]
preset = "mlc1"
[nand.geometry]
channels = 2
dies_per_chip = 2
blocks_per_plane = 64

[ssd]
op_fraction = 0.15
[ssd.host]
queue_depth = 16

[precondition]
fill_fraction = 0.8
random_overwrites = 0

[workload]
kind = "synthetic"
pattern = "random"
read_fraction = 0.7
request_size_bytes = 4096
span_bytes = 0
distribution = { kind = "zipf", theta = 0.9 }
request_count = 20000
"#;

/// Cached mapping entries per point (`None`: the whole table in DRAM, the default).
const SIZES: [Option<i64>; 8] = [
    Some(256),
    Some(512),
    Some(1024),
    Some(2048),
    Some(4096),
    Some(8192),
    Some(16384),
    None,
];

fn requests(scale: Scale) -> i64 {
    match scale {
        Scale::Quick => 20_000,
        Scale::Standard => 100_000,
        Scale::Full => 200_000,
    }
}

fn stack(entries: Option<i64>, scale: Scale, seed: u64) -> LabResult<Stack> {
    let extra = entries.map(|e| ("ssd.mapping.cache_entries", toml::Value::Integer(e)));
    super::points::point_stack("ctrl-dftl", STACK, seed, requests(scale), extra)
}

/// What one point measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CacheSizeMeasure {
    pub mean_us: f64,
    pub read_mean_us: f64,
    pub write_mean_us: f64,
    pub read_p99_us: f64,
    pub write_p99_us: f64,
    pub waf: f64,
    pub hit_ratio: f64,
    pub translation_reads: u64,
    pub translation_writes: u64,
    pub gc_translation_writes: u64,
    /// Entries of the whole table (logical pages).
    pub table_entries: u64,
}

/// One point of `ctrl-dftl` run to its end (a point is its stack config).
#[derive(Debug)]
pub(super) struct CacheSize;

impl super::measure::Measure for CacheSize {
    const NAME: &'static str = "ctrl-dftl";
    type Point = crate::stack::StackConfig;
    type Output = CacheSizeMeasure;
    fn measure(
        config: &crate::stack::StackConfig,
        control: &Control,
    ) -> LabResult<Option<CacheSizeMeasure>> {
        let stack = super::points::resolve("ctrl-dftl", config)?;
        super::points::measure_ssd("ctrl-dftl", &stack, control, |run| Ok(cache_size(run)))
    }
}

/// The measure of one `ctrl-dftl` run.
fn cache_size(run: &crate::ssd::SsdRun) -> CacheSizeMeasure {
    let r = &run.report;
    let (reads, writes) = (r.read.requests as f64, r.write.requests as f64);
    let cmt = r.cmt.unwrap_or_default();
    let accesses = cmt.hits + cmt.misses;
    CacheSizeMeasure {
        mean_us: (r.read.lat.mean_us * reads + r.write.lat.mean_us * writes)
            / (reads + writes).max(1.0),
        read_mean_us: r.read.lat.mean_us,
        write_mean_us: r.write.lat.mean_us,
        read_p99_us: r.read.lat.p99_us,
        write_p99_us: r.write.lat.p99_us,
        waf: r.waf,
        hit_ratio: if r.cmt.is_none() {
            1.0
        } else if accesses == 0 {
            0.0
        } else {
            cmt.hits as f64 / accesses as f64
        },
        translation_reads: cmt.translation_reads,
        translation_writes: cmt.translation_writes,
        gc_translation_writes: cmt.gc_translation_writes,
        table_entries: r.logical_pages,
    }
}

fn dftl(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (scale, seed) = (options.scale, options.seed);
    let configs = SIZES
        .iter()
        .map(|&entries| stack(entries, scale, seed).map(|s| s.config))
        .collect::<LabResult<Vec<_>>>()?;
    let measured = super::measure::run_measure::<CacheSize>(options, &configs)?;
    let (rows, interrupted) = super::points::measured_rows(&SIZES, measured);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    let mut curve = Curve::new(
        "cache_size",
        &[
            "cache_entries",
            "cache_fraction",
            "mean_us",
            "read_mean_us",
            "write_mean_us",
            "read_p99_us",
            "write_p99_us",
            "hit_ratio",
            "translation_reads",
            "translation_writes",
            "gc_translation_writes",
            "waf",
        ],
    );
    let ideal = rows
        .iter()
        .find(|(e, _)| e.is_none())
        .map(|(_, m)| m.mean_us);
    for (entries, m) in &rows {
        let table = m.table_entries.max(1) as f64;
        let (name, cached) = match entries {
            Some(e) => (e.to_string(), *e as f64),
            None => ("all".to_string(), table),
        };
        result.metric(&format!("mean_us_{name}"), m.mean_us);
        result.metric(&format!("hit_ratio_{name}"), m.hit_ratio);
        if let (Some(ideal), Some(_)) = (ideal, entries) {
            result.metric(&format!("mean_over_all_in_dram_{name}"), m.mean_us / ideal);
        }
        curve.push(vec![
            cached.into(),
            (cached / table).min(1.0).into(),
            m.mean_us.into(),
            m.read_mean_us.into(),
            m.write_mean_us.into(),
            m.read_p99_us.into(),
            m.write_p99_us.into(),
            m.hit_ratio.into(),
            (m.translation_reads as f64).into(),
            (m.translation_writes as f64).into(),
            (m.gc_translation_writes as f64).into(),
            m.waf.into(),
        ]);
    }
    result.curves.push(curve);
    Ok(result)
}
