//! A TPC-C-like workload on SQLite on the simulated SSD (SPEC W3): the nine tables, the five
//! transactions in the standard mix (New-Order 45 %, Payment 43 %, Order-Status, Delivery,
//! Stock-Level 4 % each), warehouses and terminals configurable, deterministic by seed.
//!
//! "Like": no keying or think times (transactions run back to back, one at a time, since one
//! SQLite connection serialises them); terminal `t` works on warehouse `t % W + 1`, district
//! `(t / W) % 10 + 1`, and the terminals take turns. tpmC is committed New-Orders per minute of
//! simulated time. The population can be scaled down ([`TpccScale`]). After a run, TPC-C's
//! consistency conditions 1–4 are checked ([`check::check_consistency`]).

pub mod check;
pub mod load;
pub mod random;
pub mod schema;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::db::SqlDb;
use crate::error::{SqlError, SqlResult};
use crate::metrics::SqlMetrics;
use random::TpccRng;
use serde::Serialize;
use std::ops::ControlFlow;
use std::time::Instant;
use txn::{Outcome, Terminal, TxKind};

/// Districts per warehouse (fixed by TPC-C).
pub const DISTRICTS: i64 = 10;
/// Most warehouses a run takes.
pub const WAREHOUSES_MAX: i64 = 1000;

/// Cardinalities of the population (TPC-C's: [`TpccScale::standard`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TpccScale {
    pub items: i64,
    pub customers_per_district: i64,
    pub orders_per_district: i64,
}

impl TpccScale {
    /// TPC-C's: 100,000 items, 3,000 customers and 3,000 orders per district.
    pub fn standard() -> Self {
        TpccScale {
            items: 100_000,
            customers_per_district: 3000,
            orders_per_district: 3000,
        }
    }

    /// A hundredth, for tests and quick runs: 1,000 items, 30 customers and orders per district.
    pub fn small() -> Self {
        TpccScale {
            items: 1000,
            customers_per_district: 30,
            orders_per_district: 30,
        }
    }

    /// The last 30 % of each district's orders are new (900 of 3,000).
    pub fn new_orders_per_district(&self) -> i64 {
        self.orders_per_district * 3 / 10
    }
}

/// A run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TpccConfig {
    pub warehouses: i64,
    pub terminals: i64,
    pub transactions: u64,
    pub seed: u64,
    pub scale: TpccScale,
}

