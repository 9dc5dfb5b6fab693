//! Search-in-Memory reproductions (paper 004, SPEC R-S1–R-S4) on the evaluation harness of
//! [`crate::sim_eval`]: Table I from its bus rates and currents, and the read-share ×
//! cache-coverage × distribution grid of Figs. 12–15 (QPS, NAND energy, read latency), and the
//! deadline batch scheduler of Fig. 17.

use super::measure::{Measure, run_measure};
use super::paper::{Paper, PaperValue, pv};
use super::{Curve, CurveValue, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::sim_eval::{
    BatchConfig, BatchResult, EvalConfig, EvalMode, EvalResult, PAPER_DEADLINE, run_batched,
    run_eval, table1,
};
use crate::stack::preset_chip;
use nandlab_workload::ycsb::YcsbDistribution;

/// Paper 004 Table I: one point lookup with and without SiM.
const TABLE1_PAPER: &[PaperValue] = &[
    pv(
        "io_bytes_sim",
        "io_bytes_sim",
        128.0,
        "B",
        "Table I",
        "SiM lookup",
    ),
    pv(
        "io_bytes_full",
        "io_bytes_full",
        8192.0,
        "B",
        "Table I",
        "full-page read",
    ),
    pv(
        "energy_nj_sim",
        "energy_nj_sim",
        63.0,
        "nJ",
        "Table I",
        "SiM lookup",
    ),
    pv(
        "energy_nj_full",
        "energy_nj_full",
        1400.0,
        "nJ",
        "Table I",
        "full-page read",
    ),
    pv(
        "latency_us_sim",
        "latency_us_sim",
        3.2,
        "us",
        "Table I",
        "SiM lookup",
    ),
    pv(
        "latency_us_full",
        "latency_us_full",
        5.1,
        "us",
        "Table I",
        "full-page read",
    ),
    pv(
        "host_bytes_reduction",
        "host_bytes_reduction",
        64.0,
        "x",
        "Table I",
        "host bus bytes",
    ),
    pv(
        "internal_bytes_reduction",
        "internal_bytes_reduction",
        21.0,
        "x",
        "Table I",
        "internal bus bytes",
    ),
];

/// Paper 004 Fig. 12: SiM's QPS over the page-cache baseline.
const SPEEDUP_PAPER: &[PaperValue] = &[
    pv(
        "speedup_write_intensive_min",
        "speedup_most_writes_cached_min",
        3.0,
        "x",
        "Fig. 12",
        "write-intensive mixes",
    ),
    pv(
        "speedup_write_intensive_max",
        "speedup_most_writes_cached_max",
        9.0,
        "x",
        "Fig. 12",
        "write-intensive mixes",
    ),
    pv(
        "readonly_baseline_lead_min",
        "readonly_cached_baseline_lead_min",
        0.08,
        "",
        "Fig. 12",
        "read-only, cached",
    ),
    pv(
        "readonly_baseline_lead_max",
        "readonly_cached_baseline_lead_max",
        0.20,
        "",
        "Fig. 12",
        "read-only, cached",
    ),
];

/// Paper 004 Fig. 13: SiM's NAND energy saving at 10-50 % cache coverage.
const ENERGY_PAPER: &[PaperValue] = &[
    pv(
        "energy_saving_min",
        "energy_saving_coverage_10_50_min",
        0.10,
        "",
        "Fig. 13",
        "10-50 % coverage",
    ),
    pv(
        "energy_saving_max",
        "energy_saving_coverage_10_50_max",
        0.45,
        "",
        "Fig. 13",
        "10-50 % coverage",
    ),
];

/// Paper 004 Figs. 14-16: SiM's median and p99 read-latency reductions.
const LATENCY_PAPER: &[PaperValue] = &[
    pv(
        "median_reduction_min",
        "median_reduction_min",
        0.30,
        "",
        "Figs. 14-16",
        "the grid",
    ),
    pv(
        "median_reduction_max",
        "median_reduction_max",
        0.89,
        "",
        "Figs. 14-16",
        "the grid",
    ),
    pv(
        "p99_reduction_max",
        "p99_reduction_max",
        0.85,
        "",
        "Figs. 14-16",
        "the grid",
    ),
];

/// Paper 004 Fig. 17: the deadline batch scheduler's QPS gain at Zipf alpha 1.3.
const BATCH_PAPER: &[PaperValue] = &[pv(
    "speedup_zipf1_3",
    "speedup_zipf1_3",
    3.7,
    "x",
    "Fig. 17",
    "Zipf alpha 1.3, read-only, 4 us deadline",
)];

pub(super) static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "sim-table1",
        reference: "SPEC R-S3 (paper 004 Table I)",
        title: "one point lookup with and without SiM: bytes, bus energy and latency",
        run: sim_table1,
        paper: Paper::Values(TABLE1_PAPER),
    },
    Experiment {
        id: "sim-speedup",
        reference: "SPEC R-S1 (paper 004 Fig. 12)",
        title: "SiM QPS over the page-cache baseline: read share x cache coverage x distribution",
        run: sim_speedup,
        paper: Paper::Values(SPEEDUP_PAPER),
    },
    Experiment {
        id: "sim-energy",
        reference: "SPEC R-S2 (paper 004 Fig. 13)",
        title: "SiM NAND energy relative to the baseline over the same grid",
        run: sim_energy,
        paper: Paper::Values(ENERGY_PAPER),
    },
    Experiment {
        id: "sim-latency",
        reference: "SPEC R-S2 (paper 004 Figs. 14-16)",
        title: "SiM median and p99 read latency relative to the baseline over the same grid",
        run: sim_latency,
        paper: Paper::Values(LATENCY_PAPER),
    },
    Experiment {
        id: "sim-fullpage",
        reference: "SPEC R-S5 (paper 004 Fig. 18)",
        title: "SiM QPS over the baseline against the share of reads served by search + gather",
        run: sim_fullpage,
        paper: Paper::None(
            "Fig. 18 is read as a shape (R-S5): the speed-up grows with the share of reads served by search + gather, more in write-dominant mixes; no number taken",
        ),
    },
    Experiment {
        id: "sim-batch",
        reference: "SPEC R-S4 (paper 004 Fig. 17)",
        title: "deadline batch scheduler (4 us): QPS gain and merge probability against Zipf alpha, read-only",
        run: sim_batch,
        paper: Paper::Values(BATCH_PAPER),
    },
];

