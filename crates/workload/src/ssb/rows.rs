//! The five SSB tables' rows, stored compactly: numbers as numbers, text columns as codes into
//! [`super::domains`] (or, for free text such as addresses, a generated code). Every column is a
//! `u32` through [`SsbRow::value`], in the order of [`Table::columns`].

use super::Table;

/// A row of an SSB table.
pub trait SsbRow {
    /// The table the row belongs to.
    const TABLE: Table;
    /// Column `column` (an index into [`Table::columns`]) as a `u32` code.
    fn value(&self, column: usize) -> u32;
}

/// `LINEORDER` (17 columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lineorder {
    /// `lo_orderkey`, 1-based, dense.
    pub orderkey: u32,
    /// `lo_linenumber`, 1–7.
    pub linenumber: u8,
    /// `lo_custkey` (never a multiple of 3, as in TPC-H).
    pub custkey: u32,
    /// `lo_partkey`.
    pub partkey: u32,
    /// `lo_suppkey`.
    pub suppkey: u32,
    /// `lo_orderdate` as `yyyymmdd`.
    pub orderdate: u32,
    /// `lo_orderpriority`, index into `ORDER_PRIORITIES`.
    pub orderpriority: u8,
    /// `lo_shippriority` (always 0).
    pub shippriority: u8,
    /// `lo_quantity`, 1–50.
    pub quantity: u8,
    /// `lo_extendedprice`, cents: quantity × the part's retail price.
    pub extendedprice_cents: u32,
    /// `lo_ordtotalprice`, cents: the order's lines with tax and discount.
    pub ordtotalprice_cents: u32,
    /// `lo_discount`, percent 0–10.
    pub discount_percent: u8,
    /// `lo_revenue`, cents: extended price × (100 − discount) / 100.
    pub revenue_cents: u32,
    /// `lo_supplycost`, cents 100–100,000 (TPC-H's `ps_supplycost`).
    pub supplycost_cents: u32,
    /// `lo_tax`, percent 0–8.
    pub tax_percent: u8,
    /// `lo_commitdate` as `yyyymmdd`, 30–90 days after the order.
    pub commitdate: u32,
    /// `lo_shipmode`, index into `SHIP_MODES`.
    pub shipmode: u8,
}

impl SsbRow for Lineorder {
    const TABLE: Table = Table::Lineorder;
    fn value(&self, column: usize) -> u32 {
        match column {
            0 => self.orderkey,
            1 => u32::from(self.linenumber),
            2 => self.custkey,
            3 => self.partkey,
            4 => self.suppkey,
            5 => self.orderdate,
            6 => u32::from(self.orderpriority),
            7 => u32::from(self.shippriority),
            8 => u32::from(self.quantity),
            9 => self.extendedprice_cents,
            10 => self.ordtotalprice_cents,
            11 => u32::from(self.discount_percent),
            12 => self.revenue_cents,
            13 => self.supplycost_cents,
            14 => u32::from(self.tax_percent),
            15 => self.commitdate,
            16 => u32::from(self.shipmode),
            _ => 0,
        }
    }
}

/// `CUSTOMER` (8 columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Customer {
    /// `c_custkey`, 1-based.
    pub custkey: u32,
    /// `c_address`: a code standing for the generated text.
    pub address_code: u32,
    /// `c_city`: `nation * 10 + digit` (see `domains::city_name`).
    pub city: u16,
    /// `c_nation`, index into `NATIONS`.
    pub nation: u8,
    /// `c_region`, index into `REGIONS`.
    pub region: u8,
    /// `c_phone`: the local number (the country code is `nation + 10`).
    pub phone_local: u32,
    /// `c_mktsegment`, index into `MARKET_SEGMENTS`.
    pub mktsegment: u8,
}

impl SsbRow for Customer {
    const TABLE: Table = Table::Customer;
    fn value(&self, column: usize) -> u32 {
        match column {
            0 | 1 => self.custkey, // c_name is "Customer#" and the key
            2 => self.address_code,
            3 => u32::from(self.city),
            4 => u32::from(self.nation),
            5 => u32::from(self.region),
            6 => self.phone_local,
            7 => u32::from(self.mktsegment),
            _ => 0,
        }
    }
}

/// `SUPPLIER` (7 columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Supplier {
    /// `s_suppkey`, 1-based.
    pub suppkey: u32,
    /// `s_address`: a code standing for the generated text.
    pub address_code: u32,
    /// `s_city`: `nation * 10 + digit`.
    pub city: u16,
    /// `s_nation`.
    pub nation: u8,
    /// `s_region`.
    pub region: u8,
    /// `s_phone`: the local number.
    pub phone_local: u32,
}

