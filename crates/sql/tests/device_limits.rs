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
    nandlab_lab::sql::open_device(TINY, Some(9), options).unwrap()
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

/// A preconditioned device (full and fragmented, from a stack config's `[precondition]`): the
/// files' extents are trimmed as they are allocated, so SQLite never reads the old bytes, and
/// GC moves the preconditioned pages from the first write on.
#[test]
fn a_preconditioned_device_from_a_stack_config() {
    let dir = std::env::temp_dir().join(format!("nandlab-sql-pre-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stack.toml");
    let stack = format!(
        "{TINY}[run]\nseed = 4\n[precondition]\nfill_fraction = 1.0\nrandom_overwrites = 3000\n\
         [workload]\nkind = \"synthetic\"\npattern = \"random\"\nread_fraction = 0.0\nrequest_size_bytes = 8192\nspan_bytes = 0\nrequest_count = 1\n"
    );
    std::fs::write(&path, stack).unwrap();
    let options = SqlOptions {
        journal_mode: JournalMode::Truncate,
        cache_size: Some(20),
        ..SqlOptions::default()
    };
    let mut db = nandlab_lab::sql::open_device(path.to_str().unwrap(), None, options).unwrap();
    db.run_script(
        "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
         INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         SELECT i, printf('%0500d', i) FROM n;
         UPDATE t SET v = printf('%0400d', k * 2) WHERE k % 2 = 0;",
    )
    .unwrap();
    let out = db
        .run_script(
            "SELECT count(*), sum(CAST(v AS INTEGER)), sum(length(v)) FROM t; PRAGMA integrity_check;",
        )
        .unwrap();
    let evens: i64 = (1..=1500).map(|i| 4 * i).sum();
    let odds: i64 = (0..1500).map(|i| 2 * i + 1).sum();
    assert_eq!(
        out[0].rows[0],
        vec![
            SqlValue::Integer(3000),
            SqlValue::Integer(evens + odds),
            SqlValue::Integer(1500 * 400 + 1500 * 500)
        ]
    );
    assert_eq!(out[1].rows[0][0], SqlValue::Text("ok".into()));
    let m = db.metrics().unwrap();
    assert!(
        m.totals.nand_blocks_erased > 0,
        "GC on a full device: {m:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
