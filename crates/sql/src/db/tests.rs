//! SQL on the simulated SSD: results, errors, the VFS's claims, metrics.

use super::*;
use crate::disk::tests::SMALL_DEVICE;

pub(crate) fn open(mode: JournalMode) -> SqlDb {
    let options = SqlOptions {
        journal_mode: mode,
        ..SqlOptions::default()
    };
    crate::device::named::open(SMALL_DEVICE, Some(3), options).unwrap()
}

#[test]
fn a_script_runs_and_returns_rows() {
    let mut db = open(JournalMode::Delete);
    let out = db
        .run_script(
            "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d BLOB);
             INSERT INTO t(b, c, d) VALUES ('x', 1.5, x'00ff'), (NULL, -2, NULL);
             -- a comment
             SELECT a, b, c, d FROM t ORDER BY a;",
        )
        .unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[1].changes, 2);
    assert_eq!(out[2].columns, ["a", "b", "c", "d"]);
    assert_eq!(
        out[2].rows,
        vec![
            vec![
                SqlValue::Integer(1),
                SqlValue::Text("x".into()),
                SqlValue::Real(1.5),
                SqlValue::Blob(vec![0, 255])
            ],
            vec![
                SqlValue::Integer(2),
                SqlValue::Null,
                SqlValue::Real(-2.0),
                SqlValue::Null
            ],
        ]
    );
    let disk = db.disk().unwrap();
    assert!(disk.exists("main.db"));
    assert!(
        !disk.exists("main.db-journal"),
        "DELETE mode removes the journal"
    );
}

