//! Per-transaction device metrics.
//!
//! A transaction is what SQLite runs between two moments the connection is in autocommit
//! mode: one statement outside `BEGIN … COMMIT`, or everything from `BEGIN` to its `COMMIT` or
//! `ROLLBACK`. After every statement the tracker looks at the connection; when a transaction
//! has ended it takes the device counters' difference since its first statement. A
//! transaction that wrote to the device (a host write or a sync) is a *write transaction*:
//! the per-transaction means and the commit latency are over those. The commit latency is the
//! simulated time of the statement that ended the transaction (the `COMMIT`, or the
//! autocommit statement itself), where SQLite writes and syncs its journal or WAL.

use crate::disk::DeviceSnapshot;
use nandlab_core::{LatencyHistogram, SimTime};
use serde::Serialize;

/// Sums of the counters over a set of transactions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TxTotals {
    pub host_pages_read: u64,
    pub host_pages_written: u64,
    pub syncs: u64,
    pub nand_pages_read: u64,
    pub nand_pages_programmed: u64,
    pub nand_blocks_erased: u64,
    /// Device energy: chip, idle and a PCM stage's.
    pub energy_uj: f64,
    /// The PCM stage's share of `energy_uj` (0 without one).
    pub pcm_energy_uj: f64,
}

impl TxTotals {
    /// The counters from `start` to `end`.
    pub fn between(start: &DeviceSnapshot, end: &DeviceSnapshot) -> TxTotals {
        TxTotals {
            host_pages_read: end.io.pages_read - start.io.pages_read,
            host_pages_written: end.io.pages_written - start.io.pages_written,
            syncs: end.io.syncs - start.io.syncs,
            nand_pages_read: end.nand_pages_read - start.nand_pages_read,
            nand_pages_programmed: end.nand_pages_programmed - start.nand_pages_programmed,
            nand_blocks_erased: end.nand_blocks_erased - start.nand_blocks_erased,
            energy_uj: (end.energy_pj - start.energy_pj) / 1e6,
            pcm_energy_uj: (end.pcm_energy_pj - start.pcm_energy_pj) / 1e6,
        }
    }

    fn add(&mut self, o: &TxTotals) {
        self.host_pages_read += o.host_pages_read;
        self.host_pages_written += o.host_pages_written;
        self.syncs += o.syncs;
        self.nand_pages_read += o.nand_pages_read;
        self.nand_pages_programmed += o.nand_pages_programmed;
        self.nand_blocks_erased += o.nand_blocks_erased;
        self.energy_uj += o.energy_uj;
        self.pcm_energy_uj += o.pcm_energy_uj;
    }

    /// Flash pages programmed per host page written (0 when nothing was written).
    pub fn waf(&self) -> f64 {
        ratio(self.nand_pages_programmed, self.host_pages_written)
    }
}

/// Follows transactions statement by statement (module docs).
#[derive(Clone, Debug)]
pub struct TxTracker {
    measure_start: DeviceSnapshot,
    tx_start: Option<DeviceSnapshot>,
    /// Simulated time (ps) the current statement began.
    statement_start_ps: u64,
    statements: u64,
    write_transactions: u64,
    read_transactions: u64,
    write_totals: TxTotals,
    commit_latency: LatencyHistogram,
}

impl TxTracker {
    pub fn new(now: DeviceSnapshot) -> Self {
        TxTracker {
            measure_start: now,
            tx_start: None,
            statement_start_ps: now.now_ps,
            statements: 0,
            write_transactions: 0,
            read_transactions: 0,
            write_totals: TxTotals::default(),
            commit_latency: LatencyHistogram::new(),
        }
    }

    /// Whether the next statement starts a transaction ([`TxTracker::statement_begins`]
    /// then needs the device's full snapshot; otherwise only the time).
    pub fn starts_transaction(&self) -> bool {
        self.tx_start.is_none()
    }

    /// Before a statement runs, at simulated time `now_ps`; `snapshot` is the device now when
    /// the statement starts a transaction ([`TxTracker::starts_transaction`]).
    pub fn statement_begins(&mut self, now_ps: u64, snapshot: Option<DeviceSnapshot>) {
        self.statement_start_ps = now_ps;
        if self.tx_start.is_none() {
            self.tx_start = Some(snapshot.expect("a transaction starts with a full snapshot"));
        }
    }

    /// Whether a statement that leaves the connection in `autocommit` ends a transaction
    /// ([`TxTracker::statement_ends`] then needs the device's full snapshot).
    pub fn ends_transaction(&self, autocommit: bool) -> bool {
        autocommit && self.tx_start.is_some()
    }

