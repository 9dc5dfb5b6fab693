//! The `nandlab` command line.

use clap::{Args, Parser, Subcommand};
use nandlab_lab::chip::{ChipReport, ChipRunSpec, ChipWorkloadKind, SchedulerPolicy};
use nandlab_lab::control::Control;
use nandlab_lab::experiments::{self, RunOptions, Scale};
use nandlab_lab::stack::{
    FioWorkload, Stack, StackOutcome, StackRun, TraceWorkload, WorkloadSection, device_stack,
};
use nandlab_lab::{LabError, LabResult, bench, output};
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
        Command::Demo => demo(),
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
    print_chip_report(&spec, &report);
    if let Some(dir) = args.out {
        nandlab_lab::chip::write_chip_report(&spec, &report, &dir)?;
        out!("\nwrote {}", dir.display());
    }
    Ok(())
}

fn print_chip_report(spec: &ChipRunSpec, r: &ChipReport) {
    out!(
        "chip run: preset {} | workload {} | {} requests | scheduler {} | cache {} | interleave {}",
        spec.preset,
        spec.workload.name(),
        r.requests,
        spec.driver.policy.name(),
        spec.driver.cache,
        spec.driver.interleave
    );
    out!(
        "simulated {:.3} ms | throughput {:.2} MB/s ({:.0} IOPS) | bus contention {:.1} % | bus utilization {:.1} %",
        r.sim_time_us / 1e3,
        r.throughput_mb_per_s,
        r.iops,
        100.0 * r.bus_contention_fraction,
        100.0 * r.bus_utilization
    );
    out!("\nlatency (us)    count       p50       p90       p99     p99.9       max");
    for (name, l) in [("read", &r.read_latency), ("write", &r.write_latency)] {
        if l.count > 0 {
            out!(
                "{name:10} {:>10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                l.count,
                l.p50_us,
                l.p90_us,
                l.p99_us,
                l.p999_us,
                l.max_us
            );
        }
    }
    out!("\nstage       time (ms)   time %   energy (uJ)  energy %");
    for s in &r.stages {
        out!(
            "{:8} {:>12.3} {:>8.1} {:>13.2} {:>9.1}",
            s.stage,
            s.time_us / 1e3,
            100.0 * s.time_fraction,
            s.energy_uj,
            100.0 * s.energy_fraction
        );
    }
    out!("\nop kind        ops   energy/op (uJ)   bus-stage %   mean latency (us)");
    for k in &r.op_kinds {
        out!(
            "{:10} {:>8} {:>16.2} {:>13.1} {:>19.1}",
            k.kind,
            k.ops,
            k.energy_per_op_uj,
            100.0 * k.bus_stage_fraction,
            k.latency.mean_us
        );
    }
    out!(
        "\nenergy {:.1} uJ (+ {:.1} uJ idle) | {} flash ops ({} multiplane) | {} events",
        r.energy_uj,
        r.idle_energy_uj,
        r.flash_ops,
        r.multiplane_ops,
        r.events
    );
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

/// The main demo: paper 000's co-design experiment (R-E1) at quick scale, as a table.
fn demo() -> LabResult<()> {
    use nandlab_lab::experiments::{CurveValue, RunOptions, Scale};
    out!(
        "nandlab demo: a database storage engine on a simulated SSD (Miyaji et al. 2014, Fig. 12)"
    );
    out!("119-byte rows; random Insert/Delete/Update (30/30/40) at constant free space;");
    out!(
        "conventional engine vs co-designed engine (Insert Address Assist + Update-to-Delete+Insert)"
    );
    out!(
        "on paper 000's SSD emulator scaled to 4 channels, 128 MB (NAND: 100 us read, 1.6 ms program,"
    );
    out!(
        "8.5 ms erase; buffered host writes striped over dies, blocking GC; 40 uJ controller energy"
    );
    out!("per host command, fitted: preset miyaji2014-emulator)\n");
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        ..RunOptions::default()
    };
    let experiment = experiments::find("miyaji-freespace")?;
    let result = (experiment.run)(&options)?;
    let curve = &result.curves[0];
    let num = |v: &CurveValue| match v {
        CurveValue::Number(n) => *n,
        CurveValue::Label(_) => f64::NAN,
    };
    out!(
        "{:>6} | {:>21} | {:>21} | {:>21} | {:>19}",
        "free",
        "queries/s",
        "mJ/query",
        "W/E cycles/block",
        "GC page copies"
    );
    out!(
        "{:>6} | {:>10} {:>10} | {:>10} {:>10} | {:>10} {:>10} | {:>9} {:>9}",
        "space",
        "conv.",
        "co-design",
        "conv.",
        "co-design",
        "conv.",
        "co-design",
        "conv.",
        "co-des."
    );
    for pair in curve.rows.chunks(2) {
        let (c, d) = (&pair[0], &pair[1]);
        out!(
            "{:>5}% | {:>10.0} {:>10.0} | {:>10.3} {:>10.3} | {:>10.1} {:>10.1} | {:>9.0} {:>9.0}",
            num(&c[1]),
            num(&c[2]),
            num(&d[2]),
            num(&c[3]),
            num(&d[3]),
            num(&c[4]),
            num(&d[4]),
            num(&c[5]),
            num(&d[5])
        );
    }
    out!(
        "\nAt 20 % free space the co-designed engine runs {:.1}x the queries per second with {:.0} % less energy",
        result.get("speedup_at_20pct"),
        100.0 * result.get("energy_reduction_at_20pct")
    );
    out!(
        "and {:.0} % fewer erase cycles per block (paper: 3.8x, -46 %, -62 %). Its inserts go to pages the FTL",
        100.0 * result.get("we_reduction_at_20pct")
    );
    out!(
        "is about to erase, so garbage collection finds nothing left to copy; with more free space the"
    );
    out!("conventional engine catches up. More: `nandlab reproduce --list`, docs/experiments.md.");
    Ok(())
}

