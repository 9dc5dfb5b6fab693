//! The initial population (TPC-C clause 4.3.3), scaled by [`TpccScale`]: items, then per
//! warehouse its stock, districts, customers with one history row each, and orders with
//! their order lines, the last 30 % of each district's orders still new. Loaded through the
//! connection with cached statements, one transaction per warehouse (not measured).

use super::TpccScale;
use super::random::{TpccRng, last_name};
use crate::db::SqlDb;
use crate::error::SqlResult;
use rusqlite::params;

/// The date of every loaded row.
pub const LOAD_DATE: &str = "2026-01-01 00:00:00";

/// Loads `warehouses` warehouses at `scale`.
pub fn load(db: &SqlDb, warehouses: i64, scale: &TpccScale, rng: &mut TpccRng) -> SqlResult<()> {
    let conn = db.connection();
    conn.execute_batch(super::schema::DDL)?;
    conn.execute_batch("BEGIN")?;
    {
        let mut item = conn.prepare_cached("INSERT INTO item VALUES (?, ?, ?, ?, ?)")?;
        for i in 1..=scale.items {
            let price = rng.uniform(100, 10_000) as f64 / 100.0;
            item.execute(params![
                i,
                rng.uniform(1, 10_000),
                rng.astring(14, 24),
                price,
                rng.data(26, 50)
            ])?;
        }
    }
    conn.execute_batch("COMMIT")?;
    for w in 1..=warehouses {
        conn.execute_batch("BEGIN")?;
        load_warehouse(db, w, scale, rng)?;
        conn.execute_batch("COMMIT")?;
    }
    Ok(())
}

fn load_warehouse(db: &SqlDb, w: i64, scale: &TpccScale, rng: &mut TpccRng) -> SqlResult<()> {
    let conn = db.connection();
    let tax = |rng: &mut TpccRng| rng.uniform(0, 2000) as f64 / 10_000.0;
    conn.execute(
        "INSERT INTO warehouse VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params![
            w,
            rng.astring(6, 10),
            rng.astring(10, 20),
            rng.astring(10, 20),
            rng.astring(10, 20),
            rng.astring(2, 2),
            rng.nstring(9),
            tax(rng),
            30_000.0 * super::DISTRICTS as f64
        ],
    )?;
    {
        let mut stock = conn.prepare_cached(
            "INSERT INTO stock VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?)",
        )?;
        for i in 1..=scale.items {
            let d: Vec<String> = (0..10).map(|_| rng.astring(24, 24)).collect();
            stock.execute(params![
                i,
                w,
                rng.uniform(10, 100),
                d[0],
                d[1],
                d[2],
                d[3],
                d[4],
                d[5],
                d[6],
                d[7],
                d[8],
                d[9],
                rng.data(26, 50)
            ])?;
        }
    }
    for d in 1..=super::DISTRICTS {
        conn.execute(
            "INSERT INTO district VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 30000.0, ?)",
            params![
                d,
                w,
                rng.astring(6, 10),
                rng.astring(10, 20),
                rng.astring(10, 20),
                rng.astring(10, 20),
                rng.astring(2, 2),
                rng.nstring(9),
                tax(rng),
                scale.orders_per_district + 1
            ],
        )?;
        load_customers(db, w, d, scale, rng)?;
        load_orders(db, w, d, scale, rng)?;
    }
    Ok(())
}

fn load_customers(
    db: &SqlDb,
    w: i64,
    d: i64,
    scale: &TpccScale,
    rng: &mut TpccRng,
) -> SqlResult<()> {
    let conn = db.connection();
    let mut customer = conn.prepare_cached(
        "INSERT INTO customer VALUES (?, ?, ?, ?, 'OE', ?, ?, ?, ?, ?, ?, ?, ?, ?, 50000.0, ?, -10.0, 10.0, 1, 0, ?)",
    )?;
    let mut history =
        conn.prepare_cached("INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, 10.0, ?)")?;
    for c in 1..=scale.customers_per_district {
        let last = if c <= 1000 {
            last_name(c - 1)
        } else {
            last_name(rng.last_name_number(scale.customers_per_district))
        };
        let credit = if rng.chance(0.1) { "BC" } else { "GC" };
        customer.execute(params![
            c,
            d,
            w,
            rng.astring(8, 16),
            last,
            rng.astring(10, 20),
            rng.astring(10, 20),
            rng.astring(10, 20),
            rng.astring(2, 2),
            rng.nstring(9),
            rng.nstring(16),
            LOAD_DATE,
            credit,
            rng.uniform(0, 5000) as f64 / 10_000.0,
            rng.astring(300, 500)
        ])?;
        history.execute(params![c, d, w, d, w, LOAD_DATE, rng.astring(12, 24)])?;
    }
    Ok(())
}

fn load_orders(db: &SqlDb, w: i64, d: i64, scale: &TpccScale, rng: &mut TpccRng) -> SqlResult<()> {
    let conn = db.connection();
    let mut order = conn.prepare_cached("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, 1)")?;
    let mut line =
        conn.prepare_cached("INSERT INTO order_line VALUES (?, ?, ?, ?, ?, ?, ?, 5, ?, ?)")?;
    let mut new_order = conn.prepare_cached("INSERT INTO new_order VALUES (?, ?, ?)")?;
    // o_c_id: a random permutation of the customers (Fisher-Yates on the seeded stream)
    let n = scale.orders_per_district;
    let mut customers: Vec<i64> = (1..=n)
        .map(|o| (o - 1) % scale.customers_per_district + 1)
        .collect();
    for i in (1..customers.len()).rev() {
        let j = rng.uniform(0, i as i64) as usize;
        customers.swap(i, j);
    }
    let first_new = n - scale.new_orders_per_district() + 1;
    for o in 1..=n {
        let delivered = o < first_new;
        let carrier = delivered.then(|| rng.uniform(1, 10));
        let lines = rng.uniform(5, 15);
        order.execute(params![
            o,
            d,
            w,
            customers[(o - 1) as usize],
            LOAD_DATE,
            carrier,
            lines
        ])?;
        for number in 1..=lines {
            let amount = if delivered {
                0.0
            } else {
                rng.uniform(1, 999_999) as f64 / 100.0
            };
            let date = delivered.then_some(LOAD_DATE);
            line.execute(params![
                o,
                d,
                w,
                number,
                rng.uniform(1, scale.items),
                w,
                date,
                amount,
                rng.astring(24, 24)
            ])?;
        }
        if !delivered {
            new_order.execute(params![o, d, w])?;
        }
    }
    Ok(())
}
