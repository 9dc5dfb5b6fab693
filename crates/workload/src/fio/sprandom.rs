//! fio's SPRandom preconditioner (`sprandom=1`, fio's `sprandom.c`, added in fio 3.41 by
//! Sandisk): one pass of random writes over the device's *physical* capacity that leaves the
//! flash in the steady state of random overwrites, much faster than writing the device over
//! and over.
//!
//! # The model (Desnoyers, "Analytic Models of SSD Write Performance", ACM ToS 8(2), 2012)
//! In the steady state of uniform random writes under greedy GC, blocks of validity `v` fill a
//! fraction of the device proportional to `1 / v`, and the block GC picks has validity
//! `1 - 1 / WA`, with `WA ≈ 0.5 / OP + 0.7` (fio's approximation). The device's physical size
//! (`logical × (1 + spr_op)`) is cut into `spr_num_regions` equal regions, each given the
//! validity of the steady-state curve at its place, the emptiest first.
//!
//! # The write order (as fio's `sprandom_get_next_offset`)
//! Fresh block offsets come from a random permutation of the file's blocks (fio: its LFSR;
//! here [`Permutation`], so the offsets differ from fio's but no block repeats). Every
//! offset written is kept, with the invalid fraction of the current region as probability,
//! to be written again later. When a region's share of writes is done, the kept offsets are
//! written first in the next region (invalidating their copies in the one before); the rest of
//! the region takes fresh offsets. With `spr_cs` (a device cache size) the kept offsets of a
//! region are written at the end of the next one instead, so an overwrite never meets its
//! original in the device's cache. The job ends when every block has been written once.
//!
//! # Keys
//! `sprandom` (0/1), `spr_op` (over-provisioning in (0, 1), default 0.15), `spr_num_regions`
//! (default 100), `spr_cs` (bytes, default 0). As in fio, `sprandom` needs random writes and
//! one file, and sets `norandommap`; here it also needs `rw=randwrite` and `numjobs=1` (fio's
//! example states both as requirements).

use crate::BlockRequest;
use crate::synthetic::{Permutation, SyntheticGenerator};
use nandlab_core::SimRng;
use std::collections::VecDeque;

/// The keys this module types (canonical names).
pub(crate) const KEYS: &[&str] = &["sprandom", "spr_op", "spr_num_regions", "spr_cs"];

/// Invalid fractions are kept in units of 1/`PRECISION` (fio's `PCT_PRECISION`).
const PRECISION: u32 = 10_000;

/// Most regions (each costs one `u32`; fio gives no limit).
const MAX_REGIONS: u64 = 1 << 20;

/// What a job's `sprandom` keys ask.
#[derive(Clone, Debug, PartialEq)]
pub struct SpRandomOptions {
    /// `sprandom=1`.
    pub enabled: bool,
    /// `spr_op`: over-provisioning as spare / logical.
    pub over_provisioning: f64,
    /// `spr_num_regions`.
    pub regions: u32,
    /// `spr_cs`: the device's cache size in bytes (0: none).
    pub cache_bytes: u64,
}

impl Default for SpRandomOptions {
    fn default() -> Self {
        SpRandomOptions {
            enabled: false,
            over_provisioning: 0.15,
            regions: 100,
            cache_bytes: 0,
        }
    }
}

impl SpRandomOptions {
    /// Types one of [`KEYS`].
    pub(crate) fn apply(&mut self, key: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        match key {
            "sprandom" => {
                self.enabled = match value {
                    "1" | "true" => true,
                    "0" | "false" => false,
                    _ => return Err(format!("bad sprandom \"{value}\": expected 0 or 1")),
                }
            }
            "spr_op" => match value.parse::<f64>() {
                Ok(op) if op > 0.0 && op < 1.0 => self.over_provisioning = op,
                _ => {
                    return Err(format!(
                        "bad spr_op \"{value}\": expected an over-provisioning ratio in (0, 1)"
                    ));
                }
            },
            "spr_num_regions" => match value.parse::<u64>() {
                Ok(n) if (1..=MAX_REGIONS).contains(&n) => self.regions = n as u32,
                _ => {
                    return Err(format!(
                        "bad spr_num_regions \"{value}\": expected 1 to {MAX_REGIONS}"
                    ));
                }
            },
            "spr_cs" => self.cache_bytes = super::parse_fio_size(value)?,
            _ => unreachable!("not an sprandom key: {key}"),
        }
        Ok(())
    }

