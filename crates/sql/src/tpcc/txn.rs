//! The five TPC-C transactions (clause 2.4–2.8) as SQL through [`SqlDb::execute`], so the
//! metrics see each one as a transaction. Dates come from SQLite's `datetime('now')`, which
//! reads the simulated clock.

use super::random::{TpccRng, last_name};
use super::{DISTRICTS, TpccScale};
use crate::db::{SqlDb, SqlValue, StatementOutput};
use crate::error::{SqlError, SqlResult};

/// The five transaction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxKind {
    pub const ALL: [TxKind; 5] = [
        TxKind::NewOrder,
        TxKind::Payment,
        TxKind::OrderStatus,
        TxKind::Delivery,
        TxKind::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TxKind::NewOrder => "new_order",
            TxKind::Payment => "payment",
            TxKind::OrderStatus => "order_status",
            TxKind::Delivery => "delivery",
            TxKind::StockLevel => "stock_level",
        }
    }

    /// The standard mix (clause 5.2.3): 45 / 43 / 4 / 4 / 4 %, drawn from `roll` in [0, 100).
    pub fn from_roll(roll: i64) -> TxKind {
        match roll {
            0..45 => TxKind::NewOrder,
            45..88 => TxKind::Payment,
            88..92 => TxKind::OrderStatus,
            92..96 => TxKind::Delivery,
            _ => TxKind::StockLevel,
        }
    }
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// New-Order's 1 % with an unused item number (clause 2.4.1.4).
    RolledBack,
}

/// What a transaction needs besides the database.
#[derive(Debug)]
pub struct Terminal<'a> {
    pub warehouse: i64,
    pub district: i64,
    pub warehouses: i64,
    pub scale: &'a TpccScale,
}

fn p<const N: usize>(values: [SqlValue; N]) -> Vec<SqlValue> {
    values.to_vec()
}

fn run(db: &mut SqlDb, sql: &str, params: &[SqlValue]) -> SqlResult<StatementOutput> {
    db.execute(sql, params)
}

/// The first row of a query; a missing row is an error naming the query.
fn row(db: &mut SqlDb, sql: &str, params: &[SqlValue]) -> SqlResult<Vec<SqlValue>> {
    run(db, sql, params)?
        .rows
        .into_iter()
        .next()
        .ok_or_else(|| SqlError::Usage(format!("tpcc: no row for `{sql}`")))
}

fn int(v: &SqlValue) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn real(v: &SqlValue) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

pub fn run_one(
    db: &mut SqlDb,
    kind: TxKind,
    t: &Terminal<'_>,
    rng: &mut TpccRng,
) -> SqlResult<Outcome> {
    match kind {
        TxKind::NewOrder => new_order(db, t, rng),
        TxKind::Payment => payment(db, t, rng).map(|()| Outcome::Committed),
        TxKind::OrderStatus => order_status(db, t, rng).map(|()| Outcome::Committed),
        TxKind::Delivery => delivery(db, t, rng).map(|()| Outcome::Committed),
        TxKind::StockLevel => stock_level(db, t, rng).map(|()| Outcome::Committed),
    }
}

