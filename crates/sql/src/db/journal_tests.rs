//! Each journal mode: the files it leaves, its syncs and writes per commit, data survives
//! reopening the connection's pages (integrity check).

use super::tests::open;
use super::*;

fn workload(db: &mut SqlDb) -> SqlMetrics {
    db.run_script("CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);")
        .unwrap();
    db.reset_metrics().unwrap();
    for i in 0..30 {
        db.execute(
            "INSERT INTO kv VALUES (?, randomblob(300))",
            &[SqlValue::Integer(i)],
        )
        .unwrap();
    }
    db.run_script("BEGIN; UPDATE kv SET v = randomblob(200) WHERE k % 3 = 0; DELETE FROM kv WHERE k > 25; COMMIT;")
        .unwrap();
    let out = db
        .run_script("SELECT count(*) FROM kv; PRAGMA integrity_check;")
        .unwrap();
    assert_eq!(out[0].rows[0][0], SqlValue::Integer(26));
    assert_eq!(out[1].rows[0][0], SqlValue::Text("ok".into()));
    db.metrics().unwrap()
}

#[test]
fn every_mode_runs_and_leaves_its_files() {
    for mode in JournalMode::ALL {
        let mut db = open(mode);
        let m = workload(&mut db);
        assert_eq!(m.journal_mode, mode.as_str(), "{mode}");
        assert_eq!(m.write_transactions, 31, "{mode}");
        let files = db.disk().unwrap().file_names();
        let expect: &[&str] = match mode {
            JournalMode::Delete | JournalMode::Off | JournalMode::Atomic => &["main.db"],
            JournalMode::Truncate | JournalMode::Persist => &["main.db", "main.db-journal"],
            JournalMode::Wal => &["main.db", "main.db-wal"],
        };
        assert_eq!(files, expect, "{mode}");
        match mode {
            // no journal: one sync of the database per commit
            JournalMode::Off => assert!((m.syncs_per_tx - 1.0).abs() < 1e-9, "{mode}: {m:?}"),
            // the WAL is synced once per commit (no checkpoint in 31 small commits)
            JournalMode::Wal => assert!((m.syncs_per_tx - 1.0).abs() < 1e-9, "{mode}: {m:?}"),
            // the device's commit (Flush, FUA commit record), then SQLite's own sync of the
            // database (nothing left to flush)
            JournalMode::Atomic => assert!((m.syncs_per_tx - 2.0).abs() < 1e-9, "{mode}: {m:?}"),
            // journal then database
            _ => assert!(m.syncs_per_tx >= 2.0, "{mode}: {m:?}"),
        }
    }
}

#[test]
fn truncate_trims_the_journal_and_persist_does_not() {
    let mut t = open(JournalMode::Truncate);
    let mt = workload(&mut t);
    let mut p = open(JournalMode::Persist);
    let mp = workload(&mut p);
    assert!(
        mt.pages_trimmed > 0,
        "TRUNCATE gives the journal's pages back: {mt:?}"
    );
    assert_eq!(
        mp.pages_trimmed, 0,
        "PERSIST overwrites the journal header: {mp:?}"
    );
    let journal_bytes = |db: &SqlDb| {
        let mut d = db.disk().unwrap();
        let id = d.open("main.db-journal", false).unwrap();
        let n = d.size_bytes(id).unwrap();
        d.close(id).unwrap();
        n
    };
    assert_eq!(journal_bytes(&t), 0);
    assert!(journal_bytes(&p) > 0);
}

#[test]
fn wal_writes_less_per_commit_than_a_rollback_journal() {
    let mut w = open(JournalMode::Wal);
    let mw = workload(&mut w);
    let mut d = open(JournalMode::Delete);
    let md = workload(&mut d);
    assert!(
        mw.host_pages_written_per_tx < md.host_pages_written_per_tx,
        "WAL {mw:?} vs DELETE {md:?}"
    );
    assert!(mw.commit_latency_us_p50 < md.commit_latency_us_p50);
}

/// The atomic mode takes SQLite's batch path: every write transaction is one device
/// transaction, and no journal file is ever created or written.
#[test]
fn atomic_mode_writes_no_journal() {
    let mut a = open(JournalMode::Atomic);
    // (SQLite journals the first transaction of an empty database: batch atomic writes need
    // `dbSize > 0`, pager.c `jrnlBufferSize`)
    a.run_script("CREATE TABLE first(x); DROP TABLE first;")
        .unwrap();
    let io_before = a.disk().unwrap().io();
    let ma = workload(&mut a);
    let io = a.disk().unwrap().io();
    // CREATE TABLE, 30 inserts, the update
    assert_eq!(io.atomic_commits - io_before.atomic_commits, 32, "{io:?}");
    assert_eq!(io.atomic_rollbacks, 0);
    assert_eq!(
        io.files_created, io_before.files_created,
        "no journal file: {io:?}"
    );
    let mut d = open(JournalMode::Delete);
    let before = d.disk().unwrap().io();
    let md = workload(&mut d);
    let after = d.disk().unwrap().io();
    assert!(after.files_created - before.files_created >= 31);
    assert_eq!(after.atomic_commits, 0);
    assert!(
        ma.host_pages_written_per_tx < md.host_pages_written_per_tx,
        "atomic {ma:?} vs delete {md:?}"
    );
    assert!(ma.nand_pages_programmed_per_tx < md.nand_pages_programmed_per_tx);
    // a plain device offers no batch: the same workload journals
    assert!(!d.disk().unwrap().transactional());
}

/// A batch larger than the FTL's shadow pages: its write fails before anything of it is
/// written, SQLite rolls the batch back (the FTL aborts its transaction) and commits through
/// its rollback journal instead; the data is all there.
#[test]
fn a_batch_too_large_for_the_ftl_falls_back_to_the_journal() {
    let (mut ssd, seed) =
        crate::device::named::build_ssd(crate::disk::tests::SMALL_DEVICE, Some(3)).unwrap();
    ssd.enable_transactions(4).unwrap();
    let options = SqlOptions {
        journal_mode: JournalMode::Atomic,
        ..SqlOptions::default()
    };
    let mut db = SqlDb::open(ssd, seed, options).unwrap();
    db.run_script(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB); INSERT INTO t VALUES (0, x'00');",
    )
    .unwrap();
    let before = db.disk().unwrap().io();
    // small: fits the 4 shadow pages
    db.execute("INSERT INTO t VALUES (1, zeroblob(100))", &[])
        .unwrap();
    // large: about 20 database pages
    db.execute("INSERT INTO t VALUES (2, randomblob(80000))", &[])
        .unwrap();
    let io = db.disk().unwrap().io();
    assert_eq!(io.atomic_commits - before.atomic_commits, 1, "{io:?}");
    assert_eq!(io.atomic_rollbacks - before.atomic_rollbacks, 1, "{io:?}");
    assert!(
        io.files_created > before.files_created,
        "the journal was used: {io:?}"
    );
    let out = db
        .run_script("SELECT count(*), sum(length(v)) FROM t; PRAGMA integrity_check;")
        .unwrap();
    assert_eq!(
        out[0].rows[0],
        vec![SqlValue::Integer(3), SqlValue::Integer(80_101)]
    );
    assert_eq!(out[1].rows[0][0], SqlValue::Text("ok".into()));
    assert_eq!(db.disk().unwrap().ssd().tx_stats().aborts, 1);
}
