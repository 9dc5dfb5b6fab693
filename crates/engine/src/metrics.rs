//! Query-level metrics (SPEC E4): per query type and overall.

use crate::device::DeviceCounters;
use nandlab_core::SimTime;
use nandlab_core::time::PS_PER_S;
use serde::{Deserialize, Serialize};

/// The three query types of paper 000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QueryKind {
    Insert,
    Delete,
    Update,
}

/// Counters for one query type (or all of them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryStats {
    /// Queries executed.
    pub count: u64,
    /// Simulated device time spent in these queries.
    pub time_total: SimTime,
    /// Slowest single query.
    pub time_max: SimTime,
    /// Page reads the engine issued.
    pub device_reads: u64,
    /// Page writes the engine issued.
    pub device_writes: u64,
}

impl QueryStats {
    /// Queries per simulated second (0 when no time passed).
    pub fn queries_per_s(&self) -> f64 {
        if self.time_total == SimTime::ZERO {
            return 0.0;
        }
        self.count as f64 * PS_PER_S as f64 / self.time_total.as_ps() as f64
    }

    /// Mean simulated latency per query in µs (0 when empty).
    pub fn latency_us_mean(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        self.time_total.as_us_f64() / self.count as f64
    }

    pub(crate) fn record(&mut self, time: SimTime, reads: u64, writes: u64) {
        self.count += 1;
        self.time_total += time;
        self.time_max = self.time_max.max(time);
        self.device_reads += reads;
        self.device_writes += writes;
    }

    fn merge(&mut self, other: &QueryStats) {
        self.count += other.count;
        self.time_total += other.time_total;
        self.time_max = self.time_max.max(other.time_max);
        self.device_reads += other.device_reads;
        self.device_writes += other.device_writes;
    }

    /// Difference `self - earlier`; `time_max` is kept from `self` (maxima do not subtract).
    pub fn since(&self, earlier: &QueryStats) -> QueryStats {
        QueryStats {
            count: self.count - earlier.count,
            time_total: self.time_total - earlier.time_total,
            time_max: self.time_max,
            device_reads: self.device_reads - earlier.device_reads,
            device_writes: self.device_writes - earlier.device_writes,
        }
    }
}

/// Everything the engine counts itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineMetrics {
    pub insert: QueryStats,
    pub delete: QueryStats,
    pub update: QueryStats,
    /// Rows placed by Insert Address Assist into an LPA of the next erase block.
    pub iaa_placements: u64,
    /// Rows placed by appending (conventional, or IAA found no slot).
    pub append_placements: u64,
    /// Times the engine fetched the next-erase-block LPA list.
    pub hint_refreshes: u64,
}

impl EngineMetrics {
    /// Stats of one query type.
    pub fn of(&self, kind: QueryKind) -> &QueryStats {
        match kind {
            QueryKind::Insert => &self.insert,
            QueryKind::Delete => &self.delete,
            QueryKind::Update => &self.update,
        }
    }

    pub(crate) fn of_mut(&mut self, kind: QueryKind) -> &mut QueryStats {
        match kind {
            QueryKind::Insert => &mut self.insert,
            QueryKind::Delete => &mut self.delete,
            QueryKind::Update => &mut self.update,
        }
    }

    /// All query types together.
    pub fn total(&self) -> QueryStats {
        let mut total = self.insert;
        total.merge(&self.delete);
        total.merge(&self.update);
        total
    }

    /// Difference `self - earlier` (for a measurement window).
    pub fn since(&self, earlier: &EngineMetrics) -> EngineMetrics {
        EngineMetrics {
            insert: self.insert.since(&earlier.insert),
            delete: self.delete.since(&earlier.delete),
            update: self.update.since(&earlier.update),
            iaa_placements: self.iaa_placements - earlier.iaa_placements,
            append_placements: self.append_placements - earlier.append_placements,
            hint_refreshes: self.hint_refreshes - earlier.hint_refreshes,
        }
    }
}

/// Metrics of one measurement window (e.g. the random-query phase of a protocol).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    /// Engine-side counters over the window.
    pub queries: EngineMetrics,
    /// Device-side counters over the window (page copies, erases, GC).
    pub device: DeviceCounters,
    /// Device energy over the window in mJ (0 if the device does not model energy).
    pub energy_mj: f64,
    /// Simulated time elapsed over the window.
    pub elapsed: SimTime,
    /// Erases per physical block during the window (empty if the device does not report them).
    pub erases_per_block: Vec<u32>,
    /// Free space (fraction of row slots not holding live rows) at the start of the window.
    pub free_space_fraction_start: f64,
    /// Free space at the end of the window.
    pub free_space_fraction_end: f64,
}

impl RunMetrics {
    /// Queries per simulated second over the window.
    pub fn queries_per_s(&self) -> f64 {
        let total = self.queries.total();
        if self.elapsed == SimTime::ZERO {
            return 0.0;
        }
        total.count as f64 * PS_PER_S as f64 / self.elapsed.as_ps() as f64
    }

    /// Device energy per query in mJ.
    pub fn energy_mj_per_query(&self) -> f64 {
        let count = self.queries.total().count;
        if count == 0 {
            0.0
        } else {
            self.energy_mj / count as f64
        }
    }

    /// Mean write/erase cycles per block during the window.
    pub fn erases_per_block_mean(&self) -> f64 {
        if self.erases_per_block.is_empty() {
            return 0.0;
        }
        let sum: u64 = self.erases_per_block.iter().map(|&e| u64::from(e)).sum();
        sum as f64 / self.erases_per_block.len() as f64
    }

    /// Largest write/erase cycle count of any block during the window.
    pub fn erases_per_block_max(&self) -> u32 {
        self.erases_per_block.iter().copied().max().unwrap_or(0)
    }
}
