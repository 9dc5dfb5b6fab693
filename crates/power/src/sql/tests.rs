//! Seeded crash runs in every journal mode and the atomic mode: no violation where SQLite
//! promises durability and atomicity; cuts do tear programs; deterministic.

use super::*;
use nandlab_lab::sql::{CRASH_DEVICE, DeviceSpec, device_spec};

fn device() -> DeviceSpec {
    device_spec(CRASH_DEVICE).expect("the crash device resolves")
}

fn run(mode: JournalMode, cuts: u32, seed: u64) -> CrashReport {
    let o = CrashOptions {
        journal_mode: mode,
        transactions: 12,
        cuts,
        seed,
        ..CrashOptions::default()
    };
    run_crash(&device(), &o).unwrap()
}

#[test]
fn cuts_in_every_mode_keep_committed_transactions() {
    let mut torn = 0;
    for mode in [
        JournalMode::Delete,
        JournalMode::Truncate,
        JournalMode::Persist,
        JournalMode::Wal,
        JournalMode::Atomic,
    ] {
        let r = run(mode, 40, 1);
        eprintln!("{mode}: {r:?}");
        assert_eq!(r.cuts, 40);
        assert_eq!(r.violations, 0, "{mode}: {:?}", r.examples);
        torn += r.torn_programs;
    }
    assert!(torn > 0, "some cut tore a program");
}

#[test]
fn the_atomic_mode_discards_uncommitted_device_transactions() {
    let r = run(JournalMode::Atomic, 12, 2);
    assert_eq!(r.violations, 0, "{:?}", r.examples);
    assert!(r.in_flight_committed + r.in_flight_lost > 0, "{r:?}");
}

#[test]
fn runs_are_deterministic() {
    let a = run(JournalMode::Wal, 3, 5);
    let b = run(JournalMode::Wal, 3, 5);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// A clean remount (no cut) in WAL mode reads the database back (SQLite opens the WAL in
/// exclusive locking mode, set before any pragma that reads the schema).
#[test]
fn a_wal_database_mounts_again() {
    let o = CrashOptions {
        journal_mode: JournalMode::Wal,
        ..CrashOptions::default()
    };
    let (mut db, seed) = open_traced(&device(), &o).unwrap();
    db.run_script("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    let files = db.disk().unwrap().file_names();
    assert_eq!(files, ["main.db", "main.db-wal"]);
    let disk = db.into_disk().unwrap();
    let ssd = disk.into_ssd();
    let mut db = SqlDb::open_mounted(ssd, seed, options(JournalMode::Wal).0).unwrap();
    let out = db.run_script("SELECT * FROM t").unwrap();
    assert_eq!(out[0].rows, vec![vec![SqlValue::Integer(1)]]);
}

/// `journal_mode = off`: SQLite makes no promise; the run completes and reports what it found.
#[test]
fn off_mode_is_run_and_reported_apart() {
    let r = run(JournalMode::Off, 12, 1);
    assert!(!r.sqlite_promises);
    assert_eq!(r.cuts, 12);
}

/// DELETE mode with `synchronous = full` (the journal's deletion, the commit point, is not
/// synced): the checker sees acknowledged transactions rolled back at some cut.
#[test]
fn an_unsynced_commit_point_is_caught() {
    let o = CrashOptions {
        journal_mode: JournalMode::Delete,
        transactions: 12,
        cuts: 40,
        seed: 1,
        ..CrashOptions::default()
    };
    let r = run_crash_with(&device(), &o, Some("full")).unwrap();
    assert!(r.violations > 0, "{r:?}");
    assert!(
        r.examples.iter().any(|e| e.contains("lost")),
        "{:?}",
        r.examples
    );
}

fn between_commits(mode: JournalMode, recovery: RecoveryVariant) -> CrashReport {
    let o = CrashOptions {
        journal_mode: mode,
        transactions: 12,
        cuts: 20,
        seed: 3,
        cut_at: CutAt::Commits,
        recovery,
    };
    run_crash(&device(), &o).unwrap()
}

/// Cuts between transactions: every acknowledged transaction and nothing else comes back.
#[test]
fn cuts_between_commits_keep_exactly_the_acknowledged_transactions() {
    for mode in [JournalMode::Delete, JournalMode::Wal, JournalMode::Atomic] {
        let r = between_commits(mode, RecoveryVariant::Correct);
        assert_eq!(r.cuts, 20);
        assert_eq!(r.violations, 0, "{mode}: {:?}", r.examples);
        assert_eq!(r.in_flight_committed + r.in_flight_lost, 0, "{r:?}");
    }
}

/// A mount that leaves out each open block's newest page loses the last acknowledged commit:
/// the cuts between commits catch it in every journal mode (the cuts inside requests mostly
/// leave that page to the transaction in flight).
#[test]
fn cuts_between_commits_catch_a_mount_skipping_the_newest_page() {
    for mode in [JournalMode::Delete, JournalMode::Wal, JournalMode::Atomic] {
        let r = between_commits(mode, RecoveryVariant::SkipNewestPage);
        assert!(r.violations > 0, "{mode}: {r:?}");
    }
}

/// MLC without paired-page padding is outside the contract the checks assume: refused,
/// naming the setting (a cut's damaged lower pages are the FTL's gap, not SQLite's).
#[test]
fn a_device_without_paired_page_padding_is_refused() {
    let mut table: toml::Table = toml::from_str(CRASH_DEVICE).unwrap();
    table["ssd"]["mapping"]["paired_page_padding"] = false.into();
    let nopad = toml::to_string(&table).unwrap();
    let o = CrashOptions {
        cuts: 1,
        ..CrashOptions::default()
    };
    let e = run_crash(&device_spec(&nopad).unwrap(), &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("paired_page_padding"), "{e}");
}
