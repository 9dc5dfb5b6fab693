//! Preconditioning: bring the device to a stated fill and fragmentation state quickly, by
//! functional writes only (the mapping, valid counts, GC and wear-leveling run; no flash op is
//! timed and the chip model is not touched), before a timed workload.

use super::Ssd;
use crate::address::Lpa;
use crate::error::{FtlError, FtlResult};
use crate::flash::HostWrite;
use crate::flash::emit::Tag;
use crate::mapping::Mapping;
use nandlab_core::SimRng;
use serde::{Deserialize, Serialize};
use std::ops::{ControlFlow, Range};

/// The state to reach: the first `fill_fraction` of the logical pages written sequentially,
/// then `random_overwrites` uniformly random page overwrites within that filled range.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Precondition {
    /// Fraction of the logical space filled, in `[0, 1]`.
    pub fill_fraction: f64,
    /// Random overwrites after the fill (fragmentation).
    pub random_overwrites: u64,
}

impl Precondition {
    /// Sequential fill of everything, then one random overwrite per logical page: the usual
    /// steady state for random-write measurements.
    pub fn full_and_fragmented(logical_pages: u64) -> Self {
        Precondition {
            fill_fraction: 1.0,
            random_overwrites: logical_pages,
        }
    }

    /// The pages the fill writes (LPAs `0..filled`; the random overwrites stay within them).
    pub fn filled_pages(&self, logical_pages: u64) -> u32 {
        (logical_pages as f64 * self.fill_fraction).floor() as u32
    }

    /// Checks the values (an error names the key).
    pub fn validate(&self) -> FtlResult<()> {
        if !(self.fill_fraction.is_finite() && (0.0..=1.0).contains(&self.fill_fraction)) {
            return Err(crate::error::config_error(
                "precondition.fill_fraction",
                format!("{} is not in [0, 1]", self.fill_fraction),
            ));
        }
        // issue 31 item 6: the overwrites stay within the filled pages; none were filled
        if self.fill_fraction == 0.0 && self.random_overwrites > 0 {
            return Err(crate::error::config_error(
                "precondition.random_overwrites",
                format!(
                    "{} random overwrites of the filled pages, but fill_fraction = 0 fills none",
                    self.random_overwrites
                ),
            ));
        }
        Ok(())
    }
}

/// Random overwrites drawn ahead of the one being written.
const LOOKAHEAD: usize = 4;

impl Ssd {
    /// Applies `p` functionally. Terminates for any fill ≤ 100 %; a state that cannot be
    /// reached (no free block and nothing to reclaim) is a `DeviceFull` error.
    pub fn precondition(&mut self, p: &Precondition) -> FtlResult<()> {
        self.precondition_with_progress(p, |_, _| ControlFlow::Continue(()))
    }

    /// [`Ssd::precondition`] that calls `progress(done, total)` (page writes) every
    /// [`PRECONDITION_PROGRESS_WRITES`] writes and at the end; returning `Break` stops it with
    /// [`FtlError::Interrupted`] (the device keeps the writes done so far, a consistent state).
    /// A front end shows progress and honours Ctrl-C with it: a huge `random_overwrites` then
    /// neither runs silently nor for ever.
    pub fn precondition_with_progress(
        &mut self,
        p: &Precondition,
        progress: impl FnMut(u64, u64) -> ControlFlow<()>,
    ) -> FtlResult<()> {
        p.validate()?;
        let filled = p.filled_pages(u64::from(self.layout.logical_pages));
        #[allow(clippy::single_range_in_vec_init)] // one range of LPAs, not the LPAs
        let range = [0..filled];
        self.precondition_ranges_with_progress(&range, &range, p.random_overwrites, progress)
    }

    /// Preconditioning by ranges: the LPAs of the `fill` ranges written in their order, then
    /// `overwrites` uniformly random overwrites among the LPAs of the `overwrite` ranges
    /// (none when they are empty). [`Ssd::precondition_with_progress`] is one range `0..filled`
    /// for both; a device with zoned namespaces fills its zones as a host writes them
    /// ([`crate::nvme::precondition`]). Progress and errors as there.
    pub fn precondition_ranges_with_progress(
        &mut self,
        fill: &[Range<u32>],
        overwrite: &[Range<u32>],
        overwrites: u64,
        progress: impl FnMut(u64, u64) -> ControlFlow<()>,
    ) -> FtlResult<()> {
        if self.host.requests.in_flight() > 0 || !self.chip.nand.is_idle() {
            return Err(FtlError::BadRequest {
                message: "precondition needs an idle device".into(),
            });
        }
        if self.stages.search.is_some() {
            // (functional writes would leave the SiM pool's pages without bytes on the chip)
            return Err(FtlError::BadRequest {
                message:
                    "precondition: not supported on a device with a SiM region (ftl.sim_pages > 0)"
                        .into(),
            });
        }
        let logical = self.layout.logical_pages;
        if let Some(r) = fill.iter().chain(overwrite).find(|r| r.end > logical) {
            return Err(FtlError::BadRequest {
                message: format!(
                    "precondition: LPAs {}..{} beyond the device's {logical} logical pages",
                    r.start, r.end
                ),
            });
        }
        let filled: u64 = fill
            .iter()
            .map(|r| u64::from(r.end.saturating_sub(r.start)))
            .sum();
        let pool: u64 = overwrite
            .iter()
            .map(|r| u64::from(r.end.saturating_sub(r.start)))
            .sum();
        self.flash.emit.enabled = false;
        let mut ticker = Ticker {
            done: 0,
            total: filled.saturating_add(if pool == 0 { 0 } else { overwrites }),
            progress,
        };
        let result = self
            .precondition_writes(fill, overwrite, pool, overwrites, &mut ticker)
            .and_then(|()| ticker.finish());
        self.flash.emit.enabled = true;
        self.flash.emit.ops.clear();
        result
    }

