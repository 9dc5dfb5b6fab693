//! Tail latency in steady state (issue 34 item 5, SPEC C1/C3): read and write p99 / p99.9 on a
//! full, fragmented device under blocking GC, interleaved GC, interleaved GC with
//! program/erase suspension, and with an SLC cache in front (folding only when full, and also
//! in idle time). Shape only: Wu & He (FAST'12) and MQSim (Tavakkol et al., FAST'18) show that
//! a controller which interleaves GC with host I/O and suspends programs/erases for reads bounds
//! the tails a blocking GC leaves at whole GC rounds; neither gives a number for this device.
//!
//! The device and workload are `ctrl-suspend`'s (`bench-ssd`, MLC, 64 blocks per plane, MQSim's
//! suspend timing; random 8 KiB requests, half reads, open-loop at 2,400/s after a full fill and
//! 400,000 random overwrites), so the three points without an SLC cache are the same points as
//! `ctrl-suspend`'s (same measure, same cache keys). The SLC points put 8 blocks of the device
//! in SLC mode with SLC-mode times scaled from the MLC preset's by the ratios of HP's technical
//! white paper "Solid State Drive Technology: Differences between SLC, MLC and TLC NAND",
//! Table 1 (read 25 vs 50 µs, program 250 vs 750 µs): 75 × 25/50 ≈ 38 µs, 750 × 250/750 =
//! 250 µs.

use super::ctrl::{STACK, Suspend, SuspendMeasure, requests};
use super::paper::Paper;
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;
use crate::stack::Stack;

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ctrl-tail",
    reference: "SPEC C1/C3; shape of Wu & He, FAST'12 and MQSim, FAST'18",
    title: "read and write p99/p99.9 in steady state: blocking, interleaved and \
            suspend-enabled GC, and with an SLC cache",
    run: tail,
    paper: Paper::None(
        "shape only: interleaved GC and P/E suspension bound the tails blocking GC leaves at \
         whole GC rounds (Wu & He, FAST'12; Tavakkol et al., MQSim, FAST'18); no number for \
         this device",
    ),
}];

/// One point: its name, GC scheduling, read scheduling, SLC cache idle fold (`None`: no SLC
/// cache; `Some(0)`: fold only when full).
struct Point {
    name: &'static str,
    gc: &'static str,
    reads: &'static str,
    slc_idle_fold_us: Option<i64>,
}

const POINTS: [Point; 5] = [
    Point {
        name: "blocking",
        gc: "blocking",
        reads: "fifo",
        slc_idle_fold_us: None,
    },
    Point {
        name: "interleaved",
        gc: "interleaved",
        reads: "fifo",
        slc_idle_fold_us: None,
    },
    Point {
        name: "suspend",
        gc: "interleaved",
        reads: "suspend",
        slc_idle_fold_us: None,
    },
    Point {
        name: "slc",
        gc: "interleaved",
        reads: "suspend",
        slc_idle_fold_us: Some(0),
    },
    Point {
        name: "slc_idle",
        gc: "interleaved",
        reads: "suspend",
        slc_idle_fold_us: Some(300),
    },
];

/// SLC cache blocks of the SLC points.
const SLC_BLOCKS: i64 = 8;

fn stack(point: &Point, scale: Scale, seed: u64) -> LabResult<Stack> {
    use toml::Value;
    let mut extra = vec![
        ("ssd.gc.scheduling", Value::String(point.gc.into())),
        ("ssd.scheduler.reads", Value::String(point.reads.into())),
    ];
    if let Some(idle) = point.slc_idle_fold_us {
        extra.push(("ssd.slc_cache.blocks", Value::Integer(SLC_BLOCKS)));
        if idle > 0 {
            extra.push(("ssd.slc_cache.idle_fold_us", Value::Integer(idle)));
        }
        extra.push(("nand.timing.slc_read_us", Value::Float(38.0)));
        extra.push(("nand.timing.slc_program_us", Value::Float(250.0)));
    }
    super::points::point_stack("ctrl-tail", STACK, seed, requests(scale), extra)
}

fn tail(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (scale, seed) = (options.scale, options.seed);
    let configs = POINTS
        .iter()
        .map(|point| stack(point, scale, seed).map(|s| s.config))
        .collect::<LabResult<Vec<_>>>()?;
    let measured = super::measure::run_measure::<Suspend>(options, &configs)?;
    let rows: Vec<(&Point, SuspendMeasure)> = POINTS
        .iter()
        .zip(measured)
        .map_while(|(p, m)| m.map(|m| (p, m)))
        .collect();
    let mut result = ExperimentResult {
        interrupted: rows.len() < POINTS.len(),
        ..ExperimentResult::default()
    };
    let mut curve = Curve::new(
        "tails",
        &[
            "point",
            "gc",
            "reads",
            "slc_cache_blocks",
            "slc_idle_fold_us",
            "read_mean_us",
            "read_p99_us",
            "read_p999_us",
            "write_mean_us",
            "write_p99_us",
            "write_p999_us",
            "waf",
        ],
    );
    for (point, m) in &rows {
        let n = point.name;
        result.metric(&format!("read_p99_us_{n}"), m.read_p99_us);
        result.metric(&format!("read_p999_us_{n}"), m.read_p999_us);
        result.metric(&format!("write_mean_us_{n}"), m.write_mean_us);
        result.metric(&format!("write_p99_us_{n}"), m.write_p99_us);
        result.metric(&format!("write_p999_us_{n}"), m.write_p999_us);
        let blocks = if point.slc_idle_fold_us.is_some() {
            SLC_BLOCKS as f64
        } else {
            0.0
        };
        curve.push(vec![
            n.into(),
            point.gc.into(),
            point.reads.into(),
            blocks.into(),
            (point.slc_idle_fold_us.unwrap_or(0) as f64).into(),
            m.read_mean_us.into(),
            m.read_p99_us.into(),
            m.read_p999_us.into(),
            m.write_mean_us.into(),
            m.write_p99_us.into(),
            m.write_p999_us.into(),
            m.waf.into(),
        ]);
    }
    let get = |name: &str| rows.iter().find(|(p, _)| p.name == name).map(|(_, m)| m);
    if let (Some(blocking), Some(interleaved)) = (get("blocking"), get("interleaved")) {
        result.metric(
            "read_p99_blocking_over_interleaved",
            blocking.read_p99_us / interleaved.read_p99_us,
        );
        result.metric(
            "write_p99_blocking_over_interleaved",
            blocking.write_p99_us / interleaved.write_p99_us,
        );
    }
    result.curves.push(curve);
    Ok(result)
}
