//! NANDFlashSim reproductions (SPEC R-N1 … R-N6, paper 003 §8–9).

use super::paper::{Paper, PaperValue, pv};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::chip::{ChipRunSpec, chip_outcome};
use crate::error::{LabError, LabResult};
use crate::stack::{Stack, StackConfig, preset_chip};
use nandlab_ftl::sched::{ChipReport, ChipWorkloadKind, SchedulerPolicy};
use nandlab_nand::{FlashOp, NandSim, OpKind, PageAddress, Stage};
use serde::{Deserialize, Serialize};

/// Paper 003 Fig. 18: throughput gains from 1 die (SDP) to 8 dies (ODP).
const DIES_PAPER: &[PaperValue] = &[
    pv(
        "read_gain_1_to_8_dies",
        "read_gain_1_to_8_dies",
        0.763,
        "",
        "Fig. 18",
        "srd, 1 -> 8 dies",
    ),
    pv(
        "write_gain_1_to_8_dies",
        "write_gain_1_to_8_dies",
        5.411,
        "",
        "Fig. 18",
        "swr, 1 -> 8 dies",
    ),
];

/// Paper 003 Fig. 17: throughput gains with multiplane operations.
const PLANES_PAPER: &[PaperValue] = &[
    pv(
        "read_gain_4_to_8_planes",
        "read_gain_4_to_8_planes",
        0.108,
        "",
        "Fig. 17",
        "srd, 4 -> 8 planes",
    ),
    pv(
        "write_gain_1_to_8_planes",
        "write_gain_1_to_8_planes",
        3.609,
        "",
        "Fig. 17",
        "swr, 1 -> 8 planes",
    ),
];

/// Paper 003 Fig. 21: read throughput gain from 4 KB to 8 KB pages (2x mode, DDP).
const PAGESIZE_PAPER: &[PaperValue] = &[pv(
    "read_gain_4_to_8_kb",
    "read_gain_4_to_8_kb",
    0.109,
    "",
    "Fig. 21",
    "srd, 4 KB -> 8 KB pages",
)];

/// Paper 003 §8.4: lower bounds of the cell stage's share of a write and TOR's of a read.
const BREAKDOWN_PAPER: &[PaperValue] = &[
    pv(
        "write_cell_stage_fraction_min",
        "write_cell_stage_fraction",
        0.93,
        "",
        "Figs. 12-13, §8.4",
        "legacy write",
    ),
    pv(
        "read_tor_fraction_min",
        "read_tor_fraction",
        0.505,
        "",
        "Figs. 12-13, §8.4",
        "legacy read",
    ),
];

/// Paper 003 §8.3 (Figs. 14, 16): for many blocks, 2x cache, internal move and 2x internal
/// migrate about twice as fast as legacy, at about equal energy.
const MIGRATION_PAPER: &[PaperValue] = &[
    pv(
        "twox_cache_speedup",
        "twox_cache_speedup",
        2.0,
        "x",
        "Fig. 14, §8.3",
        "most blocks, over legacy",
    ),
    pv(
        "internal_speedup",
        "internal_speedup",
        2.0,
        "x",
        "Fig. 14, §8.3",
        "most blocks, over legacy",
    ),
    pv(
        "twox_internal_speedup",
        "twox_internal_speedup",
        2.0,
        "x",
        "Fig. 14, §8.3",
        "most blocks, over legacy",
    ),
    pv(
        "energy_max_over_min",
        "energy_max_over_min",
        1.0,
        "x",
        "Fig. 16, §8.3",
        "most blocks, every mode",
    ),
];

/// Paper 003 Fig. 20, §8.7: SLC's bus contention over MLC's at 8 dies.
const CONTENTION_PAPER: &[PaperValue] = &[pv(
    "slc_over_mlc_contention",
    "slc_over_mlc_contention_8_dies",
    0.452,
    "",
    "Fig. 20, §8.7",
    "8 dies",
)];

