//! Crash tests of SQLite on the simulated SSD (issue 17, item 6): run transactions, cut the
//! power inside a device request (issue 14's cuts: torn programs, damaged paired pages,
//! interrupted erases), mount the recovered device (`Ssd::recover_cut`, `Ssd::load_recovered`, the
//! VFS's file table), reopen SQLite and check that
//! - `PRAGMA integrity_check` is `ok`;
//! - every acknowledged transaction is present and no other but the one the cut fell in:
//!   the log table holds exactly the transactions `1..=m`, `m` = acknowledged commits, or one
//!   more when the cut fell inside the next transaction;
//! - the transfers between accounts are atomic (the balances sum to their initial total).
//!
//! With [`CutAt::Commits`] the cuts fall between transactions instead (after an acknowledged
//! commit, before the next transaction's first request): the database must come back with
//! exactly the acknowledged transactions. A cut inside a request leaves the newest pages to
//! the transaction in flight, which SQLite may lose; a cut after a commit leaves them to the
//! acknowledged one, so a mount that drops them (the broken `skip-newest-page` recovery) is
//! caught there.
//!
//! The device must keep the power-loss contract the checks assume: on cells with paired pages
//! (MLC, TLC, QLC) the page mapping's paired-page padding, else a cut damages pages of
//! acknowledged writes and SQLite would be blamed for the FTL's gap ([`check_contract`]).
//!
//! The workload, the cut points and the cut's random choices are drawn from the seed: a run
//! is deterministic. `journal_mode = off` is run too, but SQLite makes no promise there (a
//! cut in a commit can corrupt the database): its findings are reported apart.

use crate::ArmedCut;
use nandlab_ftl::Ssd;
use nandlab_ftl::power::CutConfig;
pub use nandlab_ftl::power::RecoveryVariant;
use nandlab_sql::disk::SimDisk;
use nandlab_sql::{JournalMode, SqlDb, SqlError, SqlOptions, SqlResult, SqlValue, SsdSource};
use serde::Serialize;
use std::ops::ControlFlow;

/// Accounts in the workload's table.
const ACCOUNTS: i64 = 100;
/// Each account's initial balance.
const BALANCE: i64 = 1000;

/// What to run (on a device given beside it: `nandlab_lab::sql::CRASH_DEVICE` is the usual one).
#[derive(Clone, Debug)]
pub struct CrashOptions {
    pub journal_mode: JournalMode,
    /// Transactions after the setup transaction.
    pub transactions: u32,
    /// Power cuts (each one a run from a new device up to its cut).
    pub cuts: u32,
    pub seed: u64,
    /// Where the cuts fall.
    pub cut_at: CutAt,
    /// The mount after each cut (anything but `Correct` is a broken FTL the checks must
    /// catch).
    pub recovery: RecoveryVariant,
}

impl Default for CrashOptions {
    fn default() -> Self {
        CrashOptions {
            journal_mode: JournalMode::Delete,
            transactions: 20,
            cuts: 20,
            seed: 0,
            cut_at: CutAt::Requests,
            recovery: RecoveryVariant::Correct,
        }
    }
}

/// Where a crash run's power cuts fall.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutAt {
    /// Inside a device request drawn among the workload's (torn programs, damaged paired
    /// pages, interrupted erases).
    #[default]
    Requests,
    /// Between transactions: after the acknowledged commit of a transaction drawn among the
    /// workload's (the setup included), with no request in flight.
    Commits,
}

impl std::str::FromStr for CutAt {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "requests" => Ok(CutAt::Requests),
            "commits" => Ok(CutAt::Commits),
            _ => Err(format!("--cut-at {text:?}: expected requests or commits")),
        }
    }
}

