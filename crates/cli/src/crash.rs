//! `nandlab crash`: the crash harness (docs/power.md): seeded random stack configs ×
//! workloads × cut points × cut–recover–continue cycles, checked by the crash oracle; a
//! failing case prints its reproduction and a shrunk version.

use crate::usage;
use clap::Args;
use nandlab_lab::control::Control;
use nandlab_lab::power::crash::{CrashSummary, Draw, Mutation};
use nandlab_lab::power::{crash_by, draw_case_by, run_drawn};
use nandlab_lab::{LabError, LabResult};

#[derive(Args, Debug)]
pub struct CrashArgs {
    /// Cut–recover cycles to check (cases are drawn until this many have run).
    #[arg(long, default_value_t = 10_000)]
    cuts: u64,
    /// Seed of the drawn cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run only case N of the seed (a reproduction) and print it in full.
    #[arg(long)]
    case: Option<u64>,
    /// A deliberately broken firmware the oracle must catch: none, no-sequence,
    /// paired-pages-ignored, ack-before-durable, checkpoint-before-data, trim-log-skipped or
    /// skip-newest-page.
    #[arg(long, default_value = "none")]
    mutation: String,
    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,
    /// Crash the paper-000 engine instead (crash-consistent mode, flushes, reopen from the
    /// recovered device; docs/engine.md "Durability"); `--mutation` then names an engine
    /// mutation: none, reuse-moved-slots, keep-deleted-rows or no-device-flush.
    #[arg(long)]
    engine: bool,
    /// Also draw a cached mapping table (DFTL) on the page-mapping cases, and a 1-2-block SLC
    /// cache on half of them (the standard draw's cases are otherwise unchanged).
    #[arg(long)]
    controller: bool,
    /// Draw zoned devices instead (the zoned mapping; the host writes zones at their write
    /// pointers and resets them; the mounts rebuild every zone's write pointer and state);
    /// `--mutation` then takes none, no-sequence or skip-newest-page.
    #[arg(long, conflicts_with_all = ["engine", "controller"])]
    zoned: bool,
}

