//! PCM device configuration as users write it (TOML, units last in the key names), and its
//! validation. Every preset names its sources in `source`; `validate` names the offending key.

use crate::error::{PcmResult, config_error};
use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};

/// The write unit of the device model: one 8-byte word (CIDR'11's `W = 8 B`, thesis Table 4.1).
pub const WORD_SIZE_BYTES: u64 = 8;
/// Bits in a word.
pub const WORD_BITS: u64 = WORD_SIZE_BYTES * 8;
/// Largest supported capacity: 64 GiB (the tables are dense, one counter per word).
pub const CAPACITY_BYTES_MAX: u64 = 64 << 30;
/// Largest supported bank count.
pub const BANKS_MAX: u32 = 1024;
/// Bounds of a line (read unit) in bytes.
pub const LINE_SIZE_BYTES: (u64, u64) = (WORD_SIZE_BYTES, 4096);
/// Bounds of an access latency in nanoseconds: 1 ps to 1 s.
pub const LATENCY_NS: (f64, f64) = (1e-3, 1e9);
/// Bounds of a clock in GHz.
pub const CLOCK_GHZ: (f64, f64) = (1e-3, 100.0);
/// Bounds of an energy per bit in picojoules.
pub const BIT_ENERGY_PJ: (f64, f64) = (0.0, 1e6);
/// Bounds of the mean endurance (writes per word).
pub const ENDURANCE_WRITES: (f64, f64) = (1.0, 4e9);
/// Bounds of the endurance's coefficient of variation.
pub const ENDURANCE_COV: (f64, f64) = (0.0, 0.33);
/// Default bound on requests in flight in the event-driven device.
pub const DEFAULT_REQUESTS_IN_FLIGHT_MAX: u32 = 1 << 16;

/// A full PCM device configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmConfig {
    /// Preset name this config came from (informational).
    #[serde(default)]
    pub name: String,
    /// One line on what the device is.
    #[serde(default)]
    pub description: String,
    /// Where every number comes from.
    #[serde(default)]
    pub source: String,
    /// Capacity and organisation.
    pub geometry: PcmGeometry,
    /// Access latencies.
    pub timing: PcmTiming,
    /// Access energies.
    pub energy: PcmEnergy,
    /// Per-word endurance distribution.
    pub endurance: PcmEndurance,
    /// Write circuit options.
    #[serde(default)]
    pub write: PcmWriteOptions,
    /// Bound on requests in flight in the event-driven device.
    #[serde(default = "default_requests_in_flight_max")]
    pub requests_in_flight_max: u32,
}

fn default_requests_in_flight_max() -> u32 {
    DEFAULT_REQUESTS_IN_FLIGHT_MAX
}

/// Capacity and organisation. Lines are interleaved over banks (line `i` is in bank
/// `i mod banks`); a request occupies each bank it touches for that bank's share of its work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmGeometry {
    /// Capacity in bytes, a multiple of the line size.
    pub capacity_bytes: u64,
    /// Independent banks (bank-level parallelism).
    pub banks: u32,
    /// The read unit (a cache line), a power of two from 8 to 4096 bytes.
    pub line_size_bytes: u64,
}

/// Access latencies, each either in nanoseconds or in cycles of `clock_ghz` (one of the two).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmTiming {
    /// Read latency of one line in nanoseconds.
    #[serde(default)]
    pub read_line_ns: Option<f64>,
    /// Write latency of one modified 8-byte word in nanoseconds.
    #[serde(default)]
    pub write_word_ns: Option<f64>,
    /// The clock the `*_cycles` keys count (GHz).
    #[serde(default)]
    pub clock_ghz: Option<f64>,
    /// Read latency of one line in clock cycles.
    #[serde(default)]
    pub read_line_cycles: Option<u64>,
    /// Write latency of one modified 8-byte word in clock cycles.
    #[serde(default)]
    pub write_word_cycles: Option<u64>,
}

/// Access energies per bit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmEnergy {
    /// Energy to read one bit (every bit of every line read), picojoules.
    pub read_bit_energy_pj: f64,
    /// Energy to program one bit (only bits that change: data-comparison write), picojoules.
    pub write_bit_energy_pj: f64,
}

/// Per-word endurance: a normal distribution truncated to ±3σ, drawn per word from the seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmEndurance {
    /// Mean writes a word survives.
    pub writes_mean: f64,
    /// Coefficient of variation (σ / mean); 0 gives every word the mean.
    #[serde(default)]
    pub writes_cov: f64,
}

/// Write-circuit options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcmWriteOptions {
    /// Flip-N-Write (Cho & Lee, MICRO'09): a word is stored inverted, with one flag bit, when
    /// that programs fewer bits.
    #[serde(default)]
    pub flip_n_write: bool,
}

/// Latencies resolved to simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedTiming {
    /// One line read.
    pub read_line: SimTime,
    /// One modified word written.
    pub write_word: SimTime,
}