/// Paper 003 Table III: energy of legacy operations on the QDP SLC device.
const ENERGY_PAPER: &[PaperValue] = &[
    pv(
        "read_page_uj",
        "read_page_uj",
        3.35,
        "uJ",
        "Table III",
        "legacy page read, QDP SLC",
    ),
    pv(
        "program_page_uj",
        "program_page_uj",
        16.9,
        "uJ",
        "Table III",
        "legacy page program, QDP SLC",
    ),
    pv(
        "erase_block_uj",
        "erase_block_uj",
        132.2,
        "uJ",
        "Table III",
        "legacy block erase, QDP SLC",
    ),
];

/// Paper 003 §8.8: many dies over many planes on disk-friendly mixes.
const SCHEDULER_PAPER: &[PaperValue] = &[pv(
    "many_die_over_many_plane_iops_gain",
    "many_die_over_many_plane_iops_gain",
    0.545,
    "",
    "Fig. 22, §8.8",
    "disk-friendly mixes",
)];

pub(super) static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "nfs-dies",
        reference: "R-N1, paper 003 Fig. 18",
        title: "throughput against the number of dies (SDP to ODP), swr and srd",
        run: dies,
        paper: Paper::Values(DIES_PAPER),
    },
    Experiment {
        id: "nfs-planes",
        reference: "R-N1, paper 003 Fig. 17",
        title: "throughput against the number of planes (multiplane ops), swr and srd",
        run: planes,
        paper: Paper::Values(PLANES_PAPER),
    },
    Experiment {
        id: "nfs-pagesize",
        reference: "R-N1, paper 003 Fig. 21",
        title: "throughput against the page size (2x mode, DDP)",
        run: page_size,
        paper: Paper::Values(PAGESIZE_PAPER),
    },
    Experiment {
        id: "nfs-breakdown",
        reference: "R-N2, paper 003 Figs. 12-13, 15, §8.4",
        title: "breakdown of cycles by stage for reads and writes in each mode",
        run: breakdown,
        paper: Paper::Values(BREAKDOWN_PAPER),
    },
    Experiment {
        id: "nfs-migration",
        reference: "R-N5, paper 003 Fig. 14, 16, §8.3",
        title: "page migration time and energy: legacy, cache, internal move, 2x variants",
        run: migration,
        paper: Paper::Values(MIGRATION_PAPER),
    },
    Experiment {
        id: "nfs-contention",
        reference: "R-N6, paper 003 Fig. 20, §8.7",
        title: "bus contention of SLC and MLC against the number of dies",
        run: contention,
        paper: Paper::Values(CONTENTION_PAPER),
    },
    Experiment {
        id: "nfs-energy",
        reference: "R-N4, paper 003 Table III, Fig. 23, §9.2",
        title: "energy of legacy read, program and erase on the QDP SLC device",
        run: energy,
        paper: Paper::Values(ENERGY_PAPER),
    },
    Experiment {
        id: "nfs-scheduler",
        reference: "R-N3, paper 003 Figs. 19, 22, §8.5, §8.8",
        title: "die-first vs plane-first scheduling; many-die vs many-plane on disk-friendly mixes",
        run: scheduler,
        paper: Paper::Values(SCHEDULER_PAPER),
    },
];

fn requests(options: &RunOptions) -> u64 {
    match options.scale {
        Scale::Quick => 384,
        Scale::Standard => 2_000,
        Scale::Full => 20_000,
    }
}

/// Rounds of `swr` in the scaling sweeps: each writes one whole block on every plane.
fn write_rounds(options: &RunOptions) -> u64 {
    match options.scale {
        Scale::Quick => 1,
        Scale::Standard => 2,
        Scale::Full => 8,
    }
}

/// Sets the requests of the `swr` run `s` to [`write_rounds`] whole blocks on every plane of
/// its device: the paper's swr is "sequential in the block boundary" and stripes pages over
/// planes (paper 003 §8), so every run programs LSB and MSB pages in the device's proportion.
/// (A fixed request count would program only the first pages of each block on many dies,
/// mostly fast LSB pages, and inflate the gain of more dies or planes.)
fn whole_blocks(options: &RunOptions, s: &mut ChipRunSpec) -> LabResult<()> {
    let c = s.nand_config()?;
    let g = &c.geometry;
    let pages = u64::from(g.total_planes()) * u64::from(g.pages_per_block) * write_rounds(options);
    let bytes = pages * u64::from(g.page_size_bytes);
    s.requests = bytes.div_ceil(u64::from(s.request_bytes.max(1)));
    Ok(())
}

