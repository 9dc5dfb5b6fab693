//! A desktop-like workload with content (issue 15 item 5 (b)), deterministic by seed.
//!
//! The host touches `span_pages` logical pages. A fill phase first writes each page once in
//! order (so later updates meet pages that exist in flash). Then each request is, by the
//! configured shares:
//! - a **whole-page write** (files saved, copied, installed): with probability
//!   `duplicate_fraction` its content is one of `common_contents` contents that recur (shared
//!   libraries, copied files, zero pages; chosen with a skew towards the first ones), else
//!   content never seen before;
//! - a **small in-page update** (metadata, database and registry records): `1..=
//!   update_size_bytes_max` new bytes inside the page's record area — each page has one record
//!   area of `record_area_bytes` at a fixed offset, as a file's header or a table row —;
//! - a **read** of a page, or a **TRIM** of a page (a deleted file).
//!
//! Pages are chosen hot/cold: `hot_access_fraction` of the requests go to the first
//! `hot_fraction` of the span. Requests arrive in bursts of `burst_requests`, `gap_us` apart,
//! and bursts are separated by idle gaps of `idle_ms` (simulated time, for idle GC).

use super::fill_keyed;
use crate::error::WorkloadError;
use crate::request::{BlockRequest, IoOp};
use nandlab_core::{SimRng, SimTime};
use serde::{Deserialize, Serialize};

/// The keys of the desktop workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesktopSpec {
    /// Logical pages touched (from page 0).
    pub span_pages: u32,
    /// Requests after the fill phase.
    pub request_count: u64,
    /// Write the span once in order first.
    #[serde(default = "yes")]
    pub fill: bool,
    /// Share of requests that are whole-page writes.
    #[serde(default = "default_page_writes")]
    pub page_write_fraction: f64,
    /// Share that are small in-page updates.
    #[serde(default = "default_updates")]
    pub update_fraction: f64,
    /// Share that are TRIMs (the rest are reads).
    #[serde(default = "default_trims")]
    pub trim_fraction: f64,
    /// Share of whole-page writes whose content recurs.
    #[serde(default = "default_duplicates")]
    pub duplicate_fraction: f64,
    /// Distinct recurring contents.
    #[serde(default = "default_common")]
    pub common_contents: u32,
    /// Largest small update, bytes.
    #[serde(default = "default_update_max")]
    pub update_size_bytes_max: u32,
    /// Each page's record area, bytes (updates fall inside it).
    #[serde(default = "default_record_area")]
    pub record_area_bytes: u32,
    /// Share of the span that is hot.
    #[serde(default = "default_hot")]
    pub hot_fraction: f64,
    /// Share of requests to the hot pages.
    #[serde(default = "default_hot_access")]
    pub hot_access_fraction: f64,
    /// Requests per burst.
    #[serde(default = "default_burst")]
    pub burst_requests: u32,
    /// Time between requests of a burst, microseconds.
    #[serde(default = "default_gap")]
    pub gap_us: f64,
    /// Idle time between bursts, milliseconds.
    #[serde(default = "default_idle")]
    pub idle_ms: f64,
}

fn yes() -> bool {
    true
}
fn default_page_writes() -> f64 {
    0.3
}
fn default_updates() -> f64 {
    0.5
}
fn default_trims() -> f64 {
    0.02
}
fn default_duplicates() -> f64 {
    0.3
}
fn default_common() -> u32 {
    64
}
fn default_update_max() -> u32 {
    64
}
fn default_record_area() -> u32 {
    256
}
fn default_hot() -> f64 {
    0.2
}
fn default_hot_access() -> f64 {
    0.8
}
fn default_burst() -> u32 {
    64
}
fn default_gap() -> f64 {
    50.0
}
fn default_idle() -> f64 {
    20.0
}

impl DesktopSpec {
    /// The defaults over `span_pages` pages and `request_count` requests.
    pub fn new(span_pages: u32, request_count: u64) -> Self {
        DesktopSpec {
            span_pages,
            request_count,
            fill: true,
            page_write_fraction: default_page_writes(),
            update_fraction: default_updates(),
            trim_fraction: default_trims(),
            duplicate_fraction: default_duplicates(),
            common_contents: default_common(),
            update_size_bytes_max: default_update_max(),
            record_area_bytes: default_record_area(),
            hot_fraction: default_hot(),
            hot_access_fraction: default_hot_access(),
            burst_requests: default_burst(),
            gap_us: default_gap(),
            idle_ms: default_idle(),
        }
    }

