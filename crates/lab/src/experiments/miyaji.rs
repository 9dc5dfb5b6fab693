//! Paper 000 reproductions (SPEC R-E1 … R-E6): the conventional and the co-designed storage
//! engine on the `miyaji2014` SSD.

use super::paper::{Paper, PaperValue, pv};
use super::points::{
    Delta, EngineDevice, Row, Setting, constant_free_space, constant_free_space_stationary,
    drifting_free_space, engine, run_points,
};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;
use crate::stack::{EngineSection, Stack, StackConfig, StackOutcome, preset_chip};
use nandlab_engine::CoDesignFallback;
use nandlab_nand::{FlashOp, NandSim, PageAddress};

/// Paper 000 Fig. 12 at 20 % free space (co-designed against conventional).
const FREESPACE_PAPER: &[PaperValue] = &[
    pv(
        "speedup_at_20pct",
        "speedup_at_20pct",
        3.8,
        "x",
        "Fig. 12",
        "20 % free space",
    ),
    pv(
        "energy_reduction_at_20pct",
        "energy_reduction_at_20pct",
        0.46,
        "",
        "Fig. 12",
        "20 % free space",
    ),
    pv(
        "we_reduction_at_20pct",
        "we_reduction_at_20pct",
        0.62,
        "",
        "Fig. 12",
        "20 % free space",
    ),
];

/// Paper 000 Table I (free space drifting 80 % -> 20 %).
const TABLE1_PAPER: &[PaperValue] = &[
    pv(
        "qps_conventional",
        "qps_conventional",
        429.0,
        "q/s",
        "Table I",
        "conventional engine",
    ),
    pv(
        "qps_codesign",
        "qps_codesign",
        558.0,
        "q/s",
        "Table I",
        "co-designed engine",
    ),
    pv(
        "mj_per_query_conventional",
        "mj_per_query_conventional",
        0.625,
        "mJ/q",
        "Table I",
        "conventional engine",
    ),
    pv(
        "mj_per_query_codesign",
        "mj_per_query_codesign",
        0.540,
        "mJ/q",
        "Table I",
        "co-designed engine",
    ),
    pv(
        "we_cycles_conventional",
        "we_cycles_conventional",
        412.0,
        "W/E",
        "Table I",
        "conventional engine",
    ),
    pv(
        "we_cycles_codesign",
        "we_cycles_codesign",
        293.0,
        "W/E",
        "Table I",
        "co-designed engine",
    ),
];

/// Paper 000 Fig. 17 at 8 MB erase blocks (512 pages of 16 KB: not in the quick sweep).
const BLOCKSIZE_PAPER: &[PaperValue] = &[
    pv(
        "speedup_at_8mb",
        "speedup_512_pages",
        6.3,
        "x",
        "Fig. 17",
        "8 MB blocks, 20 % free",
    ),
    pv(
        "energy_reduction_at_8mb",
        "energy_reduction_512_pages",
        0.65,
        "",
        "Fig. 17",
        "8 MB blocks, 20 % free",
    ),
    pv(
        "we_reduction_at_8mb",
        "we_reduction_512_pages",
        0.78,
        "",
        "Fig. 17",
        "8 MB blocks, 20 % free",
    ),
];

/// Paper 000 sec. 2 / Fig. 6: a GC copying 100 valid pages takes at least 100 ms.
const GC_LATENCY_PAPER: &[PaperValue] = &[pv(
    "t_gc_ms_at_100_valid_min",
    "t_gc_ms_at_100_valid",
    100.0,
    "ms",
    "sec. 2, Fig. 6",
    "100 valid pages copied",
)];

/// Paper 000 Fig. 18: the co-designed engine degrades from about 500-byte rows (16 KB pages).
const ROWSIZE_PAPER: &[PaperValue] = &[pv(
    "codesign_degrades_from_row_bytes",
    "",
    500.0,
    "B",
    "Fig. 18",
    "16 KB pages, free space drifting 80 % -> 20 %",
)];

