//! Thesis 001's PCM log buffers on its own protocol (issue 30 item 3): block-mapped flash and a
//! TPC-C page-update stream. The thesis argues R-P2 (merges, erases and write time: its log
//! region < dPRAM < IPL, Fig. 5.5) and R-P1 (dedup + the region: ≈ 4× lifetime at < 80 %
//! energy, Fig. 5.8) from a block-level FTL under TPC-C with a DBMS buffer pool. Here the
//! stream is real: SQLite runs the TPC-C-like workload (`crates/sql/src/tpcc`, `--small`
//! population, 1 warehouse, 10 terminals) on the simulated SSD, the PCM stage between SQLite's
//! page writes and the flash, measured over the transactions (the load excluded).
//!
//! The flash is `pcm-buffer`'s (the `slc` preset reshaped to 4 KiB pages and 64 pages per
//! block, 2 planes, 25 % over-provisioning; `pcm_run`). The mappings:
//! - `block`: the block mapping with its sequential switch path (a whole-block rewrite in
//!   order takes a fresh block and one erase; any other rewrite merges the block) — the
//!   thesis's setting, where a region flush should pay;
//! - `page`: the page mapping with greedy GC, a labelled extra (and the only mapping dedup can
//!   run on: it shares one physical page between LPAs, which a fixed-offset block mapping cannot).
//!
//! Journal modes: `wal` (SQLite's write-ahead log: commits append frames, checkpoints write the
//! database pages in place) and `delete` (a rollback journal: the database pages are written
//! in place at every commit, the closest SQLite has to a buffer pool writing pages back).
//! A host Flush (SQLite's sync) leaves the PCM's contents in PCM: they are durable there.

use super::paper::{Paper, PaperValue, pv};
use super::pcm::pcm_section;
use super::pcm_run::{PcmMeasure, Snapshot, measure, stack};
use super::{Curve, CurveValue, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::sql::tpcc::{TpccConfig, TpccScale, load_tpcc, run_tpcc_loaded};
use crate::sql::{DeviceSpec, JournalMode, SqlDb, SqlOptions};
use crate::stack::{Stack, StackConfig};
use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;
use std::path::Path;

/// Thesis 001 Fig. 5.8 (R-P1), set beside the page-mapped TPC-C run of dedup + the region.
const PAPER: &[PaperValue] = &[
    pv(
        "lifetime_ratio",
        "page_combined_lifetime_ratio",
        4.0,
        "x",
        "thesis 001 Fig. 5.8",
        "dedup + log region, 16 MB PCM, vs no PCM (the thesis's traces; here SQLite TPC-C on the page mapping)",
    ),
    pv(
        "energy_ratio_max",
        "page_combined_energy_ratio",
        0.8,
        "x",
        "thesis 001 Fig. 5.8",
        "dedup + log region, 16 MB PCM, vs no PCM",
    ),
];

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "pcm-tpcc",
    reference: "thesis 001 Figs. 5.5 and 5.8, R-P1, R-P2 (issue 30 item 3)",
    title: "PCM log buffers (thesis region, dPRAM, IPL) and dedup on block-mapped flash under \
            SQLite TPC-C: merges, erases, flash writes, write time, energy",
    run: tpcc,
    paper: Paper::Values(PAPER),
}];

/// The buffer variants of R-P2, in the order the thesis ranks them (best first), after `none`.
const BUFFERS: [&str; 5] = ["none", "region", "region-logged", "dpram", "ipl"];

/// Device size and transactions by scale.
struct Size {
    blocks_per_plane: u32,
    transactions: u64,
}

fn size(scale: Scale) -> Size {
    match scale {
        Scale::Quick => Size {
            blocks_per_plane: 48,
            transactions: 400,
        },
        Scale::Standard => Size {
            blocks_per_plane: 48,
            transactions: 2_000,
        },
        Scale::Full => Size {
            blocks_per_plane: 128,
            transactions: 10_000,
        },
    }
}

/// One point: a mapping, a journal mode and a `[pcm]` section (or none), with the measure's
/// point.
struct Point {
    mapping: &'static str,
    journal: JournalMode,
    variant: String,
    point: TpccPoint,
}

/// What the `pcm-tpcc` measure reads: the stack (its `[workload]` a placeholder), the journal
/// mode, the transactions and the seed (of the population, the transactions and the SSD).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpccPoint {
    pub stack: StackConfig,
    pub journal: String,
    pub transactions: u64,
    pub seed: u64,
}

/// The measure of a [`TpccPoint`]: TPC-C loaded, then its transactions measured.
#[derive(Debug)]
pub struct PcmTpcc;