    fn precondition_writes<F: FnMut(u64, u64) -> ControlFlow<()>>(
        &mut self,
        fill: &[Range<u32>],
        overwrite: &[Range<u32>],
        pool: u64,
        overwrites: u64,
        ticker: &mut Ticker<F>,
    ) -> FtlResult<()> {
        for lpa in fill.iter().flat_map(|r| r.clone()).map(Lpa) {
            self.precondition_write(lpa)?;
            ticker.tick()?;
        }
        if pool == 0 {
            return Ok(());
        }
        // the i-th LPA of the overwrite ranges
        let nth = |mut i: u64| {
            for r in overwrite {
                let len = u64::from(r.end - r.start);
                if i < len {
                    return Lpa(r.start + i as u32);
                }
                i -= len;
            }
            unreachable!("an index below the ranges' length")
        };
        let mut rng = SimRng::stream(self.layout.seed, "ftl.precondition");
        // the LPAs are drawn a few writes ahead (same sequence) so their mapping-table entries
        // can be prefetched: random overwrites of a large table are cache misses otherwise
        let mut ahead = [Lpa(0); LOOKAHEAD];
        for slot in ahead
            .iter_mut()
            .take(overwrites.min(LOOKAHEAD as u64) as usize)
        {
            *slot = nth(rng.below(pool));
            self.mapper.prefetch_far(*slot);
        }
        for k in 0..overwrites {
            let at = (k % LOOKAHEAD as u64) as usize;
            let lpa = ahead[at];
            if k + (LOOKAHEAD as u64) < overwrites {
                ahead[at] = nth(rng.below(pool));
                self.mapper.prefetch_far(ahead[at]);
            }
            if k + 1 < overwrites {
                self.mapper
                    .prefetch_near(ahead[((k + 1) % LOOKAHEAD as u64) as usize]);
            }
            self.precondition_write(lpa)?;
            ticker.tick()?;
        }
        Ok(())
    }

    /// One functional host write of zeros (a write of the sequence like any other).
    fn precondition_write(&mut self, lpa: Lpa) -> FtlResult<()> {
        let write = HostWrite {
            lpa,
            sequence: self.flash.next_sequence(),
            data: crate::flash::PageData::Zeros,
            placement: 0,
        };
        self.mapper.write(&mut self.flash, write, Tag::Internal)
    }
}

/// Page writes between two progress calls of [`Ssd::precondition_with_progress`].
pub const PRECONDITION_PROGRESS_WRITES: u64 = 1 << 16;

/// Counts preconditioning writes and calls the progress callback every
/// [`PRECONDITION_PROGRESS_WRITES`].
struct Ticker<F> {
    done: u64,
    total: u64,
    progress: F,
}

impl<F: FnMut(u64, u64) -> ControlFlow<()>> Ticker<F> {
    #[inline]
    fn tick(&mut self) -> FtlResult<()> {
        self.done += 1;
        if self.done.is_multiple_of(PRECONDITION_PROGRESS_WRITES) {
            self.call()?;
        }
        Ok(())
    }

    fn call(&mut self) -> FtlResult<()> {
        match (self.progress)(self.done, self.total) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(FtlError::Interrupted {
                message: format!(
                    "preconditioning stopped after {} of {} page writes",
                    self.done, self.total
                ),
            }),
        }
    }

    fn finish(&mut self) -> FtlResult<()> {
        self.call()
    }
}

impl Ssd {
    /// Writes each of the `total` logical pages of `lpas` that is not mapped yet, functionally
    /// (as [`Ssd::precondition`] does: no simulated time, the chip model untouched), in the
    /// order given; returns how many were written. What a replay uses to fill the pages a
    /// trace reads before writing them (as MQSim fills a trace's read footprint). A page
    /// beyond the logical capacity is a `BadRequest`; `progress` as in
    /// [`Ssd::precondition_with_progress`].
    pub fn precondition_pages_with_progress(
        &mut self,
        lpas: impl IntoIterator<Item = u64>,
        total: u64,
        progress: impl FnMut(u64, u64) -> ControlFlow<()>,
    ) -> FtlResult<u64> {
        if self.host.requests.in_flight() > 0 || !self.chip.nand.is_idle() {
            return Err(FtlError::BadRequest {
                message: "precondition needs an idle device".into(),
            });
        }
        self.flash.emit.enabled = false;
        let mut ticker = Ticker {
            done: 0,
            total,
            progress,
        };
        let mut written = 0u64;
        let write_all = || -> FtlResult<()> {
            for lpa in lpas {
                let lpa = u32::try_from(lpa)
                    .ok()
                    .filter(|&l| u64::from(l) < u64::from(self.layout.logical_pages))
                    .ok_or_else(|| FtlError::BadRequest {
                        message: format!(
                            "precondition page {lpa} is beyond the {} logical pages",
                            self.layout.logical_pages
                        ),
                    })?;
                if self.mapper.locate(Lpa(lpa)).is_none() {
                    self.precondition_write(Lpa(lpa))?;
                    written += 1;
                }
                ticker.tick()?;
            }
            ticker.finish()
        };
        let result = write_all();
        self.flash.emit.enabled = true;
        self.flash.emit.ops.clear();
        result.map(|()| written)
    }
}
