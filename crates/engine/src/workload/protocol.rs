//! The two measurement protocols of paper 000 §4.

use super::{
    QueryGenerator, QueryMix, fill_to_free_space_while, run_queries_while,
    run_until_free_space_while,
};
use crate::device::{BlockDevice, CoDesignHints};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::metrics::RunMetrics;
use serde::{Deserialize, Serialize};

/// Paper 000 §4.1 / Fig. 12: fill to a free space, then random queries with
/// P(Insert) = P(Delete) so the free space stays constant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantFreeSpace {
    /// Free space to fill to and hold (paper: 20 %–80 %).
    pub free_space_fraction: f64,
    /// P(Update); Insert and Delete share the rest equally.
    pub update_fraction: f64,
    /// Queries run after the fill and before measuring (not in the paper; lets GC reach its
    /// steady state on small devices).
    pub warmup_query_count: u64,
    /// Measured queries (paper: 1.6·10^6).
    pub query_count: u64,
    /// Warm up in windows of `warmup_query_count` queries until the write amplification of a
    /// window differs from the previous window's by less than 5 % (at most
    /// [`MAX_WARMUP_WINDOWS`] windows; issue 13's steady-state point); off: one warm-up window.
    #[serde(default)]
    pub warmup_until_stationary: bool,
    /// Seed of the query generator.
    pub seed: u64,
}

/// Bound on the warm-up windows of [`ConstantFreeSpace::warmup_until_stationary`].
pub const MAX_WARMUP_WINDOWS: u32 = 64;

/// Relative change of the write amplification between two warm-up windows below which the
/// run counts as stationary.
pub const STATIONARY_WAF_CHANGE: f64 = 0.05;

/// Write amplification of a window: (host page writes + GC page copies) / host page writes
/// (1 without host writes).
fn waf(m: &RunMetrics) -> f64 {
    let host = m.device.host_writes;
    if host == 0 {
        return 1.0;
    }
    (host + m.device.page_copies) as f64 / host as f64
}

impl ConstantFreeSpace {
    /// Runs the protocol; returns the metrics of the measured queries.
    pub fn run<D: BlockDevice + CoDesignHints>(
        &self,
        engine: &mut Engine<D>,
    ) -> Result<RunMetrics, EngineError> {
        self.run_while(engine, &mut || true)
    }

    /// [`ConstantFreeSpace::run`], asking `keep_going` before each insert and query and
    /// stopping early when it says no: the metrics then cover the measured queries run so far
    /// (none if it stopped during the fill or the warm-up).
    pub fn run_while<D: BlockDevice + CoDesignHints>(
        &self,
        engine: &mut Engine<D>,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<RunMetrics, EngineError> {
        let mix = QueryMix::constant_free_space(self.update_fraction)?;
        let mut generator = QueryGenerator::new(mix, self.seed)?;
        fill_to_free_space_while(engine, self.free_space_fraction, keep_going)?;
        let windows = if self.warmup_until_stationary && self.warmup_query_count > 0 {
            MAX_WARMUP_WINDOWS
        } else {
            1
        };
        let mut previous: Option<f64> = None;
        for _ in 0..windows {
            let window =
                run_queries_while(engine, &mut generator, self.warmup_query_count, keep_going)?;
            let now = waf(&window);
            let stopped = window.queries.total().count < self.warmup_query_count;
            if stopped || previous.is_some_and(|p| (now / p - 1.0).abs() < STATIONARY_WAF_CHANGE) {
                break;
            }
            previous = Some(now);
        }
        run_queries_while(engine, &mut generator, self.query_count, keep_going)
    }
}

/// Paper 000 Table I: fill to 80 % free space, then I/D/U 40/20/40 % until free space is 20 %.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriftingFreeSpace {
    /// Free space after the fill (paper: 80 %).
    pub free_space_fraction_start: f64,
    /// Free space at which the run stops (paper: 20 %).
    pub free_space_fraction_end: f64,
    /// The query mix (paper: [`QueryMix::table_i`]); P(Insert) must exceed P(Delete).
    pub mix: QueryMix,
    /// Safety bound on the number of queries.
    pub query_count_max: u64,
    /// Seed of the query generator.
    pub seed: u64,
}

impl DriftingFreeSpace {
    /// Runs the protocol; returns the metrics of the random-query phase.
    pub fn run<D: BlockDevice + CoDesignHints>(
        &self,
        engine: &mut Engine<D>,
    ) -> Result<RunMetrics, EngineError> {
        self.run_while(engine, &mut || true)
    }

    /// [`DriftingFreeSpace::run`], asking `keep_going` before each insert and query and
    /// stopping early when it says no: the metrics then cover the queries run so far.
    pub fn run_while<D: BlockDevice + CoDesignHints>(
        &self,
        engine: &mut Engine<D>,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<RunMetrics, EngineError> {
        if self.mix.insert <= self.mix.delete {
            return Err(EngineError::config(
                "mix.insert",
                self.mix.insert,
                "must exceed mix.delete for free space to drift down",
            ));
        }
        let mut generator = QueryGenerator::new(self.mix, self.seed)?;
        fill_to_free_space_while(engine, self.free_space_fraction_start, keep_going)?;
        run_until_free_space_while(
            engine,
            &mut generator,
            self.free_space_fraction_end,
            self.query_count_max,
            keep_going,
        )
    }
}
