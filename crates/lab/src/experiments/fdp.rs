//! FDP for a flash cache (issue 29 item 5): the workload shape of Allison et al., "Towards
//! Efficient Flash Caches with Emerging NVMe FDP SSDs", EuroSys'25 — CacheLib's small-object
//! cache (SOC: random 4 KiB writes over a small region, hot) beside its large-object cache
//! (LOC: a log written sequentially round a large region, cold), with and without FDP
//! placement, at several device utilizations — with the paper's device WAF declared beside
//! nandlab's.
//!
//! The device is one conventional namespace (NANDFlashSim SLC timing, 4 planes of 128 blocks of
//! 64 pages, 7 % OP) with FDP: one reclaim group, two persistently isolated reclaim unit
//! handles, 1 MiB reclaim units. The cache uses `utilization` of the namespace (the rest is
//! never written, so it acts as host over-provisioning); the SOC is 4 % of it. Two fio jobs run
//! side by side at depth 4 each: the SOC writes 1.5 (quick) or 3 times the cache's size, the
//! LOC twice that. With FDP the SOC's writes carry placement id 1 and the LOC's id 0; without,
//! the host sends no placement id and both streams share the write frontier.

use super::paper::{Paper, pv};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::stack::{Stack, StackOutcome};
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "fdp-cachelib",
    reference: "issue 29; Allison et al., EuroSys'25",
    title: "device WAF of a CacheLib-like flash cache (random small-object region beside a \
            sequential large-object log) with and without FDP placement, by utilization",
    run: cachelib,
    paper: Paper::Values(&[pv(
        "dlwa_fdp",
        "waf_fdp_util90",
        1.0,
        "x",
        "Allison et al. EuroSys'25, abstract",
        "CacheLib with SOC and LOC on separate reclaim unit handles (Meta and Twitter traces: \
         \"an ideal device write amplification of ~1\"); nandlab: 90 % utilization",
    )]),
}];

/// The device of every point; the workload is the point's fio job file (`cachelib.fio`
/// in a folder of the point's own, [`measure`]).
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
op_fraction = 0.07
[ssd.mapping]
placement_ids = 2
[ssd.gc]
threshold_blocks = 3
[ssd.host]
queue_depth = 8

[ssd.nvme]
queue_weights = [1]
[[ssd.nvme.namespaces]]
kind = "conventional"
[ssd.nvme.namespaces.fdp]
reclaim_groups = 1
handles = ["persistently_isolated", "persistently_isolated"]
reclaim_unit_bytes = 1048576

[workload]
kind = "fio"
path = "cachelib.fio"
"#;

/// The namespace's bytes (30,624 logical pages of 4 KiB); `measure` checks it.
const NAMESPACE_BYTES: u64 = 30_624 * 4096;
const MIB: u64 = 1 << 20;

/// Utilization × FDP on / off.
const UTILIZATIONS: [f64; 3] = [0.5, 0.9, 1.0];

type Point = (f64, bool);

fn points() -> Vec<Point> {
    UTILIZATIONS
        .iter()
        .flat_map(|&u| [(u, false), (u, true)])
        .collect()
}

fn name((util, fdp): Point) -> String {
    format!(
        "{}_util{}",
        if fdp { "fdp" } else { "nofdp" },
        (util * 100.0).round()
    )
}

/// The point's fio job file: the SOC and the LOC side by side.
fn job((util, fdp): Point, scale: Scale) -> String {
    let used = (NAMESPACE_BYTES as f64 * util) as u64 / MIB * MIB;
    let soc = ((used as f64 * 0.04) as u64 / MIB * MIB).max(MIB);
    let soc_io = match scale {
        Scale::Quick => 3 * used / 2,
        Scale::Standard | Scale::Full => 3 * used,
    } / 4096
        * 4096;
    let pli = |id: u16| {
        if fdp {
            format!("fdp_pli={id}\n")
        } else {
            String::new()
        }
    };
    let loc = used - soc;
    format!(
        "[global]\nbs=4k\niodepth=4\n{}[soc]\nrw=randwrite\noffset=0\nsize={soc}\n\
         io_size={soc_io}\n{}[loc]\nrw=write\noffset={soc}\nsize={loc}\nio_size={}\n{}",
        if fdp { "fdp=1\n" } else { "" },
        pli(1),
        2 * soc_io,
        pli(0),
    )
}