    /// After a statement ran; `autocommit` is the connection's state now, `now` the device
    /// now when the statement ends a transaction ([`TxTracker::ends_transaction`]).
    pub fn statement_ends(&mut self, now: Option<DeviceSnapshot>, autocommit: bool) {
        self.statements += 1;
        if !autocommit {
            return;
        }
        let Some(start) = self.tx_start.take() else {
            return;
        };
        let now = now.expect("a transaction ends with a full snapshot");
        let totals = TxTotals::between(&start, &now);
        if totals.host_pages_written > 0 || totals.syncs > 0 {
            self.write_transactions += 1;
            self.write_totals.add(&totals);
            let latency = now.now_ps - self.statement_start_ps;
            self.commit_latency.record(SimTime::from_ps(latency));
        } else {
            self.read_transactions += 1;
        }
    }

    /// Metrics since the tracker started, with the device as it is `now`.
    pub fn metrics(&self, now: &DeviceSnapshot, journal_mode: &str) -> SqlMetrics {
        let all = TxTotals::between(&self.measure_start, now);
        let n = self.write_transactions;
        let per = |v: u64| ratio(v, n);
        let lat = self.commit_latency.summary();
        SqlMetrics {
            journal_mode: journal_mode.to_string(),
            statements: self.statements,
            write_transactions: n,
            read_transactions: self.read_transactions,
            sim_time_us: (now.now_ps - self.measure_start.now_ps) as f64 / 1e6,
            host_pages_read_per_tx: per(self.write_totals.host_pages_read),
            host_pages_written_per_tx: per(self.write_totals.host_pages_written),
            syncs_per_tx: per(self.write_totals.syncs),
            nand_pages_read_per_tx: per(self.write_totals.nand_pages_read),
            nand_pages_programmed_per_tx: per(self.write_totals.nand_pages_programmed),
            nand_blocks_erased_per_tx: per(self.write_totals.nand_blocks_erased),
            energy_uj_per_tx: if n > 0 {
                self.write_totals.energy_uj / n as f64
            } else {
                0.0
            },
            waf: all.waf(),
            commit_latency_us_p50: lat.p50_us,
            commit_latency_us_p99: lat.p99_us,
            commit_latency_us_max: lat.max_us,
            commit_latency_us_mean: lat.mean_us,
            totals: all,
            pages_trimmed: now.io.pages_trimmed - self.measure_start.io.pages_trimmed,
        }
    }
}

/// What a run of SQL did to the device (module docs). Latencies are simulated time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SqlMetrics {
    pub journal_mode: String,
    pub statements: u64,
    pub write_transactions: u64,
    pub read_transactions: u64,
    pub sim_time_us: f64,
    pub host_pages_read_per_tx: f64,
    pub host_pages_written_per_tx: f64,
    pub syncs_per_tx: f64,
    pub nand_pages_read_per_tx: f64,
    pub nand_pages_programmed_per_tx: f64,
    pub nand_blocks_erased_per_tx: f64,
    pub energy_uj_per_tx: f64,
    /// Flash pages programmed (host programs, GC copies and copybacks) per host page written,
    /// over the whole measurement.
    pub waf: f64,
    pub commit_latency_us_p50: f64,
    pub commit_latency_us_p99: f64,
    pub commit_latency_us_max: f64,
    pub commit_latency_us_mean: f64,
    /// Every counter over the whole measurement (read-only transactions included).
    pub totals: TxTotals,
    pub pages_trimmed: u64,
}

impl SqlMetrics {
    /// `(name, value)` pairs in a fixed order, for printing.
    pub fn rows(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("statements", self.statements as f64),
            ("write_transactions", self.write_transactions as f64),
            ("read_transactions", self.read_transactions as f64),
            ("sim_time_us", self.sim_time_us),
            ("host_pages_read_per_tx", self.host_pages_read_per_tx),
            ("host_pages_written_per_tx", self.host_pages_written_per_tx),
            ("syncs_per_tx", self.syncs_per_tx),
            ("nand_pages_read_per_tx", self.nand_pages_read_per_tx),
            (
                "nand_pages_programmed_per_tx",
                self.nand_pages_programmed_per_tx,
            ),
            ("nand_blocks_erased_per_tx", self.nand_blocks_erased_per_tx),
            ("energy_uj_per_tx", self.energy_uj_per_tx),
            ("waf", self.waf),
            ("commit_latency_us_p50", self.commit_latency_us_p50),
            ("commit_latency_us_p99", self.commit_latency_us_p99),
            ("commit_latency_us_max", self.commit_latency_us_max),
            ("host_pages_read", self.totals.host_pages_read as f64),
            ("host_pages_written", self.totals.host_pages_written as f64),
            ("syncs", self.totals.syncs as f64),
            ("pages_trimmed", self.pages_trimmed as f64),
            ("nand_pages_read", self.totals.nand_pages_read as f64),
            (
                "nand_pages_programmed",
                self.totals.nand_pages_programmed as f64,
            ),
            ("nand_blocks_erased", self.totals.nand_blocks_erased as f64),
            ("energy_uj", self.totals.energy_uj),
        ]
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}