    /// The bytes fio writes (its `io_size`): the logical size plus the over-provisioning,
    /// rounded down to whole blocks (fio's `sprandom_physical_size`).
    pub(crate) fn physical_bytes(&self, logical_bytes: u64, block_bytes: u64) -> u64 {
        let spare = (logical_bytes as f64 * self.over_provisioning).ceil() as u64;
        let size = logical_bytes.saturating_add(spare);
        size - size % block_bytes.max(1)
    }

    /// Why the preconditioner cannot run over `logical_bytes` in blocks of `block_bytes`
    /// (the key to blame and the message), if it cannot.
    pub(crate) fn check(
        &self,
        logical_bytes: u64,
        block_bytes: u64,
    ) -> Result<(), (&'static str, String)> {
        let region_bytes =
            self.physical_bytes(logical_bytes, block_bytes) / u64::from(self.regions);
        if region_bytes < block_bytes {
            return Err((
                "spr_num_regions",
                format!(
                    "{} regions of the {logical_bytes}-byte region plus spr_op are smaller than one block of {block_bytes} bytes",
                    self.regions
                ),
            ));
        }
        if self.cache_bytes > region_bytes {
            return Err((
                "spr_cs",
                format!(
                    "spr_cs {} is larger than a region ({region_bytes} bytes): use fewer regions",
                    self.cache_bytes
                ),
            ));
        }
        Ok(())
    }
}

/// Each region's invalid fraction in 1/[`PRECISION`], the emptiest region first.
pub(crate) fn invalid_fractions(regions: u32, over_provisioning: f64) -> Vec<u32> {
    let n = regions.max(1) as usize;
    let write_amplification = 0.5 / over_provisioning + 0.7;
    let victim_validity = 1.0 - 1.0 / write_amplification;
    // validity from 1 down to the victim's, evenly spaced; each level fills space
    // proportional to 1 / validity: the curve (cumulative space, validity)
    let validity: Vec<f64> = (0..n)
        .map(|i| match n {
            1 => 1.0,
            _ => 1.0 + (victim_validity - 1.0) * i as f64 / (n - 1) as f64,
        })
        .collect();
    let mut space = Vec::with_capacity(n);
    let mut total = 0.0;
    for v in &validity {
        total += 1.0 / v;
        space.push(total);
    }
    // the curve sampled at evenly spaced space: one validity per equal-sized region
    let (first, last) = (space[0], space[n - 1]);
    let mut out: Vec<u32> = (0..n)
        .map(|i| {
            let x = match n {
                1 => first,
                _ => first + (last - first) * i as f64 / (n - 1) as f64,
            };
            let v = interpolate(x, &space, &validity);
            ((1.0 - v) * f64::from(PRECISION)).round() as u32
        })
        .collect();
    out.reverse();
    out
}

/// The value of the piecewise-linear curve through `(xs[i], ys[i])` at `x` (clamped at the
/// ends); `xs` increases strictly.
fn interpolate(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    if x <= xs[0] {
        return ys[0];
    }
    let last = xs.len() - 1;
    if x >= xs[last] {
        return ys[last];
    }
    let i = xs.partition_point(|&p| p <= x).max(1) - 1;
    let (x1, x2, y1, y2) = (xs[i], xs[i + 1], ys[i], ys[i + 1]);
    if x2 - x1 < 1e-9 {
        return y1;
    }
    y1 + (y2 - y1) * (x - x1) / (x2 - x1)
}

