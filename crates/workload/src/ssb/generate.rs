//! The row generators: one seeded stream per table (`SimRng::stream(seed, "ssb.<table>")`),
//! rows produced in key order. Distributions follow SSB rev. 3 §2 and, where SSB defers to it,
//! TPC-H §4.2.3 (uniform choices; customer keys never multiples of 3; order dates up to 151
//! days before the end; commit dates 30–90 days after the order).

use super::Cardinalities;
use super::date::{self, DATE_ROWS};
use super::domains::{CITIES_PER_NATION, COLORS, NATIONS, region_of_nation};
use super::rows::{Customer, Date, Lineorder, Part, Supplier};
use nandlab_core::SimRng;

/// Uniform in `low..=high`.
fn uniform(rng: &mut SimRng, low: u32, high: u32) -> u32 {
    low + rng.below(u64::from(high - low + 1)) as u32
}

/// A random city, its nation and region.
fn place(rng: &mut SimRng) -> (u16, u8, u8) {
    let nation = rng.below(NATIONS.len() as u64) as u8;
    let city = u16::from(nation) * u16::from(CITIES_PER_NATION)
        + rng.below(u64::from(CITIES_PER_NATION)) as u16;
    (city, nation, region_of_nation(nation).unwrap_or(0))
}

/// TPC-H's retail price of a part, cents: 90,000 + ((key / 10) mod 20,001) + 100 × (key mod 1,000).
pub fn retail_price_cents(partkey: u32) -> u32 {
    90_000 + (partkey / 10) % 20_001 + 100 * (partkey % 1_000)
}

/// LINEORDER rows, one order (1–7 lines) at a time.
#[derive(Debug)]
pub struct LineorderRows {
    rng: SimRng,
    card: Cardinalities,
    next_order: u32,
    lines: [Lineorder; 7],
    lines_len: usize,
    lines_next: usize,
}

impl LineorderRows {
    pub(super) fn new(seed: u64, card: Cardinalities) -> Self {
        LineorderRows {
            rng: SimRng::stream(seed, "ssb.lineorder"),
            card,
            next_order: 1,
            lines: [Lineorder::default(); 7],
            lines_len: 0,
            lines_next: 0,
        }
    }

    /// A customer key that is not a multiple of 3 (TPC-H: a third of customers never order).
    fn customer_key(&mut self) -> u32 {
        let customers = self.card.customers;
        if customers < 3 {
            return uniform(&mut self.rng, 1, customers);
        }
        let k = self.rng.below(u64::from(customers - customers / 3)) as u32;
        k + k / 2 + 1
    }

    fn generate_order(&mut self) {
        let orderkey = self.next_order;
        self.next_order += 1;
        let custkey = self.customer_key();
        let order_day = self.rng.below(u64::from(DATE_ROWS - 151)) as u32;
        let orderdate = date::civil_of(order_day).datekey();
        let orderpriority = self.rng.below(5) as u8;
        let count = uniform(&mut self.rng, 1, 7) as usize;
        let mut total_cents: u64 = 0;
        for (i, line) in self.lines[..count].iter_mut().enumerate() {
            let partkey = uniform(&mut self.rng, 1, self.card.parts);
            let quantity = uniform(&mut self.rng, 1, 50) as u8;
            let discount_percent = self.rng.below(11) as u8;
            let tax_percent = self.rng.below(9) as u8;
            let extendedprice_cents = u32::from(quantity) * retail_price_cents(partkey);
            let commit_day = order_day + uniform(&mut self.rng, 30, 90);
            *line = Lineorder {
                orderkey,
                linenumber: i as u8 + 1,
                custkey,
                partkey,
                suppkey: uniform(&mut self.rng, 1, self.card.suppliers),
                orderdate,
                orderpriority,
                shippriority: 0,
                quantity,
                extendedprice_cents,
                ordtotalprice_cents: 0,
                discount_percent,
                revenue_cents: (u64::from(extendedprice_cents) * u64::from(100 - discount_percent)
                    / 100) as u32,
                supplycost_cents: uniform(&mut self.rng, 100, 100_000),
                tax_percent,
                commitdate: date::civil_of(commit_day).datekey(),
                shipmode: self.rng.below(7) as u8,
            };
            total_cents += u64::from(extendedprice_cents)
                * u64::from(100 + tax_percent)
                * u64::from(100 - discount_percent)
                / 10_000;
        }
        for line in &mut self.lines[..count] {
            line.ordtotalprice_cents = total_cents.min(u64::from(u32::MAX)) as u32;
        }
        self.lines_len = count;
        self.lines_next = 0;
    }
}

impl Iterator for LineorderRows {
    type Item = Lineorder;
    fn next(&mut self) -> Option<Lineorder> {
        if self.lines_next == self.lines_len {
            if self.next_order > self.card.orders {
                return None;
            }
            self.generate_order();
        }
        self.lines_next += 1;
        Some(self.lines[self.lines_next - 1])
    }
}