fn new_order(db: &mut SqlDb, t: &Terminal<'_>, rng: &mut TpccRng) -> SqlResult<Outcome> {
    let (w, d) = (t.warehouse, t.district);
    let c = rng.customer_id(t.scale.customers_per_district);
    let lines = rng.uniform(5, 15);
    let rollback = rng.chance(0.01);
    let mut items = Vec::new();
    for n in 1..=lines {
        let unused = rollback && n == lines;
        let item = if unused {
            t.scale.items + 1
        } else {
            rng.item_id(t.scale.items)
        };
        let supply = if t.warehouses > 1 && rng.chance(0.01) {
            let other = rng.uniform(1, t.warehouses - 1);
            if other >= w { other + 1 } else { other }
        } else {
            w
        };
        items.push((item, supply, rng.uniform(1, 10)));
    }
    let all_local = i64::from(items.iter().all(|(_, s, _)| *s == w));
    run(db, "BEGIN", &[])?;
    let w_tax = real(
        &row(
            db,
            "SELECT w_tax FROM warehouse WHERE w_id = ?",
            &p([w.into()]),
        )?[0],
    );
    let dist = row(
        db,
        "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
        &p([w.into(), d.into()]),
    )?;
    let (d_tax, o) = (real(&dist[0]), int(&dist[1]));
    run(
        db,
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
        &p([w.into(), d.into()]),
    )?;
    let cust = row(
        db,
        "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        &p([w.into(), d.into(), c.into()]),
    )?;
    let discount = real(&cust[0]);
    run(
        db,
        "INSERT INTO orders VALUES (?, ?, ?, ?, datetime('now'), NULL, ?, ?)",
        &p([
            o.into(),
            d.into(),
            w.into(),
            c.into(),
            lines.into(),
            all_local.into(),
        ]),
    )?;
    run(
        db,
        "INSERT INTO new_order VALUES (?, ?, ?)",
        &p([o.into(), d.into(), w.into()]),
    )?;
    let dist_column = format!("s_dist_{d:02}");
    for (number, (item, supply, quantity)) in (1i64..).zip(items) {
        let found = run(
            db,
            "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
            &p([item.into()]),
        )?;
        let Some(item_row) = found.rows.first() else {
            run(db, "ROLLBACK", &[])?;
            return Ok(Outcome::RolledBack);
        };
        let price = real(&item_row[0]);
        let stock = row(
            db,
            &format!(
                "SELECT s_quantity, {dist_column}, s_data FROM stock WHERE s_i_id = ? AND s_w_id = ?"
            ),
            &p([item.into(), supply.into()]),
        )?;
        let s_quantity = int(&stock[0]);
        let new_quantity = if s_quantity >= quantity + 10 {
            s_quantity - quantity
        } else {
            s_quantity - quantity + 91
        };
        run(
            db,
            "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,
             s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
            &p([
                new_quantity.into(),
                quantity.into(),
                i64::from(supply != w).into(),
                item.into(),
                supply.into(),
            ]),
        )?;
        let amount = quantity as f64 * price * (1.0 + w_tax + d_tax) * (1.0 - discount);
        run(
            db,
            "INSERT INTO order_line VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
            &p([
                o.into(),
                d.into(),
                w.into(),
                number.into(),
                item.into(),
                supply.into(),
                quantity.into(),
                amount.into(),
                stock[1].clone(),
            ]),
        )?;
    }
    run(db, "COMMIT", &[])?;
    Ok(Outcome::Committed)
}

/// A customer by last name (the middle one by first name, clause 2.5.2.2) or by id (40 %).
fn pick_customer(
    db: &mut SqlDb,
    w: i64,
    d: i64,
    scale: &TpccScale,
    rng: &mut TpccRng,
) -> SqlResult<i64> {
    if rng.chance(0.4) {
        return Ok(rng.customer_id(scale.customers_per_district));
    }
    let name = last_name(rng.last_name_number(scale.customers_per_district));
    let found = run(
        db,
        "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
        &p([w.into(), d.into(), name.into()]),
    )?;
    match found.rows.len() {
        0 => Ok(rng.customer_id(scale.customers_per_district)),
        n => Ok(int(&found.rows[(n - 1) / 2][0])),
    }
}

