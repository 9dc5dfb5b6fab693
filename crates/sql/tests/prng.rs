//! SQLite's own random values (`random()`, `randomblob()`, and with them journal nonces and WAL
//! salts) follow from the device's seed. SQLite's generator is process-wide, so this check has
//! a test binary, and thus a process, of its own: one test, no other thread drawing from it.

use nandlab_sql::{JournalMode, SqlOptions, SqlValue};

const DEVICE: &str = "[ssd]\npreset = \"bench-ssd\"\n[nand.geometry]\nblocks_per_plane = 32\n";

fn draws(seed: u64) -> (Vec<Vec<SqlValue>>, f64) {
    let options = SqlOptions {
        journal_mode: JournalMode::Wal,
        ..SqlOptions::default()
    };
    let mut db = nandlab_lab::sql::open_device(DEVICE, Some(seed), options).unwrap();
    let out = db
        .run_script(
            "CREATE TABLE t(x); INSERT INTO t SELECT randomblob(16) FROM (SELECT 1 UNION SELECT 2);
             SELECT hex(x) FROM t ORDER BY rowid; SELECT random();",
        )
        .unwrap();
    let rows = out.into_iter().flat_map(|o| o.rows).collect();
    (rows, db.metrics().unwrap().sim_time_us)
}

#[test]
fn sqlite_random_values_repeat_by_seed() {
    let first = draws(5);
    assert_eq!(
        first.0.len(),
        3,
        "two blobs and one random(): {:?}",
        first.0
    );
    assert_eq!(first, draws(5), "same seed, same values");
    assert_ne!(first.0, draws(6).0, "another seed, other values");
}
