//! The SLC-cache write cliff (issue 34 item 3, SPEC C3): sustained sequential (128 KiB) and
//! random (4 KiB) writes on an empty TLC device with a static SLC cache, and on the same device
//! without one. Write bandwidth per interval of simulated time comes from the run's time series;
//! "before" is the mean bandwidth until the cache is first full, "after" the mean from then on
//! (the cache folds a block into TLC for each block the host fills).
//!
//! The device is `examples/ssd-slc-cache.toml`'s: the `tlc-b17a` chip shrunk to 2 dies of 64
//! blocks of 192 pages (16 KiB), 25 % over-provisioning, 16 SLC-mode blocks (64 pages each,
//! 16 MiB) with SLC-mode times scaled from the preset's by HP's white-paper ratios (25 µs read,
//! 420 µs program; see the example). The host writes a multiple of the cache (4× at `--quick`,
//! 8× by default, 16× at full scale) with 16 requests outstanding.
//!
//! Published shape: Samsung's 870 QVO (QLC) writes 530 MB/s sequentially while its TurboWrite
//! (SLC) buffer lasts and 160 MB/s after it (Samsung's specification, as quoted and measured in
//! KitGuru's 4 TB review: 486.9 and 169.5 MB/s), a ratio of 0.30. TLC falls less than QLC
//! behind SLC; the value is declared for the shape, not as the same device.

use super::paper::{Paper, pv};
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::control::Control;
use crate::error::LabResult;
use crate::stack::Stack;
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ctrl-slc-cliff",
    reference: "SPEC C3; vendor SLC-cache cliff (Samsung 870 QVO)",
    title: "sustained sequential and random writes through an SLC cache on TLC: write \
            bandwidth per interval, the cliff when the cache is exhausted",
    run: cliff,
    paper: Paper::Values(&[pv(
        "seq_write_after_over_before",
        "write_after_over_before_sequential",
        160.0 / 530.0,
        "",
        "Samsung 870 QVO 4 TB specification via KitGuru's review (cache test page): \
         530 MB/s in the TurboWrite buffer, 160 MB/s after",
        "sustained sequential writes past the SLC cache (QLC; nandlab: TLC)",
    )]),
}];

/// The device and workload of every point (overridden per point: pattern, request size and
/// count, the cache, the seed).
const STACK: &str = r#"
[run]
seed = 1

[nand]
preset = "tlc-b17a"
[nand.geometry]
dies_per_chip = 2
blocks_per_plane = 64
pages_per_block = 192
[nand.timing]
slc_read_us = 25
slc_program_us = 420

[ssd]
op_fraction = 0.25
[ssd.host]
queue_depth = 16

[workload]
kind = "synthetic"
pattern = "sequential"
read_fraction = 0.0
request_size_bytes = 131072
span_bytes = 0
request_count = 512
"#;

/// SLC cache blocks and their SLC pages (192 TLC pages / 3 bits).
const SLC_BLOCKS: i64 = 16;
const SLC_PAGES: i64 = SLC_BLOCKS * 64;
const PAGE_BYTES: i64 = 16384;

/// One point: pattern ("sequential" / "random") and whether the SLC cache is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Point {
    pattern: &'static str,
    cache: bool,
}

const POINTS: [Point; 4] = [
    Point {
        pattern: "sequential",
        cache: true,
    },
    Point {
        pattern: "sequential",
        cache: false,
    },
    Point {
        pattern: "random",
        cache: true,
    },
    Point {
        pattern: "random",
        cache: false,
    },
];

/// Bytes written, in multiples of the cache.
fn cache_multiple(scale: Scale) -> i64 {
    match scale {
        Scale::Quick => 4,
        Scale::Standard => 8,
        Scale::Full => 16,
    }
}

fn request_bytes(point: Point) -> i64 {
    if point.pattern == "sequential" {
        131_072
    } else {
        4096
    }
}

fn stack(point: Point, scale: Scale, seed: u64) -> LabResult<Stack> {
    let size = request_bytes(point);
    // a 4 KiB write takes a page of its own: count pages, not bytes
    let per_request = (size / PAGE_BYTES).max(1);
    let requests = cache_multiple(scale) * SLC_PAGES / per_request;
    let mut extra = vec![
        ("workload.pattern", point.pattern.into()),
        ("workload.request_size_bytes", toml::Value::Integer(size)),
    ];
    if point.cache {
        extra.push(("ssd.slc_cache.blocks", toml::Value::Integer(SLC_BLOCKS)));
    }
    super::points::point_stack("ctrl-slc-cliff", STACK, seed, requests, extra)
}

/// What one point measured: the run's write bandwidth and its time series.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CliffMeasure {
    pub write_mib_s: f64,
    pub write_p99_us: f64,
    pub waf: f64,
    /// Per interval: end (s), write MiB/s, SLC cache pages in use (0 without a cache).
    pub series: Vec<(f64, f64, u32)>,
}

/// One point of `ctrl-slc-cliff` run to its end (a point is its stack config).
#[derive(Debug)]
pub(super) struct Cliff;