pub fn run(args: CrashArgs, control: &Control) -> LabResult<()> {
    if args.engine && args.controller {
        return Err(usage(
            "--controller draws SSD devices for the FTL harness, not with --engine".into(),
        ));
    }
    if args.engine {
        return run_engine(args, control);
    }
    let mutation = Mutation::parse(&args.mutation).map_err(usage)?;
    let draw = if args.controller {
        Draw::Controller
    } else if args.zoned {
        if !matches!(
            mutation,
            Mutation::None | Mutation::NoSequence | Mutation::SkipNewestPage
        ) {
            return Err(usage(format!(
                "--mutation {}: --zoned takes none, no-sequence or skip-newest-page",
                args.mutation
            )));
        }
        Draw::Zoned
    } else {
        Draw::Standard
    };
    if let Some(index) = args.case {
        let drawn = draw_case_by(args.seed, index, mutation, draw);
        let outcome = run_drawn(&drawn).map_err(|e| {
            let case = serde_json::to_string(&drawn).unwrap_or_default();
            usage(format!("{e} (the case: {case})"))
        })?;
        let both = serde_json::json!({ "case": drawn, "outcome": outcome });
        crate::print_json(&both)?;
        return violations_found(outcome.violations.total(), "the case");
    }
    if args.cuts == 0 {
        return Err(usage("--cuts 0: must be at least 1".into()));
    }
    let s: CrashSummary = crash_by(
        args.seed,
        args.cuts,
        mutation,
        draw,
        progress(args.cuts, control),
    )
    .map_err(usage)?;
    interrupted(&s.cycles, control);
    if args.json {
        crate::print_json(&s)?;
        if mutation != Mutation::None && !control.is_cancelled() {
            uncaught(&args.mutation, s.failing_cases, args.cuts);
        }
        return failing_cases(s.failing_cases);
    }
    out!(
        "seed {}{}: {} cases, {} cut-recover cycles, {} failing cases",
        s.seed,
        s.mutation
            .map(|m| format!(" (mutation {m:?})"))
            .unwrap_or_default(),
        s.cases,
        s.cycles,
        s.failing_cases
    );
    out!(
        "violations: lost {}  resurrected {}  corrupted {}",
        s.violations.lost,
        s.violations.resurrected,
        s.violations.corrupted
    );
    out!(
        "summed over cycles: torn programs {}  damaged lower pages {}  interrupted erases {}  volatile pages lost {}; largest mount {:.1} µs",
        s.torn_programs,
        s.damaged_lower_pages,
        s.interrupted_erases,
        s.volatile_pages_lost,
        s.recovery_time_us_max
    );
    out!(
        "mounts from a map checkpoint {}; pages read by the mounts {} against {} by full scans; trim-log records {}; cases at queue depth > 1: {}; with interleaved GC: {} (urgent GC: {}, {} GC ops passed host ops as urgent); with multiplane merging: {} (superblocks: {}); cache mode: {}",
        s.checkpoint_mounts,
        s.recovery_pages_read,
        s.full_scan_pages_read,
        s.trim_records_written,
        s.cases_deep_queue,
        s.cases_interleaved_gc,
        s.cases_urgent_gc,
        s.urgent_gc_passes,
        s.cases_multiplane,
        s.cases_superblock,
        s.cases_cache_mode
    );
    if args.controller {
        out!(
            "controller draw: cases with a cached mapping table (DFTL) {}, with an SLC cache {}",
            s.cases_dftl,
            s.cases_slc_cache
        );
    }
    if let Some(z) = &s.zones {
        out!(
            "zoned draw: {} cases; zones after the mounts: empty {}  closed {}  full {}; holes below a write pointer {}",
            s.cases_zoned,
            z.empty,
            z.closed,
            z.full,
            z.holes
        );
    }
    if let Some(f) = &s.first_failure {
        out!(
            "first failing case: {} (cycle {:?}, cut {:?}); reproduce: nandlab crash --seed {} --case {}{}",
            f.drawn.index,
            f.outcome.failing_cycle,
            f.outcome.failing_cut,
            s.seed,
            f.drawn.index,
            if mutation == Mutation::None {
                String::new()
            } else {
                format!(" --mutation {}", args.mutation)
            } + if args.controller { " --controller" } else { "" }
                + if args.zoned { " --zoned" } else { "" }
        );
        out!(
            "shrunk: {} requests, {} cycles: {}",
            f.shrunk.case.workload.requests,
            f.shrunk.cycles,
            serde_json::to_string(&f.shrunk.case).map_err(|e| usage(e.to_string()))?
        );
        for e in &f.outcome.violations.examples {
            out!("  {e}");
        }
    }
    if mutation != Mutation::None && !control.is_cancelled() {
        uncaught(&args.mutation, s.failing_cases, args.cuts);
    }
    failing_cases(s.failing_cases)
}

/// A `note:` on stderr when a deliberately broken firmware went uncaught: the run then tested
/// nothing, and its exit status 0 must not read as the oracle catching the mutation.
fn uncaught(mutation: &str, failing: u64, cuts: u64) {
    if failing == 0 {
        eprintln!(
            "note: the mutation {} went uncaught in {cuts} cut-recover cycles \
             (more --cuts may catch it)",
            mutation.trim()
        );
    }
}

/// `Ok` when no case failed; else the error that gives exit status 1.
fn failing_cases(failing: u64) -> LabResult<()> {
    if failing == 0 {
        return Ok(());
    }
    Err(LabError::Failed(format!(
        "the crash oracle found violations in {failing} case{}",
        if failing == 1 { "" } else { "s" }
    )))
}