/// CUSTOMER rows in key order.
#[derive(Debug)]
pub struct CustomerRows {
    rng: SimRng,
    next: u32,
    count: u32,
}

impl CustomerRows {
    pub(super) fn new(seed: u64, count: u32) -> Self {
        CustomerRows {
            rng: SimRng::stream(seed, "ssb.customer"),
            next: 1,
            count,
        }
    }
}

impl Iterator for CustomerRows {
    type Item = Customer;
    fn next(&mut self) -> Option<Customer> {
        if self.next > self.count {
            return None;
        }
        let custkey = self.next;
        self.next += 1;
        let (city, nation, region) = place(&mut self.rng);
        Some(Customer {
            custkey,
            address_code: self.rng.below(1 << 32) as u32,
            city,
            nation,
            region,
            phone_local: uniform(&mut self.rng, 100_000_000, 999_999_999),
            mktsegment: self.rng.below(5) as u8,
        })
    }
}

/// SUPPLIER rows in key order.
#[derive(Debug)]
pub struct SupplierRows {
    rng: SimRng,
    next: u32,
    count: u32,
}

impl SupplierRows {
    pub(super) fn new(seed: u64, count: u32) -> Self {
        SupplierRows {
            rng: SimRng::stream(seed, "ssb.supplier"),
            next: 1,
            count,
        }
    }
}

impl Iterator for SupplierRows {
    type Item = Supplier;
    fn next(&mut self) -> Option<Supplier> {
        if self.next > self.count {
            return None;
        }
        let suppkey = self.next;
        self.next += 1;
        let (city, nation, region) = place(&mut self.rng);
        Some(Supplier {
            suppkey,
            address_code: self.rng.below(1 << 32) as u32,
            city,
            nation,
            region,
            phone_local: uniform(&mut self.rng, 100_000_000, 999_999_999),
        })
    }
}

/// PART rows in key order.
#[derive(Debug)]
pub struct PartRows {
    rng: SimRng,
    next: u32,
    count: u32,
}

impl PartRows {
    pub(super) fn new(seed: u64, count: u32) -> Self {
        PartRows {
            rng: SimRng::stream(seed, "ssb.part"),
            next: 1,
            count,
        }
    }
}

impl Iterator for PartRows {
    type Item = Part;
    fn next(&mut self) -> Option<Part> {
        if self.next > self.count {
            return None;
        }
        let partkey = self.next;
        self.next += 1;
        let r = &mut self.rng;
        let colors = COLORS.len() as u64;
        let name_code = (r.below(colors) * colors + r.below(colors)) as u16;
        let mfgr = uniform(r, 1, 5) as u8;
        let category = mfgr * 10 + uniform(r, 1, 5) as u8;
        let brand1 = u16::from(category) * 100 + uniform(r, 1, 40) as u16;
        Some(Part {
            partkey,
            name_code,
            mfgr,
            category,
            brand1,
            color: r.below(colors) as u8,
            type_code: r.below(150) as u8,
            size: uniform(r, 1, 50) as u8,
            container: r.below(40) as u8,
        })
    }
}

/// DATE rows, one per day from 1992-01-01.
#[derive(Debug, Default)]
pub struct DateRows {
    next_day: u32,
}

impl DateRows {
    pub(super) fn new() -> Self {
        DateRows { next_day: 0 }
    }
}

impl Iterator for DateRows {
    type Item = Date;
    fn next(&mut self) -> Option<Date> {
        if self.next_day >= DATE_ROWS {
            return None;
        }
        let day = self.next_day;
        self.next_day += 1;
        let c = date::civil_of(day);
        // 1992-01-01 was a Wednesday (day of week 3, Sunday = 0)
        let dayofweek = ((day + 3) % 7) as u8;
        let daynuminyear = date::day_of_year(day);
        let sellingseason = match (c.month, c.day) {
            (12, d) if d >= 15 => 4,
            (12 | 1 | 2, _) => 0,
            (3..=5, _) => 1,
            (6..=8, _) => 2,
            _ => 3,
        };
        Some(Date {
            datekey: c.datekey(),
            dayofweek,
            month: c.month,
            year: c.year,
            yearmonthnum: u32::from(c.year) * 100 + u32::from(c.month),
            daynuminweek: dayofweek + 1,
            daynuminmonth: c.day,
            daynuminyear,
            monthnuminyear: c.month,
            weeknuminyear: ((daynuminyear - 1) / 7 + 1) as u8,
            sellingseason,
            lastdayinweekfl: dayofweek == 6,
            lastdayinmonthfl: c.day == date::days_in_month(c.year, c.month),
            holidayfl: matches!((c.month, c.day), (1, 1) | (7, 4) | (12, 25)),
            weekdayfl: (1..=5).contains(&dayofweek),
        })
    }
}