/// What one point measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CacheMeasure {
    pub waf: f64,
    /// Per placement id (0: the LOC, or both streams without FDP; 1: the SOC with FDP).
    pub waf_loc: f64,
    pub waf_soc: f64,
    pub host_bytes: u64,
    pub media_bytes: u64,
    pub write_p99_us: f64,
}

fn measure(
    point: Point,
    scale: Scale,
    seed: u64,
    control: &Control,
) -> LabResult<Option<CacheMeasure>> {
    let seed = super::points::seed_value(seed)?;
    // the job file beside the stack, in a folder of this point's own
    let dir = std::env::temp_dir().join(format!(
        "nandlab-fdp-cachelib-{}-{}-{scale:?}",
        std::process::id(),
        name(point)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| LabError::Usage(format!("{}: {e}", dir.display())))?;
    let path = dir.join("cachelib.fio");
    std::fs::write(&path, job(point, scale))
        .map_err(|e| LabError::Usage(format!("{}: {e}", path.display())))?;
    let overrides = [("run.seed".to_string(), seed)];
    let run = Stack::from_toml("fdp-cachelib", STACK, &dir, &overrides)
        .and_then(|s| s.run(None, control));
    std::fs::remove_dir_all(&dir).ok();
    let run = run?;
    if run.interrupted() {
        return Ok(None);
    }
    let StackOutcome::Ssd { run, .. } = &run.outcome else {
        return Err(LabError::Usage("fdp-cachelib runs a block workload".into()));
    };
    let r = &run.report;
    if r.logical_pages * u64::from(r.page_size_bytes) != NAMESPACE_BYTES {
        return Err(LabError::Usage(format!(
            "fdp-cachelib: the namespace has {} logical pages, not {}",
            r.logical_pages,
            NAMESPACE_BYTES / 4096
        )));
    }
    let pid = |id: u16| {
        r.placement
            .iter()
            .find(|p| p.id == id)
            .map_or(0.0, |p| p.waf)
    };
    let fdp = run
        .nvme
        .as_ref()
        .and_then(|n| n.namespaces.first())
        .and_then(|ns| ns.fdp);
    Ok(Some(CacheMeasure {
        waf: r.waf,
        waf_loc: pid(0),
        waf_soc: pid(1),
        host_bytes: fdp.map_or(0, |f| f.host_bytes_written),
        media_bytes: fdp.map_or(0, |f| f.media_bytes_written),
        write_p99_us: r.write.lat.p99_us,
    }))
}

fn cachelib(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (scale, seed) = (options.scale, options.seed);
    let points = points();
    let measured = super::points::run_named(
        options,
        "fdp-cachelib",
        &points,
        |&point| name(point),
        |&point, control| measure(point, scale, seed, control),
    )?;
    let (rows, interrupted) = super::points::measured_rows(&points, measured);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    let mut curve = Curve::new(
        "dlwa",
        &[
            "utilization",
            "fdp",
            "waf",
            "waf_loc",
            "waf_soc",
            "host_bytes",
            "media_bytes",
            "write_p99_us",
        ],
    );
    for (point, m) in &rows {
        let n = name(*point);
        result.metric(&format!("waf_{n}"), m.waf);
        result.metric(&format!("write_p99_us_{n}"), m.write_p99_us);
        curve.push(vec![
            point.0.into(),
            if point.1 { "on" } else { "off" }.into(),
            m.waf.into(),
            m.waf_loc.into(),
            m.waf_soc.into(),
            (m.host_bytes as f64).into(),
            (m.media_bytes as f64).into(),
            m.write_p99_us.into(),
        ]);
    }
    result.curves.push(curve);
    Ok(result)
}