fn spec(options: &RunOptions, preset: &str, workload: ChipWorkloadKind) -> ChipRunSpec {
    let mut s = ChipRunSpec::new(preset, workload, requests(options));
    s.seed = options.seed;
    s.request_bytes = 2048;
    s
}

/// What the experiments take from a chip run (what the point runner caches).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct ChipMeasure {
    mb_per_s: f64,
    bus_contention_fraction: f64,
    iops: f64,
    /// (stage, time fraction, energy fraction) per stage.
    stages: Vec<(String, f64, f64)>,
}

impl ChipMeasure {
    fn of(r: &ChipReport) -> ChipMeasure {
        ChipMeasure {
            mb_per_s: r.throughput_mb_per_s,
            bus_contention_fraction: r.bus_contention_fraction,
            iops: r.iops,
            stages: r
                .stages
                .iter()
                .map(|s| (s.stage.to_string(), s.time_fraction, s.energy_fraction))
                .collect(),
        }
    }
}

/// One chip run: a stack config with a `kind = "chip"` workload (a chip workload on a preset
/// with overrides).
pub(super) struct ChipRun;

impl super::measure::Measure for ChipRun {
    const NAME: &'static str = "chip-run";
    type Point = StackConfig;
    type Output = ChipMeasure;
    fn measure(
        config: &StackConfig,
        _: &crate::control::Control,
    ) -> LabResult<Option<ChipMeasure>> {
        let source = crate::stack::Source {
            origin: "chip run",
            text: "",
        };
        let stack = Stack::resolve(source, config.clone(), std::path::Path::new("."))?;
        // run whole: a chip experiment compares points across its sweep
        let (report, _) = chip_outcome(stack.run(None, &crate::control::Control::new())?)?;
        Ok(Some(ChipMeasure::of(&report)))
    }
}

/// Page migration of `blocks` mlc1 blocks in one mode (legacy, cache, internal, 2x, …): its
/// time in ms and energy in uJ.
pub(super) struct Migrate;

impl super::measure::Measure for Migrate {
    const NAME: &'static str = "nfs-migrate";
    type Point = (String, u32);
    type Output = (f64, f64);
    fn measure(
        (mode, blocks): &(String, u32),
        _: &crate::control::Control,
    ) -> LabResult<Option<(f64, f64)>> {
        migrate(mode, *blocks).map(Some)
    }
}

/// The chip runs of `specs` through the point runner ([`super::points::run_measured`]:
/// progress, the machine's cores, the result cache), in order; [`LabError::Interrupted`] once
/// the run is cancelled (a chip experiment's metrics compare points across its whole sweep,
/// so a cancelled one keeps none; the finished points stay cached).
fn run_chips(options: &RunOptions, specs: &[ChipRunSpec]) -> LabResult<Vec<ChipMeasure>> {
    let configs = specs
        .iter()
        .map(|s| Ok(s.stack()?.config))
        .collect::<LabResult<Vec<_>>>()?;
    let measured = super::measure::run_measure::<ChipRun>(options, &configs)?;
    measured
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or(LabError::Interrupted)
}

fn gain(from: f64, to: f64) -> f64 {
    if from > 0.0 { to / from - 1.0 } else { 0.0 }
}

fn mb_per_s(r: &ChipMeasure) -> f64 {
    r.mb_per_s
}

