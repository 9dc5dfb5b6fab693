//! The run as a time series (issue 34 item 5): per interval of simulated time, what completed
//! (requests, bytes, latency percentiles per direction) and the device's state at the
//! interval's end (write amplification over the interval, free blocks), so a GC cliff is seen,
//! not inferred from a CDF.
//!
//! The interval starts at 10 ms and doubles (adjacent rows merged) whenever the series reaches
//! [`ROWS_MAX`] rows, so a run of any length gives between `ROWS_MAX / 2` and `ROWS_MAX` rows
//! (fewer for a run shorter than `ROWS_MAX / 2` × 10 ms). Latencies are kept per row in
//! logarithmic buckets (4 per octave, so a percentile is within 19 % of the exact value), which
//! merge exactly when rows merge. An interval in which nothing completed is a row of zeros: a
//! stall shows as a gap in throughput.

use crate::HostOp;
use nandlab_core::SimTime;
use serde::Serialize;

/// Most rows before the interval doubles.
pub const ROWS_MAX: usize = 512;
/// The first interval (each interval closed costs a few thousand instructions: its latency
/// buckets are zeroed and stored).
const FIRST_INTERVAL_NS: u64 = 10_000_000;
/// Latency buckets: 4 per octave of picoseconds from 2^20 ps (~1 µs; shorter latencies count
/// in the first octave) up: 176 buckets cover every `u64`.
const SUB: u32 = 4;
const BUCKETS: usize = 176;

/// Latencies of one direction in one interval, in logarithmic buckets of nanoseconds.
#[derive(Clone, Debug)]
struct Buckets(Box<[u32; BUCKETS]>);

impl Default for Buckets {
    fn default() -> Self {
        Buckets(Box::new([0; BUCKETS]))
    }
}

impl Buckets {
    /// The bucket of `ps`: the octave of its top bit (from 2^20 ps on) and the two bits below
    /// it (below 2^20 ps: the first octave).
    #[inline(always)]
    fn index(ps: u64) -> usize {
        let octave = 63 - (ps | 1 << 20).leading_zeros(); // 20 ..= 63
        let frac = ((ps >> (octave - 2)) & 3) as u32;
        ((octave - 20) * SUB + frac) as usize
    }

    /// The upper edge of bucket `i`, microseconds.
    fn upper_us(i: usize) -> f64 {
        let (octave, frac) = (i as u32 / SUB + 20, i as u32 % SUB);
        2f64.powi(octave as i32) * (1.0 + f64::from(frac + 1) / f64::from(SUB)) / 1e6
    }

    #[inline(always)]
    fn record(&mut self, ps: u64) {
        self.0[Self::index(ps)] += 1;
    }

    fn merge(&mut self, other: &Buckets) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }

    /// The `q` quantile (upper bucket edge), 0 without samples.
    fn quantile_us(&self, count: u64, q: f64) -> f64 {
        if count == 0 {
            return 0.0;
        }
        let rank = ((q * count as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &n) in self.0.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                return Self::upper_us(i);
            }
        }
        Self::upper_us(BUCKETS - 1)
    }
}

/// What one interval accumulates: the latencies of what completed in it, and the counters at
/// its end (the requests and bytes it completed are the differences of those).
#[derive(Clone, Debug, Default)]
struct Interval {
    read_lat: Buckets,
    write_lat: Buckets,
    end: DeviceState,
}

impl Interval {
    fn merge(&mut self, later: &Interval) {
        self.read_lat.merge(&later.read_lat);
        self.write_lat.merge(&later.write_lat);
        self.end = later.end;
    }
}

/// The cumulative counters an interval closes with.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceState {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub host_pages_written: u64,
    pub flash_pages_programmed: u64,
    pub free_blocks: u32,
    /// SLC cache slots in use (`None`: no SLC cache).
    pub slc_pages: Option<u32>,
}

/// One row of the series.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[allow(missing_docs)] // fields named with their units
pub struct TimeSeriesRow {
    /// End of the interval, seconds of simulated time since the measurement started.
    pub t_end_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mib_s: f64,
    pub write_mib_s: f64,
    /// Latency percentiles of the requests completed in the interval (upper edge of their
    /// logarithmic bucket; 0 when none completed).
    pub read_p50_us: f64,
    pub read_p99_us: f64,
    pub write_p50_us: f64,
    pub write_p99_us: f64,
    pub write_p999_us: f64,
    /// Flash pages programmed per host page written in the interval (0 when none written).
    pub waf: f64,
    /// Free blocks of the whole device at the interval's end.
    pub free_blocks: u32,
    /// SLC cache pages in use (programmed slots, live or stale) at the interval's end (`None`:
    /// no SLC cache; `timeseries.csv` then has no such column).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc_occupancy_pages: Option<u32>,
}

