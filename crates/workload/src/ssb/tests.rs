//! SSB data against the specification: cardinalities, domains, distributions, determinism.

use super::*;

#[test]
fn cardinalities_follow_the_spec() {
    let one = Cardinalities::of(1.0).unwrap();
    assert_eq!(
        (
            one.orders,
            one.customers,
            one.suppliers,
            one.parts,
            one.dates
        ),
        (1_500_000, 30_000, 2_000, 200_000, 2_556)
    );
    let ten = Cardinalities::of(10.0).unwrap();
    assert_eq!(ten.parts, 200_000 * 4); // ⌊1 + log2 10⌋ = 4
    assert_eq!(ten.customers, 300_000);
    let quick = Cardinalities::of(0.01).unwrap();
    assert_eq!(
        (quick.customers, quick.suppliers, quick.parts),
        (300, 20, 2_000)
    );
    for bad in [0.0, -1.0, f64::NAN, 1e9] {
        let e = Cardinalities::of(bad).unwrap_err().to_string();
        assert!(e.starts_with("scale_factor:"), "{e}");
    }
}

#[test]
fn lineorder_rows_and_distributions_match_the_spec() {
    let data = SsbData::new(0.01, 7).unwrap();
    let card = data.cardinalities();
    let mut rows = 0u64;
    let mut orders = std::collections::BTreeSet::new();
    let mut quantity_sum = 0u64;
    let mut discount_counts = [0u64; 11];
    let mut years = [0u64; 7];
    for lo in data.lineorder() {
        rows += 1;
        orders.insert(lo.orderkey);
        assert!((1..=7).contains(&lo.linenumber));
        assert!((1..=50).contains(&lo.quantity));
        assert!(lo.tax_percent <= 8 && lo.shipmode < 7 && lo.orderpriority < 5);
        assert_ne!(
            lo.custkey % 3,
            0,
            "custkey {} is a multiple of 3",
            lo.custkey
        );
        assert!(lo.custkey <= card.customers && lo.partkey <= card.parts);
        assert!(lo.suppkey >= 1 && lo.suppkey <= card.suppliers);
        assert!((19920101..=19980802).contains(&lo.orderdate));
        assert!(lo.commitdate > lo.orderdate);
        assert_eq!(
            lo.extendedprice_cents,
            u32::from(lo.quantity) * generate::retail_price_cents(lo.partkey)
        );
        quantity_sum += u64::from(lo.quantity);
        discount_counts[usize::from(lo.discount_percent)] += 1;
        years[usize::from((lo.orderdate / 10_000 - 1992) as u16)] += 1;
    }
    assert_eq!(orders.len() as u32, card.orders);
    // 15,000 orders of 4 lines on average: ≈ 60,000 rows
    assert!((58_000..62_000).contains(&rows), "{rows} rows");
    let mean_quantity = quantity_sum as f64 / rows as f64;
    assert!((mean_quantity - 25.5).abs() < 0.5, "{mean_quantity}");
    for c in discount_counts {
        let share = c as f64 / rows as f64;
        assert!((share - 1.0 / 11.0).abs() < 0.01, "{share}");
    }
    // order dates cover 1992..1998 (1998 only up to August)
    assert!(years.iter().all(|&y| y > 0));
    assert!(years[6] < years[0]);
}

#[test]
fn dimensions_follow_the_spec() {
    let data = SsbData::new(0.1, 3).unwrap();
    let customers: Vec<_> = data.customer().collect();
    assert_eq!(customers.len(), 3_000);
    let asia = customers.iter().filter(|c| c.region == 2).count() as f64 / 3_000.0;
    assert!((asia - 0.2).abs() < 0.03, "{asia}");
    for c in &customers {
        assert_eq!(c.city / 10, u16::from(c.nation));
        assert_eq!(Some(c.region), domains::region_of_nation(c.nation));
    }
    let parts: Vec<_> = data.part().collect();
    assert_eq!(parts.len(), 20_000);
    for p in &parts {
        assert!((1..=5).contains(&p.mfgr));
        assert_eq!(p.category / 10, p.mfgr);
        assert!((1..=5).contains(&(p.category % 10)));
        assert_eq!(p.brand1 / 100, u16::from(p.category));
        assert!((1..=40).contains(&(p.brand1 % 100)));
        assert!((1..=50).contains(&p.size) && p.type_code < 150 && p.container < 40);
    }
    let mfgr12 = parts.iter().filter(|p| p.category == 12).count() as f64 / 20_000.0;
    assert!((mfgr12 - 0.04).abs() < 0.01, "{mfgr12}");
    let dates: Vec<_> = data.date().collect();
    assert_eq!(dates.len(), 2_556);
    assert_eq!(dates.iter().filter(|d| d.year == 1997).count(), 365);
    assert_eq!(dates.iter().filter(|d| d.year == 1996).count(), 366);
    assert_eq!(dates[0].dayofweek, 3); // Wednesday
    assert_eq!(data.supplier().count(), 200);
}

#[test]
fn same_seed_same_rows_other_seed_other_rows() {
    let a = SsbData::new(0.002, 11).unwrap();
    let b = SsbData::new(0.002, 11).unwrap();
    let c = SsbData::new(0.002, 12).unwrap();
    assert!(a.lineorder().eq(b.lineorder()));
    assert!(a.customer().eq(b.customer()));
    assert!(!a.lineorder().eq(c.lineorder()));
}

#[test]
fn for_each_row_gives_every_column() {
    let data = SsbData::new(0.001, 1).unwrap();
    for table in Table::ALL {
        let mut n = 0;
        data.for_each_row(table, |v| {
            assert_eq!(v.len(), table.columns().len());
            n += 1;
        });
        assert!(n > 0);
    }
    assert_eq!(Table::Lineorder.column("lo_quantity").unwrap(), 8);
    let e = Table::Part.column("p_nope").unwrap_err().to_string();
    assert!(e.contains("p_nope") && e.contains("part"), "{e}");
}
