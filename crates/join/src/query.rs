//! Star-join queries over a [`Database`]: the three queries of thesis §2.2.5 with constants of
//! the intended selectivity (the literal ones select nothing in SSB data), run as left-deep
//! plans of binary hash joins whose intermediate result is a list of LINEORDER tuple ids with
//! the matching dimension tuple ids (late materialisation); the selected columns are read at
//! the end.

use nandlab_workload::ssb::Table;

/// A selection `low <= column <= high`, or `column IN values`, by column name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Column name.
    pub column: &'static str,
    /// Smallest value kept.
    pub low: u32,
    /// Largest value kept.
    pub high: u32,
    /// The values kept (replaces the range when not empty).
    pub values: &'static [u32],
}

impl Selection {
    /// `column = value`.
    pub const fn equals(column: &'static str, value: u32) -> Self {
        Selection::between(column, value, value)
    }

    /// `low <= column <= high`.
    pub const fn between(column: &'static str, low: u32, high: u32) -> Self {
        Selection {
            column,
            low,
            high,
            values: &[],
        }
    }

    /// `column IN values`.
    pub const fn one_of(column: &'static str, values: &'static [u32]) -> Self {
        Selection {
            column,
            low: 0,
            high: 0,
            values,
        }
    }

    /// Whether `value` qualifies.
    pub fn keeps(&self, value: u32) -> bool {
        if self.values.is_empty() {
            (self.low..=self.high).contains(&value)
        } else {
            self.values.contains(&value)
        }
    }
}

/// One join of LINEORDER with a dimension on the dimension's key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimensionJoin {
    /// The dimension (build side).
    pub dimension: Table,
    /// Its key column.
    pub dimension_key: &'static str,
    /// LINEORDER's foreign key column.
    pub fact_key: &'static str,
    /// Selections on the dimension (all must hold).
    pub selections: Vec<Selection>,
}

/// A star-join query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// Short name (`q1` …).
    pub name: &'static str,
    /// What it asks, with the constants chosen.
    pub description: &'static str,
    /// Selections on LINEORDER (all must hold).
    pub fact_selections: Vec<Selection>,
    /// Joins, in plan order (LINEORDER is the probe side of each).
    pub joins: Vec<DimensionJoin>,
    /// Result columns.
    pub select: Vec<(Table, &'static str)>,
}

/// Region code of ASIA (`domains::REGIONS`).
pub const ASIA: u32 = 2;
/// The year the thesis's "2009" stands for: 1997, one of SSB's seven years (selectivity 1/7).
pub const QUERY1_YEAR: u32 = 1997;
/// The part selection the thesis's "part type 'IC'" stands for: one of the 25 categories,
/// `MFGR#12` (selectivity 1/25), as SSB's own Q2.1 uses.
pub const QUERY2_CATEGORY: u32 = 12;
/// The quantity the thesis's "qty > 500" stands for: `lo_quantity > 45` (quantities are 1–50,
/// so 10 % of the rows).
pub const QUERY3_QUANTITY_ABOVE: u32 = 45;

pub(crate) fn customer_join(selections: Vec<Selection>) -> DimensionJoin {
    DimensionJoin {
        dimension: Table::Customer,
        dimension_key: "c_custkey",
        fact_key: "lo_custkey",
        selections,
    }
}

pub(crate) fn supplier_join(selections: Vec<Selection>) -> DimensionJoin {
    DimensionJoin {
        dimension: Table::Supplier,
        dimension_key: "s_suppkey",
        fact_key: "lo_suppkey",
        selections,
    }
}

pub(crate) fn part_join(selections: Vec<Selection>) -> DimensionJoin {
    DimensionJoin {
        dimension: Table::Part,
        dimension_key: "p_partkey",
        fact_key: "lo_partkey",
        selections,
    }
}

pub(crate) fn date_join(selections: Vec<Selection>) -> DimensionJoin {
    DimensionJoin {
        dimension: Table::Date,
        dimension_key: "d_datekey",
        fact_key: "lo_orderdate",
        selections,
    }
}

/// The three queries of thesis §2.2.5.
pub fn thesis_queries() -> Vec<Query> {
    vec![
        Query {
            name: "q1",
            description: "customer nation, supplier nation, year and quantity of orders by Asian \
                          customers from Asian suppliers in 1997 (thesis: 2009)",
            fact_selections: vec![],
            joins: vec![
                customer_join(vec![Selection::equals("c_region", ASIA)]),
                supplier_join(vec![Selection::equals("s_region", ASIA)]),
                date_join(vec![Selection::equals("d_year", QUERY1_YEAR)]),
            ],
            select: vec![
                (Table::Customer, "c_nation"),
                (Table::Supplier, "s_nation"),
                (Table::Date, "d_year"),
                (Table::Lineorder, "lo_quantity"),
            ],
        },
        Query {
            name: "q2",
            description: "customer nation and quantity of orders of parts of category MFGR#12 \
                          (thesis: part type 'IC')",
            fact_selections: vec![],
            joins: vec![
                part_join(vec![Selection::equals("p_category", QUERY2_CATEGORY)]),
                customer_join(vec![]),
            ],
            select: vec![
                (Table::Customer, "c_nation"),
                (Table::Lineorder, "lo_quantity"),
            ],
        },
        Query {
            name: "q3",
            description: "supplier region, name and quantity of order lines of more than 45 \
                          units (thesis: qty > 500)",
            fact_selections: vec![Selection::between(
                "lo_quantity",
                QUERY3_QUANTITY_ABOVE + 1,
                u32::MAX,
            )],
            joins: vec![supplier_join(vec![])],
            select: vec![
                (Table::Supplier, "s_region"),
                (Table::Supplier, "s_name"),
                (Table::Lineorder, "lo_quantity"),
            ],
        },
    ]
}