/// Refuses a device outside the power-loss contract the checks assume: cells with paired
/// pages (MLC, TLC, QLC) need the page mapping's paired-page padding (a cut programming an
/// upper page damages its lower page, which may hold an acknowledged write).
pub fn check_contract(ssd: &Ssd) -> SqlResult<()> {
    let bits = ssd.nand().timing().layout.page_type_count();
    if bits > 1 && !ssd.pads_paired_pages() {
        return Err(SqlError::Usage(format!(
            "sql-crash: the device has {bits} bits per cell without paired-page padding, so a cut damages lower pages of acknowledged writes (the FTL's gap, not SQLite's); set [ssd.mapping] paired_page_padding = true (page mapping) or use SLC cells"
        )));
    }
    Ok(())
}

/// What the cuts found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CrashReport {
    pub journal_mode: String,
    /// `PRAGMA synchronous` the runs used.
    pub synchronous: String,
    /// Whether SQLite promises durability and atomicity in this mode (not with `off`).
    pub sqlite_promises: bool,
    pub cuts: u32,
    /// Device requests of the whole workload (the cut points are drawn among them).
    pub requests: u64,
    /// Cuts that fell inside a transaction that then turned out committed / not committed.
    pub in_flight_committed: u32,
    pub in_flight_lost: u32,
    /// Torn programs and interrupted erases over the cuts.
    pub torn_programs: u64,
    pub interrupted_erases: u64,
    /// Pages of uncommitted device transactions the mounts discarded (atomic mode).
    pub pages_uncommitted: u64,
    /// Cuts whose check failed, and up to ten examples.
    pub violations: u32,
    pub examples: Vec<String>,
    /// The run was stopped early (Ctrl-C): `cuts` counts those done.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// One step of the workload: SQL and the transaction it belongs to (0: setup).
struct Step {
    tx: u32,
    sql: String,
}

fn workload(transactions: u32, seed: u64) -> Vec<Step> {
    let mut state = seed ^ 0x5DEE_CE66_D1CE_5EED;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut steps = vec![Step {
        tx: 0,
        sql: format!(
            "BEGIN; CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER NOT NULL, pad BLOB); \
             CREATE TABLE log(tx INTEGER PRIMARY KEY, note BLOB); \
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ACCOUNTS}) \
             INSERT INTO acct SELECT i, {BALANCE}, zeroblob(300) FROM n; COMMIT;"
        ),
    }];
    for tx in 1..=transactions {
        let mut sql = String::from("BEGIN; ");
        for _ in 0..3 {
            let (a, b, x) = (
                1 + next(ACCOUNTS as u64),
                1 + next(ACCOUNTS as u64),
                next(50),
            );
            sql += &format!(
                "UPDATE acct SET bal = bal - {x} WHERE id = {a}; UPDATE acct SET bal = bal + {x} WHERE id = {b}; "
            );
        }
        sql += &format!(
            "INSERT INTO log VALUES ({tx}, zeroblob({})); ",
            100 + next(3000)
        );
        if tx % 4 == 0 {
            sql += &format!(
                "UPDATE acct SET pad = zeroblob({}) WHERE id % 10 = {}; ",
                100 + next(900),
                next(10)
            );
        }
        sql += "COMMIT;";
        steps.push(Step { tx, sql });
    }
    steps
}

#[cfg(test)]
fn options(mode: JournalMode) -> (SqlOptions, &'static str) {
    options_with(mode, None)
}

fn options_with(
    mode: JournalMode,
    synchronous: Option<&'static str>,
) -> (SqlOptions, &'static str) {
    // DELETE mode commits by deleting the journal; SQLite syncs that deletion only with
    // synchronous = EXTRA (with FULL a cut may roll the last commit back: SQLite's own docs)
    let sync = synchronous.unwrap_or(match mode {
        JournalMode::Delete | JournalMode::Atomic => "extra",
        _ => "full",
    });
    (
        SqlOptions {
            journal_mode: mode,
            synchronous: Some(sync.into()),
            ..SqlOptions::default()
        },
        sync,
    )
}

/// A new traced device with the database opened on it.
#[cfg(test)]
fn open_traced(device: &dyn SsdSource, o: &CrashOptions) -> SqlResult<(SqlDb, u64)> {
    open_traced_with(device, o, None)
}

