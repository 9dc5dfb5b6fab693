//! SQLite on a small simulated SSD, across the layers: garbage collection under a database
//! keeps every row (integrity check and checksums), and a full device is SQLite's "disk full"
//! naming the file, not a panic.

use nandlab_sql::{JournalMode, SqlDb, SqlOptions, SqlValue};

/// One plane of 32 blocks of 256 8-KiB pages: about 48 MiB of logical space.
const TINY: &str = "[ssd]\npreset = \"bench-ssd\"\n[nand.geometry]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 32\n";

fn open(mode: JournalMode) -> SqlDb {
    let options = SqlOptions {
        journal_mode: mode,
        cache_size: Some(50),
        ..SqlOptions::default()
    };
    SqlDb::open_device(TINY, Some(9), options).unwrap()
}

#[test]
fn gc_under_sqlite_keeps_every_row() {
    let mut db = open(JournalMode::Wal);
    db.run_script(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);
         INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
         SELECT i, zeroblob(3000) FROM n;",
    )
    .unwrap();
    db.reset_metrics().unwrap();
    // rewrite the table many times over: ~12 MB each round on a 48 MB device
    for round in 0..8i64 {
        db.execute(
            "UPDATE t SET v = randomblob(3000) WHERE k % 8 = ?",
            &[SqlValue::Integer(round)],
        )
        .unwrap();
        db.execute(
            "UPDATE t SET v = zeroblob(2999 + ?) WHERE k % 3 = 0",
            &[SqlValue::Integer(round % 2)],
        )
        .unwrap();
    }
    let out = db
        .run_script("SELECT count(*), sum(length(v)) FROM t; PRAGMA integrity_check;")
        .unwrap();
    assert_eq!(out[0].rows[0][0], SqlValue::Integer(4000));
    assert_eq!(out[1].rows[0][0], SqlValue::Text("ok".into()));
    let m = db.metrics().unwrap();
    assert!(m.totals.nand_blocks_erased > 0, "GC ran: {m:?}");
    assert!(m.waf > 1.0, "GC copies raise WAF: {m:?}");
}

#[test]
fn a_full_device_is_disk_full_naming_the_file() {
    let mut db = open(JournalMode::Off);
    db.run_script("CREATE TABLE t(v BLOB);").unwrap();
    let mut error = None;
    for _ in 0..200 {
        if let Err(e) = db.execute("INSERT INTO t VALUES (zeroblob(1000000))", &[]) {
            error = Some(e.to_string());
            break;
        }
    }
    let e = error.expect("a 48 MB device fills up");
    assert!(e.contains("full"), "{e}");
    assert!(e.contains("main.db") && e.contains("no room"), "{e}");
}