impl super::measure::Measure for PcmTpcc {
    const NAME: &'static str = "pcm-tpcc";
    type Point = TpccPoint;
    type Output = TpccMeasure;
    fn measure(p: &TpccPoint, _: &Control) -> LabResult<Option<TpccMeasure>> {
        // SQLite's pseudo-random generator (WAL salts, journal nonces) is process-wide and
        // seeded when a database opens: two points on parallel threads would draw from one
        // stream in an order that varies run to run. One point at a time per process keeps a
        // point a function of its JSON text (worker processes still run in parallel).
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let source = crate::stack::Source {
            origin: "pcm-tpcc point",
            text: "",
        };
        let stack = Stack::resolve(source, p.stack.clone(), Path::new("."))?;
        let journal: JournalMode = p
            .journal
            .parse()
            .map_err(|e| LabError::Usage(format!("pcm-tpcc point: journal: {e}")))?;
        let config = TpccConfig {
            warehouses: 1,
            terminals: 10,
            transactions: p.transactions,
            seed: p.seed,
            scale: TpccScale::small(),
        };
        run_point(&stack, journal, &config).map(Some)
    }
}

/// What a point measured: the PCM experiments' measure plus the database's view.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccMeasure {
    pub pcm: PcmMeasure,
    pub tpmc: f64,
    pub sim_time_s: f64,
    /// Violated TPC-C consistency conditions (0: conditions 1–4 hold).
    pub consistency_violations: u64,
}

/// The `[pcm]` section of a buffer variant with `log_bytes` of PCM, all of it log (none for
/// `none`).
fn buffer_section(variant: &str, log_bytes: u64) -> Option<toml::Table> {
    (variant != "none").then(|| pcm_section(log_bytes, None, Some((variant, log_bytes))))
}

/// R-P1's PCM: 16 MiB, a 1 MiB fingerprint store (4 segments, binary search) and the log
/// region in the rest (as `pcm-combined`).
fn combined_section() -> toml::Table {
    let (capacity, store) = (16u64 << 20, 1u64 << 20);
    let log = capacity - store - (store / 4096) * 170 * 16;
    pcm_section(capacity, Some(store), Some(("region", log)))
}

/// The buffer size of R-P2's points: 1 MiB of PCM (the middle of `pcm-buffer`'s sizes).
const LOG_BYTES: u64 = 1 << 20;

fn points(s: &Size, seed: u64) -> LabResult<Vec<Point>> {
    let point = |journal: JournalMode, stack: Stack| TpccPoint {
        stack: stack.config,
        journal: journal.to_string(),
        transactions: s.transactions,
        seed,
    };
    let mut points = Vec::new();
    for mapping in ["block", "page"] {
        for journal in [JournalMode::Wal, JournalMode::Delete] {
            for variant in BUFFERS {
                points.push(Point {
                    mapping,
                    journal,
                    variant: variant.to_string(),
                    point: point(
                        journal,
                        stack(
                            s.blocks_per_plane,
                            mapping,
                            buffer_section(variant, LOG_BYTES),
                        )?,
                    ),
                });
            }
        }
    }
    points.push(Point {
        mapping: "page",
        journal: JournalMode::Wal,
        variant: "dedup+region".into(),
        point: point(
            JournalMode::Wal,
            stack(s.blocks_per_plane, "page", Some(combined_section()))?,
        ),
    });
    Ok(points)
}

/// Runs one point: TPC-C loaded, then its transactions measured.
fn run_point(stack: &Stack, journal: JournalMode, config: &TpccConfig) -> LabResult<TpccMeasure> {
    let usage = |e: crate::sql::SqlError| LabError::Usage(format!("pcm-tpcc point: {e}"));
    let spec = DeviceSpec {
        config: stack.ssd_config(),
        seed: None,
        precondition: None,
        pcm: stack.pcm_stage()?,
    };
    let options = SqlOptions {
        journal_mode: journal,
        ..SqlOptions::default()
    };
    let mut db = SqlDb::open_device(&spec, Some(config.seed), options).map_err(usage)?;
    let wall_s_load = load_tpcc(&mut db, config).map_err(usage)?;
    let (start_report, start_stage) = {
        let disk = db.disk().map_err(usage)?;
        (disk.ssd().report(), Snapshot::of(disk.ssd()))
    };
    let r = run_tpcc_loaded(&mut db, config, wall_s_load, &mut |_, _| {
        ControlFlow::Continue(())
    })
    .map_err(usage)?;
    let disk = db.disk().map_err(usage)?;
    let ssd = disk.ssd();
    let mut report = ssd.report();
    report.counters = report.counters.since(&start_report.counters);
    report.energy.total_mj -= start_report.energy.total_mj;
    let write_us = |r: &nandlab_ftl::SsdReport| r.write.lat.count as f64 * r.write.lat.mean_us;
    let write_time_s = (write_us(&report) - write_us(&start_report)) * 1e-6;
    Ok(TpccMeasure {
        pcm: measure(ssd, &report, &start_stage, write_time_s),
        tpmc: r.tpmc,
        sim_time_s: r.sim_time_s,
        consistency_violations: r.consistency_violations.len() as u64,
    })
}

