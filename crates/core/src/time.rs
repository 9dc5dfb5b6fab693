//! Simulated time.
//!
//! `SimTime` is a count of picoseconds in a `u64`. It serves both as an instant (time since the
//! start of the simulation) and as a span. 2^64 ps is about 213 simulated days, far beyond any
//! sensible run, but user input (a huge timing parameter, a tiny arrival rate) can reach it.
//!
//! Addition, multiplication and sums **saturate** at [`SimTime::MAX`], the end of simulated time:
//! a result that does not fit is pinned there instead of wrapping around (which put events in the
//! past) or panicking. For every run that stays inside the range the arithmetic is exact and
//! unchanged. A layer that sees the time reach [`SimTime::MAX`] stops with an error
//! ([`SimTime::is_end`], [`END_OF_TIME_TEXT`]); nothing is simulated beyond it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub, SubAssign};

/// Simulated time in integer picoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(u64);

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// How errors describe the end of simulated time (2^64 ps).
pub const END_OF_TIME_TEXT: &str = "2^64 ps (about 213 simulated days)";

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    /// The end of simulated time: saturated arithmetic stops here.
    pub const MAX: SimTime = SimTime(u64::MAX);

    #[inline]
    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    #[inline]
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * PS_PER_NS)
    }
    #[inline]
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * PS_PER_US)
    }
    #[inline]
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * PS_PER_MS)
    }
    /// Rounds a (user-supplied) microsecond value to the nearest picosecond.
    /// Negative or non-finite inputs must be rejected by the caller's validation.
    #[inline]
    pub fn from_us_f64(us: f64) -> Self {
        debug_assert!(us.is_finite() && us >= 0.0, "invalid time {us} us");
        SimTime((us * PS_PER_US as f64).round() as u64)
    }
    #[inline]
    pub fn from_ns_f64(ns: f64) -> Self {
        debug_assert!(ns.is_finite() && ns >= 0.0, "invalid time {ns} ns");
        SimTime((ns * PS_PER_NS as f64).round() as u64)
    }
    #[inline]
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    #[inline]
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }
    #[inline]
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    #[inline]
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / PS_PER_MS as f64
    }
    #[inline]
    pub fn as_s_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    #[inline]
    pub const fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
    /// Whether this time is the end of simulated time (a saturated result): a simulation that
    /// reaches it has run out of representable time and must stop with an error.
    #[inline]
    pub const fn is_end(self) -> bool {
        self.0 == u64::MAX
    }
    #[inline]
    pub const fn saturating_add(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(other.0))
    }
    #[inline]
    pub const fn checked_add(self, other: SimTime) -> Option<SimTime> {
        match self.0.checked_add(other.0) {
            Some(v) => Some(SimTime(v)),
            None => None,
        }
    }
    #[inline]
    pub fn max(self, other: SimTime) -> SimTime {
        if self >= other { self } else { other }
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        debug_assert!(self.0 >= rhs.0, "negative time span {:?} - {:?}", self, rhs);
        SimTime(self.0 - rhs.0)
    }
}
impl SubAssign for SimTime {
    #[inline]
    fn sub_assign(&mut self, rhs: SimTime) {
        self.0 -= rhs.0;
    }
}
impl Mul<u64> for SimTime {
    type Output = SimTime;
    #[inline]
    fn mul(self, rhs: u64) -> SimTime {
        SimTime(self.0.saturating_mul(rhs))
    }
}
impl std::iter::Sum for SimTime {
    fn sum<I: Iterator<Item = SimTime>>(iter: I) -> SimTime {
        SimTime(iter.fold(0u64, |sum, t| sum.saturating_add(t.0)))
    }
}

impl fmt::Display for SimTime {
    /// Human-readable with an adaptive unit: `1.250 ns`, `50.000 us`, `2.500 ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps < PS_PER_NS {
            write!(f, "{ps} ps")
        } else if ps < PS_PER_US {
            write!(f, "{:.3} ns", self.as_ns_f64())
        } else if ps < PS_PER_MS {
            write!(f, "{:.3} us", self.as_us_f64())
        } else if ps < PS_PER_S {
            write!(f, "{:.3} ms", self.as_ms_f64())
        } else {
            write!(f, "{:.3} s", self.as_s_f64())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_conversions_are_exact() {
        assert_eq!(SimTime::from_ns(1).as_ps(), 1_000);
        assert_eq!(SimTime::from_us(50).as_ps(), 50_000_000);
        assert_eq!(SimTime::from_ms(2).as_ps(), 2_000_000_000);
        assert_eq!(SimTime::from_us_f64(0.5), SimTime::from_ns(500));
        assert_eq!(SimTime::from_ns_f64(1.25), SimTime::from_ps(1_250));
    }

    #[test]
    fn display_picks_a_readable_unit() {
        assert_eq!(SimTime::from_ps(1_250).to_string(), "1.250 ns");
        assert_eq!(SimTime::from_us(50).to_string(), "50.000 us");
        assert_eq!(SimTime::from_ms(3).to_string(), "3.000 ms");
    }

    #[test]
    fn arithmetic() {
        let a = SimTime::from_us(10);
        let b = SimTime::from_us(4);
        assert_eq!(a - b, SimTime::from_us(6));
        assert_eq!(a + b, SimTime::from_us(14));
        assert_eq!(b * 3, SimTime::from_us(12));
        assert_eq!(b.saturating_sub(a), SimTime::ZERO);
        assert_eq!([a, b].into_iter().sum::<SimTime>(), SimTime::from_us(14));
    }

    /// Regression (issue 11): time arithmetic wrapped around in release builds (and panicked in
    /// debug builds) when user input pushed simulated time past 2^64 ps, e.g. a chip with
    /// `program_us = 1e12` or Poisson arrivals at a tiny rate; the wrapped time then tripped the
    /// event queue's "event scheduled in the past" assert. Sums now saturate at `SimTime::MAX`,
    /// the end of simulated time, which the layers above report as an error.
    #[test]
    fn arithmetic_saturates_at_the_end_of_time() {
        let big = SimTime::from_ps(u64::MAX - 5);
        assert_eq!(big + SimTime::from_ps(10), SimTime::MAX);
        assert!((big + SimTime::from_ps(10)).is_end());
        assert!(!big.is_end());
        let mut t = big;
        t += SimTime::from_ps(6);
        assert_eq!(t, SimTime::MAX);
        assert_eq!(big * 2, SimTime::MAX);
        assert_eq!([big, big].into_iter().sum::<SimTime>(), SimTime::MAX);
        assert_eq!(
            big.saturating_add(SimTime::from_ps(1)),
            SimTime::from_ps(u64::MAX - 4)
        );
        assert_eq!(SimTime::MAX.checked_add(SimTime::from_ps(1)), None);
    }
}