pub(super) static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "miyaji-freespace",
        reference: "R-E1, paper 000 Fig. 12",
        title: "conventional vs co-designed engine against SSD free space (I/D/U 30/30/40)",
        run: freespace,
        paper: Paper::Values(FREESPACE_PAPER),
    },
    Experiment {
        id: "miyaji-table1",
        reference: "R-E2, paper 000 Table I",
        title: "free space drifting 80 % -> 20 % under I/D/U 40/20/40",
        run: table1,
        paper: Paper::Values(TABLE1_PAPER),
    },
    Experiment {
        id: "miyaji-ablation",
        reference: "R-E5, paper 000 Fig. 14",
        title: "none / IAA only / U2DI only / both at 20 % free space",
        run: ablation,
        paper: Paper::None(
            "Fig. 14 is read as a shape (R-E5): neither IAA alone nor U2DI alone gives the gain, both together do; the paper gives no number",
        ),
    },
    Experiment {
        id: "miyaji-blocksize",
        reference: "R-E3, paper 000 Fig. 17",
        title: "gains against the erase-block size at 20 % free space (I/D/U 30/30/40)",
        run: blocksize,
        paper: Paper::Values(BLOCKSIZE_PAPER),
    },
    Experiment {
        id: "miyaji-gc-latency",
        reference: "R-E6, paper 000 sec. 2, Fig. 6",
        title: "garbage-collection latency against the valid pages copied (t_GC = N(t_r + t_w) + t_e)",
        run: gc_latency,
        paper: Paper::Values(GC_LATENCY_PAPER),
    },
    Experiment {
        id: "miyaji-validmap",
        reference: "paper 000 Fig. 13",
        title: "valid pages per block after the 20 % free-space run, both engines",
        run: validmap,
        paper: Paper::None(
            "Fig. 13 is a picture of valid pages per block for both engines; the paper gives no number",
        ),
    },
    Experiment {
        id: "miyaji-rowsize",
        reference: "R-E4, paper 000 Fig. 18",
        title: "both engines against the row size, free space drifting 80 % -> 20 %",
        run: rowsize,
        paper: Paper::Values(ROWSIZE_PAPER),
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

/// The device of a point: the scale's, or with `channels` and `pages_per_block` overridden (the
/// block-size sweep keeps the number of blocks and so grows the capacity with the block, as
/// 3D NAND does).
fn device(s: Size, channels: u32, pages_per_block: u32) -> EngineDevice {
    EngineDevice {
        preset: "miyaji2014-ssd",
        channels,
        blocks_per_plane: s.blocks_per_plane,
        pages_per_block,
        planes_per_die: None,
        extra: &[],
    }
}

/// The labelled extra FTL of the ablation: GC per plane, the hint listing every plane's next
/// victim (what the experiments used before issue 13; not the paper's FTL).
const PER_PLANE_ALL_PLANES_HINT: &[Delta] = &[
    ("ssd.gc.scope", Setting::Text("plane")),
    ("ssd.hints.all_planes", Setting::Bool(true)),
];

/// The emulator's read scheduling: a read arriving at a die busy with a program or erase
/// suspends it (MQSim's suspend times; paper 000 does not describe its emulator's scheduler,
/// but its curves meet at large free space, so its reads did not wait behind whole programs:
/// docs/experiments.md, R-E1).
macro_rules! emulator_settings {
    ($($extra:expr),*) => {
        &[
            $($extra,)*
            ("ssd.scheduler.reads", Setting::Text("suspend")),
            ("nand.suspend.program_suspend_us", Setting::Float(100.0)),
            ("nand.suspend.erase_suspend_us", Setting::Float(700.0)),
            ("nand.suspend.resume_penalty_us", Setting::Float(0.0)),
            ("nand.suspend.max_suspended_reads", Setting::Int(4)),
            (
                "nand.suspend.source",
                Setting::Text(
                    "MQSim's defaults (Tavakkol et al., FAST'18, ssdconfig.xml: \
                     Suspend_Program_Time 100 us, Suspend_Erase_Time 700 us); no resume \
                     penalty, as MQSim",
                ),
            ),
        ]
    };
}

/// The emulator's device settings.
const EMULATOR_SETTINGS: &[Delta] = emulator_settings!();

/// The emulator's device with the block-size sweep's device-wide GC reserve: 2 free blocks for
/// the device instead of one per plane, GC moving pages across planes (without it 8 MB blocks
/// at 15 % OP cannot run).
const EMULATOR_DEVICE_GC_RESERVE: &[Delta] =
    emulator_settings!(("ssd.gc.device_reserve_blocks", Setting::Int(2)));

/// A constant-free-space point (paper 000 Fig. 12 protocol) of `engine` on `dev`.
fn constant(
    options: &RunOptions,
    s: Size,
    dev: EngineDevice,
    engine: &EngineSection,
    free_space: f64,
) -> LabResult<Stack> {
    dev.stack(
        engine,
        &constant_free_space(free_space, s.warmup_queries, s.queries),
        options.seed,
    )
}

/// The conventional and the co-designed engine of paper 000 with `row_size_bytes`.
fn both(row_size_bytes: usize) -> [(&'static str, EngineSection); 2] {
    [
        ("conventional", engine(false, false, row_size_bytes)),
        ("codesign", engine(true, true, row_size_bytes)),
    ]
}

/// The finished rows, in point order (a cancel leaves the rest out).
fn finished(rows: Vec<Option<Row>>) -> Vec<Row> {
    rows.into_iter().map_while(|r| r).collect()
}

fn reduction(conventional: f64, codesign: f64) -> f64 {
    if conventional > 0.0 {
        1.0 - codesign / conventional
    } else {
        0.0
    }
}

fn row(label: &str, x: f64, m: &Row) -> Vec<super::CurveValue> {
    vec![
        label.into(),
        x.into(),
        m.get("queries_per_s").into(),
        m.get("mj_per_query").into(),
        m.get("we_cycles_per_block").into(),
        m.get("page_copies").into(),
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

/// Pages of the engine's host write buffer on the emulator path (one page per plane of the
/// paper's four 2-plane chips in flight; paper 000 does not state its emulator's buffer).
const EMULATOR_WRITE_BUFFER_PAGES: u32 = 8;

/// The emulator path of paper 000's SSD (its ref. 13, Fujii et al. VLSI 2012): the
/// `miyaji2014-emulator` preset (per-request controller energy) on four channels, as the
/// paper's four chips, with buffered host writes destaged over the dies and foreground GC.
fn emulator(s: Size, pages_per_block: u32) -> EngineDevice {
    emulated(device(s, 4, pages_per_block))
}

/// The emulator path on `chip`'s geometry (the scale's device of the pure-chip experiments):
/// the `miyaji2014-emulator` preset and reads suspending programs.
fn emulated(chip: EngineDevice) -> EngineDevice {
    EngineDevice {
        preset: "miyaji2014-emulator",
        extra: EMULATOR_SETTINGS,
        ..chip
    }
}

/// `engine` with the emulator's buffered host writes (its own co-designed fallback kept).
fn buffered(engine: EngineSection) -> EngineSection {
    EngineSection {
        write_buffer_pages: EMULATOR_WRITE_BUFFER_PAGES,
        ..engine
    }
}

/// [`engine`] with the emulator's buffered host-write path. The co-designed engine keeps the
/// packed fallback of before issue 30 (`codesign_fallback = "append"`) here: with paper 000
/// §4.1's spread layout (`rotate-pages`) every logical page is valid, so GC has only the 15 %
/// over-provisioning, and at `miyaji-blocksize`'s 16 blocks per plane the device reserve, the
/// GC threshold and the open write frontiers tie up 13 of its 16.7 spare blocks: the 1 MB point
/// copies 65,524 pages against 422 (0 with 32 blocks per plane; docs/experiments.md, R-E1).
/// The spread layout on this path is the labelled extra `…_rotate_pages` of `miyaji-freespace`.
fn emulator_engine(iaa: bool, u2di: bool) -> EngineSection {
    EngineSection {
        codesign_fallback: CoDesignFallback::Append,
        ..buffered(engine(iaa, u2di, 119))
    }
}

/// The conventional and the co-designed engine on the emulator's host-write path.
fn both_emulated() -> [(&'static str, EngineSection); 2] {
    [
        ("conventional", emulator_engine(false, false)),
        ("codesign", emulator_engine(true, true)),
    ]
}

/// Speed-up, energy and W/E reductions of `co` over `conv` as metrics `…_{tag}`.
fn triple(result: &mut ExperimentResult, tag: &str, conv: &Row, co: &Row) {
    result.metric(
        &format!("speedup_{tag}"),
        co.get("queries_per_s") / conv.get("queries_per_s"),
    );
    result.metric(
        &format!("energy_reduction_{tag}"),
        reduction(conv.get("mj_per_query"), co.get("mj_per_query")),
    );
    result.metric(
        &format!("we_reduction_{tag}"),
        reduction(
            conv.get("we_cycles_per_block"),
            co.get("we_cycles_per_block"),
        ),
    );
}

fn freespace(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let frees: &[f64] = match options.scale {
        Scale::Quick => &[0.2, 0.5, 0.8],
        _ => &[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
    };
    // the paper's chips (2 planes each) at every scale: with reads suspending programs the
    // speed-up depends on the planes per die (1 plane: 3.16x, 2 planes: 3.31x at quick scale;
    // docs/experiments.md, R-E1)
    let dev = emulator(s, s.pages_per_block);
    let mut points = Vec::new();
    for &free in frees {
        for (_, engine) in both_emulated() {
            points.push(constant(options, s, dev, &engine, free)?);
        }
    }
    // the steady-state point: 20 % free, warmed up until the WAF changes < 5 % per window
    for (_, engine) in both_emulated() {
        points.push(dev.stack(
            &engine,
            &constant_free_space_stationary(0.2, s.warmup_queries, s.queries),
            options.seed,
        )?);
    }
    // labelled extra: the pure-chip path (synchronous queue-depth-1 writes, no controller
    // energy) on the scale's device, as before the emulator path
    let chip = device(s, s.channels, s.pages_per_block);
    for (_, engine) in both(119) {
        points.push(constant(options, s, chip, &engine, 0.2)?);
    }
    // labelled extra: the co-designed engine with paper 000 §4.1's spread layout (the engine's
    // default fallback, `rotate-pages`) on the emulator path, against the conventional point
    let spread = EngineSection {
        codesign_fallback: CoDesignFallback::RotatePages,
        ..emulator_engine(true, true)
    };
    points.push(constant(options, s, dev, &spread, 0.2)?);
    let mut result = ExperimentResult::default();
    let rows = finished(run_points(options, &points)?);
    let n = frees.len() * 2;
    if rows.len() == points.len() {
        triple(&mut result, "at_20pct_steady", &rows[n], &rows[n + 1]);
        triple(
            &mut result,
            "at_20pct_pure_chip",
            &rows[n + 2],
            &rows[n + 3],
        );
        triple(&mut result, "at_20pct_rotate_pages", &rows[0], &rows[n + 4]);
        result.metric(
            "page_copies_codesign_20pct_rotate_pages",
            rows[n + 4].get("page_copies"),
        );
    }
    let mut columns = COLUMNS;
    columns[1] = "free_space_pct";
    let mut curve = Curve::new("freespace", &columns);
    for (&free, pair) in frees.iter().zip(rows[..rows.len().min(n)].chunks_exact(2)) {
        let (conv, co) = (&pair[0], &pair[1]);
        let pct = (free * 100.0).round();
        curve.push(row("conventional", pct, conv));
        curve.push(row("codesign", pct, co));
        let tag = format!("{pct}pct");
        triple(&mut result, &format!("at_{tag}"), conv, co);
        result.metric(
            &format!("page_copies_conventional_{tag}"),
            conv.get("page_copies"),
        );
        result.metric(
            &format!("page_copies_codesign_{tag}"),
            co.get("page_copies"),
        );
    }
    result.interrupted = rows.len() < points.len();
    result.curves.push(curve);
    Ok(result)
}

fn table1(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let chip = device(s, s.channels, s.pages_per_block);
    // the pure-chip path (synchronous writes, no controller energy: at the default scale its
    // q/s are the paper's, the emulator path's 2.4-3.8x them; docs/experiments.md, R-E2), then
    // the labelled extras: the emulator path (buffered host writes, reads suspending programs,
    // the per-request controller energy) and the per-plane FTL (GC per plane, every plane's
    // victim hinted)
    let variants = [
        ("", chip, false),
        ("_emulator", emulated(chip), true),
        (
            "_plane_gc_all_planes_hint",
            EngineDevice {
                extra: PER_PLANE_ALL_PLANES_HINT,
                ..chip
            },
            false,
        ),
    ];
    let mut points = Vec::new();
    for (_, dev, emulator_writes) in variants {
        for (_, engine) in both(119) {
            let engine = if emulator_writes {
                buffered(engine)
            } else {
                engine
            };
            points.push(dev.stack(
                &engine,
                &drifting_free_space(s.drift_queries_max),
                options.seed,
            )?);
        }
    }
    let mut result = ExperimentResult::default();
    let rows = finished(run_points(options, &points)?);
    result.interrupted = rows.len() < points.len();
    let mut curve = Curve::new("table1", &COLUMNS);
    for ((suffix, _, _), pair) in variants.iter().zip(rows.chunks_exact(2)) {
        for ((name, _), m) in both(119).iter().zip(pair) {
            curve.push(row(&format!("{name}{suffix}"), 0.0, m));
            result.metric(&format!("qps_{name}{suffix}"), m.get("queries_per_s"));
            result.metric(
                &format!("mj_per_query_{name}{suffix}"),
                m.get("mj_per_query"),
            );
            result.metric(
                &format!("we_cycles_{name}{suffix}"),
                m.get("we_cycles_per_block"),
            );
            result.metric(&format!("queries_{name}{suffix}"), m.get("queries"));
        }
        let (conv, co) = (&pair[0], &pair[1]);
        result.metric(
            &format!("qps_gain{suffix}"),
            co.get("queries_per_s") / conv.get("queries_per_s") - 1.0,
        );
        result.metric(
            &format!("energy_reduction{suffix}"),
            reduction(conv.get("mj_per_query"), co.get("mj_per_query")),
        );
        result.metric(
            &format!("we_reduction{suffix}"),
            reduction(
                conv.get("we_cycles_per_block"),
                co.get("we_cycles_per_block"),
            ),
        );
    }
    result.curves.push(curve);
    Ok(result)
}

fn ablation(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    // the paper's FTL (one GC stream, the one block erased next as the hint), then the
    // labelled extra: GC per plane with every plane's next victim in the hint
    let variants = [
        ("none", false, false, &[][..]),
        ("iaa_only", true, false, &[]),
        ("u2di_only", false, true, &[]),
        ("both", true, true, &[]),
        (
            "none_plane_gc_all_planes_hint",
            false,
            false,
            PER_PLANE_ALL_PLANES_HINT,
        ),
        (
            "iaa_only_plane_gc_all_planes_hint",
            true,
            false,
            PER_PLANE_ALL_PLANES_HINT,
        ),
        (
            "u2di_only_plane_gc_all_planes_hint",
            false,
            true,
            PER_PLANE_ALL_PLANES_HINT,
        ),
        (
            "both_plane_gc_all_planes_hint",
            true,
            true,
            PER_PLANE_ALL_PLANES_HINT,
        ),
    ];
    let points = variants
        .iter()
        .map(|&(_, iaa, u2di, extra)| {
            let chip = device(s, s.channels, s.pages_per_block);
            if extra.is_empty() {
                // the paper's FTL on the emulator path
                let engine = buffered(engine(iaa, u2di, 119));
                return constant(options, s, emulated(chip), &engine, 0.2);
            }
            let dev = EngineDevice { extra, ..chip };
            constant(options, s, dev, &engine(iaa, u2di, 119), 0.2)
        })
        .collect::<LabResult<Vec<_>>>()?;
    let mut result = ExperimentResult::default();
    let rows = finished(run_points(options, &points)?);
    result.interrupted = rows.len() < points.len();
    let mut curve = Curve::new("ablation", &COLUMNS);
    let mut base = 0.0;
    for ((name, _, _, _), m) in variants.iter().zip(&rows) {
        curve.push(row(name, 20.0, m));
        if name.starts_with("none") {
            base = m.get("queries_per_s");
        }
        result.metric(&format!("speedup_{name}"), m.get("queries_per_s") / base);
        result.metric(&format!("page_copies_{name}"), m.get("page_copies"));
    }
    result.curves.push(curve);
    Ok(result)
}

/// The block-size sweep (paper 000 Fig. 17) at constant capacity, as the paper's 1 GB emulated
/// SSD: pages per plane fixed, blocks per plane = pages per plane / pages per block, on the
/// emulator path (four channels, buffered host writes, foreground GC) with a device-wide GC
/// reserve of 2 blocks. The default and full scales sweep the paper's 1 GB (8,192 pages per
/// plane) from 256 KB to 8 MB blocks (16 blocks per plane at 8 MB); quick runs the quick
/// device's 1,024 pages per plane (128 MB) from 256 KB to 1 MB (16 blocks per plane at 1 MB,
/// the same blocks per plane as the paper's 8 MB point).
fn blocksize(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let (pages_per_plane, pages): (u32, &[u32]) = match options.scale {
        Scale::Quick => (1_024, &[16, 32, 64]),
        _ => (8_192, &[16, 32, 64, 128, 256, 512]),
    };
    let mut points = Vec::new();
    for &p in pages {
        let dev = EngineDevice {
            blocks_per_plane: pages_per_plane / p,
            extra: EMULATOR_DEVICE_GC_RESERVE,
            ..emulator(s, p)
        };
        for (_, engine) in both_emulated() {
            points.push(constant(options, s, dev, &engine, 0.2)?);
        }
    }
    let mut result = ExperimentResult::default();
    let rows = finished(run_points(options, &points)?);
    result.interrupted = rows.len() < points.len();
    let mut columns = COLUMNS;
    columns[1] = "block_mb";
    let mut curve = Curve::new("blocksize", &columns);
    let mut speedups = Vec::new();
    for (&p, pair) in pages.iter().zip(rows.chunks_exact(2)) {
        let (conv, co) = (&pair[0], &pair[1]);
        let mb = f64::from(p) * 16.0 / 1024.0;
        curve.push(row("conventional", mb, conv));
        curve.push(row("codesign", mb, co));
        speedups.push(co.get("queries_per_s") / conv.get("queries_per_s"));
        triple(&mut result, &format!("{p}_pages"), conv, co);
    }
    if let (Some(&smallest), Some(&largest)) = (speedups.first(), speedups.last()) {
        result.metric("speedup_smallest_block", smallest);
        result.metric("speedup_largest_block", largest);
    }
    result.curves.push(curve);
    Ok(result)
}

fn rowsize(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let sizes: &[usize] = match options.scale {
        Scale::Quick => &[119, 2048],
        _ => &[64, 119, 256, 512, 1024, 2048],
    };
    let mut points = Vec::new();
    // Table I's protocol and path (pure chip: see table1)
    let dev = device(s, s.channels, s.pages_per_block);
    for &bytes in sizes {
        for (_, engine) in both(bytes) {
            points.push(dev.stack(
                &engine,
                &drifting_free_space(s.drift_queries_max),
                options.seed,
            )?);
        }
    }
    let mut result = ExperimentResult::default();
    let rows = finished(run_points(options, &points)?);
    result.interrupted = rows.len() < points.len();
    let mut columns = COLUMNS;
    columns[1] = "row_bytes";
    let mut curve = Curve::new("rowsize", &columns);
    for (&bytes, pair) in sizes.iter().zip(rows.chunks_exact(2)) {
        let (conv, co) = (&pair[0], &pair[1]);
        curve.push(row("conventional", bytes as f64, conv));
        curve.push(row("codesign", bytes as f64, co));
        result.metric(
            &format!("speedup_{bytes}b"),
            co.get("queries_per_s") / conv.get("queries_per_s"),
        );
        result.metric(
            &format!("page_copies_codesign_{bytes}b"),
            co.get("page_copies"),
        );
    }
    result.curves.push(curve);
    Ok(result)
}

/// GC of one block on the paper's chip: `n_valid` page copies through the controller (legacy
/// read, then legacy program into a free block) and the erase, timed by the chip model.
fn gc_time_ms(n_valid: u32) -> LabResult<f64> {
    let mut sim = NandSim::new(preset_chip("miyaji-gc-latency", "miyaji2014")?, 0)?;
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

/// One GC of `n_valid` valid pages ([`gc_time_ms`]): the registered measure of
/// `miyaji-gc-latency`, so that its points run on worker processes and Dask like the others.
#[derive(Debug)]
pub(super) struct GcTime;

impl super::measure::Measure for GcTime {
    const NAME: &'static str = "miyaji-gc-time";
    type Point = u32;
    type Output = f64;
    fn measure(&n_valid: &u32, _: &crate::control::Control) -> LabResult<Option<f64>> {
        gc_time_ms(n_valid).map(Some)
    }
}

/// One engine run of `miyaji-validmap` (a point is its stack config): the valid-page map's
/// shape (planes, blocks, pages per block), its valid pages and the device's logical pages.
#[derive(Debug)]
pub(super) struct ValidMap;

impl super::measure::Measure for ValidMap {
    const NAME: &'static str = "miyaji-validmap";
    type Point = StackConfig;
    type Output = ((u32, u32, u32), Vec<u32>, u64);
    fn measure(
        config: &StackConfig,
        control: &crate::control::Control,
    ) -> LabResult<Option<Self::Output>> {
        let source = crate::stack::Source {
            origin: "miyaji-validmap point",
            text: "",
        };
        let stack = Stack::resolve(source, config.clone(), std::path::Path::new("."))?;
        let run = stack.run(None, control)?;
        let StackOutcome::Engine { device: report, .. } = &run.outcome else {
            unreachable!("an engine workload runs the engine")
        };
        let map = &report.valid_page_map;
        Ok((!run.interrupted()).then(|| {
            let shape = (map.rows, map.cols, map.pages_per_block);
            (shape, map.valid_pages.clone(), report.logical_pages)
        }))
    }
}

fn gc_latency(options: &RunOptions) -> LabResult<ExperimentResult> {
    let mut curve = Curve::new("gc_latency", &["n_valid", "t_gc_ms", "formula_ms"]);
    let mut result = ExperimentResult::default();
    // paper 000 sec. 2: t_read 100 us, t_write 1.6 ms, t_erase 8.5 ms
    let formula = |n: u32| f64::from(n) * (0.1 + 1.6) + 8.5;
    let mut worst: f64 = 0.0;
    let counts = [0u32, 16, 32, 64, 100, 128, 192, 255];
    let measured = super::measure::run_measure::<GcTime>(options, &counts)?;
    for (&n, ms) in counts.iter().zip(&measured) {
        let Some(ms) = *ms else {
            result.interrupted = true;
            break;
        };
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
    result.curves.push(curve);
    Ok(result)
}

fn validmap(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options);
    let mut result = ExperimentResult::default();
    let mut curves = Vec::new();
    let dev = device(s, s.channels, s.pages_per_block);
    let both = both(119);
    let points = both
        .iter()
        .map(|(_, engine)| constant(options, s, dev, engine, 0.2))
        .collect::<LabResult<Vec<_>>>()?;
    let configs: Vec<StackConfig> = points.into_iter().map(|s| s.config).collect();
    let measured = super::measure::run_measure::<ValidMap>(options, &configs)?;
    for ((name, _), measured) in both.iter().zip(measured) {
        let Some(((rows, cols, pages_per_block), valid_pages, logical_pages)) = measured else {
            result.interrupted = true;
            break;
        };
        let map = nandlab_ftl::stats::ValidPageMap {
            rows,
            cols,
            pages_per_block,
            valid_pages,
        };
        let map = &map;
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
        result.metric(&format!("logical_pages_{name}"), logical_pages as f64);
        curves.push(curve);
    }
    result.curves = curves;
    Ok(result)
}