fn search_error(e: nandlab_search::SearchError) -> LabError {
    LabError::Usage(format!("sim harness: {e}"))
}

/// One run of the evaluation harness ([`run_eval`] on the `sim2024` chip).
pub(super) struct Eval;

impl Measure for Eval {
    const NAME: &'static str = "sim-eval";
    type Point = EvalConfig;
    type Output = EvalResult;
    fn measure(config: &EvalConfig, _: &Control) -> LabResult<Option<EvalResult>> {
        let chip = preset_chip("sim-eval", "sim2024")?;
        run_eval(&chip, config).map(Some).map_err(search_error)
    }
}

/// One run of the batched read-only harness ([`run_batched`] on the `sim2024` chip).
pub(super) struct Batch;

impl Measure for Batch {
    const NAME: &'static str = "sim-batch";
    type Point = BatchConfig;
    type Output = BatchResult;
    fn measure(config: &BatchConfig, _: &Control) -> LabResult<Option<BatchResult>> {
        let chip = preset_chip("sim-batch", "sim2024")?;
        run_batched(&chip, config).map(Some).map_err(search_error)
    }
}

/// The outputs of `points` in pairs (`[a, b, a, b, …]` → `[(a, b), …]`), up to the first pair
/// a cancel left unfinished; whether one did.
fn pairs<T>(measured: Vec<Option<T>>) -> (Vec<(T, T)>, bool) {
    let mut out = Vec::with_capacity(measured.len() / 2);
    let mut it = measured.into_iter();
    while let (Some(a), Some(b)) = (it.next(), it.next()) {
        match (a, b) {
            (Some(a), Some(b)) => out.push((a, b)),
            _ => return (out, true),
        }
    }
    (out, false)
}

