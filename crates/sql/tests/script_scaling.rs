//! A script's cost is linear in its length. Guards against the quadratic path where rusqlite's
//! batch iterator handed SQLite the rest of the script without a terminating NUL, so SQLite
//! copied the whole remainder for every statement (a 20,000-transaction script took 46x the
//! CPU of the `sqlite3` shell). Measured in thread CPU time with a wide margin: four times the
//! statements must cost less than eight times the CPU (quadratic would be sixteen).

use nandlab_sql::{JournalMode, SqlOptions};

/// This thread's CPU time in clock ticks (Linux), or `None` elsewhere.
fn thread_cpu_ticks() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // fields after the command name (which is in parentheses): utime is 14th, stime 15th
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn script(transactions: usize) -> String {
    let mut sql = String::from("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);\n");
    for i in 0..transactions {
        sql += &format!("BEGIN; INSERT INTO t VALUES({i}, 'value {i} of the script'); COMMIT;\n");
    }
    sql
}

/// The least CPU ticks of three runs of a script of `transactions` transactions.
fn cpu_ticks(transactions: usize) -> Option<u64> {
    let sql = script(transactions);
    let mut best = u64::MAX;
    for _ in 0..3 {
        let options = SqlOptions {
            journal_mode: JournalMode::Off,
            ..SqlOptions::default()
        };
        let mut db = nandlab_lab::sql::open_device("bench-ssd", Some(0), options).unwrap();
        let start = thread_cpu_ticks()?;
        let out = db.run_script(&sql).unwrap();
        best = best.min(thread_cpu_ticks()? - start);
        assert_eq!(out.len(), 3 * transactions + 1);
    }
    Some(best)
}

#[test]
fn a_script_costs_cpu_linear_in_its_length() {
    let (Some(small), Some(large)) = (cpu_ticks(10_000), cpu_ticks(40_000)) else {
        eprintln!("no /proc/thread-self/stat: skipped");
        return;
    };
    assert!(
        large < 8 * small.max(5),
        "10,000 transactions: {small} ticks, 40,000: {large} ticks (quadratic?)"
    );
}

#[test]
fn a_nul_byte_in_a_script_is_an_error_naming_its_line() {
    let mut db =
        nandlab_lab::sql::open_device("bench-ssd", Some(0), SqlOptions::default()).unwrap();
    let e = db
        .run_script("CREATE TABLE t(x);\nINSERT INTO t VALUES(1);\0INSERT INTO t VALUES(2);")
        .unwrap_err()
        .to_string();
    assert!(e.contains("NUL byte at line 2"), "{e}");
    let e = db.execute("SELECT 1\0", &[]).unwrap_err().to_string();
    assert!(e.contains("NUL byte"), "{e}");
    // nothing of the script ran
    let e = db.execute("SELECT * FROM t", &[]).unwrap_err().to_string();
    assert!(e.contains("no such table"), "{e}");
}
