//! Speed of SQLite through the VFS: the same transactions on a database on the simulated SSD
//! and on SQLite's in-memory database, wall time compared (`nandlab bench sql`). Speed is
//! measured here, never asserted in tests.

use crate::db::{JournalMode, SqlDb, SqlOptions, SqlValue, run_statement};
use crate::error::SqlResult;
use rusqlite::Connection;
use serde::Serialize;
use std::time::Instant;

/// One measurement.
#[derive(Clone, Debug, Serialize)]
pub struct SqlBench {
    pub journal_mode: String,
    pub transactions: u64,
    pub wall_s_device: f64,
    pub wall_s_memory: f64,
    /// Device wall time over in-memory wall time.
    pub overhead_ratio: f64,
    pub transactions_per_wall_s: f64,
    /// Transactions per simulated second on the device.
    pub transactions_per_sim_s: f64,
    pub commit_latency_us_p99: f64,
    pub waf: f64,
}

const SETUP: &str = "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB, n INTEGER)";
const UPSERT: &str = "INSERT OR REPLACE INTO kv(k, v, n) VALUES (?, zeroblob(200), ?)";
const LOOKUP: &str = "SELECT v, n FROM kv WHERE k = ?";

/// The statements of transaction `i`: BEGIN, four upserts and a lookup over 10,000 keys
/// (a multiplicative hash of the counter, so deterministic), COMMIT.
fn transaction(i: u64) -> Vec<(&'static str, Vec<SqlValue>)> {
    let key = |j: u64| SqlValue::Integer(((i * 4 + j).wrapping_mul(2_654_435_761) % 10_000) as i64);
    let mut t = vec![("BEGIN", vec![])];
    for j in 0..4 {
        t.push((UPSERT, vec![key(j), SqlValue::Integer(i as i64)]));
    }
    t.push((LOOKUP, vec![key(5)]));
    t.push(("COMMIT", vec![]));
    t
}

/// Runs `transactions` transactions on `device` in `mode` and on an in-memory database.
pub fn bench_sql(
    device: &dyn crate::SsdSource,
    mode: JournalMode,
    transactions: u64,
) -> SqlResult<SqlBench> {
    bench_sql_progress(device, mode, transactions, &mut |_, _| {
        std::ops::ControlFlow::Continue(())
    })
}

/// [`bench_sql`] calling `progress(transactions done, transactions)` during the run on the
/// device; `Break` (Ctrl-C) stops it with [`crate::SqlError::Interrupted`] (a benchmark cut
/// short has no result).
pub fn bench_sql_progress(
    device: &dyn crate::SsdSource,
    mode: JournalMode,
    transactions: u64,
    progress: &mut dyn FnMut(u64, u64) -> std::ops::ControlFlow<()>,
) -> SqlResult<SqlBench> {
    let options = SqlOptions {
        journal_mode: mode,
        ..SqlOptions::default()
    };
    let mut db = SqlDb::open_device(device, Some(0), options)?;
    db.execute(SETUP, &[])?;
    db.reset_metrics()?;
    let start = Instant::now();
    for i in 0..transactions {
        if progress(i, transactions).is_break() {
            return Err(crate::SqlError::Interrupted);
        }
        for (sql, params) in transaction(i) {
            db.execute(sql, &params)?;
        }
    }
    let _ = progress(transactions, transactions);
    let wall_s_device = start.elapsed().as_secs_f64();
    let metrics = db.metrics()?;

    let memory = Connection::open_in_memory()?;
    memory.execute(SETUP, [])?;
    let start = Instant::now();
    for i in 0..transactions {
        for (sql, params) in transaction(i) {
            let mut stmt = memory.prepare(sql)?;
            run_statement(&mut stmt, &params)?;
        }
    }
    let wall_s_memory = start.elapsed().as_secs_f64();
    let per = |wall: f64| {
        if wall > 0.0 {
            transactions as f64 / wall
        } else {
            0.0
        }
    };
    Ok(SqlBench {
        journal_mode: mode.to_string(),
        transactions,
        wall_s_device,
        wall_s_memory,
        overhead_ratio: if wall_s_memory > 0.0 {
            wall_s_device / wall_s_memory
        } else {
            0.0
        },
        transactions_per_wall_s: per(wall_s_device),
        transactions_per_sim_s: per(metrics.sim_time_us / 1e6),
        commit_latency_us_p99: metrics.commit_latency_us_p99,
        waf: metrics.waf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::tests::SMALL_DEVICE;

    #[test]
    fn the_bench_runs_and_counts_its_transactions() {
        let b = bench_sql(
            &crate::device::named::Named(SMALL_DEVICE.into()),
            JournalMode::Wal,
            20,
        )
        .unwrap();
        assert_eq!(b.transactions, 20);
        assert!(b.transactions_per_sim_s > 0.0 && b.waf >= 1.0, "{b:?}");
    }
}
