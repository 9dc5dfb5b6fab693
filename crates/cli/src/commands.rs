//! The commands that run stacks, experiments, chips and benches: their arguments, and the
//! calls into `nandlab_lab` whose results they print.

use crate::{sql, stdout};
use clap::Args;
use nandlab_lab::chip::{ChipRunSpec, ChipWorkloadKind, SchedulerPolicy};
use nandlab_lab::control::Control;
use nandlab_lab::experiments::{self, RunOptions, Scale};
use nandlab_lab::stack::{FioWorkload, Stack, TraceWorkload, WorkloadSection, device_stack};
use nandlab_lab::{LabError, LabResult, console, output};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ChipArgs {
    /// NAND preset (see `nandlab presets`).
    #[arg(long, default_value = "mlc1")]
    preset: String,
    /// A chip config file in the preset format (see presets/nand/); replaces --preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Workload: swr, srd (paper 003 Table II synthesized) or msnfs, fin, web, usr, prn mixes.
    #[arg(long, default_value = "swr")]
    workload: ChipWorkloadKind,
    #[arg(long, default_value_t = 10_000)]
    requests: u64,
    /// Request size of swr/srd in bytes (default: one page).
    #[arg(long, default_value_t = 0)]
    request_bytes: u32,
    #[arg(long)]
    channels: Option<u32>,
    /// Dies per channel.
    #[arg(long)]
    dies: Option<u32>,
    /// Planes per die.
    #[arg(long)]
    planes: Option<u32>,
    #[arg(long)]
    page_size: Option<u32>,
    /// Bus data rate in MT/s.
    #[arg(long)]
    bus_mts: Option<f64>,
    /// Per-page spread of program time within a page type: TIN times a factor uniform in
    /// [1 - V, 1 + V], drawn from the seed (timing.program_variation; default the config's, 0).
    #[arg(long, value_name = "V")]
    program_variation: Option<f64>,
    /// die-first, plane-first or fcfs.
    #[arg(long, default_value = "die-first")]
    scheduler: SchedulerPolicy,
    /// Use cache-mode reads and programs.
    #[arg(long)]
    cache: bool,
    /// Issue to one die of a channel at a time (no interleaved-die mode).
    #[arg(long)]
    no_interleave: bool,
    #[arg(long, default_value_t = 32)]
    queue_depth: u32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write report.json and CSVs into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Experiment id (see --list).
    id: Option<String>,
    #[arg(long)]
    list: bool,
    /// Results folder (default: results/ID). Points finished by an earlier run of the same
    /// build into the same folder are taken from its cache/ (a rerun after Ctrl-C resumes).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Small runs for tests and demos.
    #[arg(long)]
    quick: bool,
    /// Paper-scale runs.
    #[arg(long, conflicts_with = "quick")]
    full: bool,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Measure the points in N worker processes, 1 to 1024 (the experiment's registered
    /// measures; the others run here). Outputs are the same bytes as without. Default: threads
    /// in this one.
    #[arg(long, value_parser = jobs_value, allow_negative_numbers = true)]
    jobs: Option<usize>,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// What to measure: chip, ssd, engine, sim, sql or pcm.
    target: String,
    /// Requests to simulate (default: 2,000,000 for chip, 4,000,000 for ssd, 200,000 queries
    /// for engine, 300,000 for sim, 100,000 write requests per row for pcm).
    #[arg(long)]
    requests: Option<u64>,
    /// `bench ssd` only: precondition the device full and fragmented first (steady state:
    /// every measured write pays its share of GC).
    #[arg(long)]
    steady: bool,
    /// `bench ssd` only: a device this many times larger (blocks per plane × N; same channels,
    /// dies and planes), to measure what device size costs per request.
    #[arg(long, default_value_t = 1)]
    scale: u32,
    /// Print one JSON line instead of the table (to track speed across commits).
    #[arg(long)]
    json: bool,
    /// `bench sql` only: the SSD (preset, device file or stack config; default bench-ssd).
    #[arg(long)]
    device: Option<String>,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (see examples/*sweep*.toml).
    sweep: PathBuf,
    /// Worker processes, 1 to 1024 (default: all cores).
    #[arg(long, value_parser = jobs_value, allow_negative_numbers = true)]
    jobs: Option<usize>,
    /// Results folder: sweep.csv, sweep.jsonl and the point cache (default:
    /// results/<sweep file name>). A rerun skips the points already in the cache.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The stack config (see examples/ and docs/stack.md).
    config: PathBuf,
    /// Overrides the config's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Also write the request stream to this native CSV trace (replay it with --format native).
    #[arg(long)]
    capture: Option<PathBuf>,
    /// Write report.json and CSVs into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the run's metric row as one JSON line instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    trace: PathBuf,
    /// msr, blkparse, disksim (ms times), disksim-us, disksim-ns (MQSim's traces) or native.
    #[arg(long)]
    format: nandlab_lab::stack::TraceFormat,
    /// An SSD preset name (see `nandlab presets`) or a device file ([nand] and [ssd] of a
    /// stack config); default: the `bench-ssd` preset.
    #[arg(long)]
    device: Option<String>,
    /// Ignore the trace's timestamps and issue requests as fast as the queue allows.
    #[arg(long)]
    closed_loop: bool,
    /// blkparse: replay Q (queue) lines instead of D (dispatch) lines.
    #[arg(long)]
    queue_events: bool,
    /// Keep one device of the trace (MSR DiskNumber, DiskSim devno, blkparse major,minor).
    #[arg(long)]
    disk: Option<String>,
    /// Do not write the pages the trace reads before writing them (by default they are
    /// written functionally before the timed replay, so those reads reach the flash).
    #[arg(long)]
    no_read_precondition: bool,
    /// Grow the device's blocks per plane until it holds the trace's furthest byte, instead
    /// of folding requests beyond its capacity into it.
    #[arg(long)]
    fit_device: bool,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also write the request stream to this native CSV trace (replay it with --format native).
    #[arg(long)]
    capture: Option<PathBuf>,
    /// Write report.json and CSVs into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the run's metric row as one JSON line instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct FioArgs {
    jobfile: PathBuf,
    /// An SSD preset name (see `nandlab presets`) or a device file ([nand] and [ssd] of a
    /// stack config); default: the `bench-ssd` preset.
    #[arg(long)]
    device: Option<String>,
    /// Do not write the pages the jobs read before writing them (by default they are written
    /// functionally before the timed run, so those reads reach the flash).
    #[arg(long)]
    no_read_precondition: bool,
    /// Run only this job section of the file, as fio's --section (repeat for several;
    /// [global] always applies).
    #[arg(long = "section", value_name = "NAME")]
    sections: Vec<String>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also write the request stream to this native CSV trace (replay it with --format native).
    #[arg(long)]
    capture: Option<PathBuf>,
    /// Write report.json and CSVs into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the run's metric row as one JSON line instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn chip(args: ChipArgs) -> LabResult<()> {
    let mut spec = ChipRunSpec::new(&args.preset, args.workload, args.requests);
    if let Some(path) = &args.config {
        spec.load_device(path)?;
    }
    spec.channels = args.channels;
    spec.dies = args.dies;
    spec.planes = args.planes;
    spec.page_size_bytes = args.page_size;
    spec.bus_data_rate_mts = args.bus_mts;
    spec.program_variation = args.program_variation;
    spec.request_bytes = args.request_bytes;
    spec.seed = args.seed;
    spec.driver.policy = args.scheduler;
    spec.driver.cache = args.cache;
    spec.driver.interleave = !args.no_interleave;
    spec.driver.queue_depth = args.queue_depth;
    let report = spec.run()?;
    console::chip_report(&mut stdout(), &spec, &report)?;
    if let Some(dir) = args.out {
        nandlab_lab::chip::write_chip_report(&spec, &report, &dir)?;
        out!("\nwrote {}", dir.display());
    }
    Ok(())
}

pub fn reproduce(args: ReproduceArgs, control: &Control) -> LabResult<()> {
    if args.list {
        for e in experiments::registry() {
            out!("{:16} {:34} {}", e.id, e.reference, e.title);
        }
        return Ok(());
    }
    let Some(id) = args.id else {
        return Err(LabError::Usage(
            "give an experiment id or --list (e.g. `nandlab reproduce nfs-energy --out results/nfs-energy`)".into(),
        ));
    };
    // each experiment in its own folder: two runs never mix their files
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(&id));
    let options = RunOptions {
        scale: if args.quick {
            Scale::Quick
        } else if args.full {
            Scale::Full
        } else {
            Scale::Standard
        },
        seed: args.seed,
        control: control.clone(),
        cache_dir: Some(out.join("cache")),
        plan: None,
    };
    if let Some(jobs) = args.jobs {
        experiments::workers::measure_in_workers(&id, &options, jobs, &worker_exe()?)?;
    }
    let result = experiments::reproduce(&id, &options, &out)?;
    out!("{id}:");
    out_raw!("{}", result.metrics_listing());
    out!("wrote {}", out.display());
    out_raw!("{}", result.paper_table());
    if result.interrupted {
        eprintln!("interrupted: kept results of {} points", result.rows());
    }
    Ok(())
}

/// `nandlab bench TARGET`: a readable table, or one JSON line with `--json`.
impl BenchArgs {
    /// Whether Ctrl-C can stop the bench between units of work (`bench sql`); the others
    /// stop at once.
    pub fn keeps_partial(&self) -> bool {
        self.target == "sql"
    }
}

pub fn bench_cmd(args: BenchArgs, control: &Control) -> LabResult<()> {
    if args.device.is_some() && args.target != "sql" {
        return Err(LabError::Usage(format!(
            "--device applies to `bench sql` only, not `bench {}`",
            args.target
        )));
    }
    if args.steady && args.target != "ssd" {
        return Err(LabError::Usage(format!(
            "--steady applies to `bench ssd` only, not `bench {}`",
            args.target
        )));
    }
    if args.scale != 1 && args.target != "ssd" {
        return Err(LabError::Usage(format!(
            "--scale applies to `bench ssd` only, not `bench {}`",
            args.target
        )));
    }
    if args.scale == 0 {
        return Err(LabError::Usage("--scale must be at least 1".into()));
    }
    if args.requests == Some(0) {
        return Err(LabError::Usage(
            "--requests must be at least 1 (a bench of nothing measures nothing)".into(),
        ));
    }
    if args.target == "sql" {
        return sql::bench(
            args.device.as_deref(),
            args.requests.unwrap_or(20_000),
            args.json,
            control,
        );
    }
    let steady = args.steady;
    // the bench's loops stay as measured: a spinner with the elapsed time on a terminal
    let _spinner = nandlab_lab::progress::Spinner::new(&format!("bench {}", args.target));
    console::bench(
        &mut stdout(),
        &args.target,
        args.requests,
        steady,
        args.scale,
        args.json,
    )
}

pub fn run_stack(args: RunArgs, control: &Control) -> LabResult<()> {
    let overrides: Vec<(String, toml::Value)> = args
        .seed
        .map(|seed| {
            let seed = i64::try_from(seed)
                .map_err(|_| LabError::Usage(format!("--seed {seed}: at most {}", i64::MAX)))?;
            Ok::<_, LabError>(("run.seed".to_string(), toml::Value::Integer(seed)))
        })
        .transpose()?
        .into_iter()
        .collect();
    let text = std::fs::read_to_string(&args.config).map_err(|source| LabError::Read {
        path: args.config.display().to_string(),
        source,
    })?;
    let base_dir = args.config.parent().unwrap_or(std::path::Path::new("."));
    let stack = Stack::from_toml(
        &args.config.display().to_string(),
        &text,
        base_dir,
        &overrides,
    )?;
    if let Some(dir) = &args.out {
        output::check_writable_dir(dir)?;
    }
    let run = stack.run(args.capture.as_deref(), control)?;
    console::finish(&mut stdout(), &stack, &run, args.out, args.json)
}

pub fn replay(args: ReplayArgs, control: &Control) -> LabResult<()> {
    let workload = WorkloadSection::Trace(TraceWorkload {
        path: args.trace.display().to_string(),
        format: args.format.to_string(),
        closed_loop: args.closed_loop,
        queue_events: args.queue_events,
        disk: args.disk.clone(),
        precondition_reads: !args.no_read_precondition,
        fit_device: args.fit_device,
    });
    let stack = device_stack(args.device.as_deref(), &workload, args.seed)?;
    if let Some(dir) = &args.out {
        output::check_writable_dir(dir)?;
    }
    let run = stack.run(args.capture.as_deref(), control)?;
    console::finish(&mut stdout(), &stack, &run, args.out, args.json)
}

pub fn fio(args: FioArgs, control: &Control) -> LabResult<()> {
    let workload = WorkloadSection::Fio(FioWorkload {
        path: args.jobfile.display().to_string(),
        precondition_reads: !args.no_read_precondition,
        sections: args.sections,
    });
    let stack = device_stack(args.device.as_deref(), &workload, args.seed)?;
    if let Some(dir) = &args.out {
        output::check_writable_dir(dir)?;
    }
    let run = stack.run(args.capture.as_deref(), control)?;
    console::finish(&mut stdout(), &stack, &run, args.out, args.json)
}

/// The most worker processes `--jobs` takes: each holds a whole simulated device, and more
/// processes than this only contend for the cores.
const MAX_JOBS: usize = 1024;

/// `--jobs N`: a whole number from 1 to [`MAX_JOBS`].
fn jobs_value(text: &str) -> Result<usize, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if (1..=MAX_JOBS as i64).contains(&n) => Ok(n as usize),
        Ok(_) => Err(format!("takes 1 to {MAX_JOBS} worker processes")),
        Err(_) => Err(format!(
            "takes a whole number of worker processes, 1 to {MAX_JOBS}"
        )),
    }
}

/// The executable the worker processes run, when not this process's own (see
/// [`crate::run_cli`]).
static WORKER_EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Makes the worker processes run `exe sweep-worker` (a `nandlab` command other than this
/// process's executable: the Python console script, whose process is the Python interpreter).
pub(crate) fn set_worker_exe(exe: PathBuf) {
    let _ = WORKER_EXE.set(exe);
}

/// The `nandlab` binary, which the worker processes run (`nandlab sweep-worker`).
fn worker_exe() -> LabResult<PathBuf> {
    if let Some(exe) = WORKER_EXE.get() {
        return Ok(exe.clone());
    }
    std::env::current_exe().map_err(|e| {
        LabError::Usage(format!(
            "cannot find the nandlab binary for the workers: {e}"
        ))
    })
}

pub fn sweep(args: SweepArgs, control: &Control) -> LabResult<()> {
    let sweep = nandlab_lab::sweep::Sweep::load(&args.sweep)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(MAX_JOBS);
    let out = args.out.unwrap_or_else(|| {
        let stem = args
            .sweep
            .file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from("results").join(stem)
    });
    let outcome = nandlab_lab::sweep_run::run_sweep(&sweep, jobs, &worker_exe()?, &out, control)?;
    out_raw!("{}", outcome.csv);
    out!(
        "{} points ({} from the cache) | wrote {}",
        outcome.rows.len(),
        outcome.cached,
        out.join("sweep.csv").display()
    );
    if outcome.interrupted {
        eprintln!(
            "interrupted: kept results of {} points (rerun to resume)",
            outcome.rows.len()
        );
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// A NAND chip preset, an SSD preset (`nandlab presets`), a device file or a stack config.
    device: String,
    /// Print the information as JSON.
    #[arg(long)]
    json: bool,
}

/// `nandlab info DEVICE`: geometry, capacity and timings.
pub fn info(args: InfoArgs) -> LabResult<()> {
    let info = nandlab_lab::info::device_info(&args.device)?;
    if args.json {
        return crate::print_json(&info);
    }
    out!("{}", nandlab_lab::info::format_info(&info));
    Ok(())
}
