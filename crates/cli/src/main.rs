//! The `nandlab` command line.

use clap::{Args, Parser, Subcommand};
use nandlab_lab::chip::{ChipRunSpec, ChipWorkloadKind, SchedulerPolicy};
use nandlab_lab::control::Control;
use nandlab_lab::experiments::{self, RunOptions, Scale};
use nandlab_lab::stack::{FioWorkload, Stack, TraceWorkload, WorkloadSection, device_stack};
use nandlab_lab::{LabError, LabResult, console, output};
use std::path::PathBuf;
use std::process::ExitCode;

/// `println!` that ends the process quietly when stdout is closed (e.g. piped into `head`),
/// instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `print!` with the same broken-pipe behaviour as `out!`.
macro_rules! out_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// Standard output for what `nandlab_lab::console` formats: ends the process quietly when stdout
/// is closed, as `out!` does.
struct QuietStdout;

impl std::io::Write for QuietStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if std::io::stdout().write_all(buf).is_err() {
            std::process::exit(0);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if std::io::stdout().flush().is_err() {
            std::process::exit(0);
        }
        Ok(())
    }
}

fn stdout() -> QuietStdout {
    QuietStdout
}

/// A usage error (bad arguments) with `message`.
fn usage(message: String) -> LabError {
    LabError::Usage(message)
}

/// Prints `value` as pretty JSON on stdout.
fn print_json(value: &impl serde::Serialize) -> LabResult<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| usage(e.to_string()))?;
    out!("{text}");
    Ok(())
}

mod crash;
mod powercut;
mod sql;

/// nandlab: co-design laboratory for database software on NAND flash and PCM.
#[derive(Parser, Debug)]
#[command(name = "nandlab", version = nandlab_lab::version())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a chip-level workload on a NAND preset and print throughput, latency, stage
    /// breakdown, bus contention and energy.
    Chip(ChipArgs),
    /// Reproduce a paper result: `nandlab reproduce --list`, `nandlab reproduce ID --out DIR`.
    Reproduce(ReproduceArgs),
    /// Run a stack config: one TOML file from chip to workload ([run], [nand], [ssd],
    /// [engine], [precondition], [workload]; docs/stack.md).
    Run(RunArgs),
    /// Run a sweep: a base stack config and a [grid] or [zip] of values for any key paths;
    /// points run in parallel processes and give one row each (sweep.csv, sweep.jsonl).
    Sweep(SweepArgs),
    /// (internal) Serve sweep points on stdin/stdout for `nandlab sweep`.
    #[command(hide = true)]
    SweepWorker,
    /// Replay a block trace (MSR Cambridge, blkparse, DiskSim in ms/us/ns, or native CSV) on an
    /// SSD.
    Replay(ReplayArgs),
    /// Run a fio job file (a stated subset of fio's keys) on an SSD.
    Fio(FioArgs),
    /// Run SQL (a file or stdin) with real SQLite on a simulated SSD; print the query results
    /// and the device metrics per transaction (docs/sql.md).
    Sql(sql::SqlArgs),
    /// Run the TPC-C-like workload (nine tables, five transactions, standard mix) on SQLite
    /// on a simulated SSD: tpmC in simulated time, device metrics, consistency checks.
    Tpcc(sql::TpccArgs),
    /// Crash-test SQLite on a simulated SSD: power cuts inside device requests while
    /// transactions run, mount, reopen, integrity check, every acknowledged transaction present.
    SqlCrash(sql::SqlCrashArgs),
    /// Measure simulator speed (`nandlab bench chip|ssd|engine|sim|sql|pcm`).
    Bench(BenchArgs),
    /// The main demo: a quick co-design experiment with a readable table.
    Demo,
    /// List the NAND chip presets and the SSD presets with their sources.
    Presets,
    /// Cut the power of a small SSD, mount it from its pages' OOB and check every LPA with the
    /// crash oracle; or sweep cut points; or time the mount scan against capacity
    /// (docs/power.md).
    Powercut(powercut::PowercutArgs),
    /// The crash harness: random stack configs × workloads × cut points × cut–recover–
    /// continue cycles, checked by the crash oracle; a failing case reproduces exactly
    /// (docs/power.md).
    Crash(crash::CrashArgs),
}