#[test]
fn parameters_and_errors_name_what_is_wrong() {
    let mut db = open(JournalMode::Wal);
    db.execute("CREATE TABLE t(k, v)", &[]).unwrap();
    let o = db
        .execute(
            "INSERT INTO t VALUES (?, ?)",
            &[SqlValue::Integer(1), SqlValue::Text("one".into())],
        )
        .unwrap();
    assert_eq!(o.changes, 1);
    let e = db
        .execute("INSERT INTO t VALUES (?, ?)", &[SqlValue::Integer(1)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("parameter"), "{e}");
    let e = db
        .run_script("SELECT * FROM missing;")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no such table: missing"), "{e}");
    let e = db
        .execute("SELECT 1; SELECT 2", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("one statement"), "{e}");
    let e = crate::device::named::open(
        SMALL_DEVICE,
        None,
        SqlOptions {
            page_size_bytes: Some(1000),
            ..SqlOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("page_size_bytes 1000"), "{e}");
    assert!(
        "memory"
            .parse::<JournalMode>()
            .unwrap_err()
            .to_string()
            .contains("journal_mode `memory`")
    );
}

#[test]
fn the_vfs_claims_nothing_and_sectors_are_flash_pages() {
    let mut db = open(JournalMode::Persist);
    let page = db.disk().unwrap().page_size_bytes();
    // the answers SQLite gets from a handle of this VFS
    let vfs = SimVfs::new(Arc::clone(&db.disk));
    let rw = libsqlite3_sys::SQLITE_OPEN_CREATE | libsqlite3_sys::SQLITE_OPEN_READWRITE;
    let (h, _) = vfs.open(Some("probe"), rw).unwrap();
    assert_eq!(
        h.device_characteristics(),
        0,
        "no ATOMIC, SAFE_APPEND or POWERSAFE_OVERWRITE"
    );
    assert_eq!(h.sector_size() as u64, page);
    assert_eq!(h.close(), 0);
    let exclusive = libsqlite3_sys::SQLITE_OPEN_CREATE | libsqlite3_sys::SQLITE_OPEN_EXCLUSIVE;
    assert_eq!(
        vfs.open(Some("probe"), exclusive).unwrap_err(),
        libsqlite3_sys::SQLITE_CANTOPEN
    );
    assert_eq!(
        vfs.open(Some("nothing"), 0).unwrap_err(),
        libsqlite3_sys::SQLITE_CANTOPEN
    );
    // and SQLite uses them: the rollback journal's header fills a whole sector (flash page),
    // the first page record starts at the sector boundary
    db.run_script("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    let mut disk = db.disk().unwrap();
    let j = disk.open("main.db-journal", false).unwrap();
    let mut head = vec![0u8; page as usize + 4];
    disk.read(j, 0, &mut head).unwrap();
    disk.close(j).unwrap();
    assert!(
        head[28..page as usize].iter().all(|b| *b == 0),
        "header padding"
    );
    let first_page = u32::from_be_bytes(head[page as usize..].try_into().unwrap());
    assert!(
        (1..=2).contains(&first_page),
        "first record's page number {first_page}"
    );
}

#[test]
fn transactions_are_counted_and_time_is_simulated() {
    let mut db = open(JournalMode::Delete);
    db.run_script("CREATE TABLE t(k INTEGER PRIMARY KEY, v);")
        .unwrap();
    db.reset_metrics().unwrap();
    db.run_script(
        "INSERT INTO t VALUES (1, 'a');
         BEGIN; INSERT INTO t VALUES (2, 'b'); INSERT INTO t VALUES (3, 'c'); COMMIT;
         SELECT count(*) FROM t;",
    )
    .unwrap();
    let m = db.metrics().unwrap();
    assert_eq!(m.statements, 6);
    assert_eq!(m.write_transactions, 2);
    assert_eq!(m.read_transactions, 1);
    assert!(m.commit_latency_us_p50 > 0.0);
    assert!(m.commit_latency_us_max >= m.commit_latency_us_p99);
    assert!(
        m.syncs_per_tx >= 2.0,
        "a DELETE-mode commit syncs journal and database: {m:?}"
    );
    assert!(m.host_pages_written_per_tx >= 2.0);
    assert!(m.energy_uj_per_tx > 0.0);
    assert!(m.sim_time_us > 0.0);
}

#[test]
fn date_now_follows_the_simulated_clock() {
    let mut db = open(JournalMode::Off);
    let out = db.run_script("SELECT date('now');").unwrap();
    assert_eq!(out[0].rows[0][0], SqlValue::Text("2026-01-01".into()));
}

/// Same device and seed, same simulated time and counters. (The random values SQLite draws
/// repeat too, but its PRNG is process-wide and the tests here run on parallel threads:
/// tests/prng.rs checks them in a process of its own.)
#[test]
fn same_seed_same_device_state() {
    let run = || {
        let mut db = open(JournalMode::Truncate);
        db.run_script(
            "CREATE TABLE t(x); INSERT INTO t SELECT randomblob(100) FROM (SELECT 1 UNION SELECT 2);
             SELECT length(x) FROM t;",
        )
        .unwrap();
        let m = db.metrics().unwrap();
        (m.sim_time_us, m.totals, m.commit_latency_us_max)
    };
    assert_eq!(run(), run());
    assert_eq!(run(), run());
}

#[test]
fn a_memory_journal_set_in_sql_is_refused_and_undone() {
    // before: `PRAGMA journal_mode=memory` in a script was accepted (the command line refuses
    // it), and the journal then never reached the simulated SSD
    let mut db = open(JournalMode::Delete);
    let e = db
        .run_script("CREATE TABLE t(x); PRAGMA journal_mode = MEMORY; INSERT INTO t VALUES (1);")
        .unwrap_err()
        .to_string();
    assert!(e.contains("journal_mode = memory: refused"), "{e}");
    assert_eq!(db.journal_mode().unwrap(), "delete");
    let e = db
        .execute("PRAGMA journal_mode=memory", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("refused"), "{e}");
    assert_eq!(db.journal_mode().unwrap(), "delete");
    // asking (without switching) is fine
    assert!(db.execute("PRAGMA journal_mode", &[]).is_ok());
}