fn sim_table1(options: &RunOptions) -> LabResult<ExperimentResult> {
    // The same lookup on the chip model (preset sim2024: Table II's 80 MT/s match bus, the
    // 256-byte window, 4-byte chunk ECC, command and address cycles; full reads at 800 MT/s).
    let modes = [EvalMode::Sim, EvalMode::Baseline];
    let points: Vec<EvalConfig> = modes
        .iter()
        .map(|&mode| EvalConfig {
            leaves: 4,
            fill_slots: 100,
            queries: 20,
            warmup_share: 0.0,
            ..EvalConfig::new(mode, 1.0, 0.0, YcsbDistribution::Uniform)
        })
        .collect();
    let measured = run_measure::<Eval>(options, &points)?;
    let Some(runs) = measured.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(ExperimentResult {
            interrupted: true,
            ..ExperimentResult::default()
        });
    };
    let t = table1();
    let mut result = ExperimentResult::default();
    for (name, column) in [("sim", t.sim), ("full", t.full)] {
        result.metric(&format!("io_bytes_{name}"), column.io_bytes as f64);
        result.metric(&format!("energy_nj_{name}"), column.energy_nj());
        result.metric(&format!("latency_us_{name}"), column.latency_us());
    }
    result.metric("host_bytes_reduction", t.host_reduction());
    result.metric("internal_bytes_reduction", t.internal_reduction());
    let mut curve = Curve::new(
        "lookup",
        &[
            "path",
            "internal_bus_bytes",
            "host_bus_bytes",
            "nand_energy_nj",
            "latency_us",
        ],
    );
    for (mode, r) in modes.into_iter().zip(runs) {
        let per_query = |v: f64| v / r.queries_measured as f64;
        let name = mode.label();
        result.metric(
            &format!("model_internal_bytes_{name}"),
            per_query(r.internal_bus_bytes as f64),
        );
        result.metric(
            &format!("model_host_bytes_{name}"),
            per_query(r.host_bus_bytes as f64),
        );
        result.metric(
            &format!("model_latency_us_{name}"),
            r.read_latency_ns[1] / 1e3,
        );
        curve.push(vec![
            name.into(),
            per_query(r.internal_bus_bytes as f64).into(),
            per_query(r.host_bus_bytes as f64).into(),
            per_query(r.nand_energy_nj).into(),
            (r.read_latency_ns[1] / 1e3).into(),
        ]);
    }
    result.curves.push(curve);
    Ok(result)
}

/// One grid point: both read paths on the same workload.
struct GridPoint {
    distribution: YcsbDistribution,
    read_share: f64,
    coverage: f64,
    base: EvalResult,
    sim: EvalResult,
}

struct GridScale {
    leaves: u32,
    fill_slots: usize,
    queries: u64,
    reads: &'static [f64],
    coverages: &'static [f64],
    distributions: &'static [YcsbDistribution],
}

const COVERAGES: &[f64] = &[0.0, 0.1, 0.25, 0.5, 0.75];

fn grid_scale(scale: Scale) -> GridScale {
    use YcsbDistribution::{Uniform, Zipf};
    match scale {
        Scale::Quick => GridScale {
            leaves: 200,
            fill_slots: 100,
            queries: 2000,
            reads: &[0.2, 0.6, 1.0],
            coverages: COVERAGES,
            distributions: &[Uniform, Zipf { alpha: 0.9 }],
        },
        Scale::Standard => GridScale {
            leaves: 500,
            fill_slots: 480,
            queries: 10_000,
            reads: &[0.2, 0.4, 0.6, 0.8, 1.0],
            coverages: COVERAGES,
            distributions: &[Uniform, Zipf { alpha: 0.5 }, Zipf { alpha: 0.9 }],
        },
        Scale::Full => GridScale {
            leaves: 2000,
            fill_slots: 480,
            queries: 50_000,
            reads: &[0.2, 0.4, 0.6, 0.8, 1.0],
            coverages: COVERAGES,
            distributions: &[Uniform, Zipf { alpha: 0.5 }, Zipf { alpha: 0.9 }],
        },
    }
}

