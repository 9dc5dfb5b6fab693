//! The `nandlab` command line, as a library: [`run_cli`] is the whole command. The `nandlab`
//! executable (`src/main.rs`) calls it, and so does the Python package's `nandlab` console
//! script (through `nandlab._nandlab.cli_main`), so `pip install .` puts the same command on
//! PATH.

use clap::{Parser, Subcommand};
use nandlab_lab::control::Control;
use nandlab_lab::{LabError, LabResult, console};
use std::ffi::OsString;
use std::path::PathBuf;

/// `println!` that ends the process quietly when stdout is closed (e.g. piped into `head`),
/// instead of panicking on the broken pipe; any other failed write (a full disk) is an error
/// with exit status 1.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(&e);
        }
    }};
}

/// `print!` with the same behaviour as `out!`.
macro_rules! out_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(&e);
        }
    }};
}

/// Ends the process after a failed write to stdout: quietly (status 0) when the reader went
/// away (a broken pipe), else with an error line and status 1.
fn stdout_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(1);
}

/// Standard output for what `nandlab_lab::console` formats: a failed write ends the process as
/// `out!` does.
struct QuietStdout;

impl std::io::Write for QuietStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Err(e) = std::io::stdout().write_all(buf) {
            stdout_failed(&e);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if let Err(e) = std::io::stdout().flush() {
            stdout_failed(&e);
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

mod commands;
mod crash;
mod powercut;
mod serve;
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
    Chip(commands::ChipArgs),
    /// Reproduce a paper result: `nandlab reproduce --list`, `nandlab reproduce ID --out DIR`.
    Reproduce(commands::ReproduceArgs),
    /// Run a stack config: one TOML file from chip to workload ([run], [nand], [ssd],
    /// [engine], [precondition], [workload]; docs/stack.md).
    Run(commands::RunArgs),
    /// Run a sweep: a base stack config and a [grid] or [zip] of values for any key paths;
    /// points run in parallel processes and give one row each (sweep.csv, sweep.jsonl).
    Sweep(commands::SweepArgs),
    /// (internal) Serve sweep points on stdin/stdout for `nandlab sweep`.
    #[command(hide = true)]
    SweepWorker,
    /// Replay a block trace (MSR Cambridge, blkparse, DiskSim in ms/us/ns, or native CSV) on an
    /// SSD.
    Replay(commands::ReplayArgs),
    /// Run a fio job file (a stated subset of fio's keys) on an SSD.
    Fio(commands::FioArgs),
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
    Bench(commands::BenchArgs),
    /// The main demo: a quick co-design experiment with a readable table.
    Demo,
    /// List the NAND chip presets and the SSD presets with their sources.
    Presets,
    /// Print a device's geometry, capacity and timings: a chip or SSD preset, a device file
    /// or a stack config (nothing is simulated).
    Info(commands::InfoArgs),
    /// Cut the power of a small SSD, mount it from its pages' OOB and check every LPA with the
    /// crash oracle; or sweep cut points; or time the mount scan against capacity
    /// (docs/power.md).
    Powercut(powercut::PowercutArgs),
    /// The crash harness: random stack configs × workloads × cut points × cut–recover–
    /// continue cycles, checked by the crash oracle; a failing case reproduces exactly
    /// (docs/power.md).
    Crash(crash::CrashArgs),
    /// Export the SSD over NBD (nbdkit) for real software: fio, filesystems, databases;
    /// paced in real time or free-running (docs/serve.md).
    Serve(serve::ServeArgs),
}

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;

/// Runs `nandlab ARGS` (`args[0]` is the program's name) and returns its exit status.
/// `worker_exe` is the executable that sweep and `reproduce --jobs` workers run as
/// `EXE sweep-worker` (default: this process's own executable).
pub fn run_cli(args: Vec<OsString>, worker_exe: Option<PathBuf>) -> u8 {
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, &args),
    };
    if let Some(exe) = worker_exe {
        commands::set_worker_exe(exe);
    }
    let control = Control::new();
    match &cli.command {
        Command::Reproduce(_)
        | Command::Run(_)
        | Command::Replay(_)
        | Command::Fio(_)
        | Command::Sweep(_)
        | Command::SweepWorker
        | Command::Crash(_)
        | Command::Sql(_)
        | Command::Tpcc(_)
        | Command::SqlCrash(_) => stop_on_ctrl_c(&control, None),
        Command::Bench(args) if !args.keeps_partial() => {
            stop_on_ctrl_c(&control, Some("a benchmark cut short has no result"));
        }
        Command::Bench(_) => stop_on_ctrl_c(&control, None),
        Command::Powercut(args) if !args.keeps_partial() => {
            stop_on_ctrl_c(&control, Some("one case runs to its end or not at all"));
        }
        Command::Powercut(_) => stop_on_ctrl_c(&control, None),
        _ => {}
    }
    let result = run(cli, &control);
    if let Err(e) = std::io::Write::flush(&mut std::io::stdout()) {
        stdout_failed(&e);
    }
    match result {
        Ok(()) if control.is_cancelled() => EXIT_INTERRUPTED,
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            if control.is_cancelled() {
                // a failure found before Ctrl-C is reported, but the run is still cut short
                return EXIT_INTERRUPTED;
            }
            e.exit_status()
        }
    }
}

