//! Paper 000 reproductions (SPEC R-E1 … R-E6): the conventional and the co-designed storage
//! engine on the `miyaji2014` SSD.

use super::{Curve, Experiment, ExperimentResult, KeepGoing, RunOptions, Scale};
use crate::codesign::stack::{engine_on_ssd, miyaji_nand, miyaji_ssd_config};
use crate::error::LabResult;
use nandlab_engine::BlockDevice;
use nandlab_engine::workload::{ConstantFreeSpace, DriftingFreeSpace};
use nandlab_engine::{EngineConfig, QueryMix, RunMetrics};
use nandlab_nand::{FlashOp, NandSim, PageAddress, preset};

pub(super) static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "miyaji-freespace",
        reference: "R-E1, paper 000 Fig. 12",
        title: "conventional vs co-designed engine against SSD free space (I/D/U 30/30/40)",
        run: freespace,
    },
    Experiment {
        id: "miyaji-table1",
        reference: "R-E2, paper 000 Table I",
        title: "free space drifting 80 % -> 20 % under I/D/U 40/20/40",
        run: table1,
    },
    Experiment {
        id: "miyaji-ablation",
        reference: "R-E5, paper 000 Fig. 14",
        title: "none / IAA only / U2DI only / both at 20 % free space",
        run: ablation,
    },
    Experiment {
        id: "miyaji-blocksize",
        reference: "R-E3, paper 000 Fig. 17",
        title: "gains against the erase-block size at 20 % free space (I/D/U 30/30/40)",
        run: blocksize,
    },
    Experiment {
        id: "miyaji-gc-latency",
        reference: "R-E6, paper 000 sec. 2, Fig. 6",
        title: "garbage-collection latency against the valid pages copied (t_GC = N(t_r + t_w) + t_e)",
        run: gc_latency,
    },
    Experiment {
        id: "miyaji-validmap",
        reference: "paper 000 Fig. 13",
        title: "valid pages per block after the 20 % free-space run, both engines",
        run: validmap,
    },
    Experiment {
        id: "miyaji-rowsize",
        reference: "R-E4, paper 000 Fig. 18",
        title: "both engines against the row size, free space drifting 80 % -> 20 %",
        run: rowsize,
    },
];

/// Device and run sizes per scale. The full scale is the paper's: 32 blocks/plane of 256
/// pages (1 GB) and 1.6·10^6 queries.
#[derive(Clone, Copy, Debug)]
struct Size {
    channels: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    warmup_queries: u64,
    queries: u64,
    drift_queries_max: u64,
}

fn size(options: &RunOptions) -> Size {
    match options.scale {
        Scale::Quick => Size {
            channels: 1,
            blocks_per_plane: 32,
            pages_per_block: 32,
            warmup_queries: 20_000,
            queries: 20_000,
            drift_queries_max: 2_000_000,
        },
        Scale::Standard => Size {
            channels: 4,
            blocks_per_plane: 32,
            pages_per_block: 64,
            warmup_queries: 100_000,
            queries: 200_000,
            drift_queries_max: 20_000_000,
        },
        Scale::Full => Size {
            channels: 4,
            blocks_per_plane: 32,
            pages_per_block: 256,
            warmup_queries: 400_000,
            queries: 1_600_000,
            drift_queries_max: 100_000_000,
        },
    }
}

/// One measured point: an engine variant on a fresh SSD under the constant-free-space protocol.
/// `channels` and `pages_per_block` override the scale's device (the block-size sweep keeps the
/// number of blocks and so grows the capacity with the block, as 3D NAND does). `None` when
/// the run was cancelled before the point was finished.
fn constant(
    options: &RunOptions,
    s: Size,
    (channels, pages_per_block): (u32, u32),
    engine: EngineConfig,
    free_space: f64,
) -> LabResult<Option<RunMetrics>> {
    let ssd = miyaji_ssd_config(miyaji_nand(channels, s.blocks_per_plane, pages_per_block)?);
    let mut e = engine_on_ssd(ssd, engine, options.seed)?;
    let protocol = ConstantFreeSpace {
        free_space_fraction: free_space,
        update_fraction: 0.4,
        warmup_query_count: s.warmup_queries,
        query_count: s.queries,
        seed: options.seed,
    };
    let mut keep_going = options.keep_going();
    let metrics = protocol.run_while(&mut e, &mut || keep_going.ask())?;
    Ok(finished(options, keep_going, metrics))
}

/// The metrics of a finished point (counted as done), `None` for a point cut short.
fn finished(options: &RunOptions, keep_going: KeepGoing<'_>, m: RunMetrics) -> Option<RunMetrics> {
    if keep_going.stopped {
        return None;
    }
    options.control.advance(1);
    Some(m)
}