/// The grid's points (both read paths at each), measured by the point runner; the points
/// finished, whether a cancel stopped the run.
fn run_grid(options: &RunOptions) -> LabResult<(Vec<GridPoint>, bool)> {
    let scale = grid_scale(options.scale);
    let mut grid = Vec::new();
    for &distribution in scale.distributions {
        for &read_share in scale.reads {
            for &coverage in scale.coverages {
                grid.push((distribution, read_share, coverage));
            }
        }
    }
    let configs: Vec<EvalConfig> = grid
        .iter()
        .flat_map(|&(distribution, read_share, coverage)| {
            [EvalMode::Baseline, EvalMode::Sim].map(|mode| EvalConfig {
                leaves: scale.leaves,
                fill_slots: scale.fill_slots,
                queries: scale.queries,
                seed: options.seed,
                ..EvalConfig::new(mode, read_share, coverage, distribution)
            })
        })
        .collect();
    let (runs, interrupted) = pairs(run_measure::<Eval>(options, &configs)?);
    let points = grid
        .into_iter()
        .zip(runs)
        .map(
            |((distribution, read_share, coverage), (base, sim))| GridPoint {
                distribution,
                read_share,
                coverage,
                base,
                sim,
            },
        )
        .collect();
    Ok((points, interrupted))
}

fn percent(v: f64) -> CurveValue {
    (100.0 * v).round().into()
}

/// Table III for the distributions the grid used (from the points' own workloads).
fn concentration_curve(points: &[GridPoint]) -> Curve {
    let mut curve = Curve::new(
        "concentration",
        &["distribution", "first", "second", "third", "fourth"],
    );
    let mut seen = Vec::new();
    for p in points {
        let label = p.distribution.label();
        if p.read_share == 1.0 && !seen.contains(&label) {
            let c = p.sim.concentration;
            curve.push(vec![
                label.as_str().into(),
                c[0].into(),
                c[1].into(),
                c[2].into(),
                c[3].into(),
            ]);
            seen.push(label);
        }
    }
    curve
}

/// Over the finite values (NaN and infinities left out).
fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

fn grid_result(options: &RunOptions) -> LabResult<(Vec<GridPoint>, ExperimentResult)> {
    let (points, interrupted) = run_grid(options)?;
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    result.curves.push(concentration_curve(&points));
    Ok((points, result))
}

fn sim_speedup(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (points, mut result) = grid_result(options)?;
    let speedup = |p: &GridPoint| p.sim.qps / p.base.qps;
    let mut curve = Curve::new(
        "speedup",
        &[
            "distribution",
            "read_percent",
            "coverage_percent",
            "qps_baseline",
            "qps_sim",
            "speedup",
            "write_backs_baseline",
            "write_backs_sim",
        ],
    );
    for p in &points {
        curve.push(vec![
            p.distribution.label().as_str().into(),
            percent(p.read_share),
            percent(p.coverage),
            p.base.qps.round().into(),
            p.sim.qps.round().into(),
            speedup(p).into(),
            (p.base.write_backs as f64).into(),
            (p.sim.write_backs as f64).into(),
        ]);
    }
    result.curves.push(curve);
    let min_read = points.iter().map(|p| p.read_share).fold(1.0, f64::min);
    let (lo, hi) = min_max(
        points
            .iter()
            .filter(|p| p.read_share == min_read && p.coverage > 0.0)
            .map(speedup),
    );
    result.metric("speedup_most_writes_cached_min", lo);
    result.metric("speedup_most_writes_cached_max", hi);
    let (lo, hi) = min_max(
        points
            .iter()
            .filter(|p| p.read_share == 1.0 && p.coverage >= 0.1)
            .map(|p| p.base.qps / p.sim.qps - 1.0),
    );
    result.metric("readonly_cached_baseline_lead_min", lo);
    result.metric("readonly_cached_baseline_lead_max", hi);
    let (lo, hi) = min_max(points.iter().filter(|p| p.coverage == 0.0).map(speedup));
    result.metric("speedup_no_cache_min", lo);
    result.metric("speedup_no_cache_max", hi);
    Ok(result)
}

