//! Search-in-Memory on the SSD with updates (paper 004 §VII-A, Fig. 12's write-intensive row;
//! SPEC R-S1; issue 30 item 4): the `sim-lookup` stack workload, 16 closed-loop clients, 80 %
//! of the operations on loaded keys updates, Zipf 0.9 keys over 250,000 records, against the
//! full-page baseline, at host page-cache coverages 0–50 %.
//!
//! Unlike the chip-level harness of [`super::sim`] (one chip, service times summed), every
//! operation here runs on the simulated SSD: searches and gathers are open-loop commands on
//! the host interface, an update dirties its value page in the host's LRU page cache, and a
//! dirty page the cache evicts is written back, queueing with the reads (the paper's FCFS
//! queue). On the SiM path the cache holds only dirty pages (lookups bypass it); the baseline
//! shares it between the pages it reads and those it dirties. Every answer is checked.

use super::paper::{Paper, PaperValue, pv};
use super::points::{Row, run_points};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;
use crate::stack::Stack;

/// Paper 004 Fig. 12: SiM's QPS over the page-cache baseline in write-intensive mixes.
const PAPER: &[PaperValue] = &[
    pv(
        "speedup_write_intensive_min",
        "speedup_coverage_10_50_min",
        3.0,
        "x",
        "Fig. 12",
        "write-intensive mixes, cache coverage 10-50 %",
    ),
    pv(
        "speedup_write_intensive_max",
        "speedup_coverage_10_50_max",
        9.0,
        "x",
        "Fig. 12",
        "write-intensive mixes, cache coverage 10-50 %",
    ),
];

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "sim-ssd-updates",
    reference: "SPEC R-S1 (paper 004 Fig. 12, write-intensive) on the SSD",
    title: "SiM QPS over the full-page baseline with 80 % updates on the simulated SSD, \
            against host page-cache coverage",
    run: updates,
    paper: Paper::Values(PAPER),
}];

/// The device and workload of every point (examples/ssd-sim-lookup-updates.toml); a point
/// overrides the path, the coverage, the request count and the seed.
const STACK: &str = r#"
[run]
seed = 0

[nand]
preset = "sim2024"
[nand.geometry]
channels = 2
blocks_per_plane = 256

[ssd]
op_fraction = 0.3
payload = "full"
[ssd.sim]
pages = 2048
integrity = true
batch_deadline_ns = 0

[workload]
kind = "sim-lookup"
records = 250000
request_count = 20000
distribution = "zipf"
zipf_alpha = 0.9
miss_fraction = 0.1
clients = 16
gather_values = true
path = "sim"
page_cache_coverage = 0.25
update_fraction = 0.8
"#;

const PATHS: [&str; 2] = ["sim", "full-page"];
/// Host page-cache coverage (share of the index and value pages the cache holds).
const COVERAGES: [f64; 4] = [0.0, 0.1, 0.25, 0.5];

fn requests(scale: Scale) -> i64 {
    match scale {
        Scale::Quick => 8_000,
        Scale::Standard => 20_000,
        Scale::Full => 50_000,
    }
}

/// Coverage as a whole percentage, for metric names.
fn percent(coverage: f64) -> u32 {
    (coverage * 100.0).round() as u32
}

fn stack(path: &str, coverage: f64, scale: Scale, seed: u64) -> LabResult<Stack> {
    let extra = [
        ("workload.path", toml::Value::String(path.into())),
        ("workload.page_cache_coverage", toml::Value::Float(coverage)),
    ];
    super::points::point_stack("sim-ssd-updates", STACK, seed, requests(scale), extra)
}

fn updates(options: &RunOptions) -> LabResult<ExperimentResult> {
    let points: Vec<(&str, f64)> = COVERAGES
        .iter()
        .flat_map(|&c| PATHS.iter().map(move |&p| (p, c)))
        .collect();
    let stacks = points
        .iter()
        .map(|&(p, c)| stack(p, c, options.scale, options.seed))
        .collect::<LabResult<Vec<_>>>()?;
    let measured = run_points(options, &stacks)?;
    let (rows, interrupted) = super::points::measured_rows(&points, measured);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    result.curves.push(curve(&rows));
    summary(&rows, &mut result);
    Ok(result)
}

/// Columns of the `updates` curve taken from each point's metric row.
const COLUMNS: [&str; 8] = [
    "queries_per_s",
    "lookup_lat_p50_us",
    "lookup_lat_p99_us",
    "write_backs",
    "updates",
    "energy_mj",
    "sim_time_us",
    "verification_failures",
];

fn curve(rows: &[((&str, f64), Row)]) -> Curve {
    let mut names = vec!["path", "page_cache_coverage"];
    names.extend(COLUMNS);
    let mut curve = Curve::new("updates", &names);
    for ((path, coverage), row) in rows {
        let mut values = vec![(*path).into(), (*coverage).into()];
        values.extend(COLUMNS.iter().map(|&c| row.get(c).into()));
        curve.push(values);
    }
    curve
}

/// Per coverage: SiM's QPS and energy over the baseline's; over 10–50 % the range of the
/// speed-up (the paper's comparison); every answer checked.
fn summary(rows: &[((&str, f64), Row)], result: &mut ExperimentResult) {
    let get = |path: &str, coverage: f64| {
        rows.iter()
            .find(|((p, c), _)| *p == path && *c == coverage)
            .map(|(_, row)| row)
    };
    let mut speedups = Vec::new();
    for &c in &COVERAGES {
        let (Some(sim), Some(full)) = (get("sim", c), get("full-page", c)) else {
            continue;
        };
        let pct = percent(c);
        let speedup = sim.get("queries_per_s") / full.get("queries_per_s");
        result.metric(&format!("speedup_c{pct}"), speedup);
        result.metric(
            &format!("energy_ratio_c{pct}"),
            sim.get("energy_mj") / full.get("energy_mj"),
        );
        result.metric(&format!("write_backs_sim_c{pct}"), sim.get("write_backs"));
        result.metric(&format!("write_backs_full_c{pct}"), full.get("write_backs"));
        if (0.1..=0.5).contains(&c) {
            speedups.push(speedup);
        }
    }
    if !speedups.is_empty() {
        let min = speedups.iter().copied().fold(f64::INFINITY, f64::min);
        let max = speedups.iter().copied().fold(0.0, f64::max);
        result.metric("speedup_coverage_10_50_min", min);
        result.metric("speedup_coverage_10_50_max", max);
    }
    let failures: f64 = rows
        .iter()
        .map(|(_, row)| row.get("verification_failures"))
        .sum();
    result.metric("verification_failures", failures);
}
