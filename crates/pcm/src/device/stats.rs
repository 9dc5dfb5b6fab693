//! What a PCM device reports: per-access costs, running totals, and wear.

use nandlab_core::SimTime;
use serde::Serialize;
use std::ops::{Add, AddAssign};

/// The cost of one access (or, summed with `+`, of accesses done one after another).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AccessCost {
    /// Time the access takes on an idle device (banks it touches work in parallel); a sum of
    /// costs adds latencies, as for accesses issued one after another.
    pub latency: SimTime,
    /// Read plus write energy, picojoules.
    pub energy_pj: f64,
    /// Lines read.
    pub lines_read: u64,
    /// Words whose cells were programmed (unchanged words are skipped).
    pub words_written: u64,
    /// Cells programmed.
    pub bits_programmed: u64,
}

impl Add for AccessCost {
    type Output = AccessCost;
    fn add(mut self, rhs: AccessCost) -> AccessCost {
        self += rhs;
        self
    }
}

impl AddAssign for AccessCost {
    fn add_assign(&mut self, rhs: AccessCost) {
        self.latency += rhs.latency;
        self.energy_pj += rhs.energy_pj;
        self.lines_read += rhs.lines_read;
        self.words_written += rhs.words_written;
        self.bits_programmed += rhs.bits_programmed;
    }
}

/// The first word to wear out: the device's lifetime ends here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WornOut {
    /// Byte address of the word.
    pub address_bytes: u64,
    /// Its endurance (writes it survived).
    pub limit_writes: u32,
    /// Device-wide word writes when it happened.
    pub device_word_writes: u64,
}

/// Running totals of a device.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PcmStats {
    /// Read accesses.
    pub reads: u64,
    /// Write accesses.
    pub writes: u64,
    /// Bytes asked for by reads.
    pub bytes_read: u64,
    /// Bytes given to writes (changed or not).
    pub bytes_written: u64,
    /// Lines read.
    pub lines_read: u64,
    /// Words programmed.
    pub words_written: u64,
    /// Words a write covered that needed no programming (data-comparison write).
    pub words_unchanged: u64,
    /// Words stored inverted by Flip-N-Write at their last write.
    pub words_inverted: u64,
    /// Cells programmed.
    pub bits_programmed: u64,
    /// Read energy, picojoules.
    pub read_energy_pj: f64,
    /// Write energy, picojoules.
    pub write_energy_pj: f64,
    /// Sum of read latencies (idle-device latencies).
    pub read_time: SimTime,
    /// Sum of write latencies (idle-device latencies).
    pub write_time: SimTime,
    /// Time each bank was busy with submitted (event-driven) requests.
    pub bank_busy: Vec<SimTime>,
    /// Words that reached their endurance.
    pub words_worn_out: u64,
    /// The first of them (the device's lifetime).
    pub first_worn_out: Option<WornOut>,
}

/// How evenly a region of the device is worn (on demand; a scan of its counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WearSummary {
    /// Words in the region.
    pub words: u64,
    /// Words written at least once.
    pub words_written: u64,
    /// Word writes in the region.
    pub writes_total: u64,
    /// Writes of the most written word.
    pub writes_max: u32,
    /// Mean writes per word of the region.
    pub writes_mean: f64,
    /// Coefficient of variation of writes per word (0 = perfectly even).
    pub writes_cov: f64,
    /// `writes_max / writes_mean` (1 = perfectly even; 0 when nothing was written).
    pub max_over_mean: f64,
    /// Largest share of its endurance any word has used (1 = a word is worn out).
    pub endurance_used_max: f64,
}
