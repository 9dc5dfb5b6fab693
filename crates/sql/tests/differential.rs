//! Differential test across the layers: generated SQL statement sequences give the same
//! results (rows, changes, errors) on a database on the simulated SSD, in every journal mode,
//! as on SQLite's in-memory database. Guards against the VFS losing, misplacing or
//! stale-reading bytes anywhere below SQL (extents, partial pages, truncation, TRIM).

use nandlab_sql::{JournalMode, SqlOptions, StatementOutput, run_script_on};
use proptest::prelude::*;
use rusqlite::Connection;

const DEVICE: &str = "[ssd]\npreset = \"bench-ssd\"\n[nand.geometry]\nblocks_per_plane = 32\n";

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0i64..400, 0usize..3000).prop_map(|(a, n)| format!(
            "INSERT INTO t(a, b) VALUES ({a}, substr(hex(zeroblob({n})) || 'z{a}', 1, {n} + 3));"
        )),
        1 => (1i64..40, 0i64..400).prop_map(|(n, a)| format!(
            "INSERT INTO t(a, b) SELECT a + {a}, b FROM t ORDER BY id LIMIT {n};"
        )),
        2 => (1i64..7, 0i64..7, -50i64..50).prop_map(|(m, r, d)| format!(
            "UPDATE t SET a = a + {d}, b = b || 'u' WHERE id % {m} = {};", r % m
        )),
        2 => (0i64..400).prop_map(|a| format!("DELETE FROM t WHERE a > {a};")),
        2 => (0i64..400).prop_map(|a| format!(
            "SELECT id, a, length(b), substr(b, -4) FROM t WHERE a < {a} ORDER BY id;"
        )),
        1 => Just("SELECT count(*), sum(a), total(length(b)) FROM t;".to_string()),
        1 => Just("BEGIN;".to_string()),
        1 => Just("COMMIT;".to_string()),
        1 => Just("ROLLBACK;".to_string()),
        1 => Just("CREATE INDEX IF NOT EXISTS ta ON t(a);".to_string()),
        1 => Just("VACUUM;".to_string()),
    ]
}

/// Runs statements one by one, keeping each result or error text (so a failed COMMIT outside
/// a transaction is compared too).
fn run_each(
    mut run: impl FnMut(&str) -> Result<Vec<StatementOutput>, String>,
    sql: &[String],
) -> Vec<Result<Vec<StatementOutput>, String>> {
    sql.iter().map(|s| run(s)).collect()
}

fn mode() -> impl Strategy<Value = JournalMode> {
    prop::sample::select(JournalMode::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn same_results_as_in_memory(mode in mode(), page_size in prop::sample::select(vec![1024u32, 4096, 16384]),
                                 body in prop::collection::vec(statement(), 1..40)) {
        let mut sql = vec![format!("PRAGMA page_size = {page_size};"),
                           "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);".to_string()];
        // with journal_mode = OFF, SQLite's ROLLBACK is undefined (nothing to roll back from)
        sql.extend(body.into_iter().map(|s| if mode == JournalMode::Off && s == "ROLLBACK;" { "COMMIT;".to_string() } else { s }));
        sql.push("SELECT id, a, b FROM t ORDER BY id;".to_string());
        sql.push("PRAGMA integrity_check;".to_string());

        let memory = Connection::open_in_memory().unwrap();
        let expected = run_each(|s| run_script_on(&memory, s).map_err(|e| e.to_string()), &sql);

        // a small page cache, so pages are evicted and read back from the device
        let options = SqlOptions { journal_mode: mode, cache_size: Some(8), ..SqlOptions::default() };
        let mut db = nandlab_lab::sql::open_device(DEVICE, Some(1), options).unwrap();
        let got = run_each(|s| db.run_script(s).map_err(|e| e.to_string().trim_start_matches("sqlite: ").to_string()), &sql);
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            // VACUUM and page_size answer the same; SQLite's error texts too
            prop_assert_eq!(g, e, "statement {}: {} ({})", i, &sql[i], mode);
        }
    }
}
