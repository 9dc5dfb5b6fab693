//! Controller experiments (issue 34, SPEC C1): read scheduling and program/erase suspension
//! against GC scheduling, in steady state, with the read-latency claims of Wu and He,
//! "Reducing SSD Read Latency via NAND Flash Program and Erase Suspension", FAST'12, declared
//! beside nandlab's values.
//!
//! The device is `bench-ssd` (MQSim-like MLC: 75 µs read, 750 µs program, 3.8 ms erase) with 64
//! blocks per plane and the suspend timing of MQSim's defaults; the workload random 8 KiB
//! requests, half reads, arriving open-loop at 2,400/s after a full fill and 400,000 random
//! overwrites (WAF ≈ 3.6). Every point makes the same FTL decisions; only the order in which
//! the chip runs them differs. A reads-only point (1,200 reads/s on the same device) gives the
//! read latency without program/erase contention.

use super::paper::{Paper, pv};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::LabResult;
use crate::stack::Stack;
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ctrl-suspend",
    reference: "SPEC C1; Wu & He, FAST'12",
    title: "read and write latency under fifo, read-priority and program/erase-suspend read \
            scheduling, with blocking and interleaved GC, in steady state",
    run: suspend,
    paper: Paper::Values(&[
        pv(
            "read_latency_reduction_vs_fifo",
            "read_mean_reduction_vs_fifo",
            0.754,
            "",
            "Wu & He FAST'12, abstract",
            "P/E suspension vs FIFO, mean read latency over their traces (SLC and MLC)",
        ),
        pv(
            "read_latency_reduction_vs_rps",
            "read_mean_reduction_vs_rps",
            0.505,
            "",
            "Wu & He FAST'12, abstract",
            "P/E suspension vs read-priority scheduling (RPS)",
        ),
        pv(
            "write_latency_overhead_max",
            "write_mean_overhead",
            0.04,
            "",
            "Wu & He FAST'12, abstract",
            "write latency cost of P/E suspension (less than 4 %)",
        ),
        pv(
            "read_latency_contention",
            "read_contention_x",
            2.0,
            "x",
            "Wu & He FAST'12, abstract (preliminary results)",
            "mean read latency with P/E contention (FIFO) over without",
        ),
    ]),
}];

/// The device and workload of every point (overridden per point: GC and read scheduling, the
/// read fraction and rate of the reads-only point, the request count and the seed).
pub(super) const STACK: &str = r#"
[run]
seed = 0

[ssd]
preset = "bench-ssd"
[ssd.gc]
scheduling = "interleaved"
threshold_blocks = 6
[ssd.scheduler]
reads = "fifo"

[nand.geometry]
blocks_per_plane = 64
[nand.suspend]
program_suspend_us = 100.0
erase_suspend_us = 700.0
resume_penalty_us = 0.0
max_suspended_reads = 4
source = "MQSim's defaults (Tavakkol et al., FAST'18, ssdconfig.xml: Suspend_Program_Time 100 us, Suspend_Erase_Time 700 us); no resume penalty, as MQSim"

[precondition]
fill_fraction = 1.0
random_overwrites = 400000

[workload]
kind = "synthetic"
pattern = "random"
read_fraction = 0.5
request_size_bytes = 8192
span_bytes = 0
request_count = 20000
arrival = { kind = "poisson", rate_iops = 2400.0 }
"#;

/// GC scheduling × read scheduling, then the reads-only point (`None`).
const GC: [&str; 2] = ["blocking", "interleaved"];
const READS: [&str; 3] = ["fifo", "priority", "suspend"];

/// One point: GC and read scheduling, or the reads-only point.
type Point = Option<(&'static str, &'static str)>;

fn points() -> Vec<Point> {
    GC.iter()
        .flat_map(|&gc| READS.iter().map(move |&reads| Some((gc, reads))))
        .chain(std::iter::once(None))
        .collect()
}

/// What one point measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SuspendMeasure {
    pub read_mean_us: f64,
    pub read_p99_us: f64,
    pub read_p999_us: f64,
    pub write_mean_us: f64,
    pub write_p99_us: f64,
    pub write_p999_us: f64,
    pub waf: f64,
    pub reads_ahead: u64,
    pub suspended_reads: u64,
    pub reads_of_moving_pages: u64,
}

pub(super) fn requests(scale: Scale) -> i64 {
    match scale {
        Scale::Quick => 20_000,
        Scale::Standard => 60_000,
        Scale::Full => 200_000,
    }
}

/// The stack of `point`.
fn stack(point: Point, scale: Scale, seed: u64) -> LabResult<Stack> {
    let extra: [(&str, toml::Value); 2] = match point {
        Some((gc, reads)) => [
            ("ssd.gc.scheduling", gc.into()),
            ("ssd.scheduler.reads", reads.into()),
        ],
        None => [
            ("workload.read_fraction", 1.0.into()),
            ("workload.arrival.rate_iops", 1200.0.into()),
        ],
    };
    super::points::point_stack("ctrl-suspend", STACK, seed, requests(scale), extra)
}