fn sim_energy(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (points, mut result) = grid_result(options)?;
    let saving = |p: &GridPoint| 1.0 - p.sim.nand_energy_nj / p.base.nand_energy_nj;
    let mut curve = Curve::new(
        "energy",
        &[
            "distribution",
            "read_percent",
            "coverage_percent",
            "energy_nj_baseline",
            "energy_nj_sim",
            "saving",
            "internal_bytes_baseline",
            "internal_bytes_sim",
            "host_bytes_baseline",
            "host_bytes_sim",
        ],
    );
    for p in &points {
        curve.push(vec![
            p.distribution.label().as_str().into(),
            percent(p.read_share),
            percent(p.coverage),
            p.base.nand_energy_nj.round().into(),
            p.sim.nand_energy_nj.round().into(),
            saving(p).into(),
            (p.base.internal_bus_bytes as f64).into(),
            (p.sim.internal_bus_bytes as f64).into(),
            (p.base.host_bus_bytes as f64).into(),
            (p.sim.host_bus_bytes as f64).into(),
        ]);
    }
    result.curves.push(curve);
    let typical = || points.iter().filter(|p| (0.1..=0.5).contains(&p.coverage));
    let (lo, hi) = min_max(typical().map(saving));
    result.metric("energy_saving_coverage_10_50_min", lo);
    result.metric("energy_saving_coverage_10_50_max", hi);
    let (lo, _) = min_max(typical().filter(|p| p.read_share < 1.0).map(saving));
    result.metric("energy_saving_coverage_10_50_with_writes_min", lo);
    Ok(result)
}

fn sim_latency(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (points, mut result) = grid_result(options)?;
    let reduction =
        |p: &GridPoint, i: usize| 1.0 - p.sim.read_latency_ns[i] / p.base.read_latency_ns[i];
    let mut curve = Curve::new(
        "latency",
        &[
            "distribution",
            "read_percent",
            "coverage_percent",
            "p25_us_baseline",
            "p50_us_baseline",
            "p75_us_baseline",
            "p99_us_baseline",
            "p25_us_sim",
            "p50_us_sim",
            "p75_us_sim",
            "p99_us_sim",
            "median_reduction",
            "p99_reduction",
        ],
    );
    for p in &points {
        let mut row: Vec<CurveValue> = vec![
            p.distribution.label().as_str().into(),
            percent(p.read_share),
            percent(p.coverage),
        ];
        for r in [&p.base, &p.sim] {
            row.extend(
                r.read_latency_ns
                    .iter()
                    .map(|ns| CurveValue::from(ns / 1e3)),
            );
        }
        row.push(reduction(p, 1).into());
        row.push(reduction(p, 3).into());
        curve.push(row);
    }
    result.curves.push(curve);
    let (lo, hi) = min_max(points.iter().map(|p| reduction(p, 1)));
    result.metric("median_reduction_min", lo);
    let zero = points
        .iter()
        .filter(|p| p.base.read_latency_ns[1] == 0.0)
        .count();
    result.metric("points_baseline_median_cache_hit", zero as f64);
    result.metric("median_reduction_max", hi);
    let (_, hi) = min_max(points.iter().map(|p| reduction(p, 3)));
    result.metric("p99_reduction_max", hi);
    let (lo, hi) = min_max(
        points
            .iter()
            .filter(|p| p.coverage == 0.0)
            .map(|p| reduction(p, 1)),
    );
    result.metric("median_reduction_no_cache_min", lo);
    result.metric("median_reduction_no_cache_max", hi);
    Ok(result)
}