    /// Checks every key against the page size; the error names the key.
    pub fn validate(&self, page_size_bytes: u32) -> Result<(), WorkloadError> {
        let bad = |key: &str, message: String| {
            Err(WorkloadError::Invalid {
                key: key.into(),
                message,
            })
        };
        if self.span_pages == 0 {
            return bad("span_pages", "must be at least 1".into());
        }
        for (key, v) in [
            ("page_write_fraction", self.page_write_fraction),
            ("update_fraction", self.update_fraction),
            ("trim_fraction", self.trim_fraction),
            ("duplicate_fraction", self.duplicate_fraction),
            ("hot_fraction", self.hot_fraction),
            ("hot_access_fraction", self.hot_access_fraction),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(key, format!("{v} is outside 0..=1"));
            }
        }
        let sum = self.page_write_fraction + self.update_fraction + self.trim_fraction;
        if sum > 1.0 + 1e-9 {
            return bad(
                "update_fraction",
                format!("page writes + updates + trims add up to {sum} > 1"),
            );
        }
        if self.common_contents == 0 {
            return bad("common_contents", "must be at least 1".into());
        }
        if self.record_area_bytes == 0 || self.record_area_bytes > page_size_bytes {
            return bad(
                "record_area_bytes",
                format!(
                    "{} must be in 1..={page_size_bytes} (the page)",
                    self.record_area_bytes
                ),
            );
        }
        if self.update_size_bytes_max == 0 || self.update_size_bytes_max > self.record_area_bytes {
            return bad(
                "update_size_bytes_max",
                format!(
                    "{} must be in 1..={} (the record area)",
                    self.update_size_bytes_max, self.record_area_bytes
                ),
            );
        }
        if self.burst_requests == 0 {
            return bad("burst_requests", "must be at least 1".into());
        }
        for (key, v) in [("gap_us", self.gap_us), ("idle_ms", self.idle_ms)] {
            if !v.is_finite() || !(0.0..=1e9).contains(&v) {
                return bad(key, format!("{v} is outside 0..=1e9"));
            }
        }
        Ok(())
    }
}

/// The generator: [`DesktopGenerator::next_request`] yields each request with its bytes.
#[derive(Debug)]
pub struct DesktopGenerator {
    spec: DesktopSpec,
    page_size_bytes: u32,
    rng: SimRng,
    seed: u64,
    data: Vec<u8>,
    issued: u64,
    fill_left: u32,
    now: SimTime,
    unique_key: u64,
}

impl DesktopGenerator {
    /// A generator for pages of `page_size_bytes`.
    pub fn new(spec: DesktopSpec, page_size_bytes: u32, seed: u64) -> Result<Self, WorkloadError> {
        spec.validate(page_size_bytes)?;
        Ok(DesktopGenerator {
            fill_left: if spec.fill { spec.span_pages } else { 0 },
            rng: SimRng::stream(seed, "workload.desktop"),
            seed,
            data: Vec::with_capacity(page_size_bytes as usize),
            issued: 0,
            now: SimTime::ZERO,
            unique_key: 0,
            spec,
            page_size_bytes,
        })
    }

    /// Requests of the fill phase.
    pub fn fill_requests(&self) -> u64 {
        if self.spec.fill {
            u64::from(self.spec.span_pages)
        } else {
            0
        }
    }

    /// The next request and its bytes (empty unless a write); `None` at the end.
    pub fn next_request(&mut self) -> Option<(BlockRequest, &[u8])> {
        let page = u64::from(self.page_size_bytes);
        if self.fill_left > 0 {
            let lpa = self.spec.span_pages - self.fill_left;
            self.fill_left -= 1;
            self.page_content();
            let r = request(IoOp::Write, u64::from(lpa) * page, page);
            return Some((r, &self.data));
        }
        if self.issued >= self.spec.request_count {
            return None;
        }
        self.issued += 1;
        let gap = if self
            .issued
            .is_multiple_of(u64::from(self.spec.burst_requests))
        {
            SimTime::from_us_f64(self.spec.idle_ms * 1e3)
        } else {
            SimTime::from_us_f64(self.spec.gap_us)
        };
        self.now += gap;
        let lpa = u64::from(self.pick_page());
        let s = &self.spec;
        let roll = self.rng.unit_f64();
        let mut request = if roll < s.page_write_fraction {
            self.page_content();
            request(IoOp::Write, lpa * page, page)
        } else if roll < s.page_write_fraction + s.update_fraction {
            let area = s.record_area_bytes;
            // the record area sits at a per-page offset (a header, a row)
            let slots = u64::from(self.page_size_bytes / area);
            let area_at = (lpa.wrapping_mul(0x9E37_79B9) % slots.max(1)) as u32 * area;
            let len = 1 + self.rng.below(u64::from(s.update_size_bytes_max)) as u32;
            let at = area_at + self.rng.below(u64::from(area - len + 1)) as u32;
            self.data.clear();
            self.data.resize(len as usize, 0);
            self.unique_key += 1;
            fill_keyed(self.key(self.unique_key), &mut self.data);
            request(IoOp::Write, lpa * page + u64::from(at), u64::from(len))
        } else if roll < s.page_write_fraction + s.update_fraction + s.trim_fraction {
            self.data.clear();
            request(IoOp::Trim, lpa * page, page)
        } else {
            self.data.clear();
            request(IoOp::Read, lpa * page, page)
        };
        request.arrival = Some(self.now);
        Some((request, &self.data))
    }