/// One point of `ctrl-suspend` run to its end (a point is its stack config): the registered
/// measure, so that the points run on worker processes and Dask like the others.
#[derive(Debug)]
pub(super) struct Suspend;

impl super::measure::Measure for Suspend {
    const NAME: &'static str = "ctrl-suspend";
    type Point = crate::stack::StackConfig;
    type Output = SuspendMeasure;
    fn measure(
        config: &crate::stack::StackConfig,
        control: &Control,
    ) -> LabResult<Option<SuspendMeasure>> {
        let stack = super::points::resolve("ctrl-suspend", config)?;
        super::points::measure_ssd("ctrl-suspend", &stack, control, |run| {
            let r = &run.report;
            Ok(SuspendMeasure {
                read_mean_us: r.read.lat.mean_us,
                read_p99_us: r.read.lat.p99_us,
                read_p999_us: r.read.lat.p999_us,
                write_mean_us: r.write.lat.mean_us,
                write_p99_us: r.write.lat.p99_us,
                write_p999_us: r.write.lat.p999_us,
                waf: r.waf,
                reads_ahead: r.chip_ops.reads_ahead,
                suspended_reads: r.chip_ops.suspended_reads,
                reads_of_moving_pages: r.chip_ops.reads_of_moving_pages,
            })
        })
    }
}

fn name(point: Point) -> String {
    match point {
        Some((gc, reads)) => format!("{gc}_{reads}"),
        None => "reads_only".into(),
    }
}

fn suspend(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (scale, seed) = (options.scale, options.seed);
    let points = points();
    let configs = points
        .iter()
        .map(|&point| stack(point, scale, seed).map(|s| s.config))
        .collect::<LabResult<Vec<_>>>()?;
    let measured = super::measure::run_measure::<Suspend>(options, &configs)?;
    let (rows, interrupted) = super::points::measured_rows(&points, measured);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    let curve = latency_curve(&rows, &mut result);
    comparisons(&rows, &mut result);
    result.curves.push(curve);
    Ok(result)
}

/// The points' rows as the `latency` curve; each point's latencies as metrics too.
fn latency_curve(rows: &[(Point, SuspendMeasure)], result: &mut ExperimentResult) -> Curve {
    let mut curve = Curve::new(
        "latency",
        &[
            "gc",
            "reads",
            "read_mean_us",
            "read_p99_us",
            "read_p999_us",
            "write_mean_us",
            "write_p99_us",
            "write_p999_us",
            "waf",
            "reads_ahead",
            "suspended_reads",
            "reads_of_moving_pages",
        ],
    );
    for (point, m) in rows {
        let (gc, reads) = point.unwrap_or(("none", "reads-only"));
        let n = name(*point);
        result.metric(&format!("read_mean_us_{n}"), m.read_mean_us);
        result.metric(&format!("read_p99_us_{n}"), m.read_p99_us);
        result.metric(&format!("read_p999_us_{n}"), m.read_p999_us);
        if point.is_some() {
            result.metric(&format!("write_mean_us_{n}"), m.write_mean_us);
            result.metric(&format!("write_p999_us_{n}"), m.write_p999_us);
        }
        curve.push(vec![
            gc.into(),
            reads.into(),
            m.read_mean_us.into(),
            m.read_p99_us.into(),
            m.read_p999_us.into(),
            m.write_mean_us.into(),
            m.write_p99_us.into(),
            m.write_p999_us.into(),
            m.waf.into(),
            (m.reads_ahead as f64).into(),
            (m.suspended_reads as f64).into(),
            (m.reads_of_moving_pages as f64).into(),
        ]);
    }
    curve
}

/// The paper's comparisons, on interleaved GC (under blocking GC the host queue waits behind
/// whole GC rounds, which no read policy reaches).
fn comparisons(rows: &[(Point, SuspendMeasure)], result: &mut ExperimentResult) {
    let get = |gc: &str, reads: &str| {
        rows.iter()
            .find(|(p, _)| *p == Some((gc, reads)))
            .map(|(_, m)| m)
    };
    let reads_only = rows.iter().find(|(p, _)| p.is_none()).map(|(_, m)| m);
    if let (Some(fifo), Some(rps), Some(sus)) = (
        get("interleaved", "fifo"),
        get("interleaved", "priority"),
        get("interleaved", "suspend"),
    ) {
        result.metric(
            "read_mean_reduction_vs_fifo",
            1.0 - sus.read_mean_us / fifo.read_mean_us,
        );
        result.metric(
            "read_mean_reduction_vs_rps",
            1.0 - sus.read_mean_us / rps.read_mean_us,
        );
        result.metric(
            "write_mean_overhead",
            sus.write_mean_us / fifo.write_mean_us - 1.0,
        );
        if let Some(alone) = reads_only {
            result.metric("read_contention_x", fifo.read_mean_us / alone.read_mean_us);
        }
    }
}