/// `nandlab bench pcm`: the whole SSD with dedup + the PCM log region (the measurement), then
/// labelled variants.
fn bench_pcm_cmd(requests: u64, json: bool) -> LabResult<()> {
    if requests == 0 {
        return Err(LabError::Usage("--requests must be at least 1".into()));
    }
    let b = bench::bench_pcm(requests)?;
    if json {
        let main = &b.rows[0];
        let line = serde_json::json!({
            "target": "pcm",
            "requests": main.requests,
            "writes_per_wall_s": main.writes_per_wall_s,
            "writes_per_cpu_s": main.writes_per_cpu_s,
            "wall_s": main.wall_s,
            "cpu_s": main.cpu_s,
            "sha1_pages_per_cpu_s": b.sha1_pages_per_cpu_s,
            "rows": b.rows,
            "peak_rss_mb": peak_rss_kb().map(|kb| kb as f64 / 1024.0),
        });
        out!("{line}");
        return Ok(());
    }
    out!("nandlab bench pcm: bench-ssd, full payloads; 16 MiB cidr11 PCM: 4 MiB fingerprint store");
    out!(
        "(16 segments, binary search) + 8 MiB log region; desktop content over {} pages (half whole",
        b.span_pages
    );
    out!(
        "8 KiB pages, half small updates), one write request at a time; first row: the measurement"
    );
    out!(
        "  {:<26} {:>9} {:>8} {:>8} {:>13} {:>12} {:>10} {:>9}",
        "row",
        "requests",
        "wall s",
        "CPU s",
        "writes/wall-s",
        "writes/CPU-s",
        "to dedup/r",
        "SHA-1/r"
    );
    let na = |x: Option<f64>, digits: usize| {
        x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"))
    };
    for r in &b.rows {
        out!(
            "  {:<26} {:>9} {:>8.3} {:>8} {:>13.0} {:>12} {:>10.2} {:>9.2}",
            r.label,
            r.requests,
            r.wall_s,
            na(r.cpu_s, 2),
            r.writes_per_wall_s,
            na(r.writes_per_cpu_s, 0),
            r.pages_to_dedup_per_request,
            r.sha1_computed_per_request
        );
    }
    out!(
        "  SHA-1 of an 8 KiB page alone: {} pages/CPU-s",
        na(b.sha1_pages_per_cpu_s, 0)
    );
    out!("  (CPU s: the process's user + system time, all threads, 10 ms ticks; to dedup/r: pages");
    out!("  sent towards flash through dedup per request; SHA-1/r: hashes the simulator computed");
    out!("  per request, the others' SHA-1s remembered while their bytes were unchanged)");
    let failures: u64 = b.rows.iter().map(|r| r.check_failures).sum();
    if failures > 0 {
        return Err(LabError::Usage(format!(
            "bench pcm: {failures} internal check failures in the PCM stage"
        )));
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
    match args.target.as_str() {
        "sql" => sql::bench(
            args.device.as_deref(),
            args.requests.unwrap_or(20_000),
            args.json,
        ),
        "ssd" => {
            let requests = args.requests.unwrap_or(4_000_000);
            let b = if args.steady {
                bench::bench_ssd_steady(requests, 0)?
            } else {
                bench::bench_ssd(requests, 0)?
            };
            if args.json {
                let line = serde_json::json!({
                    "target": "ssd",
                    "steady": args.steady,
                    "requests": b.requests,
                    "wall_s": b.wall_seconds,
                    "precondition_wall_s": b.precondition_wall_seconds,
                    "host_requests_per_wall_s": b.host_requests_per_wall_second,
                    "sim_write_iops": b.sim_iops,
                    "waf": b.waf,
                    "peak_rss_mb": peak_rss_kb().map(|kb| kb as f64 / 1024.0),
                });
                out!("{line}");
                return Ok(());
            }
            out!(
                "nandlab bench ssd: 4 ch x 2 chips x 2 dies x 2 planes x 128 blocks x 256 pages x 8 KiB,"
            );
            out!(
                "MLC 75/750/3800 us, 25 % OP, greedy GC, QD 32, uniform random 8 KiB writes, timing-only"
            );
            if args.steady {
                out!(
                    "  precondition              full and fragmented, {:.3} s",
                    b.precondition_wall_seconds
                );
            }
            out!("  requests                  {}", b.requests);
            out!("  wall time                 {:.3} s", b.wall_seconds);
            out!(
                "  host requests / wall-s    {:.0}",
                b.host_requests_per_wall_second
            );
            out!("  simulated write IOPS      {:.0}", b.sim_iops);
            out!("  WAF                       {:.3}", b.waf);
            if let Some(kb) = peak_rss_kb() {
                out!("  peak memory (VmHWM)       {:.1} MB", kb as f64 / 1024.0);
            }
            Ok(())
        }
        "chip" => {
            let b = bench::bench_chip(args.requests.unwrap_or(2_000_000))?;
            if args.json {
                out!("{}", json_line("chip", &b));
                return Ok(());
            }
            out!("nandlab bench chip: 8 interleaved dies, 2 KB legacy writes (mlc1)");
            out!("  requests            {}", b.requests);
            out!("  flash ops           {}", b.flash_ops);
            out!("  events              {}", b.events);
            out!("  wall time           {:.3} s", b.wall_s);
            out!("  flash ops / wall-s  {:.0}", b.ops_per_wall_s);
            out!("  events / wall-s     {:.0}", b.events_per_wall_s);
            out!("  simulated time      {:.3} s", b.simulated_s);
            Ok(())
        }
        "engine" => {
            let b = bench::bench_engine(args.requests.unwrap_or(200_000))?;
            if args.json {
                out!("{}", json_line("engine", &b));
                return Ok(());
            }
            out!(
                "nandlab bench engine: co-designed engine on the miyaji2014 SSD (1 channel, 32 MB),"
            );
            out!("fill to 20 % free space, then random Insert/Delete/Update 30/30/40");
            out!("  fill inserts              {}", b.fill_inserts);
            out!("  queries                   {}", b.queries);
            out!("  wall time                 {:.3} s", b.wall_s);
            out!("  queries / wall-s          {:.0}", b.queries_per_wall_s);
            out!(
                "  engine ops / wall-s       {:.0} (fill inserts + queries)",
                b.engine_ops_per_wall_s
            );
            out!(
                "  simulated queries / s     {:.0}",
                b.simulated_queries_per_s
            );
            Ok(())
        }
        "sim" => {
            let b = bench::bench_sim(args.requests.unwrap_or(300_000))?;
            if args.json {
                out!("{}", json_line("sim", &b));
                return Ok(());
            }
            out!("nandlab bench sim: YCSB workload C (zipfian) as SiM lookups on sim2024,");
            out!("2,000 leaves x 480 keys, no page cache, one query at a time");
            out!("  queries                   {}", b.requests);
            out!("  wall time                 {:.3} s", b.wall_s);
            out!("  queries / wall-s          {:.0}", b.queries_per_wall_s);
            out!("  simulated queries / s     {:.0}", b.simulated_qps);
            Ok(())
        }
        "pcm" => bench_pcm_cmd(args.requests.unwrap_or(100_000), args.json),
        other => Err(LabError::Usage(format!(
            "unknown bench target `{other}` (expected: chip, ssd, engine, sim, sql or pcm)"
        ))),
    }
}

/// `{"target": target, ...fields of value}` on one line.
fn json_line(target: &str, value: &impl serde::Serialize) -> String {
    let mut object = serde_json::Map::new();
    object.insert("target".into(), target.into());
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(value) {
        object.extend(fields);
    }
    serde_json::Value::Object(object).to_string()
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One line on what a `[pcm]` stage did.
fn pcm_summary(r: &nandlab_lab::stack::PcmStageReport) -> String {
    let energy_mj = (r.device.read_energy_pj
        + r.device.write_energy_pj
        + r.finder.as_ref().map_or(0.0, |f| f.hash_energy_pj))
        / 1e9;
    let mut line = format!(
        "pcm ({}, log {}): {energy_mj:.3} mJ",
        r.preset,
        r.log_kind.unwrap_or("none")
    );
    if let Some(d) = &r.dedup {
        line += &format!(
            " | dedup: {} of {} pages to flash shared, {} unchanged",
            d.duplicates_shared, d.pages_checked, d.duplicates_unchanged
        );
    }
    if let Some(l) = &r.log {
        line += &format!(
            " | log: {} of {} updates logged ({} B), {} merges, {} pages to flash",
            l.new_log_block + l.existing_sector + l.new_sector,
            l.writes,
            l.log_bytes_written,
            l.merges,
            l.flash_page_writes()
        );
    }
    if r.check_failures > 0 {
        line += &format!(" | {} CHECK FAILURES", r.check_failures);
    }
    line
}

fn finish(stack: &Stack, run: &StackRun, out: Option<PathBuf>, json: bool) -> LabResult<()> {
    if json {
        out!("{}", run.metrics_json());
    }
    match &run.outcome {
        _ if json => {}
        StackOutcome::Ssd {
            run: ssd_run,
            folded_requests,
            read_preconditioned_pages,
            fitted_blocks_per_plane,
            pcm,
        } => {
            if let Some(pcm) = pcm {
                out!("{}", pcm_summary(pcm));
            }
            if let Some(blocks) = fitted_blocks_per_plane {
                out!(
                    "note: grew the device to {blocks} blocks per plane ({} bytes logical) to hold the trace",
                    ssd_run.report.logical_pages * u64::from(ssd_run.report.page_size_bytes)
                );
            }
            if *read_preconditioned_pages > 0 {
                let what = match &stack.config.workload {
                    WorkloadSection::Fio(_) => "the jobs read",
                    _ => "the trace reads",
                };
                out!(
                    "note: preconditioned {read_preconditioned_pages} pages {what} before writing"
                );
            }
            if *folded_requests > 0 {
                out!(
                    "note: {folded_requests} requests beyond the SSD's logical capacity were folded into it"
                );
            }
            out_raw!("{}", nandlab_lab::ssd::summary_text(&ssd_run.report));
        }
        StackOutcome::Engine { device, pcm, .. } => {
            if let Some(pcm) = pcm {
                out!("{}", pcm_summary(pcm));
                let c = &device.counters;
                out!(
                    "ssd (fill and queries): {} host page writes, {} flash programs (WAF {:.3}), {} erases",
                    c.host_pages_written,
                    c.flash_pages_programmed,
                    device.waf,
                    c.erases
                );
            }
            let engine = stack
                .config
                .engine
                .as_ref()
                .expect("engine workloads have [engine]");
            out!(
                "engine: IAA {} | U2DI {} | {}-byte rows | workload {}",
                engine.iaa,
                engine.u2di,
                engine.row_size_bytes,
                stack.config.workload.kind()
            );
        }
        StackOutcome::SimLookup { .. } => {}
    }
    if let (StackOutcome::SimLookup { report: r, .. }, false) = (&run.outcome, json) {
        out!(
            "sim-lookup: {} records in {} leaves ({} slots each, {} of {} SiM pages) | {} lookups, {} of loaded keys, {} hits, {} value gathers",
            r.records,
            r.leaves,
            r.slots_per_leaf,
            r.region_pages_used,
            r.region_pages,
            r.lookups,
            r.present_lookups,
            r.hits,
            r.gathers
        );
        if let Some(failure) = &r.first_failure {
            out!(
                "VERIFICATION FAILURES: {} (first: {failure})",
                r.verification_failures
            );
        }
    }
    if let (StackOutcome::Engine { .. } | StackOutcome::SimLookup { .. }, false) =
        (&run.outcome, json)
    {
        for (name, value) in &run.metrics {
            out!("  {name:24} {value:.4}");
        }
    }
    if let Some(dir) = out {
        nandlab_lab::ssd::write_stack_results(stack, run, &dir)?;
        if !json {
            out!("wrote {}", dir.display());
        }
    }
    if run.interrupted() {
        match &run.outcome {
            StackOutcome::Ssd { run, .. } => {
                eprintln!(
                    "interrupted: kept results of {} requests",
                    run.report.completed
                )
            }
            StackOutcome::Engine { metrics, .. } => eprintln!(
                "interrupted: kept results of {} queries",
                metrics.queries.total().count
            ),
            StackOutcome::SimLookup { .. } => {
                eprintln!("interrupted before the lookups: nothing measured")
            }
        }
    }
    Ok(())
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
    finish(&stack, &run, args.out, args.json)
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
    finish(&stack, &run, args.out, args.json)
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
    finish(&stack, &run, args.out, args.json)
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
