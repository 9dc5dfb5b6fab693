//! Star Schema Benchmark data (SPEC W3, P6): the five tables of O'Neil, O'Neil and Chen, "Star
//! Schema Benchmark", revision 3 (2009), generated deterministically from a seed at any scale
//! factor, fractional ones included.
//!
//! Cardinalities per scale factor `SF` (spec §2; [`Cardinalities::of`]):
//!
//! | table | rows |
//! |---|---|
//! | LINEORDER | ≈ 6,000,000 × SF (1,500,000 × SF orders of 1–7 lines, 4 on average) |
//! | CUSTOMER | 30,000 × SF |
//! | SUPPLIER | 2,000 × SF |
//! | PART | 200,000 × ⌊1 + log2 SF⌋ for SF ≥ 1; 200,000 × SF below 1 (our choice) |
//! | DATE | 2,556 (7 years of days from 1992-01-01) |
//!
//! Rows are streamed ([`SsbData::lineorder`] etc. are iterators), never held as text: a
//! LINEORDER row is 17 numbers, text columns are codes into [`domains`]. Counts below one
//! become one.

pub mod date;
pub mod domains;
mod generate;
pub mod rows;
#[cfg(test)]
mod tests;

pub use generate::{CustomerRows, DateRows, LineorderRows, PartRows, SupplierRows};
pub use rows::{Customer, Date, Lineorder, Part, SsbRow, Supplier};

use crate::error::WorkloadError;

/// The five tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// The fact table.
    Lineorder,
    /// Customers.
    Customer,
    /// Suppliers.
    Supplier,
    /// Parts.
    Part,
    /// Days.
    Date,
}

impl Table {
    /// Every table, fact table first.
    pub const ALL: [Table; 5] = [
        Table::Lineorder,
        Table::Customer,
        Table::Supplier,
        Table::Part,
        Table::Date,
    ];

    /// The SSB name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Lineorder => "lineorder",
            Table::Customer => "customer",
            Table::Supplier => "supplier",
            Table::Part => "part",
            Table::Date => "date",
        }
    }

    /// Column names, in the order of [`SsbRow::value`].
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Lineorder => &[
                "lo_orderkey",
                "lo_linenumber",
                "lo_custkey",
                "lo_partkey",
                "lo_suppkey",
                "lo_orderdate",
                "lo_orderpriority",
                "lo_shippriority",
                "lo_quantity",
                "lo_extendedprice",
                "lo_ordtotalprice",
                "lo_discount",
                "lo_revenue",
                "lo_supplycost",
                "lo_tax",
                "lo_commitdate",
                "lo_shipmode",
            ],
            Table::Customer => &[
                "c_custkey",
                "c_name",
                "c_address",
                "c_city",
                "c_nation",
                "c_region",
                "c_phone",
                "c_mktsegment",
            ],
            Table::Supplier => &[
                "s_suppkey",
                "s_name",
                "s_address",
                "s_city",
                "s_nation",
                "s_region",
                "s_phone",
            ],
            Table::Part => &[
                "p_partkey",
                "p_name",
                "p_mfgr",
                "p_category",
                "p_brand1",
                "p_color",
                "p_type",
                "p_size",
                "p_container",
            ],
            Table::Date => &[
                "d_datekey",
                "d_dayofweek",
                "d_month",
                "d_year",
                "d_yearmonthnum",
                "d_daynuminweek",
                "d_daynuminmonth",
                "d_daynuminyear",
                "d_monthnuminyear",
                "d_weeknuminyear",
                "d_sellingseason",
                "d_lastdayinweekfl",
                "d_lastdayinmonthfl",
                "d_holidayfl",
                "d_weekdayfl",
            ],
        }
    }

    /// The index of column `name`, or an error naming it.
    pub fn column(self, name: &str) -> Result<usize, WorkloadError> {
        self.columns()
            .iter()
            .position(|c| *c == name)
            .ok_or_else(|| {
                WorkloadError::invalid(
                    "column",
                    format!("`{name}` is not a column of {}", self.name()),
                )
            })
    }
}

