//! The 13 standard SSB queries (O'Neil et al., rev. 3, §3: Q1.1–Q4.3) as star joins: their
//! selections and the columns their aggregates read. The SUM / GROUP BY / ORDER BY on top runs
//! in DRAM over the result rows and costs no PCM access, so it is left to the caller; the
//! result rows are what the joins produce and what the tests compare with the reference.
//! Text constants are the codes of `nandlab_workload::ssb::domains`.

use crate::query::{Query, Selection, customer_join, date_join, part_join, supplier_join};
use nandlab_workload::ssb::Table;

const AMERICA: u32 = 1;
const ASIA: u32 = 2;
const EUROPE: u32 = 3;
/// `UNITED STATES` in `NATIONS`.
const UNITED_STATES: u32 = 24;
/// `UNITED KI1` and `UNITED KI5` (nation 23 × 10 + digit).
const UK_CITIES: &[u32] = &[231, 235];

fn flight1(
    name: &'static str,
    date: Vec<Selection>,
    discount: (u32, u32),
    quantity: (u32, u32),
) -> Query {
    Query {
        name,
        description: "sum(lo_extendedprice * lo_discount) for a date range, discount and quantity",
        fact_selections: vec![
            Selection::between("lo_discount", discount.0, discount.1),
            Selection::between("lo_quantity", quantity.0, quantity.1),
        ],
        joins: vec![date_join(date)],
        select: vec![
            (Table::Lineorder, "lo_extendedprice"),
            (Table::Lineorder, "lo_discount"),
        ],
    }
}

fn flight2(name: &'static str, part: Selection, region: u32) -> Query {
    Query {
        name,
        description: "sum(lo_revenue) by d_year, p_brand1 for a part range and a supplier region",
        fact_selections: vec![],
        joins: vec![
            part_join(vec![part]),
            supplier_join(vec![Selection::equals("s_region", region)]),
            date_join(vec![]),
        ],
        select: vec![
            (Table::Date, "d_year"),
            (Table::Part, "p_brand1"),
            (Table::Lineorder, "lo_revenue"),
        ],
    }
}

fn flight3(
    name: &'static str,
    customer: Selection,
    supplier: Selection,
    date: Selection,
    place: (&'static str, &'static str),
) -> Query {
    Query {
        name,
        description: "sum(lo_revenue) by customer and supplier place and year",
        fact_selections: vec![],
        joins: vec![
            customer_join(vec![customer]),
            supplier_join(vec![supplier]),
            date_join(vec![date]),
        ],
        select: vec![
            (Table::Customer, place.0),
            (Table::Supplier, place.1),
            (Table::Date, "d_year"),
            (Table::Lineorder, "lo_revenue"),
        ],
    }
}

/// Q1.1 … Q4.3.
pub fn ssb_queries() -> Vec<Query> {
    let years_92_97 = Selection::between("d_year", 1992, 1997);
    let america_customers = Selection::equals("c_region", AMERICA);
    vec![
        flight1(
            "q1.1",
            vec![Selection::equals("d_year", 1993)],
            (1, 3),
            (1, 24),
        ),
        flight1(
            "q1.2",
            vec![Selection::equals("d_yearmonthnum", 199401)],
            (4, 6),
            (26, 35),
        ),
        flight1(
            "q1.3",
            vec![
                Selection::equals("d_weeknuminyear", 6),
                Selection::equals("d_year", 1994),
            ],
            (5, 7),
            (26, 35),
        ),
        flight2("q2.1", Selection::equals("p_category", 12), AMERICA),
        flight2("q2.2", Selection::between("p_brand1", 2221, 2228), ASIA),
        flight2("q2.3", Selection::equals("p_brand1", 2239), EUROPE),
        flight3(
            "q3.1",
            Selection::equals("c_region", ASIA),
            Selection::equals("s_region", ASIA),
            years_92_97,
            ("c_nation", "s_nation"),
        ),
        flight3(
            "q3.2",
            Selection::equals("c_nation", UNITED_STATES),
            Selection::equals("s_nation", UNITED_STATES),
            years_92_97,
            ("c_city", "s_city"),
        ),
        flight3(
            "q3.3",
            Selection::one_of("c_city", UK_CITIES),
            Selection::one_of("s_city", UK_CITIES),
            years_92_97,
            ("c_city", "s_city"),
        ),
        flight3(
            "q3.4",
            Selection::one_of("c_city", UK_CITIES),
            Selection::one_of("s_city", UK_CITIES),
            Selection::equals("d_yearmonthnum", 199712),
            ("c_city", "s_city"),
        ),
        Query {
            name: "q4.1",
            description: "sum(lo_revenue - lo_supplycost) by d_year, c_nation",
            fact_selections: vec![],
            joins: vec![
                customer_join(vec![america_customers]),
                supplier_join(vec![Selection::equals("s_region", AMERICA)]),
                part_join(vec![Selection::between("p_mfgr", 1, 2)]),
                date_join(vec![]),
            ],
            select: vec![
                (Table::Date, "d_year"),
                (Table::Customer, "c_nation"),
                (Table::Lineorder, "lo_revenue"),
                (Table::Lineorder, "lo_supplycost"),
            ],
        },
        Query {
            name: "q4.2",
            description: "sum(lo_revenue - lo_supplycost) by d_year, s_nation, p_category",
            fact_selections: vec![],
            joins: vec![
                date_join(vec![Selection::between("d_year", 1997, 1998)]),
                customer_join(vec![america_customers]),
                supplier_join(vec![Selection::equals("s_region", AMERICA)]),
                part_join(vec![Selection::between("p_mfgr", 1, 2)]),
            ],
            select: vec![
                (Table::Date, "d_year"),
                (Table::Supplier, "s_nation"),
                (Table::Part, "p_category"),
                (Table::Lineorder, "lo_revenue"),
                (Table::Lineorder, "lo_supplycost"),
            ],
        },
        Query {
            name: "q4.3",
            description: "sum(lo_revenue - lo_supplycost) by d_year, s_city, p_brand1",
            fact_selections: vec![],
            joins: vec![
                part_join(vec![Selection::equals("p_category", 14)]),
                supplier_join(vec![Selection::equals("s_nation", UNITED_STATES)]),
                date_join(vec![Selection::between("d_year", 1997, 1998)]),
                customer_join(vec![america_customers]),
            ],
            select: vec![
                (Table::Date, "d_year"),
                (Table::Supplier, "s_city"),
                (Table::Part, "p_brand1"),
                (Table::Lineorder, "lo_revenue"),
                (Table::Lineorder, "lo_supplycost"),
            ],
        },
    ]
}