fn open_traced_with(
    device: &dyn SsdSource,
    o: &CrashOptions,
    sync: Option<&'static str>,
) -> SqlResult<(SqlDb, u64)> {
    let (mut ssd, seed) = device.new_ssd(Some(o.seed))?;
    check_contract(&ssd)?;
    ssd.start_power_trace()?;
    let db = SqlDb::open(ssd, seed, options_with(o.journal_mode, sync).0)?;
    Ok((db, seed))
}

/// Runs the workload until the power is lost; returns the transactions acknowledged and the
/// one the cut fell in (if any).
fn run_workload(db: &mut SqlDb, steps: &[Step]) -> (i64, Option<u32>) {
    run_workload_until(db, steps, None)
}

/// Arms a power cut on `disk`'s requests (an [`ArmedCut`] as its request hook): requests from
/// now on are counted, and the `at_request`-th (from 1) is cut after `after_events` world
/// events (or at its completion, if it needs fewer). The SSD's power trace must be on.
fn arm_power_cut(
    mut disk: impl std::ops::DerefMut<Target = SimDisk>,
    at_request: u64,
    after_events: u64,
    config: CutConfig,
) {
    disk.set_request_hook(Box::new(ArmedCut::new(at_request, after_events, config)));
}

/// The disk's armed cut and its SSD, when one is armed.
fn armed(disk: &mut SimDisk) -> Option<(&mut ArmedCut, &mut Ssd)> {
    disk.request_hook::<ArmedCut>()
}

/// Cuts the armed power now, between requests (nothing in flight); the disk stays dead.
fn cut_power_now(disk: &mut SimDisk) -> SqlResult<()> {
    let (cut, ssd) =
        armed(disk).ok_or_else(|| SqlError::Usage("power cut: no cut is armed".into()))?;
    cut.cut_now(ssd)?;
    Ok(())
}

/// Whether the armed cut has happened.
fn power_lost(disk: &mut SimDisk) -> bool {
    armed(disk).is_some_and(|(cut, _)| cut.happened())
}

/// [`run_workload`], cutting the power right after step `cut_after` (its commit
/// acknowledged) when given.
fn run_workload_until(
    db: &mut SqlDb,
    steps: &[Step],
    cut_after: Option<usize>,
) -> (i64, Option<u32>) {
    let mut acked = -1i64; // -1: not even the setup
    for (i, step) in steps.iter().enumerate() {
        match db.run_script(&step.sql) {
            Ok(_) if cut_after == Some(i) => {
                // (a failed cut leaves no cut to take: the caller reports it)
                let _ = db.disk().and_then(|mut d| cut_power_now(&mut d));
                return (i64::from(step.tx), None);
            }
            Ok(_) => acked = i64::from(step.tx),
            Err(_) => {
                let lost = db.disk().map(|mut d| power_lost(&mut d)).unwrap_or(true);
                return (acked, lost.then_some(step.tx));
            }
        }
    }
    (acked, None)
}

/// Runs `o.cuts` crash cases, each on a new SSD of `device`.
pub fn run_crash(device: &dyn SsdSource, o: &CrashOptions) -> SqlResult<CrashReport> {
    run_crash_with(device, o, None)
}

/// [`run_crash`] with `PRAGMA synchronous` forced (`None`: extra for delete and atomic, full
/// otherwise).
pub fn run_crash_with(
    device: &dyn SsdSource,
    o: &CrashOptions,
    sync: Option<&'static str>,
) -> SqlResult<CrashReport> {
    run_crash_observed(device, o, sync, &mut |_, _| ControlFlow::Continue(()))
}

/// [`run_crash`] calling `progress(cuts done, cuts)` before each cut; `Break` (Ctrl-C) ends
/// the run there: the report covers the cuts done and says `interrupted`.
pub fn run_crash_progress(
    device: &dyn SsdSource,
    o: &CrashOptions,
    progress: &mut dyn FnMut(u32, u32) -> ControlFlow<()>,
) -> SqlResult<CrashReport> {
    run_crash_observed(device, o, None, progress)
}

