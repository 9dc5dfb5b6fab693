//! TPC-C's consistency conditions 1–4 (clause 3.3.2), checked with SQL after a run.

use crate::db::{SqlDb, SqlValue, run_script_on};
use crate::error::SqlResult;

fn rows(db: &SqlDb, sql: &str) -> SqlResult<Vec<Vec<SqlValue>>> {
    Ok(run_script_on(db.connection(), sql)?
        .into_iter()
        .next_back()
        .map(|o| o.rows)
        .unwrap_or_default())
}

fn num(v: &SqlValue) -> Option<f64> {
    v.as_f64()
}

/// Every violated condition, one line each (empty: consistent).
pub fn check_consistency(db: &SqlDb) -> SqlResult<Vec<String>> {
    let mut violations = Vec::new();
    // 1: W_YTD = sum(D_YTD)
    for r in rows(
        db,
        "SELECT w_id, w_ytd, (SELECT total(d_ytd) FROM district WHERE d_w_id = w_id) FROM warehouse;",
    )? {
        let (w, d) = (
            num(&r[1]).unwrap_or(f64::NAN),
            num(&r[2]).unwrap_or(f64::NAN),
        );
        if (w - d).abs() > 0.01 * (1.0 + w.abs()) * 1e-6 + 0.005 {
            violations.push(format!(
                "condition 1: warehouse {}: w_ytd {w} != sum(d_ytd) {d}",
                r[0]
            ));
        }
    }
    // 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)
    for r in rows(
        db,
        "SELECT d_w_id, d_id, d_next_o_id - 1,
                (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id),
                (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)
         FROM district;",
    )? {
        let ok_orders = r[2] == r[3];
        let ok_new = r[4] == SqlValue::Null || r[2] == r[4];
        if !(ok_orders && ok_new) {
            violations.push(format!(
                "condition 2: district ({}, {}): d_next_o_id - 1 = {}, max(o_id) = {}, max(no_o_id) = {}",
                r[0], r[1], r[2], r[3], r[4]
            ));
        }
    }
    // 3: max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER rows)
    for r in rows(
        db,
        "SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*) FROM new_order GROUP BY no_w_id, no_d_id;",
    )? {
        if r[2] != r[3] {
            violations.push(format!(
                "condition 3: district ({}, {}): new-order id span {} but {} rows",
                r[0], r[1], r[2], r[3]
            ));
        }
    }
    // 4: sum(O_OL_CNT) = count(ORDER_LINE rows)
    for r in rows(
        db,
        "SELECT o_w_id, o_d_id, sum(o_ol_cnt),
                (SELECT count(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id)
         FROM orders GROUP BY o_w_id, o_d_id;",
    )? {
        if r[2] != r[3] {
            violations.push(format!(
                "condition 4: district ({}, {}): sum(o_ol_cnt) {} but {} order lines",
                r[0], r[1], r[2], r[3]
            ));
        }
    }
    Ok(violations)
}