/// The offsets of one `sprandom` job, on top of its synthetic generator (which still draws
/// arrivals).
#[derive(Clone, Debug)]
pub(crate) struct SpRandom {
    base: SyntheticGenerator,
    order: Permutation,
    region_start: u64,
    block_bytes: u64,
    /// Blocks of the job's region, and fresh offsets handed out so far.
    blocks: u64,
    fresh: u64,
    invalid: Vec<u32>,
    region: usize,
    region_writes: u64,
    writes_left: u64,
    /// Offsets kept for rewriting in the next region, and those now being rewritten.
    kept: Vec<u64>,
    rewrite: VecDeque<u64>,
    /// Offsets kept in the current region (which then has fewer fresh writes).
    kept_count: u64,
    deferred: bool,
    rng: SimRng,
}

impl SpRandom {
    /// The preconditioner over `span_bytes` from `region_start` in blocks of `block_bytes`;
    /// `options` passed [`SpRandomOptions::check`].
    pub(crate) fn new(
        base: SyntheticGenerator,
        options: &SpRandomOptions,
        region_start: u64,
        span_bytes: u64,
        block_bytes: u64,
        seed: u64,
    ) -> Self {
        let physical = options.physical_bytes(span_bytes, block_bytes);
        let region_writes = (physical / u64::from(options.regions) / block_bytes).max(1);
        let blocks = (span_bytes / block_bytes).max(1);
        let mut rng = SimRng::stream(seed, "workload.fio.sprandom");
        let key = rng.below(u64::MAX);
        SpRandom {
            base,
            order: Permutation::new(blocks, key),
            region_start,
            block_bytes,
            blocks,
            fresh: 0,
            invalid: invalid_fractions(options.regions, options.over_provisioning),
            region: 0,
            region_writes,
            writes_left: region_writes,
            kept: Vec::new(),
            rewrite: VecDeque::new(),
            kept_count: 0,
            deferred: options.cache_bytes > 0,
            rng,
        }
    }

    /// Keeps `block` for a rewrite with the current region's invalid fraction.
    fn maybe_keep(&mut self, block: u64) {
        let fraction = self.invalid.get(self.region).copied().unwrap_or(0);
        if self.rng.below(u64::from(PRECISION) + 1) <= u64::from(fraction) {
            self.kept.push(block);
            self.kept_count += 1;
        }
    }

    /// The next block to write, or `None` once every block was written once.
    fn next_block(&mut self) -> Option<u64> {
        if !self.deferred
            && let Some(block) = self.rewrite.pop_front()
        {
            self.maybe_keep(block);
            return Some(block);
        }
        if self.writes_left == 0 {
            if self.deferred
                && let Some(block) = self.rewrite.pop_front()
            {
                self.maybe_keep(block);
                return Some(block);
            }
            if self.region >= self.invalid.len() {
                return None;
            }
            // the next region: its rewrites count toward its writes
            self.region += 1;
            self.writes_left = self.region_writes.saturating_sub(self.kept_count);
            self.kept_count = 0;
            self.rewrite.extend(self.kept.drain(..));
        }
        if self.fresh == self.blocks {
            // every block written once; with a cache, the last rewrites still go
            return match self.deferred {
                true => self.rewrite.pop_front().inspect(|&b| self.maybe_keep(b)),
                false => None,
            };
        }
        let block = self.order.apply(self.fresh);
        self.fresh += 1;
        self.writes_left = self.writes_left.saturating_sub(1);
        self.maybe_keep(block);
        Some(block)
    }