fn run_crash_observed(
    device: &dyn SsdSource,
    o: &CrashOptions,
    sync: Option<&'static str>,
    progress: &mut dyn FnMut(u32, u32) -> ControlFlow<()>,
) -> SqlResult<CrashReport> {
    if o.journal_mode == JournalMode::Atomic && device.has_pcm_stage() {
        return Err(SqlError::Usage(
            "crash --journal-mode atomic: the device has a [pcm] stage".into(),
        ));
    }
    let steps = workload(o.transactions, o.seed);
    // a reference run counts the requests the whole workload makes
    let (mut db, _) = open_traced_with(device, o, sync)?;
    arm_power_cut(db.disk()?, u64::MAX, 0, CutConfig::default());
    let (acked, _) = run_workload(&mut db, &steps);
    if acked != i64::from(o.transactions) {
        return Err(SqlError::Usage(format!(
            "crash: the workload failed without a cut (after {acked} transactions)"
        )));
    }
    let requests = armed(&mut *db.disk()?).map_or(0, |(cut, _)| cut.requests());
    drop(db);
    let (_, sync) = options_with(o.journal_mode, sync);
    let mut report = CrashReport {
        journal_mode: o.journal_mode.to_string(),
        synchronous: sync.into(),
        sqlite_promises: o.journal_mode != JournalMode::Off,
        requests,
        ..CrashReport::default()
    };
    let mut state = o.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xC0FF_EE00;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n.max(1)
    };
    for cut_index in 0..o.cuts {
        if progress(cut_index, o.cuts).is_break() {
            report.interrupted = true;
            return Ok(report);
        }
        let point = match o.cut_at {
            CutAt::Requests => CutPoint::Request {
                at_request: 1 + next(requests),
                after_events: next(64),
            },
            CutAt::Commits => CutPoint::AfterStep(next(steps.len() as u64) as usize),
        };
        let config = CutConfig {
            seed: o.seed ^ u64::from(cut_index),
            ..CutConfig::default()
        };
        let outcome = one_cut(device, o, sync, &steps, point, config, &mut report)?;
        report.cuts += 1;
        if let Some(problem) = outcome {
            report.violations += 1;
            if report.examples.len() < 10 {
                let at = match point {
                    CutPoint::Request {
                        at_request,
                        after_events,
                    } => format!("request {at_request}, after {after_events} events"),
                    CutPoint::AfterStep(i) => format!("after the commit of transaction {i}"),
                };
                report
                    .examples
                    .push(format!("cut {cut_index} ({at}): {problem}"));
            }
        }
    }
    let _ = progress(o.cuts, o.cuts);
    Ok(report)
}

/// Where one cut falls.
#[derive(Clone, Copy, Debug)]
enum CutPoint {
    /// Inside the `at_request`-th request, after `after_events` events.
    Request { at_request: u64, after_events: u64 },
    /// Right after the i-th step (transaction `i`, 0 the setup) was acknowledged.
    AfterStep(usize),
}

