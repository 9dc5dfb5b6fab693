//! The paper-000 query workload (SPEC W2) and the driver that runs it.
//!
//! A run first fills the table by inserts until the free space reaches a target (free space as
//! defined by [`Engine::free_space_fraction`]: the fraction of row slots not holding a live
//! row), then issues random Insert/Delete/Update queries, with given probabilities, against
//! uniformly chosen live rows. Two protocols of paper 000:
//! - [`ConstantFreeSpace`] (§4.1, Fig. 12): P(Insert) = P(Delete), so free space stays put.
//! - [`DriftingFreeSpace`] (Table I): I/D/U = 40/20/40 while free space drifts from 80 % to
//!   20 %.

use crate::device::{BlockDevice, CoDesignHints};
use crate::engine::{Engine, Query};
use crate::error::EngineError;
use crate::metrics::RunMetrics;
use crate::table::RowId;
use nandlab_core::SimRng;
use serde::{Deserialize, Serialize};

mod protocol;
#[cfg(test)]
mod tests;

pub use protocol::{ConstantFreeSpace, DriftingFreeSpace};

/// Probabilities of the three query types; they sum to 1.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryMix {
    pub insert: f64,
    pub delete: f64,
    pub update: f64,
}

impl QueryMix {
    /// A mix; each probability in [0, 1] and their sum 1 (within 1e-9).
    pub fn new(insert: f64, delete: f64, update: f64) -> Result<Self, EngineError> {
        for (field, p) in [("insert", insert), ("delete", delete), ("update", update)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(EngineError::config(
                    field,
                    p,
                    "probability must be in [0, 1]",
                ));
            }
        }
        let sum = insert + delete + update;
        if (sum - 1.0).abs() > 1e-9 {
            return Err(EngineError::config(
                "insert + delete + update",
                sum,
                "probabilities must sum to 1",
            ));
        }
        Ok(QueryMix {
            insert,
            delete,
            update,
        })
    }

    /// Paper 000 §4.1: P(Insert) = P(Delete) = (1 - P(Update)) / 2, free space stays constant.
    pub fn constant_free_space(update: f64) -> Result<Self, EngineError> {
        let half = (1.0 - update) / 2.0;
        QueryMix::new(half, half, update)
    }

    /// Paper 000 Table I and Fig. 18: I/D/U = 40/20/40 %.
    pub fn table_i() -> Self {
        QueryMix {
            insert: 0.4,
            delete: 0.2,
            update: 0.4,
        }
    }

    /// Paper 000 Fig. 17: I/D/U = 30/30/40 %.
    pub fn fig_17() -> Self {
        QueryMix {
            insert: 0.3,
            delete: 0.3,
            update: 0.4,
        }
    }
}

/// Bounded tries of uniform rejection sampling before falling back to a linear probe.
const ROW_PICK_TRIES: u32 = 64;

/// Random queries over the live rows of an engine (seeded, deterministic).
#[derive(Clone, Debug)]
pub struct QueryGenerator {
    mix: QueryMix,
    rng: SimRng,
}

impl QueryGenerator {
    /// A generator for `mix` (validated, as its fields are public), seeded by `seed` (its own
    /// RNG stream "engine-w2").
    pub fn new(mix: QueryMix, seed: u64) -> Result<Self, EngineError> {
        let mix = QueryMix::new(mix.insert, mix.delete, mix.update)?;
        Ok(QueryGenerator {
            mix,
            rng: SimRng::stream(seed, "engine-w2"),
        })
    }

    /// The mix.
    pub fn mix(&self) -> QueryMix {
        self.mix
    }

    /// The next query. Delete and Update name a uniformly random live row; with no live row
    /// they become an Insert.
    pub fn next_query<D>(&mut self, engine: &Engine<D>) -> Query {
        let draw = self.rng.unit_f64();
        if draw < self.mix.insert {
            return Query::Insert;
        }
        match self.random_live_row(engine) {
            None => Query::Insert,
            Some(row) if draw < self.mix.insert + self.mix.delete => Query::Delete(row),
            Some(row) => Query::Update(row),
        }
    }

    /// A live row chosen uniformly: row ids are dense (reused), so rejection sampling over
    /// `0..row_id_bound` succeeds quickly; after `ROW_PICK_TRIES` misses a linear probe from a
    /// random id takes the next live one (slightly biased, and rare).
    pub fn random_live_row<D>(&mut self, engine: &Engine<D>) -> Option<RowId> {
        let bound = engine.row_id_bound();
        if engine.live_row_count() == 0 || bound == 0 {
            return None;
        }
        for _ in 0..ROW_PICK_TRIES {
            let row = RowId(self.rng.below(bound));
            if engine.is_live(row) {
                return Some(row);
            }
        }
        let start = self.rng.below(bound);
        (0..bound)
            .map(|step| RowId((start + step) % bound))
            .find(|&row| engine.is_live(row))
    }
}