fn within(key: &str, value: f64, bounds: (f64, f64), unit: &str) -> PcmResult<()> {
    match nandlab_core::message::outside_range(value, bounds, unit) {
        None => Ok(()),
        Some(message) => Err(config_error(key, message)),
    }
}

impl PcmConfig {
    /// Checks every key; the error names the first offending one.
    pub fn validate(&self) -> PcmResult<()> {
        self.geometry.validate()?;
        self.timing.resolve()?;
        within(
            "energy.read_bit_energy_pj",
            self.energy.read_bit_energy_pj,
            BIT_ENERGY_PJ,
            "pJ",
        )?;
        within(
            "energy.write_bit_energy_pj",
            self.energy.write_bit_energy_pj,
            BIT_ENERGY_PJ,
            "pJ",
        )?;
        within(
            "endurance.writes_mean",
            self.endurance.writes_mean,
            ENDURANCE_WRITES,
            "writes",
        )?;
        within(
            "endurance.writes_cov",
            self.endurance.writes_cov,
            ENDURANCE_COV,
            "",
        )?;
        if self.requests_in_flight_max == 0 {
            return Err(config_error("requests_in_flight_max", "must be at least 1"));
        }
        Ok(())
    }

    /// Number of 8-byte words.
    pub fn words(&self) -> u64 {
        self.geometry.capacity_bytes / WORD_SIZE_BYTES
    }

    /// Bytes of host memory the device's tables take (data, write counters, flip flags).
    pub fn memory_estimate_bytes(&self) -> u64 {
        let words = self.words();
        self.geometry.capacity_bytes + words * 4 + words.div_ceil(8)
    }
}

impl PcmGeometry {
    fn validate(&self) -> PcmResult<()> {
        let line = self.line_size_bytes;
        if !line.is_power_of_two() || !(LINE_SIZE_BYTES.0..=LINE_SIZE_BYTES.1).contains(&line) {
            return Err(config_error(
                "geometry.line_size_bytes",
                format!(
                    "{line} is not a power of two in {}..={}",
                    LINE_SIZE_BYTES.0, LINE_SIZE_BYTES.1
                ),
            ));
        }
        if self.banks == 0 || self.banks > BANKS_MAX {
            return Err(config_error(
                "geometry.banks",
                format!("{} is outside 1..={BANKS_MAX}", self.banks),
            ));
        }
        let capacity = self.capacity_bytes;
        if capacity == 0 || capacity > CAPACITY_BYTES_MAX || !capacity.is_multiple_of(line) {
            return Err(config_error(
                "geometry.capacity_bytes",
                format!(
                    "{capacity} must be a positive multiple of the line size ({line} B) and at most {CAPACITY_BYTES_MAX}"
                ),
            ));
        }
        Ok(())
    }
}

impl PcmTiming {
    /// The latencies as simulated time; an error names a missing, doubled or bad key.
    pub fn resolve(&self) -> PcmResult<ResolvedTiming> {
        let read_line = self.one(
            "timing.read_line_ns",
            self.read_line_ns,
            "timing.read_line_cycles",
            self.read_line_cycles,
        )?;
        let write_word = self.one(
            "timing.write_word_ns",
            self.write_word_ns,
            "timing.write_word_cycles",
            self.write_word_cycles,
        )?;
        if self.clock_ghz.is_some()
            && self.read_line_cycles.is_none()
            && self.write_word_cycles.is_none()
        {
            return Err(config_error(
                "timing.clock_ghz",
                "is given but no latency is in cycles",
            ));
        }
        Ok(ResolvedTiming {
            read_line,
            write_word,
        })
    }

    fn one(
        &self,
        ns_key: &str,
        ns: Option<f64>,
        cycles_key: &str,
        cycles: Option<u64>,
    ) -> PcmResult<SimTime> {
        let latency_ns = match (ns, cycles) {
            (Some(_), Some(_)) => {
                return Err(config_error(
                    ns_key,
                    format!("give either `{ns_key}` or `{cycles_key}`, not both"),
                ));
            }
            (None, None) => {
                return Err(config_error(
                    ns_key,
                    format!("missing (give `{ns_key}` or `{cycles_key}` with `timing.clock_ghz`)"),
                ));
            }
            (Some(ns), None) => {
                within(ns_key, ns, LATENCY_NS, "ns")?;
                ns
            }
            (None, Some(cycles)) => {
                let Some(clock_ghz) = self.clock_ghz else {
                    return Err(config_error(
                        "timing.clock_ghz",
                        format!("missing: `{cycles_key}` counts cycles of this clock"),
                    ));
                };
                within("timing.clock_ghz", clock_ghz, CLOCK_GHZ, "GHz")?;
                let ns = cycles as f64 / clock_ghz;
                within(cycles_key, ns, LATENCY_NS, "ns (cycles / clock)")?;
                ns
            }
        };
        Ok(SimTime::from_ns_f64(latency_ns))
    }
}