/// Throughput of `swr` and `srd` (mlc1, 2 KB requests) at each value of one architectural
/// knob; `configure` applies a value to the run. Returns the curve and the read and write
/// throughputs in value order.
fn scaling_sweep(
    options: &RunOptions,
    column: &str,
    values: &[u32],
    configure: impl Fn(&mut ChipRunSpec, u32),
) -> LabResult<(Curve, Vec<f64>, Vec<f64>)> {
    let mut curve = Curve::new(
        "throughput",
        &[column, "workload", "mb_per_s", "bus_contention"],
    );
    let mut read = Vec::new();
    let mut write = Vec::new();
    let mut points = Vec::new();
    for &value in values {
        for workload in [ChipWorkloadKind::Swr, ChipWorkloadKind::Srd] {
            let mut s = spec(options, "mlc1", workload);
            configure(&mut s, value);
            if workload == ChipWorkloadKind::Swr {
                whole_blocks(options, &mut s)?;
            }
            points.push((value, workload, s));
        }
    }
    let specs: Vec<ChipRunSpec> = points.iter().map(|(_, _, s)| s.clone()).collect();
    for ((value, workload, _), r) in points.iter().zip(run_chips(options, &specs)?) {
        curve.push(vec![
            (*value).into(),
            workload.name().into(),
            mb_per_s(&r).into(),
            r.bus_contention_fraction.into(),
        ]);
        if *workload == ChipWorkloadKind::Swr {
            write.push(mb_per_s(&r));
        } else {
            read.push(mb_per_s(&r));
        }
    }
    Ok((curve, read, write))
}

/// Per-page TIN spreads (`timing.program_variation`) of the spread sweeps. Paper 003 §8.2
/// reports TIN fluctuating from 0.65 to 5 ms without giving the spread within a page type, so
/// these are assumptions shown as a sensitivity, not fitted values; the headline metrics use 0.
const TIN_SPREADS: [f64; 3] = [0.25, 0.5, 0.75];

/// `swr` write gain from `from` to `to` of one knob at each of [`TIN_SPREADS`]: metrics
/// `<metric>_spread_<percent>` and rows of the `tin_spread` curve.
fn spread_sweep(
    options: &RunOptions,
    result: &mut ExperimentResult,
    column: &str,
    metric: &str,
    (from, to): (u32, u32),
    configure: impl Fn(&mut ChipRunSpec, u32),
) -> LabResult<()> {
    let mut curve = Curve::new("tin_spread", &["program_variation", column, "mb_per_s"]);
    let mut specs = Vec::new();
    for spread in TIN_SPREADS {
        for value in [from, to] {
            let mut s = spec(options, "mlc1", ChipWorkloadKind::Swr);
            configure(&mut s, value);
            s.program_variation = Some(spread);
            whole_blocks(options, &mut s)?;
            specs.push(s);
        }
    }
    let mut runs = run_chips(options, &specs)?.into_iter();
    for spread in TIN_SPREADS {
        let mut mb = [0.0; 2];
        for (i, value) in [from, to].into_iter().enumerate() {
            mb[i] = mb_per_s(&runs.next().expect("a run per point"));
            curve.push(vec![spread.into(), value.into(), mb[i].into()]);
        }
        let percent = (spread * 100.0).round() as u32;
        result.metric(&format!("{metric}_spread_{percent}"), gain(mb[0], mb[1]));
    }
    result.curves.push(curve);
    Ok(())
}

fn dies(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (curve, read, write) = scaling_sweep(options, "dies", &[1, 2, 4, 8], |s, n| {
        s.dies = Some(n);
    })?;
    let mut result = ExperimentResult::default();
    result.metric("read_gain_4_to_8_dies", gain(read[2], read[3]));
    result.metric("write_gain_4_to_8_dies", gain(write[2], write[3]));
    result.metric("read_gain_1_to_8_dies", gain(read[0], read[3]));
    result.metric("write_gain_1_to_8_dies", gain(write[0], write[3]));
    result.curves.push(curve);
    spread_sweep(
        options,
        &mut result,
        "dies",
        "write_gain_1_to_8_dies",
        (1, 8),
        |s, n| s.dies = Some(n),
    )?;
    Ok(result)
}

fn planes(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (curve, read, write) = scaling_sweep(options, "planes", &[1, 2, 4, 8], |s, n| {
        s.driver.policy = SchedulerPolicy::PlaneFirst;
        s.planes = Some(n);
    })?;
    let mut result = ExperimentResult::default();
    result.metric("read_gain_4_to_8_planes", gain(read[2], read[3]));
    result.metric("write_gain_4_to_8_planes", gain(write[2], write[3]));
    result.metric("read_gain_1_to_8_planes", gain(read[0], read[3]));
    result.metric("write_gain_1_to_8_planes", gain(write[0], write[3]));
    result.curves.push(curve);
    spread_sweep(
        options,
        &mut result,
        "planes",
        "write_gain_1_to_8_planes",
        (1, 8),
        |s, n| {
            s.driver.policy = SchedulerPolicy::PlaneFirst;
            s.planes = Some(n);
        },
    )?;
    Ok(result)
}

