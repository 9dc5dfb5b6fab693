//! Statistics: latency histograms with percentiles and CDF export.
//!
//! Latencies are recorded in nanoseconds into an HDR histogram with three significant digits
//! (relative error below 0.1 %), so memory stays fixed however long the run. Exact count, sum,
//! min and max are kept beside it. Runs of one value (an uncontended chip gives the same latency
//! to op after op) are counted in front of the histogram and recorded in one `record_n`, which
//! leaves the histogram exactly as recording them one by one would.

use crate::time::SimTime;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Latency distribution of a stream of requests.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    histogram: Histogram<u64>,
    /// The value of the current run of equal samples, not yet in `histogram`.
    run_ns: u64,
    /// Length of that run (0: none).
    run_count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

/// The percentiles every nandlab report carries, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub min_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// One point of a cumulative distribution: the fraction of samples at or below `latency_us`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CdfPoint {
    pub latency_us: f64,
    pub fraction: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            // Auto-resizing, 3 significant digits; starts small and grows with the range seen.
            histogram: Histogram::new(3).expect("3 significant digits is a valid HDR precision"),
            run_ns: 0,
            run_count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, latency: SimTime) {
        let ns = latency.as_ps().div_ceil(1_000);
        if ns == self.run_ns {
            self.run_count += 1;
        } else {
            self.flush_run();
            self.run_ns = ns;
            self.run_count = 1;
        }
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Records the pending run of equal samples into the histogram.
    #[inline]
    fn flush_run(&mut self) {
        if self.run_count > 0 {
            record_run(&mut self.histogram, self.run_ns, self.run_count);
            self.run_count = 0;
        }
    }

    /// The histogram with the pending run in it (a copy only when a run is pending).
    fn full(&self) -> Cow<'_, Histogram<u64>> {
        if self.run_count == 0 {
            return Cow::Borrowed(&self.histogram);
        }
        let mut h = self.histogram.clone();
        record_run(&mut h, self.run_ns, self.run_count);
        Cow::Owned(h)
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.flush_run();
        self.histogram
            .add(&*other.full())
            .expect("auto-resizing histograms always merge");
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn count(&self) -> u64 {
        self.histogram.len() + self.run_count
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Latency at quantile `q` in `[0, 1]`, in microseconds (0 when empty).
    pub fn quantile_us(&self, q: f64) -> f64 {
        self.quantile_in(&self.full(), q)
    }

    fn quantile_in(&self, histogram: &Histogram<u64>, q: f64) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        if q >= 1.0 {
            return self.max_ns as f64 / 1_000.0;
        }
        // HDR reports the top of the value's bucket; never beyond the exact maximum
        histogram.value_at_quantile(q).min(self.max_ns) as f64 / 1_000.0
    }

    pub fn mean_us(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.sum_ns as f64 / self.count() as f64 / 1_000.0
    }

    pub fn summary(&self) -> LatencySummary {
        if self.is_empty() {
            return LatencySummary::default();
        }
        let h = self.full();
        LatencySummary {
            count: self.count(),
            mean_us: self.mean_us(),
            min_us: self.min_ns as f64 / 1_000.0,
            p50_us: self.quantile_in(&h, 0.50),
            p90_us: self.quantile_in(&h, 0.90),
            p99_us: self.quantile_in(&h, 0.99),
            p999_us: self.quantile_in(&h, 0.999),
            max_us: self.max_ns as f64 / 1_000.0,
        }
    }

    /// The CDF at every distinct recorded value (merged to HDR precision), ending at 1.0.
    pub fn cdf(&self) -> Vec<CdfPoint> {
        let total = self.count();
        if total == 0 {
            return Vec::new();
        }
        let mut points = Vec::new();
        let mut seen = 0u64;
        let histogram = self.full();
        for value in histogram.iter_recorded() {
            seen += value.count_at_value();
            points.push(CdfPoint {
                latency_us: histogram.highest_equivalent(value.value_iterated_to()) as f64
                    / 1_000.0,
                fraction: seen as f64 / total as f64,
            });
        }
        if let Some(last) = points.last_mut() {
            last.latency_us = last.latency_us.min(self.max_ns as f64 / 1_000.0);
        }
        points
    }
}

/// Records `count` samples of `ns`.
#[inline]
fn record_run(histogram: &mut Histogram<u64>, ns: u64, count: u64) {
    // Auto-resize makes record infallible for u64 values below 2^63.
    histogram
        .record_n(ns, count)
        .expect("auto-resizing histogram accepts any latency below 2^63 ns");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_uniform_ramp() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record(SimTime::from_us(us));
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 500.0).abs() <= 1.0, "{s:?}");
        assert!((s.p90_us - 900.0).abs() <= 1.0, "{s:?}");
        assert!((s.p99_us - 990.0).abs() <= 1.0, "{s:?}");
        assert!((s.p999_us - 999.0).abs() <= 1.0, "{s:?}");
        assert_eq!(s.max_us, 1000.0);
        assert_eq!(s.min_us, 1.0);
        assert!((s.mean_us - 500.5).abs() < 1e-9);
    }

    #[test]
    fn cdf_is_monotone_and_ends_at_one() {
        let mut h = LatencyHistogram::new();
        for us in [5u64, 5, 10, 20, 20, 20, 400] {
            h.record(SimTime::from_us(us));
        }
        let cdf = h.cdf();
        assert_eq!(cdf.len(), 4);
        assert!(
            cdf.windows(2)
                .all(|w| w[0].latency_us < w[1].latency_us && w[0].fraction < w[1].fraction)
        );
        assert_eq!(cdf.last().unwrap().fraction, 1.0);
        assert!((cdf[0].fraction - 2.0 / 7.0).abs() < 1e-12);
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = LatencyHistogram::new();
        assert_eq!(h.summary(), LatencySummary::default());
        assert!(h.cdf().is_empty());
    }

    /// Runs of equal samples are counted in front of the histogram: every figure must still be
    /// the one a plain HDR histogram fed sample by sample gives, before and after a merge.
    #[test]
    fn runs_of_equal_samples_report_like_single_records() {
        let samples = [7u64, 7, 7, 3, 3, 900, 900, 900, 900, 7, 12_000, 12_000];
        let mut h = LatencyHistogram::new();
        let mut plain = Histogram::<u64>::new(3).unwrap();
        for (i, us) in samples.iter().enumerate() {
            h.record(SimTime::from_us(*us));
            plain.record(us * 1_000).unwrap();
            assert_eq!(h.count(), i as u64 + 1);
            assert_eq!(*h.full(), plain);
            let max_ns = samples[..=i].iter().max().unwrap() * 1_000;
            let q = h.quantile_us(0.5);
            assert_eq!(q, plain.value_at_quantile(0.5).min(max_ns) as f64 / 1_000.0);
        }
        assert_eq!(h.cdf().len(), 4);
        let mut other = LatencyHistogram::new();
        other.record(SimTime::from_us(5));
        other.record(SimTime::from_us(5));
        h.merge(&other);
        plain.record_n(5_000, 2).unwrap();
        assert_eq!(h.run_count, 0);
        assert_eq!(h.histogram, plain);
        assert_eq!(h.count(), samples.len() as u64 + 2);
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        a.record(SimTime::from_us(1));
        b.record(SimTime::from_us(3));
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.summary().max_us, 3.0);
    }
}
