//! `nandlab sql`: SQL from a file or stdin on a SQLite database on a simulated SSD.

use clap::Args;
use nandlab_lab::control::Control;
use nandlab_lab::sql::{Interrupt, JournalMode, SqlError, SqlOptions, StatementOutput};
use nandlab_lab::{LabError, LabResult};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct SqlArgs {
    /// SQL script to run (default or `-`: standard input).
    file: Option<PathBuf>,
    /// The SSD: a preset (`nandlab presets`), a device file ([nand] and [ssd]) or a stack
    /// config (its device and [run] seed). Page bytes are always kept (payload = "full").
    #[arg(long, default_value = nandlab_lab::sql::DEFAULT_DEVICE)]
    device: String,
    /// delete, truncate, persist, wal (in exclusive locking mode), off, or atomic (batch
    /// atomic writes on the transactional FTL: no journal).
    #[arg(long, default_value = "delete")]
    journal_mode: String,
    /// SQLite page size in bytes (PRAGMA page_size; default 4096).
    #[arg(long)]
    page_size: Option<u32>,
    /// PRAGMA cache_size (pages, or KiB if negative; default -2000).
    #[arg(long, allow_hyphen_values = true)]
    cache_size: Option<i64>,
    /// PRAGMA synchronous: off, normal, full (default) or extra.
    #[arg(long)]
    synchronous: Option<String>,
    /// Seed of the SSD and of the VFS's randomness (default: the stack config's, else 0).
    #[arg(long)]
    seed: Option<u64>,
    /// One JSON object: results, metrics, files.
    #[arg(long)]
    json: bool,
}

/// The CLI's Ctrl-C flag as a database's interrupt check.
fn interrupt_on(control: &Control) -> Option<Interrupt> {
    let control = control.clone();
    Some(Arc::new(move || control.is_cancelled()))
}

/// After a run stopped by Ctrl-C: says what was kept (the exit status is 130).
fn interrupted(what: std::fmt::Arguments<'_>) {
    eprintln!("interrupted: {what}");
}