/// The series of the current measurement.
#[derive(Clone, Debug)]
pub(crate) struct TimeSeries {
    started: SimTime,
    interval_ns: u64,
    /// End of the open interval.
    next_boundary: SimTime,
    closed: Vec<Interval>,
    open: Interval,
    /// The device state at the measurement's start.
    start_state: DeviceState,
}

impl Default for TimeSeries {
    fn default() -> Self {
        TimeSeries::new(SimTime::ZERO, DeviceState::default())
    }
}

impl TimeSeries {
    /// A series starting at `started` with the device in `state`.
    pub fn new(started: SimTime, state: DeviceState) -> Self {
        TimeSeries {
            started,
            interval_ns: FIRST_INTERVAL_NS,
            next_boundary: started + SimTime::from_ns(FIRST_INTERVAL_NS),
            closed: Vec::new(),
            open: Interval::default(),
            start_state: state,
        }
    }

    /// Whether a completion at `now` falls past the open interval
    /// ([`TimeSeries::close_until`] first).
    #[inline(always)]
    pub fn due(&self, now: SimTime) -> bool {
        now >= self.next_boundary
    }

    /// Closes every interval that ended by `now` (the first with what it accumulated, the
    /// others empty), each with the device in `state`.
    #[cold]
    #[inline(never)]
    pub fn close_until(&mut self, now: SimTime, state: DeviceState) {
        while now >= self.next_boundary {
            let mut done = std::mem::take(&mut self.open);
            done.end = state;
            self.closed.push(done);
            self.next_boundary += SimTime::from_ns(self.interval_ns);
            if self.closed.len() >= ROWS_MAX {
                self.coarsen();
            }
        }
    }

    /// Doubles the interval: adjacent closed rows merge (the series starts at `started`, so
    /// rows pair up); an odd last row becomes the start of the open interval.
    fn coarsen(&mut self) {
        let rows = std::mem::take(&mut self.closed);
        let mut pairs = rows.chunks_exact(2);
        for pair in &mut pairs {
            let mut merged = pair[0].clone();
            merged.merge(&pair[1]);
            self.closed.push(merged);
        }
        if let [odd] = pairs.remainder() {
            let mut open = odd.clone();
            open.merge(&self.open);
            self.open = open;
        }
        self.interval_ns *= 2;
        let n = self.closed.len() as u64 + 1;
        self.next_boundary = self.started + SimTime::from_ns(self.interval_ns * n);
    }

    /// A request of `op` completed after `latency` (in the open interval; its count and bytes
    /// come from the measurement's counters when the interval closes).
    #[inline(always)]
    pub fn record(&mut self, op: HostOp, latency: SimTime) {
        match op {
            HostOp::Read => self.open.read_lat.record(latency.as_ps()),
            HostOp::Write => self.open.write_lat.record(latency.as_ps()),
            _ => {}
        }
    }