/// A command-line error as one line, like every other error (clap's own is several: the
/// error, a tip, the usage and a pointer to --help); --help and --version print as usual.
fn usage_error(e: &clap::Error, args: &[OsString]) -> u8 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return 0;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            eprintln!("error: a command is required (`nandlab --help` lists them)");
            return 2;
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
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // (only where clap did not take it as a number: an option's own parser names its bounds)
    let misread =
        e.kind() == clap::error::ErrorKind::UnknownArgument || message.contains("invalid digit");
    let negative = args.windows(2).find(|pair| {
        misread
            && pair[0].starts_with("--")
            && pair[1].parse::<f64>().is_ok_and(|v| v < 0.0)
            && message.contains(&format!("'{}'", pair[1]))
    });
    if let Some(pair) = negative {
        eprintln!(
            "error: {}: {} is negative; it takes a value of at least 0 (see --help)",
            pair[0], pair[1]
        );
        return 2;
    }
    let hint = " (see --help)";
    eprintln!("error: {message}{hint}");
    2
}

/// The first Ctrl-C cancels `control` (the run stops admitting work and writes what it has);
/// a second one exits at once. With `at_once` (a run that keeps nothing when cut short: the
/// reason), the first Ctrl-C says so and exits with status 130. Without a handler (it could not
/// be installed), Ctrl-C keeps its default: the process ends at once.
fn stop_on_ctrl_c(control: &Control, at_once: Option<&'static str>) {
    let control = control.clone();
    let installed = ctrlc::set_handler(move || {
        if let Some(reason) = at_once {
            eprintln!("interrupted: nothing kept ({reason})");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
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
        Command::Chip(args) => commands::chip(args),
        Command::Reproduce(args) => commands::reproduce(args, control),
        Command::Run(args) => commands::run_stack(args, control),
        Command::Sweep(args) => commands::sweep(args, control),
        Command::SweepWorker => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            nandlab_lab::sweep_run::serve_worker(stdin, stdout, control)
        }
        Command::Replay(args) => commands::replay(args, control),
        Command::Fio(args) => commands::fio(args, control),
        Command::Sql(args) => sql::sql(args, control),
        Command::Tpcc(args) => sql::tpcc(args, control),
        Command::SqlCrash(args) => sql::sql_crash(args, control),
        Command::Bench(args) => commands::bench_cmd(args, control),
        Command::Demo => console::demo(&mut stdout()),
        Command::Powercut(args) => powercut::powercut(args, control),
        Command::Crash(args) => crash::run(args, control),
        Command::Serve(args) => serve::serve(args),
        Command::Info(args) => commands::info(args),
        Command::Presets => {
            out_raw!("{}", console::presets_text()?);
            Ok(())
        }
    }
}