/// Largest scale factor accepted (LINEORDER keys stay within `u32`).
pub const SCALE_FACTOR_MAX: f64 = 1_000.0;

/// Rows per table at one scale factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cardinalities {
    /// Orders (LINEORDER has 1–7 lines per order).
    pub orders: u32,
    /// CUSTOMER rows.
    pub customers: u32,
    /// SUPPLIER rows.
    pub suppliers: u32,
    /// PART rows.
    pub parts: u32,
    /// DATE rows.
    pub dates: u32,
}

impl Cardinalities {
    /// The spec's cardinalities at `scale_factor` (0 < SF ≤ 1,000).
    pub fn of(scale_factor: f64) -> Result<Self, WorkloadError> {
        if !(scale_factor > 0.0 && scale_factor <= SCALE_FACTOR_MAX) {
            return Err(WorkloadError::invalid(
                "scale_factor",
                format!("{scale_factor} is not in (0, {SCALE_FACTOR_MAX}]"),
            ));
        }
        let scaled = |base: f64| ((base * scale_factor).round() as u32).max(1);
        let parts = if scale_factor >= 1.0 {
            200_000 * (1.0 + scale_factor.log2()).floor() as u32
        } else {
            scaled(200_000.0)
        };
        Ok(Cardinalities {
            orders: scaled(1_500_000.0),
            customers: scaled(30_000.0),
            suppliers: scaled(2_000.0),
            parts,
            dates: date::DATE_ROWS,
        })
    }
}

/// The generator of one SSB database: a scale factor and a seed. Every table is a pure function
/// of the two; iterating a table twice gives the same rows.
#[derive(Clone, Copy, Debug)]
pub struct SsbData {
    scale_factor: f64,
    seed: u64,
    cardinalities: Cardinalities,
}

impl SsbData {
    /// A database at `scale_factor` (0 < SF ≤ 1,000) drawn from `seed`.
    pub fn new(scale_factor: f64, seed: u64) -> Result<Self, WorkloadError> {
        Ok(SsbData {
            scale_factor,
            seed,
            cardinalities: Cardinalities::of(scale_factor)?,
        })
    }

    /// The scale factor.
    pub fn scale_factor(&self) -> f64 {
        self.scale_factor
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Rows per dimension table and orders.
    pub fn cardinalities(&self) -> Cardinalities {
        self.cardinalities
    }

    /// LINEORDER, order by order.
    pub fn lineorder(&self) -> LineorderRows {
        LineorderRows::new(self.seed, self.cardinalities)
    }

    /// CUSTOMER in key order.
    pub fn customer(&self) -> CustomerRows {
        CustomerRows::new(self.seed, self.cardinalities.customers)
    }

    /// SUPPLIER in key order.
    pub fn supplier(&self) -> SupplierRows {
        SupplierRows::new(self.seed, self.cardinalities.suppliers)
    }

    /// PART in key order.
    pub fn part(&self) -> PartRows {
        PartRows::new(self.seed, self.cardinalities.parts)
    }

    /// DATE in day order.
    pub fn date(&self) -> DateRows {
        DateRows::new()
    }

    /// Calls `f` with every row of `table` as its column values (a buffer reused between rows).
    pub fn for_each_row(&self, table: Table, mut f: impl FnMut(&[u32])) {
        let mut values = vec![0u32; table.columns().len()];
        fn feed<R: SsbRow>(
            rows: impl Iterator<Item = R>,
            values: &mut [u32],
            f: &mut impl FnMut(&[u32]),
        ) {
            for row in rows {
                for (c, v) in values.iter_mut().enumerate() {
                    *v = row.value(c);
                }
                f(values);
            }
        }
        match table {
            Table::Lineorder => feed(self.lineorder(), &mut values, &mut f),
            Table::Customer => feed(self.customer(), &mut values, &mut f),
            Table::Supplier => feed(self.supplier(), &mut values, &mut f),
            Table::Part => feed(self.part(), &mut values, &mut f),
            Table::Date => feed(self.date(), &mut values, &mut f),
        }
    }
}
