//! The TPC-C-like run: the mix, rollbacks, consistency conditions 1–4, determinism, errors.

use super::*;
use crate::db::{JournalMode, SqlOptions};
use crate::disk::tests::SMALL_DEVICE;

fn config(transactions: u64) -> TpccConfig {
    TpccConfig {
        warehouses: 2,
        terminals: 20,
        transactions,
        seed: 5,
        scale: TpccScale::small(),
    }
}

fn run(mode: JournalMode, c: &TpccConfig) -> TpccReport {
    let options = SqlOptions {
        journal_mode: mode,
        ..SqlOptions::default()
    };
    let mut db = SqlDb::open_device(SMALL_DEVICE, Some(1), options).unwrap();
    run_tpcc(&mut db, c).unwrap()
}

#[test]
fn a_run_keeps_conditions_1_to_4_and_follows_the_mix() {
    let r = run(JournalMode::Wal, &config(400));
    assert!(
        r.consistency_violations.is_empty(),
        "{:?}",
        r.consistency_violations
    );
    let count = |name: &str| r.transactions.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(r.transactions.iter().map(|(_, n)| n).sum::<u64>(), 400);
    assert!(
        (140..=220).contains(&count("new_order")),
        "{:?}",
        r.transactions
    );
    assert!(
        (130..=210).contains(&count("payment")),
        "{:?}",
        r.transactions
    );
    for kind in ["order_status", "delivery", "stock_level"] {
        assert!(
            (3..=35).contains(&count(kind)),
            "{kind}: {:?}",
            r.transactions
        );
    }
    assert!(r.tpmc > 0.0 && r.sim_time_s > 0.0);
    assert!(r.metrics.write_transactions > 300, "{:?}", r.metrics);
}

#[test]
fn every_journal_mode_stays_consistent_and_runs_are_deterministic() {
    for mode in [JournalMode::Delete, JournalMode::Truncate] {
        let a = run(mode, &config(60));
        assert!(
            a.consistency_violations.is_empty(),
            "{mode}: {:?}",
            a.consistency_violations
        );
        let b = run(mode, &config(60));
        assert_eq!(
            (a.tpmc, a.metrics.totals, a.transactions),
            (b.tpmc, b.metrics.totals, b.transactions)
        );
    }
}

#[test]
fn conditions_catch_a_broken_database() {
    let options = SqlOptions::default();
    let mut db = SqlDb::open_device(SMALL_DEVICE, Some(1), options).unwrap();
    run_tpcc(&mut db, &config(10)).unwrap();
    db.run_script("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1; DELETE FROM order_line WHERE ol_o_id = 3;")
        .unwrap();
    let v = check::check_consistency(&db).unwrap();
    assert!(v.iter().any(|m| m.starts_with("condition 1")), "{v:?}");
    assert!(v.iter().any(|m| m.starts_with("condition 4")), "{v:?}");
}

#[test]
fn bad_configs_name_the_field() {
    let mut c = config(10);
    c.terminals = 21;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("terminals 21")
    );
    c = config(10);
    c.warehouses = 0;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("warehouses 0")
    );
    c = config(0);
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("transactions 0")
    );
}
