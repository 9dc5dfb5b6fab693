//! The SSB calendar: DATE has one row per day from 1992-01-01 for 2,556 days (SSB spec rev. 3
//! §2: "7 years of days", 2,556 rows; the spec's dbgen stops on 1998-12-30).

/// Days in the DATE table.
pub const DATE_ROWS: u32 = 2_556;
/// The first year.
pub const FIRST_YEAR: u16 = 1992;

/// A civil date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    /// Year, e.g. 1995.
    pub year: u16,
    /// Month 1–12.
    pub month: u8,
    /// Day of the month 1–31.
    pub day: u8,
}

impl Civil {
    /// `yyyymmdd`, SSB's `d_datekey`.
    pub fn datekey(self) -> u32 {
        u32::from(self.year) * 10_000 + u32::from(self.month) * 100 + u32::from(self.day)
    }
}

/// Whether `year` is a leap year.
pub fn is_leap(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

/// Days in `month` of `year`.
pub fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The date `day_index` days after 1992-01-01.
pub fn civil_of(day_index: u32) -> Civil {
    let mut year = FIRST_YEAR;
    let mut left = day_index;
    loop {
        let in_year = if is_leap(year) { 366 } else { 365 };
        if left < in_year {
            break;
        }
        left -= in_year;
        year += 1;
    }
    let mut month = 1;
    loop {
        let in_month = u32::from(days_in_month(year, month));
        if left < in_month {
            break;
        }
        left -= in_month;
        month += 1;
    }
    Civil {
        year,
        month,
        day: left as u8 + 1,
    }
}

/// Day of the year (1-based) of `day_index`.
pub fn day_of_year(day_index: u32) -> u16 {
    let c = civil_of(day_index);
    let mut n = u16::from(c.day);
    for m in 1..c.month {
        n += u16::from(days_in_month(c.year, m));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_matches_known_days() {
        assert_eq!(civil_of(0).datekey(), 19920101);
        assert_eq!(civil_of(59).datekey(), 19920229);
        assert_eq!(civil_of(366).datekey(), 19930101);
        assert_eq!(civil_of(DATE_ROWS - 1).datekey(), 19981230);
        assert_eq!(day_of_year(365), 366);
    }
}