impl SsbRow for Supplier {
    const TABLE: Table = Table::Supplier;
    fn value(&self, column: usize) -> u32 {
        match column {
            0 | 1 => self.suppkey, // s_name is "Supplier#" and the key
            2 => self.address_code,
            3 => u32::from(self.city),
            4 => u32::from(self.nation),
            5 => u32::from(self.region),
            6 => self.phone_local,
            _ => 0,
        }
    }
}

/// `PART` (9 columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// `p_partkey`, 1-based.
    pub partkey: u32,
    /// `p_name`: two colours, `first * 92 + second`.
    pub name_code: u16,
    /// `p_mfgr`: 1–5 (`MFGR#1`…`MFGR#5`).
    pub mfgr: u8,
    /// `p_category`: `mfgr * 10 + 1..=5` (`MFGR#11`…`MFGR#55`).
    pub category: u8,
    /// `p_brand1`: `category * 100 + 1..=40` (`MFGR#1101`…`MFGR#5540`).
    pub brand1: u16,
    /// `p_color`, index into `COLORS`.
    pub color: u8,
    /// `p_type`, code into the 150 types.
    pub type_code: u8,
    /// `p_size`, 1–50.
    pub size: u8,
    /// `p_container`, code `a * 8 + b` into the 40 containers.
    pub container: u8,
}

impl SsbRow for Part {
    const TABLE: Table = Table::Part;
    fn value(&self, column: usize) -> u32 {
        match column {
            0 => self.partkey,
            1 => u32::from(self.name_code),
            2 => u32::from(self.mfgr),
            3 => u32::from(self.category),
            4 => u32::from(self.brand1),
            5 => u32::from(self.color),
            6 => u32::from(self.type_code),
            7 => u32::from(self.size),
            8 => u32::from(self.container),
            _ => 0,
        }
    }
}

/// `DATE` (15 columns; `d_date` and `d_yearmonth`, the text forms of `d_datekey` and
/// `d_yearmonthnum`, are left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Date {
    /// `d_datekey`, `yyyymmdd`.
    pub datekey: u32,
    /// `d_dayofweek`, 0 = Sunday … 6 = Saturday.
    pub dayofweek: u8,
    /// `d_month`, 1–12 (the text is the month's name).
    pub month: u8,
    /// `d_year`.
    pub year: u16,
    /// `d_yearmonthnum`, `yyyymm`.
    pub yearmonthnum: u32,
    /// `d_daynuminweek`, 1–7 (Sunday = 1).
    pub daynuminweek: u8,
    /// `d_daynuminmonth`, 1–31.
    pub daynuminmonth: u8,
    /// `d_daynuminyear`, 1–366.
    pub daynuminyear: u16,
    /// `d_monthnuminyear`, 1–12.
    pub monthnuminyear: u8,
    /// `d_weeknuminyear`, 1–53.
    pub weeknuminyear: u8,
    /// `d_sellingseason`: 0 Winter, 1 Spring, 2 Summer, 3 Fall, 4 Christmas.
    pub sellingseason: u8,
    /// `d_lastdayinweekfl` (Saturday).
    pub lastdayinweekfl: bool,
    /// `d_lastdayinmonthfl`.
    pub lastdayinmonthfl: bool,
    /// `d_holidayfl` (1 Jan, 4 Jul, 25 Dec).
    pub holidayfl: bool,
    /// `d_weekdayfl` (Monday–Friday).
    pub weekdayfl: bool,
}

impl SsbRow for Date {
    const TABLE: Table = Table::Date;
    fn value(&self, column: usize) -> u32 {
        match column {
            0 => self.datekey,
            1 => u32::from(self.dayofweek),
            2 => u32::from(self.month),
            3 => u32::from(self.year),
            4 => self.yearmonthnum,
            5 => u32::from(self.daynuminweek),
            6 => u32::from(self.daynuminmonth),
            7 => u32::from(self.daynuminyear),
            8 => u32::from(self.monthnuminyear),
            9 => u32::from(self.weeknuminyear),
            10 => u32::from(self.sellingseason),
            11 => u32::from(self.lastdayinweekfl),
            12 => u32::from(self.lastdayinmonthfl),
            13 => u32::from(self.holidayfl),
            14 => u32::from(self.weekdayfl),
            _ => 0,
        }
    }
}