fn page_size(options: &RunOptions) -> LabResult<ExperimentResult> {
    // 2x mode (plane-first) on a dual-die package, one page per request, the dies not
    // interleaved (the paper's plane-first scheduler serves requests to the planes of a die
    // rather than striping them over dies; interleaving the two dies would hide TON behind the
    // other die's TOR and halve the read gain)
    let (curve, read, write) = scaling_sweep(options, "page_kb", &[2, 4, 8, 16], |s, kb| {
        s.driver.policy = SchedulerPolicy::PlaneFirst;
        s.driver.interleave = false;
        s.dies = Some(2);
        s.page_size_bytes = Some(kb * 1024);
        s.request_bytes = kb * 1024;
    })?;
    let mut result = ExperimentResult::default();
    result.metric("read_gain_4_to_8_kb", gain(read[1], read[2]));
    result.metric("write_gain_4_to_8_kb", gain(write[1], write[2]));
    result.curves.push(curve);
    Ok(result)
}

fn breakdown(options: &RunOptions) -> LabResult<ExperimentResult> {
    let mut result = ExperimentResult::default();
    let mut curve = Curve::new(
        "breakdown",
        &[
            "mode",
            "workload",
            "stage",
            "time_fraction",
            "energy_fraction",
        ],
    );
    let modes: [(&str, SchedulerPolicy, bool); 4] = [
        ("legacy", SchedulerPolicy::DieFirst, false),
        ("cache", SchedulerPolicy::DieFirst, true),
        ("2x", SchedulerPolicy::PlaneFirst, false),
        ("2x-cache", SchedulerPolicy::PlaneFirst, true),
    ];
    let workloads = [ChipWorkloadKind::Swr, ChipWorkloadKind::Srd];
    let mut specs = Vec::new();
    for (_, policy, cache) in modes {
        for workload in workloads {
            let mut s = spec(options, "mlc1", workload).with_policy(policy);
            s.driver.cache = cache;
            specs.push(s);
        }
    }
    let mut runs = run_chips(options, &specs)?.into_iter();
    for (mode, _, _) in modes {
        for workload in workloads {
            let r = runs.next().expect("a run per point");
            for (stage, time_fraction, energy_fraction) in &r.stages {
                curve.push(vec![
                    mode.into(),
                    workload.name().into(),
                    stage.as_str().into(),
                    (*time_fraction).into(),
                    (*energy_fraction).into(),
                ]);
            }
            if mode == "legacy" {
                let bus: f64 = r.stages.iter().filter(|s| is_bus(&s.0)).map(|s| s.1).sum();
                let tor = r.stages.iter().find(|s| s.0 == "TOR").map_or(0.0, |s| s.1);
                if workload == ChipWorkloadKind::Swr {
                    result.metric("write_cell_stage_fraction", 1.0 - bus);
                } else {
                    result.metric("read_bus_stage_fraction", bus);
                    result.metric("read_tor_fraction", tor);
                }
            }
        }
    }
    result.curves.push(curve);
    Ok(result)
}

fn is_bus(stage: &str) -> bool {
    Stage::ALL.iter().any(|s| s.name() == stage && s.is_bus())
}

