//! Search-in-Memory parameters (SPEC S3; paper 004 Table II), the `[search]` section of a chip
//! config. A device without the section has no SiM commands.

use crate::error::{NandResult, config_error};
use crate::geometry::Geometry;
use serde::{Deserialize, Serialize};

use super::format::{CHUNKS_PER_PAGE, SIM_PAGE_BYTES};

/// Upper bound of the keys one batched search carries (a bound of the command, not the paper's).
pub const SEARCH_BATCH_KEYS_LIMIT: u32 = 1024;

/// SiM chip parameters. Times in microseconds, rates in MT/s, currents in mA.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// Bus data rate of SiM transfers (match mode), e.g. 80 MT/s (NV-DDR3 timing mode 1).
    pub match_bus_data_rate_mts: f64,
    /// tR of a match-mode (SLC) page.
    pub match_read_us: f64,
    /// tPROG of a match-mode (SLC) page.
    pub match_program_us: f64,
    /// SiM clock cycles of one 64-bit match over the whole page (Table II: 10).
    pub match_cycles_per_key: u32,
    /// SiM clock frequency (Table II: 33 MHz).
    pub match_clock_mhz: f64,
    /// Current of the matching logic while it runs (Table II: 2.5 mA).
    pub match_current_ma: f64,
    /// I/O bus voltage (Table II: 1.2 V); SiM bus stages dissipate bus voltage x bus current.
    pub bus_voltage_v: f64,
    /// Bus current while transferring in match mode (Table II: 5 mA active).
    pub match_bus_current_ma: f64,
    /// Bytes sent to the controller when a page becomes active, for its integrity check
    /// (paper §VII-B: 256 B).
    #[serde(default = "default_open_bytes")]
    pub page_open_transfer_bytes: u32,
    /// ECC parity bytes per 64-byte chunk, kept in the spare area and sent with every gathered
    /// chunk (paper §IV-C3: 4 B).
    #[serde(default = "default_chunk_ecc_bytes")]
    pub chunk_ecc_bytes: u32,
    /// Most keys in one batched search.
    #[serde(default = "default_batch_keys")]
    pub batch_keys_max: u32,
    /// Stored chunks are randomized with a keystream seeded by the chunk address (paper
    /// §IV-C1, [`super::randomize`]); the deserializer randomizes each search key the same way
    /// for every slot, so matching needs no de-randomization.
    #[serde(default)]
    pub randomized_chunks: bool,
}

fn default_open_bytes() -> u32 {
    256
}
fn default_chunk_ecc_bytes() -> u32 {
    4
}
fn default_batch_keys() -> u32 {
    64
}

impl SearchConfig {
    /// Checks every key against itself and the geometry (a SiM page is 4 KiB: 512 slots of
    /// 8 bytes, 64 chunks; the chunk ECC must fit the spare area).
    pub fn validate(&self, geometry: &Geometry) -> NandResult<()> {
        let rate = self.match_bus_data_rate_mts;
        if !(rate.is_finite() && (0.1..=1e5).contains(&rate)) {
            return Err(config_error(
                "search.match_bus_data_rate_mts",
                format!("{rate} MT/s is outside 0.1..=100000"),
            ));
        }
        for (key, us) in [
            ("search.match_read_us", self.match_read_us),
            ("search.match_program_us", self.match_program_us),
        ] {
            if !(us.is_finite() && (1e-3..=1e6).contains(&us)) {
                return Err(config_error(
                    key,
                    format!("{us} us is outside 0.001..=1000000"),
                ));
            }
        }
        if self.match_cycles_per_key == 0 || self.match_cycles_per_key > 1_000_000 {
            return Err(config_error(
                "search.match_cycles_per_key",
                format!(
                    "{} must be between 1 and 1000000",
                    self.match_cycles_per_key
                ),
            ));
        }
        let clock = self.match_clock_mhz;
        if !(clock.is_finite() && (1e-3..=1e5).contains(&clock)) {
            return Err(config_error(
                "search.match_clock_mhz",
                format!("{clock} MHz is outside 0.001..=100000"),
            ));
        }
        for (key, v, max) in [
            ("search.match_current_ma", self.match_current_ma, 1e5),
            (
                "search.match_bus_current_ma",
                self.match_bus_current_ma,
                1e5,
            ),
            ("search.bus_voltage_v", self.bus_voltage_v, 100.0),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(config_error(key, format!("{v} is outside 0..={max}")));
            }
        }
        if geometry.page_size_bytes != SIM_PAGE_BYTES {
            return Err(config_error(
                "geometry.page_size_bytes",
                format!(
                    "{} bytes; a SiM device ([search]) has {SIM_PAGE_BYTES}-byte pages (512 slots)",
                    geometry.page_size_bytes
                ),
            ));
        }
        let ecc_bytes = self.chunk_ecc_bytes * CHUNKS_PER_PAGE;
        if ecc_bytes > geometry.spare_bytes_per_page {
            return Err(config_error(
                "search.chunk_ecc_bytes",
                format!(
                    "{} bytes per chunk need {ecc_bytes} spare bytes but a page has {}",
                    self.chunk_ecc_bytes, geometry.spare_bytes_per_page
                ),
            ));
        }
        if self.page_open_transfer_bytes == 0
            || self.page_open_transfer_bytes > SIM_PAGE_BYTES + geometry.spare_bytes_per_page
        {
            return Err(config_error(
                "search.page_open_transfer_bytes",
                format!(
                    "{} bytes; must be between 1 and a page with its spare area",
                    self.page_open_transfer_bytes
                ),
            ));
        }
        if self.batch_keys_max == 0 || self.batch_keys_max > SEARCH_BATCH_KEYS_LIMIT {
            return Err(config_error(
                "search.batch_keys_max",
                format!(
                    "{} must be between 1 and {SEARCH_BATCH_KEYS_LIMIT}",
                    self.batch_keys_max
                ),
            ));
        }
        Ok(())
    }
}