/// Inserts rows until the free space is at most `free_space_fraction`; returns rows inserted.
pub fn fill_to_free_space<D: BlockDevice + CoDesignHints>(
    engine: &mut Engine<D>,
    free_space_fraction: f64,
) -> Result<u64, EngineError> {
    fill_to_free_space_while(engine, free_space_fraction, &mut || true)
}

/// [`fill_to_free_space`], asking `keep_going` before each insert and stopping early when it
/// says no (a cancelled run).
pub fn fill_to_free_space_while<D: BlockDevice + CoDesignHints>(
    engine: &mut Engine<D>,
    free_space_fraction: f64,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<u64, EngineError> {
    if !(0.0..1.0).contains(&free_space_fraction) {
        return Err(EngineError::config(
            "free_space_fraction",
            free_space_fraction,
            "must be in [0, 1)",
        ));
    }
    let live_target = ((1.0 - free_space_fraction) * engine.slot_count() as f64).ceil() as u64;
    let mut inserted = 0;
    while engine.live_row_count() < live_target && keep_going() {
        engine.insert()?;
        inserted += 1;
    }
    Ok(inserted)
}

/// Runs `query_count` generated queries and returns the metrics of that window.
pub fn run_queries<D: BlockDevice + CoDesignHints>(
    engine: &mut Engine<D>,
    generator: &mut QueryGenerator,
    query_count: u64,
) -> Result<RunMetrics, EngineError> {
    run_queries_while(engine, generator, query_count, &mut || true)
}

/// [`run_queries`], asking `keep_going` before each query; the metrics cover the queries run
/// when it says no.
pub fn run_queries_while<D: BlockDevice + CoDesignHints>(
    engine: &mut Engine<D>,
    generator: &mut QueryGenerator,
    query_count: u64,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<RunMetrics, EngineError> {
    let window = Window::open(engine);
    for _ in 0..query_count {
        if !keep_going() {
            break;
        }
        let query = generator.next_query(engine);
        engine.execute(query)?;
    }
    Ok(window.close(engine))
}

/// Runs generated queries until free space is at most `free_space_fraction_end` or
/// `query_count_max` queries ran; returns the metrics of that window.
pub fn run_until_free_space<D: BlockDevice + CoDesignHints>(
    engine: &mut Engine<D>,
    generator: &mut QueryGenerator,
    free_space_fraction_end: f64,
    query_count_max: u64,
) -> Result<RunMetrics, EngineError> {
    run_until_free_space_while(
        engine,
        generator,
        free_space_fraction_end,
        query_count_max,
        &mut || true,
    )
}

/// [`run_until_free_space`], asking `keep_going` before each query; the metrics cover the
/// queries run when it says no.
pub fn run_until_free_space_while<D: BlockDevice + CoDesignHints>(
    engine: &mut Engine<D>,
    generator: &mut QueryGenerator,
    free_space_fraction_end: f64,
    query_count_max: u64,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<RunMetrics, EngineError> {
    let window = Window::open(engine);
    for _ in 0..query_count_max {
        if engine.free_space_fraction() <= free_space_fraction_end || !keep_going() {
            break;
        }
        let query = generator.next_query(engine);
        engine.execute(query)?;
    }
    Ok(window.close(engine))
}

/// Snapshot at the start of a measurement window.
struct Window {
    queries: crate::metrics::EngineMetrics,
    device: crate::device::DeviceCounters,
    energy_mj: f64,
    now: nandlab_core::SimTime,
    erase_counts: Vec<u32>,
    free_space_fraction: f64,
}

impl Window {
    fn open<D: BlockDevice + CoDesignHints>(engine: &Engine<D>) -> Self {
        let device = engine.device();
        Window {
            queries: *engine.metrics(),
            device: device.counters(),
            energy_mj: device.energy_mj(),
            now: device.now(),
            erase_counts: device.erase_counts(),
            free_space_fraction: engine.free_space_fraction(),
        }
    }

    fn close<D: BlockDevice + CoDesignHints>(self, engine: &Engine<D>) -> RunMetrics {
        let device = engine.device();
        let erases_now = device.erase_counts();
        let erases_per_block = if erases_now.len() == self.erase_counts.len() {
            erases_now
                .iter()
                .zip(&self.erase_counts)
                .map(|(now, before)| now - before)
                .collect()
        } else {
            erases_now
        };
        RunMetrics {
            queries: engine.metrics().since(&self.queries),
            device: device.counters().since(&self.device),
            energy_mj: device.energy_mj() - self.energy_mj,
            elapsed: device.now().saturating_sub(self.now),
            erases_per_block,
            free_space_fraction_start: self.free_space_fraction,
            free_space_fraction_end: engine.free_space_fraction(),
        }
    }
}