/// Migrates `blocks` source blocks into erased destination blocks and erases the sources.
fn migrate(mode: &str, blocks: u32) -> LabResult<(f64, f64)> {
    let c = preset_chip("nfs-migration", "mlc1")?;
    let pages = c.geometry.pages_per_block;
    let mut sim = NandSim::new(c, 0)?;
    let two_planes = mode.starts_with("2x");
    let cache = mode.ends_with("cache");
    let internal = mode.ends_with("internal");
    let planes: Vec<u32> = if two_planes { vec![0, 1] } else { vec![0] };
    let per_plane = blocks.div_ceil(planes.len() as u32);
    let at = |block: u32, page: u32| -> Vec<PageAddress> {
        planes
            .iter()
            .map(|&plane| PageAddress {
                plane,
                block,
                page,
                ..PageAddress::default()
            })
            .collect()
    };
    let mut done = Vec::new();
    // fill the source blocks (not measured)
    for b in 0..per_plane {
        for p in 0..pages {
            sim.submit(sim.now(), &FlashOp::multiplane(OpKind::Program, at(b, p)))?;
        }
    }
    sim.run_until_idle(&mut done);
    let start = sim.now();
    let energy_before: f64 = sim.stats().stage_energy_pj().iter().map(|(_, e)| e).sum();
    let destination = 1000;
    let mut ops = Vec::new();
    for b in 0..per_plane {
        ops.push(FlashOp::multiplane(OpKind::Erase, at(destination + b, 0)));
    }
    for b in 0..per_plane {
        if internal {
            for p in 0..pages {
                ops.push(FlashOp::multiplane_copyback(
                    at(b, p),
                    at(destination + b, p),
                ));
            }
        } else if cache {
            for p in 0..pages {
                ops.push(FlashOp::multiplane(OpKind::Read, at(b, p)).cached());
            }
            for p in 0..pages {
                ops.push(FlashOp::multiplane(OpKind::Program, at(destination + b, p)).cached());
            }
        } else {
            for p in 0..pages {
                ops.push(FlashOp::multiplane(OpKind::Read, at(b, p)));
                ops.push(FlashOp::multiplane(OpKind::Program, at(destination + b, p)));
            }
        }
    }
    for b in 0..per_plane {
        ops.push(FlashOp::multiplane(OpKind::Erase, at(b, 0)));
    }
    for op in &ops {
        sim.submit(start, op)?;
    }
    sim.run_until_idle(&mut done);
    let energy_after: f64 = sim.stats().stage_energy_pj().iter().map(|(_, e)| e).sum();
    Ok((
        (sim.now() - start).as_ms_f64(),
        (energy_after - energy_before) / 1e6,
    ))
}

fn migration(options: &RunOptions) -> LabResult<ExperimentResult> {
    let mut result = ExperimentResult::default();
    let mut curve = Curve::new("migration", &["mode", "blocks", "time_ms", "energy_uj"]);
    let block_counts: &[u32] = match options.scale {
        Scale::Quick => &[2, 4],
        Scale::Standard => &[2, 4, 8],
        Scale::Full => &[2, 4, 8, 16, 32],
    };
    let modes = [
        "legacy",
        "cache",
        "internal",
        "2x",
        "2x-cache",
        "2x-internal",
    ];
    let most = *block_counts.last().expect("block counts");
    let mut at_most = Vec::new();
    let points: Vec<(&str, u32)> = modes
        .iter()
        .flat_map(|&mode| block_counts.iter().map(move |&blocks| (mode, blocks)))
        .collect();
    let points: Vec<(String, u32)> = points
        .into_iter()
        .map(|(mode, blocks)| (mode.to_string(), blocks))
        .collect();
    let measured = super::measure::run_measure::<Migrate>(options, &points)?;
    for ((mode, blocks), m) in points.iter().map(|(m, b)| (m.as_str(), *b)).zip(measured) {
        let (ms, uj) = m.ok_or(LabError::Interrupted)?;
        curve.push(vec![mode.into(), blocks.into(), ms.into(), uj.into()]);
        if blocks == most {
            at_most.push((mode, ms, uj));
        }
    }
    let legacy_ms = at_most[0].1;
    for (mode, ms, _) in &at_most[1..] {
        result.metric(
            &format!("{}_speedup", mode.replace('-', "_").replace("2x", "twox")),
            legacy_ms / ms,
        );
    }
    let energies: Vec<f64> = at_most.iter().map(|m| m.2).collect();
    let max = energies.iter().cloned().fold(f64::MIN, f64::max);
    let min = energies.iter().cloned().fold(f64::MAX, f64::min);
    result.metric("energy_max_over_min", max / min);
    result.metric("legacy_ms", legacy_ms);
    result.curves.push(curve);
    Ok(result)
}