/// `Ok` when `violations` is 0; else the error that gives exit status 1.
pub fn violations_found(violations: u64, what: &str) -> LabResult<()> {
    if violations == 0 {
        return Ok(());
    }
    Err(LabError::Failed(format!(
        "the crash oracle found {violations} violation{} in {what}",
        if violations == 1 { "" } else { "s" }
    )))
}

fn run_engine(args: CrashArgs, control: &Control) -> LabResult<()> {
    use nandlab_lab::power::engine::{
        EngineMutation, draw_engine_case, engine_crash, run_engine_case,
    };
    let mutation =
        EngineMutation::parse(&args.mutation).map_err(|e| usage(format!("--mutation: {e}")))?;
    if let Some(index) = args.case {
        let case = draw_engine_case(args.seed, index, mutation);
        let outcome = run_engine_case(&case).map_err(usage)?;
        crate::print_json(&serde_json::json!({ "case": case, "outcome": outcome }))?;
        return violations_found(outcome.violations.total(), "the case");
    }
    if args.cuts == 0 {
        return Err(usage("--cuts 0: must be at least 1".into()));
    }
    let s = engine_crash(args.seed, args.cuts, mutation, progress(args.cuts, control))
        .map_err(usage)?;
    interrupted(&s.cycles, control);
    if args.json {
        crate::print_json(&s)?;
        if mutation != EngineMutation::None && !control.is_cancelled() {
            uncaught(&args.mutation, s.failing_cases, args.cuts);
        }
        return failing_cases(s.failing_cases);
    }
    out!(
        "engine, seed {}{}: {} cases ({} conventional, {} co-designed, {} U2DI only), {} cut-recover-reopen cycles, {} failing cases",
        s.seed,
        s.mutation
            .map(|m| format!(" (mutation {m:?})"))
            .unwrap_or_default(),
        s.cases,
        s.cases_conventional,
        s.cases_co_designed,
        s.cases_u2di_only,
        s.cycles,
        s.failing_cases
    );
    out!(
        "violations: lost {}  stale {}  unknown {} (of which garbage {})",
        s.violations.lost,
        s.violations.stale,
        s.violations.unknown,
        s.garbage
    );
    out!(
        "queries {}  flushes {}  durable rows checked {}; summed over cycles: torn programs {}  damaged lower pages {}  interrupted erases {}  volatile pages lost {}",
        s.queries,
        s.flushes,
        s.durable_rows_checked,
        s.torn_programs,
        s.damaged_lower_pages,
        s.interrupted_erases,
        s.volatile_pages_lost
    );
    if let Some(f) = &s.first_failure {
        out!(
            "first failing case: {} (cycle {:?}); reproduce: nandlab crash --engine --seed {} --case {}{}",
            f.0.index,
            f.1.failing_cycle,
            s.seed,
            f.0.index,
            if mutation == EngineMutation::None {
                String::new()
            } else {
                format!(" --mutation {}", args.mutation)
            }
        );
        for e in &f.1.violations.examples {
            out!("  {e}");
        }
    }
    if mutation != EngineMutation::None && !control.is_cancelled() {
        uncaught(&args.mutation, s.failing_cases, args.cuts);
    }
    failing_cases(s.failing_cases)
}

/// A progress bar of cut–recover cycles out of `cuts` (on a terminal), which breaks once
/// `control` is cancelled (Ctrl-C): the run stops after the case in flight.
fn progress(cuts: u64, control: &Control) -> impl FnMut(u64) -> std::ops::ControlFlow<()> + '_ {
    let mut step = nandlab_lab::progress::step_progress("cut-recover cycles", control);
    move |cycles| step(cycles.min(cuts), cuts)
}

/// After a run stopped by Ctrl-C: says so on stderr (the summary of the cases run so far and
/// any failing case's reproduction line follow on stdout; the exit status is 130).
fn interrupted(cycles: &u64, control: &Control) {
    if control.is_cancelled() {
        eprintln!("interrupted: kept results of {cycles} cut-recover cycles");
    }
}
