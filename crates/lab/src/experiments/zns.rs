//! ZNS against the block interface (issue 29 item 5): the workload shape of Bjørling et al.,
//! "ZNS: Avoiding the Block Interface Tax for Flash-based SSDs", USENIX ATC'21, Figure 1 — a
//! write workload that overwrites the usable capacity several times on SSDs with the same raw
//! media: a block-interface SSD with 7 % and with 28 % over-provisioning against a ZNS SSD with
//! none — with the paper's write-throughput claim declared beside nandlab's.
//!
//! Every point is the same chip (NANDFlashSim SLC timing, 4 planes of 128 blocks of 64 pages)
//! behind the NVMe host interface at queue depth 8, starting empty. The block points take
//! random 4 KiB writes over their whole namespace (the device's GC makes room); the ZNS point
//! is written as a log-structured host writes zones: sequentially, resetting each zone before
//! writing it again (zones of 4 planes, no device GC). Each point writes its usable capacity
//! `passes` times; the host's own GC (ZenFS / f2fs cleaning) is not modelled.

use super::paper::{Paper, pv};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::stack::Stack;
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "zns-block-tax",
    reference: "issue 29; Bjørling et al., ATC'21",
    title: "write throughput and WAF of a block-interface SSD (7 % and 28 % OP) against a ZNS \
            SSD (no OP) while the usable capacity is overwritten several times",
    run: block_tax,
    paper: Paper::Values(&[pv(
        "write_throughput_zns_over_block",
        "write_throughput_x_zns_vs_block7",
        2.0,
        "x",
        "Bjørling et al. ATC'21, abstract",
        "zone-specialized RocksDB on a ZNS SSD vs RocksDB on a block-interface SSD with \
         identical hardware; nandlab: the Fig. 1 workload, ZNS vs 7 % OP",
    )]),
}];

/// The device and workload every point shares; a point sets its mapping, namespace and
/// write pattern ([`Point::settings`]) and its request count.
const STACK: &str = r#"
[run]
seed = 0

[nand]
preset = "slc"
[nand.geometry]
page_size_bytes = 4096
dies_per_chip = 2
blocks_per_plane = 128

[ssd]
[ssd.host]
queue_depth = 8

[ssd.nvme]
queue_weights = [1]

[workload]
kind = "synthetic"
read_fraction = 0.0
request_size_bytes = 4096
span_bytes = 0
request_count = 1
"#;

const REQUEST_BYTES: f64 = 4096.0;

/// A point: the interface and the over-provisioning of a block point.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Point {
    Block { op: f64, label: &'static str },
    Zns,
}

const POINTS: [Point; 3] = [
    Point::Block {
        op: 0.07,
        label: "block7",
    },
    Point::Block {
        op: 0.28,
        label: "block28",
    },
    Point::Zns,
];

impl Point {
    fn name(self) -> &'static str {
        match self {
            Point::Block { label, .. } => label,
            Point::Zns => "zns",
        }
    }
    /// Logical pages of the point's namespace (the chip's 32,768 pages less the OP, which
    /// the FTL rounds per plane); `measure` checks it against the report.
    fn usable_pages(self) -> u64 {
        match self {
            Point::Block { op, .. } if op < 0.1 => 30_624,
            Point::Block { .. } => 25_600,
            Point::Zns => 32_768,
        }
    }
    fn op(self) -> f64 {
        match self {
            Point::Block { op, .. } => op,
            Point::Zns => 0.0,
        }
    }
    /// The point's settings over [`STACK`]: a block point is over-provisioned, collects
    /// garbage from 3 free blocks and is written at random; the ZNS point maps zones of 4
    /// planes (8 open at most) and is written sequentially.
    fn settings(self) -> Vec<(&'static str, toml::Value)> {
        use toml::Value;
        let namespace = |kind: &str, max_open_zones: Option<i64>| {
            let mut ns = toml::Table::new();
            ns.insert("kind".into(), kind.into());
            if let Some(n) = max_open_zones {
                ns.insert("max_open_zones".into(), Value::Integer(n));
            }
            Value::Array(vec![Value::Table(ns)])
        };
        match self {
            Point::Block { op, .. } => vec![
                ("ssd.op_fraction", Value::Float(op)),
                ("ssd.gc.threshold_blocks", Value::Integer(3)),
                ("ssd.nvme.namespaces", namespace("conventional", None)),
                ("workload.pattern", "random".into()),
            ],
            Point::Zns => vec![
                ("ssd.mapping.kind", "zoned".into()),
                ("ssd.mapping.zone_planes", Value::Integer(4)),
                ("ssd.nvme.namespaces", namespace("zoned", Some(8))),
                ("workload.pattern", "sequential".into()),
            ],
        }
    }
}