fn payment(db: &mut SqlDb, t: &Terminal<'_>, rng: &mut TpccRng) -> SqlResult<()> {
    let (w, d) = (t.warehouse, t.district);
    let amount = rng.uniform(100, 500_000) as f64 / 100.0;
    let (cw, cd) = if t.warehouses > 1 && rng.chance(0.15) {
        let other = rng.uniform(1, t.warehouses - 1);
        (
            if other >= w { other + 1 } else { other },
            rng.uniform(1, DISTRICTS),
        )
    } else {
        (w, d)
    };
    run(db, "BEGIN", &[])?;
    run(
        db,
        "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
        &p([amount.into(), w.into()]),
    )?;
    let wname = row(
        db,
        "SELECT w_name FROM warehouse WHERE w_id = ?",
        &p([w.into()]),
    )?;
    run(
        db,
        "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
        &p([amount.into(), w.into(), d.into()]),
    )?;
    let dname = row(
        db,
        "SELECT d_name FROM district WHERE d_w_id = ? AND d_id = ?",
        &p([w.into(), d.into()]),
    )?;
    let c = pick_customer(db, cw, cd, t.scale, rng)?;
    let cust = row(
        db,
        "SELECT c_credit, c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        &p([cw.into(), cd.into(), c.into()]),
    )?;
    run(
        db,
        "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,
         c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        &p([amount.into(), amount.into(), cw.into(), cd.into(), c.into()]),
    )?;
    if cust[0] == SqlValue::from("BC") {
        run(
            db,
            "UPDATE customer SET c_data = substr(? || c_data, 1, 500)
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            &p([
                format!("{c} {cd} {cw} {d} {w} {amount:.2} ").into(),
                cw.into(),
                cd.into(),
                c.into(),
            ]),
        )?;
    }
    let data = format!("{}    {}", wname[0], dname[0]);
    run(
        db,
        "INSERT INTO history VALUES (?, ?, ?, ?, ?, datetime('now'), ?, ?)",
        &p([
            c.into(),
            cd.into(),
            cw.into(),
            d.into(),
            w.into(),
            amount.into(),
            data.into(),
        ]),
    )?;
    run(db, "COMMIT", &[])?;
    Ok(())
}

fn order_status(db: &mut SqlDb, t: &Terminal<'_>, rng: &mut TpccRng) -> SqlResult<()> {
    let (w, d) = (t.warehouse, t.district);
    run(db, "BEGIN", &[])?;
    let c = pick_customer(db, w, d, t.scale, rng)?;
    run(
        db,
        "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        &p([w.into(), d.into(), c.into()]),
    )?;
    let last = run(
        db,
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?
         ORDER BY o_id DESC LIMIT 1",
        &p([w.into(), d.into(), c.into()]),
    )?;
    if let Some(order) = last.rows.first() {
        run(
            db,
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
             WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            &p([w.into(), d.into(), order[0].clone()]),
        )?;
    }
    run(db, "COMMIT", &[])?;
    Ok(())
}

fn delivery(db: &mut SqlDb, t: &Terminal<'_>, rng: &mut TpccRng) -> SqlResult<()> {
    let w = t.warehouse;
    let carrier = rng.uniform(1, 10);
    run(db, "BEGIN", &[])?;
    for d in 1..=DISTRICTS {
        let oldest = row(
            db,
            "SELECT min(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?",
            &p([w.into(), d.into()]),
        )?;
        let Some(o) = oldest[0].as_i64() else {
            continue;
        };
        let key = p([w.into(), d.into(), o.into()]);
        run(
            db,
            "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
            &key,
        )?;
        let c = int(&row(
            db,
            "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            &key,
        )?[0]);
        run(
            db,
            "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            &p([carrier.into(), w.into(), d.into(), o.into()]),
        )?;
        run(
            db,
            "UPDATE order_line SET ol_delivery_d = datetime('now') WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            &key,
        )?;
        let total = real(
            &row(
                db,
                "SELECT total(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                &key,
            )?[0],
        );
        run(
            db,
            "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            &p([total.into(), w.into(), d.into(), c.into()]),
        )?;
    }
    run(db, "COMMIT", &[])?;
    Ok(())
}

fn stock_level(db: &mut SqlDb, t: &Terminal<'_>, rng: &mut TpccRng) -> SqlResult<()> {
    let (w, d) = (t.warehouse, t.district);
    let threshold = rng.uniform(10, 20);
    run(db, "BEGIN", &[])?;
    let next = int(&row(
        db,
        "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
        &p([w.into(), d.into()]),
    )?[0]);
    run(
        db,
        "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_i_id = ol_i_id AND s_w_id = ol_w_id
         WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_quantity < ?",
        &p([w.into(), d.into(), (next - 20).into(), next.into(), threshold.into()]),
    )?;
    run(db, "COMMIT", &[])?;
    Ok(())
}