impl super::measure::Measure for Cliff {
    const NAME: &'static str = "ctrl-slc-cliff";
    type Point = crate::stack::StackConfig;
    type Output = CliffMeasure;
    fn measure(
        config: &crate::stack::StackConfig,
        control: &Control,
    ) -> LabResult<Option<CliffMeasure>> {
        let stack = super::points::resolve("ctrl-slc-cliff", config)?;
        super::points::measure_ssd("ctrl-slc-cliff", &stack, control, |run| {
            let r = &run.report;
            Ok(CliffMeasure {
                write_mib_s: r.write.bw_mib_s,
                write_p99_us: r.write.lat.p99_us,
                waf: r.waf,
                series: r
                    .timeseries
                    .iter()
                    .map(|row| {
                        (
                            row.t_end_s,
                            row.write_mib_s,
                            row.slc_occupancy_pages.unwrap_or(0),
                        )
                    })
                    .collect(),
            })
        })
    }
}

/// Mean write bandwidth (MiB/s, weighted by interval length) before and after the interval
/// in which the cache first holds `full` pages or more (the cache is full: its last block is
/// open, folding starts); `None` without such an interval or nothing after it.
pub(crate) fn before_after(series: &[(f64, f64, u32)], full: u32) -> Option<(f64, f64)> {
    let at = series.iter().position(|r| r.2 >= full)?;
    let mean = |rows: &[(f64, f64, u32)], start: f64| {
        let (mut mib, mut t0) = (0.0, start);
        for &(t, rate, _) in rows {
            mib += rate * (t - t0);
            t0 = t;
        }
        (t0 > start).then(|| mib / (t0 - start))
    };
    let before = mean(&series[..at], 0.0)?;
    let after = mean(&series[at + 1..], series[at].0)?;
    Some((before, after))
}

fn cliff(options: &RunOptions) -> LabResult<ExperimentResult> {
    let (scale, seed) = (options.scale, options.seed);
    let configs = POINTS
        .iter()
        .map(|&point| stack(point, scale, seed).map(|s| s.config))
        .collect::<LabResult<Vec<_>>>()?;
    let measured = super::measure::run_measure::<Cliff>(options, &configs)?;
    let rows: Vec<(Point, CliffMeasure)> = POINTS
        .iter()
        .zip(measured)
        .map_while(|(&p, m)| m.map(|m| (p, m)))
        .collect();
    let mut result = ExperimentResult {
        interrupted: rows.len() < POINTS.len(),
        ..ExperimentResult::default()
    };
    let mut series = Curve::new(
        "bandwidth",
        &[
            "pattern",
            "cache",
            "t_end_s",
            "write_mib_s",
            "slc_occupancy_pages",
        ],
    );
    let mut summary = Curve::new(
        "cliff",
        &[
            "pattern",
            "cache",
            "write_mib_s",
            "write_p99_us",
            "waf",
            "before_mib_s",
            "after_mib_s",
        ],
    );
    for (point, m) in &rows {
        let cache = if point.cache { "slc" } else { "none" };
        let p = point.pattern;
        for &(t, rate, occupancy) in &m.series {
            series.push(vec![
                p.into(),
                cache.into(),
                t.into(),
                rate.into(),
                occupancy.into(),
            ]);
        }
        let (before, after) = if point.cache {
            // full once the last block is open (a fold is due when it fills)
            before_after(&m.series, (SLC_PAGES - SLC_PAGES / SLC_BLOCKS) as u32)
                .unwrap_or((f64::NAN, f64::NAN))
        } else {
            (m.write_mib_s, m.write_mib_s)
        };
        if point.cache {
            result.metric(&format!("write_mib_s_before_{p}"), before);
            result.metric(&format!("write_mib_s_after_{p}"), after);
            result.metric(&format!("write_after_over_before_{p}"), after / before);
            result.metric(&format!("waf_slc_{p}"), m.waf);
        } else {
            result.metric(&format!("write_mib_s_tlc_only_{p}"), m.write_mib_s);
        }
        summary.push(vec![
            p.into(),
            cache.into(),
            m.write_mib_s.into(),
            m.write_p99_us.into(),
            m.waf.into(),
            before.into(),
            after.into(),
        ]);
    }
    result.curves.push(summary);
    result.curves.push(series);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::before_after;

    #[test]
    fn bandwidth_before_and_after_the_cache_fills_is_weighted_by_time() {
        // 0-0.02 s at 80 and 0.02-0.03 at 40 MiB/s (full at 0.04); then 10 for 0.02 s, 20 for 0.01
        let s = [
            (0.02, 80.0, 10),
            (0.03, 40.0, 20),
            (0.04, 30.0, 30),
            (0.06, 10.0, 28),
            (0.07, 20.0, 30),
        ];
        let (before, after) = before_after(&s, 30).unwrap();
        assert!((before - (80.0 * 0.02 + 40.0 * 0.01) / 0.03).abs() < 1e-9);
        assert!((after - (10.0 * 0.02 + 20.0 * 0.01) / 0.03).abs() < 1e-9);
        assert_eq!(before_after(&s, 31), None);
        assert_eq!(before_after(&[(0.01, 5.0, 3)], 3), None);
    }
}