/// A drifting-free-space point (`None` when cancelled before it was finished).
fn drifting(options: &RunOptions, s: Size, engine: EngineConfig) -> LabResult<Option<RunMetrics>> {
    let ssd = miyaji_ssd_config(miyaji_nand(
        s.channels,
        s.blocks_per_plane,
        s.pages_per_block,
    )?);
    let mut e = engine_on_ssd(ssd, engine, options.seed)?;
    let protocol = DriftingFreeSpace {
        free_space_fraction_start: 0.8,
        free_space_fraction_end: 0.2,
        mix: QueryMix::table_i(),
        query_count_max: s.drift_queries_max,
        seed: options.seed,
    };
    let mut keep_going = options.keep_going();
    let metrics = protocol.run_while(&mut e, &mut || keep_going.ask())?;
    Ok(finished(options, keep_going, metrics))
}

fn reduction(conventional: f64, codesign: f64) -> f64 {
    if conventional > 0.0 {
        1.0 - codesign / conventional
    } else {
        0.0
    }
}

fn row(label: &str, x: f64, m: &RunMetrics) -> Vec<super::CurveValue> {
    vec![
        label.into(),
        x.into(),
        m.queries_per_s().into(),
        m.energy_mj_per_query().into(),
        m.erases_per_block_mean().into(),
        (m.device.page_copies as f64).into(),
    ]
}

const COLUMNS: [&str; 6] = [
    "engine",
    "x",
    "queries_per_s",
    "mj_per_query",
    "we_cycles_per_block",
    "page_copies",
];