    /// The rows: every closed interval, then the open one up to `last` (the last completion),
    /// with the device in `state` at its end.
    pub fn rows(&self, last: SimTime, state: DeviceState) -> Vec<TimeSeriesRow> {
        let interval_s = self.interval_ns as f64 * 1e-9;
        let mut before = self.start_state;
        let mut out = Vec::with_capacity(self.closed.len() + 1);
        let mut push = |i: &Interval, end_s: f64, length_s: f64| {
            let (e, b) = (i.end, before);
            before = e;
            let (reads, writes) = (e.reads - b.reads, e.writes - b.writes);
            let (host, flash) = (
                e.host_pages_written.saturating_sub(b.host_pages_written),
                e.flash_pages_programmed
                    .saturating_sub(b.flash_pages_programmed),
            );
            let per_s = |v: f64| if length_s > 0.0 { v / length_s } else { 0.0 };
            const MIB: f64 = 1024.0 * 1024.0;
            out.push(TimeSeriesRow {
                t_end_s: end_s,
                read_iops: per_s(reads as f64),
                write_iops: per_s(writes as f64),
                read_mib_s: per_s((e.read_bytes - b.read_bytes) as f64 / MIB),
                write_mib_s: per_s((e.write_bytes - b.write_bytes) as f64 / MIB),
                read_p50_us: i.read_lat.quantile_us(reads, 0.5),
                read_p99_us: i.read_lat.quantile_us(reads, 0.99),
                write_p50_us: i.write_lat.quantile_us(writes, 0.5),
                write_p99_us: i.write_lat.quantile_us(writes, 0.99),
                write_p999_us: i.write_lat.quantile_us(writes, 0.999),
                waf: if host > 0 {
                    flash as f64 / host as f64
                } else {
                    0.0
                },
                free_blocks: e.free_blocks,
                slc_occupancy_pages: e.slc_pages,
            });
        };
        for (n, i) in self.closed.iter().enumerate() {
            push(i, (n + 1) as f64 * interval_s, interval_s);
        }
        let open_start_s = self.closed.len() as f64 * interval_s;
        let end_s = (last - self.started).as_s_f64();
        let last_end = self.closed.last().map_or(self.start_state, |i| i.end);
        if end_s > open_start_s || state.reads + state.writes > last_end.reads + last_end.writes {
            let mut open = self.open.clone();
            open.end = state;
            push(&open, end_s.max(open_start_s), end_s - open_start_s);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters after `reads` 8 KiB reads and `writes` 4 KiB writes.
    fn state(reads: u64, writes: u64, host: u64, flash: u64, free: u32) -> DeviceState {
        DeviceState {
            reads,
            writes,
            read_bytes: reads * 8192,
            write_bytes: writes * 4096,
            host_pages_written: host,
            flash_pages_programmed: flash,
            free_blocks: free,
            slc_pages: None,
        }
    }

    #[test]
    fn buckets_by_hand() {
        // below 2^20 ps (~1 µs): the first octave; 100 µs = 10^8 ps: top bit 2^26, the two
        // bits below it 01 (10^8 / 2^26 = 1.49), so octave 26, quarter 1: upper edge
        // 2^26 * 1.5 ps = 100.7 µs
        assert!(Buckets::index(500_000) < 4);
        assert_eq!(Buckets::index(u64::MAX), BUCKETS - 1);
        assert_eq!(Buckets::index(100_000_000), (26 - 20) * 4 + 1);
        let upper = Buckets::upper_us((26 - 20) * 4 + 1);
        assert!((upper - 100.663296).abs() < 1e-6, "{upper}");
        let mut b = Buckets::default();
        for _ in 0..99 {
            b.record(100_000_000);
        }
        b.record(10_000_000_000); // 10 ms
        assert_eq!(b.quantile_us(100, 0.5), upper);
        assert_eq!(b.quantile_us(100, 0.99), upper);
        let max = b.quantile_us(100, 1.0);
        assert!((10_000.0..=12_000.0).contains(&max), "{max}");
    }

    #[test]
    fn a_stall_is_a_row_of_zeros_and_waf_is_per_interval() {
        let mut s = TimeSeries::new(SimTime::ZERO, state(0, 0, 0, 0, 10));
        s.record(HostOp::Write, SimTime::from_us(200));
        // a completion at 35 ms: intervals 0-10, 10-20, 20-30 ms close; the first holds the write
        let now = SimTime::from_us(35_000);
        assert!(s.due(now));
        s.close_until(now, state(0, 1, 4, 10, 8));
        s.record(HostOp::Write, SimTime::from_us(3_000));
        let rows = s.rows(SimTime::from_us(40_000), state(0, 2, 6, 12, 7));
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].write_iops, 100.0);
        assert_eq!(rows[0].waf, 2.5);
        assert!((rows[0].write_p50_us - 200.0).abs() < 0.19 * 200.0);
        assert_eq!((rows[1].write_iops, rows[2].write_iops), (0.0, 0.0));
        assert_eq!((rows[1].waf, rows[1].write_p99_us), (0.0, 0.0));
        assert_eq!(rows[3].t_end_s, 0.04);
        assert_eq!(rows[3].waf, 1.0);
        assert_eq!(rows[3].free_blocks, 7);
        assert!(rows[3].write_p99_us >= 3000.0);
    }

    #[test]
    fn the_interval_doubles_to_keep_the_rows_bounded() {
        let mut s = TimeSeries::new(SimTime::ZERO, DeviceState::default());
        for ms in 0..20_000u64 {
            let now = SimTime::from_us(ms * 1000 + 999);
            if s.due(now) {
                s.close_until(now, state(ms, 0, 0, 0, 1));
            }
            s.record(HostOp::Read, SimTime::from_us(100));
        }
        let rows = s.rows(SimTime::from_ms(20_000), state(20_000, 0, 0, 0, 1));
        assert!(
            (ROWS_MAX / 2..=ROWS_MAX + 1).contains(&rows.len()),
            "{}",
            rows.len()
        );
        let total: f64 = rows
            .windows(2)
            .map(|w| w[1].read_iops * (w[1].t_end_s - w[0].t_end_s))
            .sum::<f64>()
            + rows[0].read_iops * rows[0].t_end_s;
        assert!((total - 20_000.0).abs() < 1e-6, "{total}");
        assert!((rows.last().unwrap().t_end_s - 20.0).abs() < 1e-9);
        assert!(
            rows.iter()
                .all(|r| r.read_p99_us > 100.0 && r.read_p99_us < 120.0)
        );
    }
}