const DISK_MIXES: [ChipWorkloadKind; 5] = [
    ChipWorkloadKind::Msnfs,
    ChipWorkloadKind::Fin,
    ChipWorkloadKind::Web,
    ChipWorkloadKind::Usr,
    ChipWorkloadKind::Prn,
];

fn contention(options: &RunOptions) -> LabResult<ExperimentResult> {
    let mut result = ExperimentResult::default();
    let mut curve = Curve::new(
        "contention",
        &["cell", "dies", "workload", "bus_contention"],
    );
    let counts = [1u32, 2, 4, 8];
    let cells = [("slc", "slc"), ("mlc", "mlc1")];
    let mut specs = Vec::new();
    for (_, preset_name) in cells {
        for &n in &counts {
            for workload in DISK_MIXES {
                let mut s = spec(options, preset_name, workload);
                s.dies = Some(n);
                s.requests = requests(options) / 2;
                specs.push(s);
            }
        }
    }
    let mut runs = run_chips(options, &specs)?.into_iter();
    for (cell, _) in cells {
        let mut mean_by_dies = Vec::new();
        for &n in &counts {
            let mut sum = 0.0;
            for workload in DISK_MIXES {
                let r = runs.next().expect("a run per point");
                curve.push(vec![
                    cell.into(),
                    n.into(),
                    workload.name().into(),
                    r.bus_contention_fraction.into(),
                ]);
                sum += r.bus_contention_fraction;
            }
            mean_by_dies.push(sum / DISK_MIXES.len() as f64);
        }
        result.metric(&format!("{cell}_contention_1_die"), mean_by_dies[0]);
        result.metric(&format!("{cell}_contention_8_dies"), mean_by_dies[3]);
    }
    let slc = result.get("slc_contention_8_dies");
    let mlc = result.get("mlc_contention_8_dies");
    result.metric("slc_over_mlc_contention_8_dies", gain(mlc, slc));
    result.curves.push(curve);
    Ok(result)
}

/// One measurement (not a sweep): three operations on one chip, timed in microseconds.
fn energy(options: &RunOptions) -> LabResult<ExperimentResult> {
    if !options.control.advance(1) {
        return Err(LabError::Interrupted);
    }
    let mut result = ExperimentResult::default();
    let mut sim = NandSim::new(preset_chip("nfs-energy", "qdp-slc")?, 0)?;
    let block = PageAddress::default();
    let mut done = Vec::new();
    for op in [
        FlashOp::erase(block),
        FlashOp::program(block),
        FlashOp::read(block),
    ] {
        sim.submit(sim.now(), &op)?;
        sim.run_until_idle(&mut done);
    }
    let st = sim.stats();
    result.metric("read_page_uj", st.energy_uj(OpKind::Read));
    result.metric("program_page_uj", st.energy_uj(OpKind::Program));
    result.metric("erase_block_uj", st.energy_uj(OpKind::Erase));
    let mut curve = Curve::new(
        "stage_energy",
        &["operation", "stage", "energy_uj", "fraction"],
    );
    for kind in [OpKind::Read, OpKind::Program, OpKind::Erase] {
        let total = st.energy_uj(kind);
        for (stage, pj) in st.kind_stage_energy_pj(kind).iter() {
            if pj > 0.0 {
                curve.push(vec![
                    kind.name().into(),
                    stage.name().into(),
                    (pj / 1e6).into(),
                    (pj / 1e6 / total).into(),
                ]);
            }
        }
    }
    let tir = st.kind_stage_energy_pj(OpKind::Program).get(Stage::Tir) / 1e6;
    result.metric(
        "program_tir_energy_fraction",
        tir / st.energy_uj(OpKind::Program),
    );
    let tor = st.kind_stage_energy_pj(OpKind::Read).get(Stage::Tor) / 1e6;
    result.metric("read_tor_energy_fraction", tor / st.energy_uj(OpKind::Read));
    result.curves.push(curve);
    Ok(result)
}