fn freespace(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let points: &[f64] = match options.scale {
        Scale::Quick => &[0.2, 0.5, 0.8],
        _ => &[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
    };
    let mut columns = COLUMNS;
    columns[1] = "free_space_pct";
    let mut curve = Curve::new("freespace", &columns);
    let mut result = ExperimentResult::default();
    options.control.start(Some(2 * points.len() as u64));
    for &free in points {
        let Some(conv) = constant(
            options,
            s,
            (s.channels, s.pages_per_block),
            EngineConfig::conventional(),
            free,
        )?
        else {
            result.interrupted = true;
            break;
        };
        let Some(co) = constant(
            options,
            s,
            (s.channels, s.pages_per_block),
            EngineConfig::co_designed(),
            free,
        )?
        else {
            result.interrupted = true;
            break;
        };
        let pct = (free * 100.0).round();
        curve.push(row("conventional", pct, &conv));
        curve.push(row("codesign", pct, &co));
        let tag = format!("{pct}pct");
        result.metric(
            &format!("speedup_at_{tag}"),
            co.queries_per_s() / conv.queries_per_s(),
        );
        result.metric(
            &format!("energy_reduction_at_{tag}"),
            reduction(conv.energy_mj_per_query(), co.energy_mj_per_query()),
        );
        result.metric(
            &format!("we_reduction_at_{tag}"),
            reduction(conv.erases_per_block_mean(), co.erases_per_block_mean()),
        );
        result.metric(
            &format!("page_copies_conventional_{tag}"),
            conv.device.page_copies as f64,
        );
        result.metric(
            &format!("page_copies_codesign_{tag}"),
            co.device.page_copies as f64,
        );
    }
    result.metric("paper_speedup_at_20pct", 3.8);
    result.metric("paper_energy_reduction_at_20pct", 0.46);
    result.metric("paper_we_reduction_at_20pct", 0.62);
    result.curves.push(curve);
    Ok(result)
}

fn table1(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    options.control.start(Some(2));
    let mut curve = Curve::new("table1", &COLUMNS);
    let mut result = ExperimentResult::default();
    let mut measured = Vec::new();
    for (name, engine) in [
        ("conventional", EngineConfig::conventional()),
        ("codesign", EngineConfig::co_designed()),
    ] {
        let Some(m) = drifting(options, s, engine)? else {
            result.interrupted = true;
            break;
        };
        curve.push(row(name, 0.0, &m));
        result.metric(&format!("qps_{name}"), m.queries_per_s());
        result.metric(&format!("mj_per_query_{name}"), m.energy_mj_per_query());
        result.metric(&format!("we_cycles_{name}"), m.erases_per_block_mean());
        result.metric(&format!("queries_{name}"), m.queries.total().count as f64);
        measured.push(m);
    }
    if let [conv, co] = &measured[..] {
        result.metric("qps_gain", co.queries_per_s() / conv.queries_per_s() - 1.0);
        result.metric(
            "energy_reduction",
            reduction(conv.energy_mj_per_query(), co.energy_mj_per_query()),
        );
        result.metric(
            "we_reduction",
            reduction(conv.erases_per_block_mean(), co.erases_per_block_mean()),
        );
    }
    for (k, v) in [
        ("paper_qps_conventional", 429.0),
        ("paper_qps_codesign", 558.0),
        ("paper_mj_per_query_conventional", 0.625),
        ("paper_mj_per_query_codesign", 0.540),
        ("paper_we_cycles_conventional", 412.0),
        ("paper_we_cycles_codesign", 293.0),
    ] {
        result.metric(k, v);
    }
    result.curves.push(curve);
    Ok(result)
}

fn ablation(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let mut curve = Curve::new("ablation", &COLUMNS);
    let mut result = ExperimentResult::default();
    let variants = [
        ("none", false, false),
        ("iaa_only", true, false),
        ("u2di_only", false, true),
        ("both", true, true),
    ];
    let mut base = 0.0;
    options.control.start(Some(variants.len() as u64));
    for (name, iaa, u2di) in variants {
        let Some(m) = constant(
            options,
            s,
            (s.channels, s.pages_per_block),
            EngineConfig::conventional().with_switches(iaa, u2di),
            0.2,
        )?
        else {
            result.interrupted = true;
            break;
        };
        curve.push(row(name, 20.0, &m));
        if name == "none" {
            base = m.queries_per_s();
        }
        result.metric(&format!("speedup_{name}"), m.queries_per_s() / base);
        result.metric(&format!("page_copies_{name}"), m.device.page_copies as f64);
    }
    result.curves.push(curve);
    Ok(result)
}

fn blocksize(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    // 16 KB pages: 64, 128, 256, 512 pages per block = 1, 2, 4, 8 MB blocks, on one channel
    // (2 planes x 32 blocks); quick runs use 256 KB to 1 MB blocks
    let pages: &[u32] = match options.scale {
        Scale::Quick => &[16, 32, 64],
        _ => &[64, 128, 256, 512],
    };
    let mut columns = COLUMNS;
    columns[1] = "block_mb";
    let mut curve = Curve::new("blocksize", &columns);
    let mut result = ExperimentResult::default();
    let mut speedups = Vec::new();
    options.control.start(Some(2 * pages.len() as u64));
    for &p in pages {
        let Some(conv) = constant(options, s, (1, p), EngineConfig::conventional(), 0.2)? else {
            result.interrupted = true;
            break;
        };
        let Some(co) = constant(options, s, (1, p), EngineConfig::co_designed(), 0.2)? else {
            result.interrupted = true;
            break;
        };
        let mb = f64::from(p) * 16.0 / 1024.0;
        curve.push(row("conventional", mb, &conv));
        curve.push(row("codesign", mb, &co));
        speedups.push(co.queries_per_s() / conv.queries_per_s());
        result.metric(
            &format!("speedup_{p}_pages"),
            *speedups.last().unwrap_or(&0.0),
        );
        result.metric(
            &format!("we_reduction_{p}_pages"),
            reduction(conv.erases_per_block_mean(), co.erases_per_block_mean()),
        );
    }
    if let (Some(&smallest), Some(&largest)) = (speedups.first(), speedups.last()) {
        result.metric("speedup_smallest_block", smallest);
        result.metric("speedup_largest_block", largest);
    }
    result.metric("paper_speedup_at_8mb", 6.3);
    result.curves.push(curve);
    Ok(result)
}

fn rowsize(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let rows: &[usize] = match options.scale {
        Scale::Quick => &[119, 2048],
        _ => &[64, 119, 256, 512, 1024, 2048],
    };
    let mut columns = COLUMNS;
    columns[1] = "row_bytes";
    let mut curve = Curve::new("rowsize", &columns);
    let mut result = ExperimentResult::default();
    options.control.start(Some(2 * rows.len() as u64));
    for &bytes in rows {
        let Some(conv) = drifting(
            options,
            s,
            EngineConfig {
                row_size_bytes: bytes,
                ..EngineConfig::conventional()
            },
        )?
        else {
            result.interrupted = true;
            break;
        };
        let Some(co) = drifting(
            options,
            s,
            EngineConfig {
                row_size_bytes: bytes,
                ..EngineConfig::co_designed()
            },
        )?
        else {
            result.interrupted = true;
            break;
        };
        curve.push(row("conventional", bytes as f64, &conv));
        curve.push(row("codesign", bytes as f64, &co));
        result.metric(
            &format!("speedup_{bytes}b"),
            co.queries_per_s() / conv.queries_per_s(),
        );
        result.metric(
            &format!("page_copies_codesign_{bytes}b"),
            co.device.page_copies as f64,
        );
    }
    result.curves.push(curve);
    Ok(result)
}

/// GC of one block on the paper's chip: `n_valid` page copies through the controller (legacy
/// read, then legacy program into a free block) and the erase, timed by the chip model.
fn gc_time_ms(n_valid: u32) -> LabResult<f64> {
    let mut sim = NandSim::new(preset("miyaji2014")?, 0)?;
    let mut done = Vec::new();
    let at = |block: u32, page: u32| PageAddress {
        block,
        page,
        ..PageAddress::default()
    };
    for p in 0..n_valid {
        sim.submit(sim.now(), &FlashOp::program(at(0, p)))?;
    }
    sim.run_until_idle(&mut done);
    let start = sim.now();
    for p in 0..n_valid {
        sim.submit(start, &FlashOp::read(at(0, p)))?;
        sim.submit(start, &FlashOp::program(at(1, p)))?;
    }
    sim.submit(start, &FlashOp::erase(at(0, 0)))?;
    sim.run_until_idle(&mut done);
    Ok((sim.now() - start).as_ms_f64())
}

fn gc_latency(options: &RunOptions) -> LabResult<ExperimentResult> {
    let mut curve = Curve::new("gc_latency", &["n_valid", "t_gc_ms", "formula_ms"]);
    let mut result = ExperimentResult::default();
    // paper 000 sec. 2: t_read 100 us, t_write 1.6 ms, t_erase 8.5 ms
    let formula = |n: u32| f64::from(n) * (0.1 + 1.6) + 8.5;
    let mut worst: f64 = 0.0;
    let counts = [0u32, 16, 32, 64, 100, 128, 192, 255];
    options.control.start(Some(counts.len() as u64));
    for n in counts {
        if options.control.is_cancelled() {
            result.interrupted = true;
            break;
        }
        let ms = gc_time_ms(n)?;
        options.control.advance(1);
        curve.push(vec![n.into(), ms.into(), formula(n).into()]);
        worst = worst.max((ms / formula(n) - 1.0).abs());
        if n == 100 {
            result.metric("t_gc_ms_at_100_valid", ms);
        }
        if n == 255 {
            result.metric("t_gc_ms_at_255_valid", ms);
        }
    }
    // the chip model adds the bus transfers and command cycles the formula leaves out
    result.metric("max_relative_gap_to_formula", worst);
    result.metric("paper_t_gc_ms_at_100_valid_min", 100.0);
    result.curves.push(curve);
    Ok(result)
}

fn validmap(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let mut result = ExperimentResult::default();
    let mut curves = Vec::new();
    options.control.start(Some(2));
    for (name, engine_config) in [
        ("conventional", EngineConfig::conventional()),
        ("codesign", EngineConfig::co_designed()),
    ] {
        let ssd = miyaji_ssd_config(miyaji_nand(
            s.channels,
            s.blocks_per_plane,
            s.pages_per_block,
        )?);
        let mut e = engine_on_ssd(ssd, engine_config, options.seed)?;
        let protocol = ConstantFreeSpace {
            free_space_fraction: 0.2,
            update_fraction: 0.4,
            warmup_query_count: s.warmup_queries,
            query_count: s.queries,
            seed: options.seed,
        };
        let mut keep_going = options.keep_going();
        let metrics = protocol.run_while(&mut e, &mut || keep_going.ask())?;
        if finished(options, keep_going, metrics).is_none() {
            result.interrupted = true;
            break;
        }
        let report = e.device().ssd().report();
        let map = &report.valid_page_map;
        let mut curve = Curve::new(
            &format!("validmap_{name}"),
            &["plane", "block", "valid_pages"],
        );
        let mut full = 0u32;
        let mut partial = 0u32;
        for row in 0..map.rows {
            for col in 0..map.cols {
                let v = map.get(row, col);
                curve.push(vec![row.into(), col.into(), v.into()]);
                if v == map.pages_per_block {
                    full += 1;
                } else if v > 0 {
                    partial += 1;
                }
            }
        }
        let blocks = f64::from(map.rows * map.cols);
        result.metric(
            &format!("fully_valid_block_fraction_{name}"),
            f64::from(full) / blocks,
        );
        result.metric(
            &format!("partly_valid_block_fraction_{name}"),
            f64::from(partial) / blocks,
        );
        result.metric(
            &format!("logical_pages_{name}"),
            e.device().logical_page_count() as f64,
        );
        curves.push(curve);
    }
    result.curves = curves;
    Ok(result)
}