fn sim_batch(options: &RunOptions) -> LabResult<ExperimentResult> {
    use YcsbDistribution::{Uniform, Zipf};
    let (leaves, queries) = match options.scale {
        Scale::Quick => (1000, 3000),
        Scale::Standard => (2000, 20_000),
        Scale::Full => (4000, 100_000),
    };
    let distributions = [
        Uniform,
        Zipf { alpha: 0.5 },
        Zipf { alpha: 0.9 },
        Zipf { alpha: 1.1 },
        Zipf { alpha: 1.3 },
    ];
    let configs: Vec<BatchConfig> = distributions
        .iter()
        .flat_map(|&distribution| {
            [None, Some(PAPER_DEADLINE)].map(|deadline| BatchConfig {
                leaves,
                fill_slots: 50,
                clients: 32,
                queries,
                warmup_share: 0.3,
                distribution,
                deadline,
                seed: options.seed,
            })
        })
        .collect();
    let (runs, interrupted) = pairs(run_measure::<Batch>(options, &configs)?);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    let mut curve = Curve::new(
        "batch",
        &[
            "distribution",
            "qps_fcfs",
            "qps_batched",
            "speedup",
            "merge_probability",
            "batch_size_mean",
            "p50_us_fcfs",
            "p50_us_batched",
        ],
    );
    for (distribution, (plain, batched)) in distributions.into_iter().zip(runs) {
        let speedup = batched.qps / plain.qps;
        let label = distribution.label().replace('.', "_");
        result.metric(&format!("speedup_{label}"), speedup);
        result.metric(
            &format!("merge_probability_{label}"),
            batched.merge_probability,
        );
        curve.push(vec![
            distribution.label().as_str().into(),
            plain.qps.round().into(),
            batched.qps.round().into(),
            speedup.into(),
            batched.merge_probability.into(),
            batched.batch_size_mean.into(),
            (plain.read_latency_ns[1] / 1e3).into(),
            (batched.read_latency_ns[1] / 1e3).into(),
        ]);
    }
    result.curves.push(curve);
    Ok(result)
}

fn sim_fullpage(options: &RunOptions) -> LabResult<ExperimentResult> {
    use YcsbDistribution::{Uniform, Zipf};
    let scale = grid_scale(options.scale);
    let shares = [0.0, 0.25, 0.5, 0.75, 1.0];
    let mixes = [("write_dominant", 0.2), ("read_dominant", 0.8)];
    let distributions = [Uniform, Zipf { alpha: 0.9 }];
    let coverage = 0.25;
    let groups: Vec<_> = mixes
        .iter()
        .flat_map(|&mix| distributions.iter().map(move |&d| (mix, d)))
        .collect();
    // per group: the baseline, then SiM at each share of reads served by search + gather
    let configs: Vec<EvalConfig> = groups
        .iter()
        .flat_map(|&((_, read_share), distribution)| {
            let config = move |mode, sim_read_share| EvalConfig {
                leaves: scale.leaves,
                fill_slots: scale.fill_slots,
                queries: scale.queries,
                seed: options.seed,
                sim_read_share,
                ..EvalConfig::new(mode, read_share, coverage, distribution)
            };
            std::iter::once(config(EvalMode::Baseline, 1.0)).chain(
                shares
                    .iter()
                    .map(move |&share| config(EvalMode::Sim, share)),
            )
        })
        .collect();
    let measured = run_measure::<Eval>(options, &configs)?;
    let mut result = ExperimentResult::default();
    let mut curve = Curve::new(
        "fullpage",
        &[
            "mix",
            "distribution",
            "sim_read_percent",
            "qps_baseline",
            "qps_sim",
            "speedup",
        ],
    );
    for (&((mix, _), distribution), runs) in groups.iter().zip(measured.chunks(1 + shares.len())) {
        let Some(runs) = runs.iter().cloned().collect::<Option<Vec<_>>>() else {
            result.interrupted = true;
            break;
        };
        let (base, sims) = runs.split_first().expect("a baseline per group");
        let mut speedups = Vec::new();
        for (&share, sim) in shares.iter().zip(sims) {
            speedups.push(sim.qps / base.qps);
            curve.push(vec![
                mix.into(),
                distribution.label().as_str().into(),
                percent(share),
                base.qps.round().into(),
                sim.qps.round().into(),
                (sim.qps / base.qps).into(),
            ]);
        }
        let label = format!("{mix}_{}", distribution.label().replace('.', "_"));
        result.metric(
            &format!("speedup_all_sim_{label}"),
            speedups[speedups.len() - 1],
        );
        result.metric(&format!("speedup_no_sim_{label}"), speedups[0]);
        let rising = speedups.windows(2).all(|w| w[1] >= w[0] * 0.98);
        result.metric(&format!("rising_{label}"), f64::from(u8::from(rising)));
    }
    result.curves.push(curve);
    Ok(result)
}