pub fn sql(args: SqlArgs, control: &Control) -> LabResult<()> {
    let script = read_script(args.file.as_ref())?;
    let journal_mode: JournalMode = args.journal_mode.parse().map_err(usage)?;
    let options = SqlOptions {
        journal_mode,
        page_size_bytes: args.page_size,
        cache_size: args.cache_size,
        synchronous: args.synchronous.clone(),
        ..SqlOptions::default()
    };
    let mut db = nandlab_lab::sql::open_device(&args.device, args.seed, options)?;
    db.set_interrupt(interrupt_on(control)).map_err(usage)?;
    let mut outputs = Vec::new();
    let mut progress = nandlab_lab::progress::count_progress("statements", control);
    match db.run_script_observed(&script, &mut outputs, &mut |n| progress(n as u64)) {
        Ok(()) => {}
        Err(SqlError::Interrupted) => interrupted(format_args!(
            "ran {} statements (the one running was rolled back)",
            outputs.len()
        )),
        Err(e) => return Err(usage(e)),
    }
    drop(progress);
    db.set_interrupt(None).map_err(usage)?;
    let metrics = db.metrics().map_err(usage)?;
    let files = db.disk().map_err(usage)?.file_sizes();
    if args.json {
        let value = serde_json::json!({
            "device": args.device,
            "results": outputs,
            "metrics": metrics,
            "files": files.iter().map(|(n, s)| serde_json::json!({"name": n, "size_bytes": s})).collect::<Vec<_>>(),
        });
        out!("{value}");
        return Ok(());
    }
    for output in outputs.iter().filter(|o| !o.columns.is_empty()) {
        print_rows(output);
    }
    out!(
        "-- device {} | journal {} | files {}",
        args.device,
        metrics.journal_mode,
        files
            .iter()
            .map(|(n, s)| format!("{n} ({s} B)"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (name, value) in metrics.rows() {
        out!("--   {name:30} {value:.3}");
    }
    Ok(())
}

fn print_rows(output: &StatementOutput) {
    out!("{}", output.columns.join("|"));
    for row in &output.rows {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        out!("{}", cells.join("|"));
    }
    out!("");
}

fn read_script(file: Option<&PathBuf>) -> LabResult<String> {
    match file {
        Some(path) if path.as_os_str() != "-" => {
            std::fs::read_to_string(path).map_err(|source| LabError::Read {
                path: path.display().to_string(),
                source,
            })
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|source| LabError::Read {
                    path: "standard input".into(),
                    source,
                })?;
            Ok(text)
        }
    }
}

/// A usage error (exit status 2) for bad input, a failure (1) for a run that failed on good
/// input (an SQLite I/O error, a full or failing device).
fn usage(e: nandlab_lab::sql::SqlError) -> LabError {
    if e.is_input_error() {
        LabError::Usage(e.to_string())
    } else {
        LabError::Failed(e.to_string())
    }
}

/// `nandlab bench sql`: wall time through the VFS vs SQLite in memory, WAL and DELETE.
pub fn bench(
    device: Option<&str>,
    transactions: u64,
    json: bool,
    control: &Control,
) -> LabResult<()> {
    let device = device.unwrap_or(nandlab_lab::sql::DEFAULT_DEVICE);
    if !json {
        out!(
            "nandlab bench sql: {transactions} transactions (BEGIN, 4 upserts of 200-byte rows over 10,000 keys, 1 lookup, COMMIT)"
        );
        out!("on {device} (full payload) vs SQLite's in-memory database");
    }
    for mode in [JournalMode::Wal, JournalMode::Delete] {
        let spec = nandlab_lab::sql::device_spec(device)?;
        let mut progress = nandlab_lab::progress::step_progress("transactions", control);
        let b = match nandlab_lab::sql::bench::bench_sql_progress(
            &spec,
            mode,
            transactions,
            &mut |done, total| progress(done, total),
        ) {
            Ok(b) => b,
            Err(SqlError::Interrupted) => {
                interrupted(format_args!(
                    "journal {mode} cut short (a benchmark cut short has no result)"
                ));
                return Ok(());
            }
            Err(e) => return Err(usage(e)),
        };
        if json {
            out!("{}", serde_json::json!({"target": "sql", "result": b}));
            continue;
        }
        out!("  journal {}", b.journal_mode);
        out!("    wall time on the SSD      {:.3} s", b.wall_s_device);
        out!("    wall time in memory       {:.3} s", b.wall_s_memory);
        out!("    overhead                  {:.2}x", b.overhead_ratio);
        out!(
            "    transactions / wall-s     {:.0}",
            b.transactions_per_wall_s
        );
        out!(
            "    transactions / sim-s      {:.0}",
            b.transactions_per_sim_s
        );
        out!(
            "    commit p99 (simulated)    {:.1} us",
            b.commit_latency_us_p99
        );
        out!("    WAF                       {:.3}", b.waf);
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct TpccArgs {
    /// Warehouses (1–1000).
    #[arg(long, default_value_t = 1)]
    warehouses: i64,
    /// Terminals (1 to 10 per warehouse; each works on one district).
    #[arg(long, default_value_t = 10)]
    terminals: i64,
    /// Transactions to run (after loading).
    #[arg(long, default_value_t = 2000)]
    transactions: u64,
    /// A hundredth of TPC-C's population (1,000 items, 30 customers and orders per district).
    #[arg(long)]
    small: bool,
    /// The SSD: a preset, a device file or a stack config (payload = "full" is forced).
    #[arg(long, default_value = nandlab_lab::sql::DEFAULT_DEVICE)]
    device: String,
    /// delete, truncate, persist, wal, off or atomic (transactional FTL).
    #[arg(long, default_value = "wal")]
    journal_mode: String,
    /// Seed of the population, the transaction stream and the SSD.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// `nandlab tpcc`: the TPC-C-like workload on SQLite on a simulated SSD.
pub fn tpcc(args: TpccArgs, control: &Control) -> LabResult<()> {
    let config = nandlab_lab::sql::tpcc::TpccConfig {
        warehouses: args.warehouses,
        terminals: args.terminals,
        transactions: args.transactions,
        seed: args.seed,
        scale: if args.small {
            nandlab_lab::sql::tpcc::TpccScale::small()
        } else {
            nandlab_lab::sql::tpcc::TpccScale::standard()
        },
    };
    config.validate().map_err(usage)?;
    let options = SqlOptions {
        journal_mode: args.journal_mode.parse().map_err(usage)?,
        ..SqlOptions::default()
    };
    let mut db = nandlab_lab::sql::open_device(&args.device, Some(args.seed), options)?;
    db.set_interrupt(interrupt_on(control)).map_err(usage)?;
    // a spinner while the tables load (no count of its own), the transactions' bar after:
    // the bar drawn from the start showed "transactions 0/0" through the load
    let mut loading = Some(nandlab_lab::progress::Spinner::new(
        "tpcc: loading the tables",
    ));
    let mut progress = None;
    let r = match nandlab_lab::sql::tpcc::run_tpcc_with(&mut db, &config, &mut |done, total| {
        loading.take();
        progress
            .get_or_insert_with(|| nandlab_lab::progress::step_progress("transactions", control))(
            done, total,
        )
    }) {
        Ok(r) => r,
        Err(SqlError::Interrupted) => {
            interrupted(format_args!("during the load: no transactions ran"));
            return Ok(());
        }
        Err(e) => return Err(usage(e)),
    };
    drop(progress);
    if r.interrupted {
        let done: u64 = r.transactions.iter().map(|(_, n)| n).sum();
        interrupted(format_args!(
            "kept results of {done} of {} transactions",
            config.transactions
        ));
    }
    if args.json {
        out!("{}", serde_json::to_string(&r).expect("reports serialize"));
    } else {
        out!(
            "nandlab tpcc: {} warehouses, {} terminals, {} transactions, journal {}, device {}",
            config.warehouses,
            config.terminals,
            config.transactions,
            r.metrics.journal_mode,
            args.device
        );
        out!("  tpmC (simulated)              {:.1}", r.tpmc);
        out!("  simulated time                {:.3} s", r.sim_time_s);
        let mix: Vec<String> = r
            .transactions
            .iter()
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        out!("  mix                           {}", mix.join(", "));
        out!("  new-order rollbacks           {}", r.new_order_rollbacks);
        out!(
            "  wall time load / run          {:.2} s / {:.2} s",
            r.wall_s_load,
            r.wall_s_run
        );
        out!(
            "  transactions / wall-s         {:.0}",
            r.transactions_per_wall_s
        );
        for (name, value) in r.metrics.rows() {
            out!("  {name:30} {value:.3}");
        }
        match r.consistency_violations.len() {
            0 => out!("  consistency conditions 1-4    hold"),
            n => out!("  consistency conditions 1-4    {n} violations"),
        }
    }
    for v in &r.consistency_violations {
        eprintln!("consistency: {v}");
    }
    if r.consistency_violations.is_empty() {
        Ok(())
    } else {
        Err(LabError::Failed(format!(
            "TPC-C consistency conditions violated ({})",
            r.consistency_violations.len()
        )))
    }
}

#[derive(Args, Debug)]
pub struct SqlCrashArgs {
    /// delete, truncate, persist, wal, off (SQLite promises nothing there) or atomic; `all`
    /// runs each in turn.
    #[arg(long, default_value = "all")]
    journal_mode: String,
    /// Power cuts per journal mode (each a run from a new device up to its cut).
    #[arg(long, default_value_t = 100)]
    cuts: u32,
    /// Transactions after the setup transaction.
    #[arg(long, default_value_t = 20)]
    transactions: u32,
    /// The SSD (a crash-capable device: blocking GC, no multiplane; MLC/TLC need
    /// paired_page_padding). Default: a small bench-ssd (`nandlab_lab::sql::CRASH_DEVICE`).
    #[arg(long)]
    device: Option<String>,
    /// Seed of the workload, the cut points and the cuts.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the cuts fall: `requests` (inside a device request) or `commits` (between
    /// transactions, after an acknowledged commit: exactly the acknowledged transactions must
    /// come back).
    #[arg(long, default_value = "requests")]
    cut_at: String,
    /// The mount after a cut: correct, or a deliberately broken one the checks must catch
    /// (ignore-crc, lowest-sequence-wins, no-sequence, skip-newest-page).
    #[arg(long, default_value = "correct")]
    recovery: String,
    /// One JSON array instead of the table.
    #[arg(long)]
    json: bool,
}

/// `nandlab sql-crash`: crash tests of SQLite on the simulated SSD (docs/sql.md).
pub fn sql_crash(args: SqlCrashArgs, control: &Control) -> LabResult<()> {
    use nandlab_lab::sql::CRASH_DEVICE;
    use nandlab_lab::sql::crash::{CrashOptions, CutAt, run_crash_progress};
    let modes: Vec<JournalMode> = if args.journal_mode.trim().eq_ignore_ascii_case("all") {
        JournalMode::ALL.to_vec()
    } else {
        vec![args.journal_mode.parse().map_err(usage)?]
    };
    if args.cuts == 0 {
        return Err(LabError::Usage("--cuts 0: at least one cut".into()));
    }
    let cut_at: CutAt = args.cut_at.parse().map_err(crate::usage)?;
    let recovery = nandlab_lab::sql::crash::RecoveryVariant::parse(args.recovery.trim())
        .map_err(|e| crate::usage(e.replace("recovery = ", "--recovery ")))?;
    let device = nandlab_lab::sql::device_spec(args.device.as_deref().unwrap_or(CRASH_DEVICE))?;
    let mut reports = Vec::new();
    for mode in modes {
        let o = CrashOptions {
            journal_mode: mode,
            transactions: args.transactions,
            cuts: args.cuts,
            seed: args.seed,
            cut_at,
            recovery,
        };
        if control.is_cancelled() {
            break;
        }
        let mut progress = nandlab_lab::progress::step_progress("power cuts", control);
        let r = run_crash_progress(&device, &o, &mut |done, total| {
            progress(u64::from(done), u64::from(total))
        })
        .map_err(usage)?;
        drop(progress);
        if r.interrupted {
            interrupted(format_args!(
                "kept results of {} cuts of journal mode {}",
                r.cuts, r.journal_mode
            ));
        }
        if !args.json {
            out!(
                "{:9} sync {:5} cuts {:5}  violations {:4}{}  in-flight committed/lost {}/{}  torn programs {}  uncommitted pages discarded {}",
                r.journal_mode,
                r.synchronous,
                r.cuts,
                r.violations,
                if r.sqlite_promises {
                    ""
                } else {
                    " (no promise)"
                },
                r.in_flight_committed,
                r.in_flight_lost,
                r.torn_programs,
                r.pages_uncommitted
            );
            for e in &r.examples {
                out!("    {e}");
            }
        }
        reports.push(r);
    }
    if args.json {
        out!(
            "{}",
            serde_json::to_string(&reports).expect("reports serialize")
        );
    }
    crash_verdict(&reports, recovery, args.recovery.trim(), control)
}

/// A failure when SQLite's promise was broken; else `Ok`, with a `note:` when a deliberately
/// broken recovery went uncaught (exit status 0 must not read as the checks catching it).
fn crash_verdict(
    reports: &[nandlab_lab::sql::crash::CrashReport],
    recovery: nandlab_lab::sql::crash::RecoveryVariant,
    recovery_name: &str,
    control: &Control,
) -> LabResult<()> {
    let broken = reports
        .iter()
        .any(|r| r.sqlite_promises && r.violations > 0);
    if broken {
        return Err(LabError::Failed(
            "sql-crash: violations where SQLite promises durability (listed above)".into(),
        ));
    }
    if recovery != nandlab_lab::sql::crash::RecoveryVariant::Correct && !control.is_cancelled() {
        eprintln!(
            "note: the broken recovery {recovery_name} went uncaught where SQLite promises \
             durability (more --cuts may catch it)"
        );
    }
    Ok(())
}