fn n(v: impl Into<f64>) -> CurveValue {
    CurveValue::Number(v.into())
}

fn tpcc(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options.scale);
    let points = points(&s, options.seed)?;
    let mut result = ExperimentResult::default();
    let measure_points: Vec<TpccPoint> = points.iter().map(|p| p.point.clone()).collect();
    let measured = super::measure::run_measure::<PcmTpcc>(options, &measure_points)?;
    let Some(m) = measured.into_iter().collect::<Option<Vec<_>>>() else {
        result.interrupted = true;
        return Ok(result);
    };
    for mapping in ["block", "page"] {
        let curve = mapping_curve(&mut result, &points, &m, mapping);
        result.curves.push(curve);
    }
    // R-P1 on the page mapping (WAL): dedup + the region against no PCM
    let (none, combined) = (&m[BUFFERS.len() * 2], m.last().expect("points"));
    debug_assert_eq!(points[BUFFERS.len() * 2].variant, "none");
    let lifetime = none.pcm.erases as f64 / (combined.pcm.erases as f64).max(1.0);
    let energy = combined.pcm.energy_mj() / none.pcm.energy_mj();
    let mut curve = Curve::new(
        "combined",
        &[
            "variant",
            "erases",
            "lifetime_vs_none",
            "energy_mj",
            "energy_vs_none",
        ],
    );
    for (name, t) in [("none", none), ("dedup+region", combined)] {
        curve.push(vec![
            CurveValue::Label(name.into()),
            n(t.pcm.erases as f64),
            n(none.pcm.erases as f64 / (t.pcm.erases as f64).max(1.0)),
            n(t.pcm.energy_mj()),
            n(t.pcm.energy_mj() / none.pcm.energy_mj()),
        ]);
    }
    result.curves.push(curve);
    result.metric("page_combined_lifetime_ratio", lifetime);
    result.metric("page_combined_energy_ratio", energy);
    result.metric(
        "consistency_violations",
        m.iter().map(|t| t.consistency_violations as f64).sum(),
    );
    result.metric(
        "check_failures",
        m.iter().map(|t| t.pcm.check_failures as f64).sum(),
    );
    Ok(result)
}

/// The curve of one mapping (a row per journal mode and buffer) and its R-P2 metrics.
fn mapping_curve(
    result: &mut ExperimentResult,
    points: &[Point],
    m: &[TpccMeasure],
    mapping: &str,
) -> Curve {
    let columns = [
        "journal",
        "buffer",
        "merges",
        "erases",
        "flash_pages_programmed",
        "host_page_writes",
        "write_time_s",
        "energy_mj",
        "tpmc",
        "lifetime_vs_none",
    ];
    let mut curve = Curve::new(mapping, &columns);
    for journal in [JournalMode::Wal, JournalMode::Delete] {
        let rows: Vec<(&Point, &TpccMeasure)> = points
            .iter()
            .zip(m)
            .filter(|(p, _)| p.mapping == mapping && p.journal == journal)
            .collect();
        let none_erases = rows[0].1.pcm.erases as f64;
        for (p, t) in &rows {
            let pm = &t.pcm;
            curve.push(vec![
                CurveValue::Label(journal.to_string()),
                CurveValue::Label(p.variant.clone()),
                n(pm.merges as f64),
                n(pm.erases as f64),
                n(pm.flash_pages_programmed as f64),
                n(pm.host_page_writes as f64),
                n(pm.write_time_s),
                n(pm.energy_mj()),
                n(t.tpmc),
                n(none_erases / (pm.erases as f64).max(1.0)),
            ]);
            let key = format!("{mapping}_{journal}_{}", p.variant.replace(['-', '+'], "_"));
            result.metric(&format!("{key}_erases"), pm.erases as f64);
        }
        // R-P2's ordering on erases and write time: region < dPRAM < IPL
        let by = |name: &str| {
            rows.iter()
                .find(|(p, _)| p.variant == name)
                .expect("variant")
        };
        let (region, dpram, ipl) = (by("region").1, by("dpram").1, by("ipl").1);
        let holds = |f: fn(&PcmMeasure) -> f64| {
            f(&region.pcm) < f(&dpram.pcm) && f(&dpram.pcm) < f(&ipl.pcm)
        };
        result.metric(
            &format!("{mapping}_{journal}_r_p2_erases_order_holds"),
            f64::from(u8::from(holds(|p| p.erases as f64))),
        );
        result.metric(
            &format!("{mapping}_{journal}_r_p2_write_time_order_holds"),
            f64::from(u8::from(holds(|p| p.write_time_s))),
        );
    }
    curve
}

#[cfg(test)]
mod tests;