#[derive(Args, Debug)]
struct ChipArgs {
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
struct ReproduceArgs {
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
}

#[derive(Args, Debug)]
struct BenchArgs {
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
    /// Print one JSON line instead of the table (to track speed across commits).
    #[arg(long)]
    json: bool,
    /// `bench sql` only: the SSD (preset, device file or stack config; default bench-ssd).
    #[arg(long)]
    device: Option<String>,
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// The sweep file (see examples/*sweep*.toml).
    sweep: PathBuf,
    /// Worker processes (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Results folder: sweep.csv, sweep.jsonl and the point cache (default:
    /// results/<sweep file name>). A rerun skips the points already in the cache.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunArgs {
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
struct ReplayArgs {
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
struct FioArgs {
    jobfile: PathBuf,
    /// An SSD preset name (see `nandlab presets`) or a device file ([nand] and [ssd] of a
    /// stack config); default: the `bench-ssd` preset.
    #[arg(long)]
    device: Option<String>,
    /// Do not write the pages the jobs read before writing them (by default they are written
    /// functionally before the timed run, so those reads reach the flash).
    #[arg(long)]
    no_read_precondition: bool,
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

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let control = Control::new();
    if matches!(
        cli.command,
        Command::Reproduce(_)
            | Command::Run(_)
            | Command::Replay(_)
            | Command::Fio(_)
            | Command::Sweep(_)
            | Command::SweepWorker
    ) {
        stop_on_ctrl_c(&control);
    }
    match run(cli, &control) {
        Ok(()) if control.is_cancelled() => ExitCode::from(EXIT_INTERRUPTED),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// A command-line error as one line, like every other error (clap's own is several: the
/// error, a tip, the usage and a pointer to --help); --help and --version print as usual.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            eprintln!("error: a command is required (`nandlab --help` lists them)");
            return ExitCode::from(2);
        }
        _ => {}
    }
    let text = e.render().to_string();
    // the error's own lines end at the first blank line (then come tips and the usage)
    let message: Vec<&str> = text
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    // a negative number is taken for a flag: name the option it was given to
    let args: Vec<String> = std::env::args().collect();
    let negative = args.windows(2).find(|pair| {
        pair[0].starts_with("--")
            && pair[1].parse::<f64>().is_ok_and(|v| v < 0.0)
            && message.contains(&format!("'{}'", pair[1]))
    });
    if let Some(pair) = negative {
        eprintln!(
            "error: {}: {} is negative; it takes a value of at least 0 (see --help)",
            pair[0], pair[1]
        );
        return ExitCode::from(2);
    }
    let hint = " (see --help)";
    eprintln!("error: {message}{hint}");
    ExitCode::from(2)
}

/// The first Ctrl-C cancels `control` (the run stops admitting work and writes what it has);
/// a second one exits at once. Without a handler (it could not be installed), Ctrl-C keeps its
/// default: the process ends at once.
fn stop_on_ctrl_c(control: &Control) {
    let control = control.clone();
    let installed = ctrlc::set_handler(move || {
        if control.is_cancelled() {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        control.cancel();
    });
    if let Err(e) = installed {
        eprintln!("note: Ctrl-C will not keep partial results ({e})");
    }
}

fn run(cli: Cli, control: &Control) -> LabResult<()> {
    match cli.command {
        Command::Chip(args) => chip(args),
        Command::Reproduce(args) => reproduce(args, control),
        Command::Run(args) => run_stack(args, control),
        Command::Sweep(args) => sweep(args, control),
        Command::SweepWorker => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            nandlab_lab::sweep_run::serve_worker(stdin, stdout, control)
        }
        Command::Replay(args) => replay(args, control),
        Command::Fio(args) => fio(args, control),
        Command::Sql(args) => sql::sql(args),
        Command::Tpcc(args) => sql::tpcc(args),
        Command::SqlCrash(args) => sql::sql_crash(args),
        Command::Bench(args) => bench_cmd(args),
        Command::Demo => console::demo(&mut stdout()),
        Command::Powercut(args) => powercut::powercut(args),
        Command::Crash(args) => crash::run(args),
        Command::Presets => {
            out!("NAND chip presets ([nand] preset = NAME, nandlab chip --preset NAME):\n");
            for name in nandlab_lab::chip::nand_preset_names() {
                let c = nandlab_lab::chip::nand_preset(name)?;
                out!(
                    "{name:14} {}\n               source: {}\n",
                    c.description,
                    c.source
                );
            }
            out!("SSD presets ([ssd] preset = NAME, --device NAME):\n");
            for name in nandlab_lab::stack::ssd_preset_names() {
                let p = nandlab_lab::stack::ssd_preset(name).map_err(LabError::Usage)?;
                out!(
                    "{name:14} {}\n               source: {}\n",
                    p.description,
                    p.source
                );
            }
            Ok(())
        }
    }
}

fn chip(args: ChipArgs) -> LabResult<()> {
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

fn reproduce(args: ReproduceArgs, control: &Control) -> LabResult<()> {
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
    };
    let result = experiments::reproduce(&id, &options, &out)?;
    out!("{id}:");
    for (k, v) in &result.metrics {
        out!("  {k:44} {v:.4}");
    }
    out!("wrote {}", out.display());
    out_raw!("{}", result.paper_table());
    if result.interrupted {
        eprintln!("interrupted: kept results of {} points", result.rows());
    }
    Ok(())
}

/// `nandlab bench TARGET`: a readable table, or one JSON line with `--json`.
fn bench_cmd(args: BenchArgs) -> LabResult<()> {
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
    if args.target == "sql" {
        return sql::bench(
            args.device.as_deref(),
            args.requests.unwrap_or(20_000),
            args.json,
        );
    }
    let steady = args.steady;
    console::bench(
        &mut stdout(),
        &args.target,
        args.requests,
        steady,
        args.json,
    )
}

fn run_stack(args: RunArgs, control: &Control) -> LabResult<()> {
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

fn replay(args: ReplayArgs, control: &Control) -> LabResult<()> {
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

fn fio(args: FioArgs, control: &Control) -> LabResult<()> {
    let workload = WorkloadSection::Fio(FioWorkload {
        path: args.jobfile.display().to_string(),
        precondition_reads: !args.no_read_precondition,
    });
    let stack = device_stack(args.device.as_deref(), &workload, args.seed)?;
    if let Some(dir) = &args.out {
        output::check_writable_dir(dir)?;
    }
    let run = stack.run(args.capture.as_deref(), control)?;
    console::finish(&mut stdout(), &stack, &run, args.out, args.json)
}

fn sweep(args: SweepArgs, control: &Control) -> LabResult<()> {
    let sweep = nandlab_lab::sweep::Sweep::load(&args.sweep)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        return Err(LabError::Usage("--jobs must be at least 1".into()));
    }
    let out = args.out.unwrap_or_else(|| {
        let stem = args
            .sweep
            .file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from("results").join(stem)
    });
    let exe = std::env::current_exe().map_err(|e| {
        LabError::Usage(format!(
            "cannot find the nandlab binary for the workers: {e}"
        ))
    })?;
    let outcome = nandlab_lab::sweep_run::run_sweep(&sweep, jobs, &exe, &out, control)?;
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