    pub(crate) fn next(&mut self) -> Option<BlockRequest> {
        let block = self.next_block()?;
        let mut request = self.base.next()?;
        request.offset_bytes = self.region_start + block * self.block_bytes;
        request.size_bytes = self.block_bytes;
        Some(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{Pattern, SyntheticSpec};
    use std::collections::HashMap;

    #[test]
    fn the_regions_follow_the_steady_state_curve() {
        let invalid = invalid_fractions(100, 0.15);
        assert_eq!(invalid.len(), 100);
        // WA = 0.5 / 0.15 + 0.7 = 4.033: the victim's validity 1 - 1/WA = 0.752
        assert_eq!(invalid[0], 2479);
        assert_eq!(invalid[99], 0);
        assert!(invalid.windows(2).all(|w| w[0] >= w[1]), "{invalid:?}");
        // the emptier half of the validity range fills more than half of the space
        let below_mid = invalid.iter().filter(|&&f| f > 2479 / 2).count();
        assert!(below_mid > 50, "{below_mid}");
        assert_eq!(invalid_fractions(1, 0.15), vec![0]);
    }

    #[test]
    fn options_are_checked_with_their_keys() {
        let mut o = SpRandomOptions::default();
        assert!(o.apply("spr_op", "1.5").unwrap_err().contains("spr_op"));
        assert!(o.apply("spr_num_regions", "0").is_err());
        o.apply("spr_cs", "1m").unwrap();
        o.apply("spr_num_regions", "100").unwrap();
        let (key, message) = o.check(64 << 20, 4096).unwrap_err();
        assert_eq!(key, "spr_cs", "{message}");
        assert_eq!(o.physical_bytes(1 << 20, 4096), (1 << 20) + 155648);
    }

    fn writes(options: &SpRandomOptions, span: u64) -> Vec<u64> {
        let spec = SyntheticSpec::new(Pattern::Random, 0.0, 4096, span, u64::MAX / 2);
        let base = spec.generator().unwrap();
        let mut s = SpRandom::new(base, options, 0, span, 4096, 7);
        std::iter::from_fn(|| s.next().map(|r| r.offset_bytes / 4096)).collect()
    }

    #[test]
    fn every_block_is_written_and_the_rewrites_make_up_the_spare() {
        for cache_bytes in [0, 4096] {
            let options = SpRandomOptions {
                enabled: true,
                cache_bytes,
                ..SpRandomOptions::default()
            };
            let blocks = 8192;
            let all = writes(&options, blocks * 4096);
            let mut counts: HashMap<u64, u64> = HashMap::new();
            for b in &all {
                *counts.entry(*b).or_default() += 1;
            }
            assert_eq!(counts.len() as u64, blocks, "every block once at least");
            // the rewrites fill about the over-provisioned part of the physical size
            let extra = all.len() as f64 / blocks as f64 - 1.0;
            assert!(
                (0.10..=0.20).contains(&extra),
                "cache {cache_bytes}: {extra}"
            );
        }
    }

    fn job_file(text: &str) -> Result<super::super::FioJobFile, String> {
        super::super::FioJobFile::parse(text.as_bytes(), "job.fio").map_err(|e| e.to_string())
    }

    #[test]
    fn a_job_file_writes_the_physical_capacity_once() {
        let file = job_file("[p]\nrw=randwrite\nbs=4k\nsprandom=1\nspr_num_regions=10\n").unwrap();
        let context = super::super::FioContext {
            device_size_bytes: 32 << 20,
            seed: 3,
        };
        let requests: Vec<BlockRequest> = file.generator(&context).unwrap().collect();
        let blocks = (32 << 20) / 4096;
        let distinct: std::collections::HashSet<u64> =
            requests.iter().map(|r| r.offset_bytes).collect();
        assert_eq!(distinct.len() as u64, blocks);
        // at most the physical size (fio's io_size): 32 MiB x 1.15
        assert!(
            requests.len() as u64 <= blocks * 115 / 100,
            "{}",
            requests.len()
        );
        assert!(
            requests.len() as u64 > blocks * 105 / 100,
            "{}",
            requests.len()
        );
        assert!(requests.iter().all(|r| r.op == crate::IoOp::Write));
    }

    #[test]
    fn what_sprandom_cannot_run_is_refused_naming_the_line() {
        let e = job_file("[p]\nrw=randread\nsprandom=1\n").unwrap_err();
        assert!(e.contains("job.fio:2: ") && e.contains("randwrite"), "{e}");
        let e = job_file("[p]\nrw=randwrite\nnorandommap=0\nsprandom=1\n").unwrap_err();
        assert!(
            e.contains("job.fio:3: ") && e.contains("norandommap=1"),
            "{e}"
        );
        let e = job_file("[p]\nrw=randwrite\nsprandom=1\nnumjobs=2\n").unwrap_err();
        assert!(e.contains("job.fio:4: "), "{e}");
        let e = job_file("[p]\nrw=randwrite\nsprandom=1\nspr_op=0\n").unwrap_err();
        assert!(e.contains("job.fio:4: bad spr_op"), "{e}");
    }
}