impl TpccConfig {
    pub fn validate(&self) -> SqlResult<()> {
        let bad = |m: String| Err(SqlError::Usage(m));
        if !(1..=WAREHOUSES_MAX).contains(&self.warehouses) {
            return bad(format!(
                "warehouses {}: from 1 to {WAREHOUSES_MAX}",
                self.warehouses
            ));
        }
        let terminals_max = self.warehouses * DISTRICTS;
        if !(1..=terminals_max).contains(&self.terminals) {
            return bad(format!(
                "terminals {}: from 1 to {terminals_max} (10 per warehouse, one per district)",
                self.terminals
            ));
        }
        if self.transactions == 0 {
            return bad("transactions 0: at least 1".into());
        }
        let s = &self.scale;
        if s.items < 15 || s.customers_per_district < 1 || s.orders_per_district < 10 {
            return bad(format!(
                "scale: items ({}) at least 15, customers_per_district ({}) at least 1, orders_per_district ({}) at least 10",
                s.items, s.customers_per_district, s.orders_per_district
            ));
        }
        Ok(())
    }
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct TpccReport {
    pub config: TpccConfig,
    /// Transactions run, by type (in [`TxKind::ALL`] order, named).
    pub transactions: Vec<(String, u64)>,
    pub new_order_rollbacks: u64,
    pub sim_time_s: f64,
    /// Committed New-Orders per simulated minute.
    pub tpmc: f64,
    pub wall_s_load: f64,
    pub wall_s_run: f64,
    pub transactions_per_wall_s: f64,
    /// Device metrics of the run (load excluded).
    pub metrics: SqlMetrics,
    /// Violated consistency conditions (empty: 1–4 hold).
    pub consistency_violations: Vec<String>,
    /// The run was stopped early (Ctrl-C): `transactions` counts those that completed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// Loads the population and runs `config.transactions` transactions on `db`.
pub fn run_tpcc(db: &mut SqlDb, config: &TpccConfig) -> SqlResult<TpccReport> {
    run_tpcc_with(db, config, &mut |_, _| ControlFlow::Continue(()))
}

/// [`run_tpcc`] calling `progress(transactions done, transactions)` after each transaction;
/// `Break` (or the database's interrupt check, [`SqlDb::set_interrupt`], during a transaction)
/// ends the run early: the report then covers the transactions that completed and says
/// `interrupted`. An interrupt during the load is [`crate::SqlError::Interrupted`].
pub fn run_tpcc_with(
    db: &mut SqlDb,
    config: &TpccConfig,
    progress: &mut dyn FnMut(u64, u64) -> ControlFlow<()>,
) -> SqlResult<TpccReport> {
    let wall_s_load = load_tpcc(db, config)?;
    run_tpcc_loaded(db, config, wall_s_load, progress)
}

/// The load half of [`run_tpcc_with`]: creates and fills the tables of `config`; returns the
/// wall seconds it took. A caller measuring the run alone (the device's counters after the
/// load) calls this, takes its snapshot, then [`run_tpcc_loaded`].
pub fn load_tpcc(db: &mut SqlDb, config: &TpccConfig) -> SqlResult<f64> {
    config.validate()?;
    let mut rng = TpccRng::new(config.seed, "tpcc-load");
    let start = Instant::now();
    load::load(db, config.warehouses, &config.scale, &mut rng)?;
    Ok(start.elapsed().as_secs_f64())
}

/// The run half of [`run_tpcc_with`] on a database [`load_tpcc`] loaded with the same
/// `config`; `wall_s_load` is reported as given.
pub fn run_tpcc_loaded(
    db: &mut SqlDb,
    config: &TpccConfig,
    wall_s_load: f64,
    progress: &mut dyn FnMut(u64, u64) -> ControlFlow<()>,
) -> SqlResult<TpccReport> {
    config.validate()?;
    db.reset_metrics()?;

    let mut rng = TpccRng::new(config.seed, "tpcc-run");
    let mut counts = [0u64; 5];
    let mut rollbacks = 0;
    let mut new_orders = 0u64;
    let mut done = 0u64;
    let mut interrupted = false;
    let start = Instant::now();
    for i in 0..config.transactions {
        if progress(i, config.transactions).is_break() {
            interrupted = true;
            break;
        }
        let t = (i % config.terminals as u64) as i64;
        let terminal = Terminal {
            warehouse: t % config.warehouses + 1,
            district: (t / config.warehouses) % DISTRICTS + 1,
            warehouses: config.warehouses,
            scale: &config.scale,
        };
        let kind = TxKind::from_roll(rng.uniform(0, 99));
        match txn::run_one(db, kind, &terminal, &mut rng) {
            Ok(Outcome::Committed) if kind == TxKind::NewOrder => new_orders += 1,
            Ok(Outcome::Committed) => {}
            Ok(Outcome::RolledBack) => rollbacks += 1,
            Err(crate::SqlError::Interrupted) => {
                // SQLite rolled the statement back; the transaction goes with it
                if db.in_transaction() {
                    db.set_interrupt(None)?;
                    db.execute("ROLLBACK", &[])?;
                }
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
        counts[kind as usize] += 1;
        done += 1;
    }
    if !interrupted {
        let _ = progress(done, config.transactions);
    }
    // the consistency check reads the whole database: it runs to its end
    db.set_interrupt(None)?;
    let wall_s_run = start.elapsed().as_secs_f64();
    let metrics = db.metrics()?;
    let sim_time_s = metrics.sim_time_us / 1e6;
    Ok(TpccReport {
        config: config.clone(),
        transactions: TxKind::ALL
            .iter()
            .map(|k| (k.name().to_string(), counts[*k as usize]))
            .collect(),
        new_order_rollbacks: rollbacks,
        sim_time_s,
        tpmc: if sim_time_s > 0.0 {
            new_orders as f64 / (sim_time_s / 60.0)
        } else {
            0.0
        },
        wall_s_load,
        wall_s_run,
        transactions_per_wall_s: if wall_s_run > 0.0 {
            done as f64 / wall_s_run
        } else {
            0.0
        },
        metrics,
        consistency_violations: check::check_consistency(db)?,
        interrupted,
    })
}