/// One case: run to the cut, mount, reopen, check. `Some(problem)` on a violation.
fn one_cut(
    device: &dyn SsdSource,
    o: &CrashOptions,
    sync: &'static str,
    steps: &[Step],
    point: CutPoint,
    config: CutConfig,
    report: &mut CrashReport,
) -> SqlResult<Option<String>> {
    let (mut db, seed) = open_traced_with(device, o, Some(sync))?;
    let (acked, in_flight) = match point {
        CutPoint::Request {
            at_request,
            after_events,
        } => {
            arm_power_cut(db.disk()?, at_request, after_events, config);
            run_workload(&mut db, steps)
        }
        CutPoint::AfterStep(i) => {
            arm_power_cut(db.disk()?, u64::MAX, 0, config);
            run_workload_until(&mut db, steps, Some(i))
        }
    };
    let cut = armed(&mut *db.disk()?).and_then(|(cut, _)| cut.take());
    drop(db);
    let Some(cut) = cut else {
        if let CutPoint::AfterStep(i) = point {
            return Err(SqlError::Usage(format!(
                "sql-crash: the cut after transaction {i} did not happen"
            )));
        }
        return Ok(None); // the workload ended first
    };
    report.torn_programs += cut.report.torn_programs;
    report.interrupted_erases += cut.report.interrupted_erases;
    let (fresh, _) = device.new_ssd(Some(o.seed))?;
    let recovered = fresh.recover_cut(&cut, o.recovery);
    report.pages_uncommitted += recovered.report.pages_uncommitted;
    let mut ssd: Ssd = fresh;
    ssd.load_recovered(&cut, &recovered)?;
    let mut db = match SqlDb::open_mounted(ssd, seed, options_with(o.journal_mode, Some(sync)).0) {
        Ok(db) => db,
        Err(e) => return Ok(Some(format!("reopen failed: {e}"))),
    };
    let check = match check(&mut db, acked, in_flight) {
        Ok(c) => c,
        Err(e) => Some(format!("checking failed: {e}")),
    };
    if let Ok((committed, lost)) = in_flight_outcome(&mut db, acked, in_flight) {
        report.in_flight_committed += committed;
        report.in_flight_lost += lost;
    }
    Ok(check)
}

fn scalar(db: &mut SqlDb, sql: &str) -> SqlResult<SqlValue> {
    let out = db.execute(sql, &[])?;
    Ok(out
        .rows
        .first()
        .and_then(|r| r.first())
        .cloned()
        .unwrap_or(SqlValue::Null))
}

fn check(db: &mut SqlDb, acked: i64, in_flight: Option<u32>) -> SqlResult<Option<String>> {
    let integrity = scalar(db, "PRAGMA integrity_check")?;
    if integrity != SqlValue::Text("ok".into()) {
        return Ok(Some(format!("integrity_check: {integrity}")));
    }
    let tables = scalar(
        db,
        "SELECT count(*) FROM sqlite_schema WHERE name IN ('acct', 'log')",
    )?;
    if tables == SqlValue::Integer(0) {
        return Ok(
            (acked >= 0).then(|| "the setup transaction was acknowledged but is lost".into())
        );
    }
    let accounts = scalar(db, "SELECT count(*) FROM acct")?;
    let total = scalar(db, "SELECT sum(bal) FROM acct")?;
    if accounts != SqlValue::Integer(ACCOUNTS) || total != SqlValue::Integer(ACCOUNTS * BALANCE) {
        return Ok(Some(format!(
            "accounts: {accounts} rows summing to {total} (expected {ACCOUNTS} summing to {})",
            ACCOUNTS * BALANCE
        )));
    }
    let count = scalar(db, "SELECT count(*) FROM log")?
        .as_i64()
        .unwrap_or(-1);
    let max = scalar(db, "SELECT coalesce(max(tx), 0) FROM log")?
        .as_i64()
        .unwrap_or(-1);
    if count != max {
        return Ok(Some(format!(
            "log: {count} transactions but the highest is {max} (a gap)"
        )));
    }
    let acked = acked.max(0);
    let extra_ok = in_flight.is_some_and(|t| i64::from(t) == acked + 1);
    if max < acked {
        return Ok(Some(format!(
            "log: transactions {}..={acked} were acknowledged but are lost",
            max + 1
        )));
    }
    if max > acked && !(extra_ok && max == acked + 1) {
        return Ok(Some(format!(
            "log: transaction {max} is present but only {acked} were acknowledged"
        )));
    }
    Ok(None)
}

/// Whether the transaction the cut fell in came back (committed) or not.
fn in_flight_outcome(db: &mut SqlDb, acked: i64, in_flight: Option<u32>) -> SqlResult<(u32, u32)> {
    let Some(t) = in_flight.filter(|&t| t > 0) else {
        return Ok((0, 0));
    };
    let present = scalar(db, &format!("SELECT count(*) FROM log WHERE tx = {t}"))?;
    let _ = acked;
    Ok(if present == SqlValue::Integer(1) {
        (1, 0)
    } else {
        (0, 1)
    })
}

#[cfg(test)]
mod tests;