/// Times each point writes its usable capacity (the paper: four).
fn passes(scale: Scale) -> u64 {
    match scale {
        Scale::Quick => 2,
        Scale::Standard | Scale::Full => 4,
    }
}

/// What one point measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TaxMeasure {
    pub usable_pages: u64,
    pub waf: f64,
    pub write_mib_s: f64,
    pub write_mean_us: f64,
    pub write_p99_us: f64,
    pub erases: u64,
    pub resets: u64,
}

fn stack(point: Point, scale: Scale, seed: u64) -> LabResult<Stack> {
    let count = point.usable_pages() * passes(scale);
    let count = i64::try_from(count).expect("a point writes fewer than 2^63 pages");
    super::points::point_stack("zns-block-tax", STACK, seed, count, point.settings())
}

fn measure(
    point: Point,
    scale: Scale,
    seed: u64,
    control: &Control,
) -> LabResult<Option<TaxMeasure>> {
    let stack = stack(point, scale, seed)?;
    super::points::measure_ssd("zns-block-tax", &stack, control, |run| {
        let r = &run.report;
        if r.logical_pages != point.usable_pages() {
            return Err(LabError::Usage(format!(
                "zns-block-tax point {}: {} logical pages, not the {} it writes {} times",
                point.name(),
                r.logical_pages,
                point.usable_pages(),
                passes(scale)
            )));
        }
        let resets = run
            .nvme
            .as_ref()
            .map_or(0, |n| n.namespaces.iter().map(|ns| ns.resets).sum());
        Ok(TaxMeasure {
            usable_pages: r.logical_pages,
            waf: r.waf,
            write_mib_s: r.submitted as f64 * REQUEST_BYTES / 1_048_576.0 / (r.sim_time_us / 1e6),
            write_mean_us: r.write.lat.mean_us,
            write_p99_us: r.write.lat.p99_us,
            erases: r.counters.erases,
            resets,
        })
    })
}

fn block_tax(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (scale, seed) = (options.scale, options.seed);
    let measured = super::points::run_named(
        options,
        "zns-block-tax",
        &POINTS,
        |point| point.name().to_string(),
        |&point, control| measure(point, scale, seed, control),
    )?;
    let (rows, interrupted) = super::points::measured_rows(&POINTS, measured);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    let mut curve = Curve::new(
        "block_tax",
        &[
            "interface",
            "op_fraction",
            "usable_pages",
            "passes",
            "waf",
            "write_mib_s",
            "write_mean_us",
            "write_p99_us",
            "erases",
            "resets",
        ],
    );
    for (point, m) in &rows {
        let n = point.name();
        result.metric(&format!("waf_{n}"), m.waf);
        result.metric(&format!("write_mib_s_{n}"), m.write_mib_s);
        result.metric(&format!("write_p99_us_{n}"), m.write_p99_us);
        curve.push(vec![
            n.into(),
            point.op().into(),
            (m.usable_pages as f64).into(),
            (passes(scale) as f64).into(),
            m.waf.into(),
            m.write_mib_s.into(),
            m.write_mean_us.into(),
            m.write_p99_us.into(),
            (m.erases as f64).into(),
            (m.resets as f64).into(),
        ]);
    }
    let get = |name: &str| rows.iter().find(|(p, _)| p.name() == name).map(|(_, m)| m);
    if let Some(zns) = get("zns") {
        for block in ["block7", "block28"] {
            if let Some(b) = get(block) {
                result.metric(
                    &format!("write_throughput_x_zns_vs_{block}"),
                    zns.write_mib_s / b.write_mib_s,
                );
            }
        }
    }
    result.curves.push(curve);
    Ok(result)
}