fn scheduler(options: &RunOptions) -> LabResult<ExperimentResult> {
    let mut result = ExperimentResult::default();
    // Fig. 22: die-first vs plane-first on a 4-die, 2-plane MLC device over transfer sizes
    let mut curve = Curve::new(
        "policies",
        &["policy", "workload", "transfer_kb", "mb_per_s"],
    );
    let mut best = [0.0f64; 2];
    let policies = [SchedulerPolicy::DieFirst, SchedulerPolicy::PlaneFirst];
    let workloads = [ChipWorkloadKind::Swr, ChipWorkloadKind::Srd];
    let sizes_kb = [2u32, 4, 8, 16];
    let mut specs = Vec::new();
    for policy in policies {
        for workload in workloads {
            for kb in sizes_kb {
                let mut s = spec(options, "mlc1", workload).with_policy(policy);
                s.dies = Some(4);
                s.request_bytes = kb * 1024;
                s.requests = requests(options) / 2;
                specs.push(s);
            }
        }
    }
    let mut runs = run_chips(options, &specs)?.into_iter();
    for (i, policy) in policies.into_iter().enumerate() {
        for workload in workloads {
            for kb in sizes_kb {
                let r = runs.next().expect("a run per point");
                curve.push(vec![
                    policy.name().into(),
                    workload.name().into(),
                    kb.into(),
                    mb_per_s(&r).into(),
                ]);
                if workload == ChipWorkloadKind::Swr && kb == 16 {
                    best[i] = mb_per_s(&r);
                }
            }
        }
    }
    result.metric(
        "plane_first_over_die_first_write_16kb",
        gain(best[0], best[1]),
    );
    // Fig. 19: many dies (8 x 1 plane) vs many planes (1 die x 8 planes), disk-friendly mixes
    let mut arch = Curve::new("architectures", &["architecture", "workload", "iops"]);
    let gain_at_zero = many_die_over_many_plane(options, &mut arch, None)?;
    result.metric("many_die_over_many_plane_iops_gain", gain_at_zero);
    // the same with a per-page TIN spread (a multiplane op waits for its slowest plane)
    let mut spread_curve = Curve::new(
        "tin_spread",
        &["program_variation", "architecture", "workload", "iops"],
    );
    for spread in TIN_SPREADS {
        let g = many_die_over_many_plane(options, &mut spread_curve, Some(spread))?;
        let percent = (spread * 100.0).round() as u32;
        result.metric(
            &format!("many_die_over_many_plane_iops_gain_spread_{percent}"),
            g,
        );
    }
    result.curves.push(curve);
    result.curves.push(arch);
    result.curves.push(spread_curve);
    Ok(result)
}

/// Mean IOPS gain of many dies (8 dies x 1 plane, die-first) over many planes (1 die x 8
/// planes, plane-first) over the disk-friendly mixes, with a per-page TIN spread when given
/// (then each row of `curve` starts with the spread).
fn many_die_over_many_plane(
    options: &RunOptions,
    curve: &mut Curve,
    spread: Option<f64>,
) -> LabResult<f64> {
    let mut gains = Vec::new();
    let mut specs = Vec::new();
    for workload in DISK_MIXES {
        let mut many_die = spec(options, "mlc1", workload);
        many_die.dies = Some(8);
        many_die.planes = Some(1);
        many_die.program_variation = spread;
        let mut many_plane =
            spec(options, "mlc1", workload).with_policy(SchedulerPolicy::PlaneFirst);
        many_plane.dies = Some(1);
        many_plane.planes = Some(8);
        many_plane.program_variation = spread;
        specs.push(many_die);
        specs.push(many_plane);
    }
    let mut runs = run_chips(options, &specs)?.into_iter();
    for workload in DISK_MIXES {
        let d = runs.next().expect("a run per point");
        let p = runs.next().expect("a run per point");
        for (name, r) in [("many-die", &d), ("many-plane", &p)] {
            let mut row = vec![name.into(), workload.name().into(), r.iops.into()];
            if let Some(v) = spread {
                row.insert(0, v.into());
            }
            curve.push(row);
        }
        gains.push(gain(p.iops, d.iops));
    }
    Ok(gains.iter().sum::<f64>() / gains.len() as f64)
}