    fn key(&self, n: u64) -> u64 {
        self.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ n
    }

    /// A whole page: recurring content with probability `duplicate_fraction`, else new.
    fn page_content(&mut self) {
        self.data.clear();
        self.data.resize(self.page_size_bytes as usize, 0);
        if self.rng.chance(self.spec.duplicate_fraction) {
            // skewed towards the first contents (a few very common ones)
            let n = u64::from(self.spec.common_contents);
            let k = self.rng.below(n).min(self.rng.below(n));
            if k == 0 {
                return; // the zero page
            }
            fill_keyed(self.key(u64::MAX - k), &mut self.data);
        } else {
            self.unique_key += 1;
            fill_keyed(self.key(self.unique_key), &mut self.data);
        }
    }

    fn pick_page(&mut self) -> u32 {
        let span = u64::from(self.spec.span_pages);
        let hot = ((span as f64 * self.spec.hot_fraction) as u64).clamp(1, span);
        let p = if self.rng.chance(self.spec.hot_access_fraction) || hot == span {
            self.rng.below(hot)
        } else {
            hot + self.rng.below(span - hot)
        };
        p as u32
    }
}

fn request(op: IoOp, offset_bytes: u64, size_bytes: u64) -> BlockRequest {
    BlockRequest {
        arrival: None,
        op,
        offset_bytes,
        size_bytes,
        placement_id: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_requests_and_bytes() {
        let spec = DesktopSpec::new(500, 2000);
        let run = |seed| {
            let mut g = DesktopGenerator::new(spec.clone(), 4096, seed).unwrap();
            let mut out = Vec::new();
            while let Some((r, d)) = g.next_request() {
                out.push((r, d.to_vec()));
            }
            out
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn shares_duplicates_updates_and_idle_gaps_come_out_as_configured() {
        let mut spec = DesktopSpec::new(1000, 20_000);
        spec.duplicate_fraction = 0.4;
        let mut g = DesktopGenerator::new(spec.clone(), 4096, 1).unwrap();
        let (mut pages, mut updates, mut seen, mut repeats) =
            (0u64, 0u64, std::collections::HashSet::new(), 0u64);
        let mut last = SimTime::ZERO;
        let mut idle_gaps = 0;
        let mut n = 0u64;
        while let Some((r, d)) = g.next_request() {
            n += 1;
            if n <= 1000 {
                continue; // fill
            }
            let at = r.arrival.unwrap();
            if at - last >= SimTime::from_us(1000) {
                idle_gaps += 1;
            }
            last = at;
            if r.op == IoOp::Write && r.size_bytes == 4096 {
                pages += 1;
                if !seen.insert(d.to_vec()) {
                    repeats += 1;
                }
            } else if r.op == IoOp::Write {
                updates += 1;
                assert!(r.size_bytes <= 64);
                let page_offset = r.offset_bytes % 4096;
                assert!(page_offset + r.size_bytes <= 4096);
            }
        }
        let share = repeats as f64 / pages as f64;
        assert!((0.3..0.45).contains(&share), "{share}");
        assert!((0.45..0.55).contains(&(updates as f64 / 20_000.0)));
        assert!((300..=320).contains(&idle_gaps), "{idle_gaps}");
    }

    #[test]
    fn bad_keys_are_named() {
        let mut spec = DesktopSpec::new(10, 10);
        spec.update_size_bytes_max = 1000;
        let e = DesktopGenerator::new(spec, 4096, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("update_size_bytes_max"), "{e}");
        let mut spec = DesktopSpec::new(10, 10);
        spec.update_fraction = 0.9;
        let e = DesktopGenerator::new(spec, 4096, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("update_fraction"), "{e}");
    }
}
