//! Chip configuration as users write it (TOML, units in the key names), and its validation.
//!
//! A config is a preset (see [`crate::preset()`]) optionally overridden key by key. Every number
//! carries its source in the `source` strings of the preset; `validate` names the offending key.

use crate::cell::PageLayout;
use crate::error::{NandResult, config_error};
use crate::geometry::Geometry;
use serde::{Deserialize, Serialize};

/// A full chip-model configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Preset name this config came from (informational).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where the numbers come from (datasheet, paper table).
    #[serde(default)]
    pub source: String,
    pub geometry: Geometry,
    pub cell: CellConfig,
    pub timing: TimingConfig,
    pub electrical: ElectricalConfig,
    #[serde(default)]
    pub reliability: ReliabilityConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellConfig {
    pub layout: PageLayout,
}

/// Latency that is either one value or one value per page type (LSB, CSB, MSB, top).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PerPageType {
    One(f64),
    ByType(Vec<f64>),
}

impl PerPageType {
    pub fn for_type(&self, index: usize) -> f64 {
        match self {
            PerPageType::One(v) => *v,
            PerPageType::ByType(v) => v[index.min(v.len() - 1)],
        }
    }
    fn validate(&self, key: &str, type_count: usize) -> NandResult<()> {
        let values: &[f64] = match self {
            PerPageType::One(v) => std::slice::from_ref(v),
            PerPageType::ByType(v) => {
                if v.len() != type_count {
                    return Err(config_error(
                        key,
                        format!(
                            "{} values given but the page layout has {type_count} page types",
                            v.len()
                        ),
                    ));
                }
                v
            }
        };
        for v in values {
            if !v.is_finite() || *v <= 0.0 {
                return Err(config_error(key, format!("{v} is not a positive time")));
            }
        }
        Ok(())
    }
}

/// Array and bus timing. Array times in microseconds, bus cycle times in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    /// tR: array read into the data register (TON), per page type or one value.
    pub read_us: PerPageType,
    /// tPROG: array program from the data register (TIN), per page type or one value.
    pub program_us: PerPageType,
    /// tBERS: block erase (BER).
    pub erase_us: f64,
    /// Data transfers per second on the bus in millions (40 = 25 ns per byte on an 8-bit bus).
    pub bus_data_rate_mts: f64,
    /// Bus width in bits (8 or 16).
    #[serde(default = "default_bus_width")]
    pub bus_width_bits: u32,
    /// tWC: one command or address cycle.
    pub command_cycle_ns: f64,
    /// Address cycles of a page address (column + row), usually 5.
    #[serde(default = "default_page_address_cycles")]
    pub page_address_cycles: u32,
    /// Address cycles of a block address (row only), usually 3.
    #[serde(default = "default_block_address_cycles")]
    pub block_address_cycles: u32,
}

fn default_bus_width() -> u32 {
    8
}
fn default_page_address_cycles() -> u32 {
    5
}
fn default_block_address_cycles() -> u32 {
    3
}

/// Electrical characteristics for the energy model (paper 003 §9.1): E = V · I · t per stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElectricalConfig {
    pub supply_voltage_v: f64,
    /// Array operating current during TON/TIN/BER (ICC1-3 of datasheets).
    pub array_current_ma: f64,
    /// Optional per-operation overrides of the array current.
    #[serde(default)]
    pub read_current_ma: Option<f64>,
    #[serde(default)]
    pub program_current_ma: Option<f64>,
    #[serde(default)]
    pub erase_current_ma: Option<f64>,
    /// Interface (I/O) current during bus stages.
    pub interface_current_ma: f64,
    /// Standby current of an idle die (ISB); the paper treats idle energy as negligible.
    #[serde(default)]
    pub standby_current_ua: f64,
}

/// Reliability constraints (SPEC N8) and the raw-bit-error model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReliabilityConfig {
    /// Programs allowed per page between erases (partial-page programming).
    #[serde(default = "default_nop")]
    pub nop_limit: u32,
    /// Program/erase cycles each block is guaranteed for; erasing past it is an error.
    #[serde(default = "default_endurance")]
    pub endurance_cycles: u32,
    /// Refuse programs below the last programmed page of a block.
    #[serde(default = "default_true")]
    pub in_order_programming: bool,
    /// Raw bit error model: rber = base + wear_coeff · (PE cycles)^wear_exponent
    ///                             + retention_coeff_per_day · days since program.
    #[serde(default)]
    pub rber_base: f64,
    #[serde(default)]
    pub rber_wear_coeff: f64,
    #[serde(default = "default_wear_exponent")]
    pub rber_wear_exponent: f64,
    #[serde(default)]
    pub rber_retention_coeff_per_day: f64,
    /// ECC: bits correctable per codeword, and codeword size.
    #[serde(default = "default_ecc_bits")]
    pub ecc_correctable_bits: u32,
    #[serde(default = "default_codeword_bytes")]
    pub ecc_codeword_bytes: u32,
    /// Read-retry steps tried after an ECC failure; each retry repeats TON and TOR and divides the
    /// raw bit error rate by `read_retry_rber_divisor`.
    #[serde(default = "default_retry_max")]
    pub read_retry_max: u32,
    #[serde(default = "default_retry_divisor")]
    pub read_retry_rber_divisor: f64,
}

fn default_nop() -> u32 {
    1
}
fn default_endurance() -> u32 {
    100_000
}
fn default_true() -> bool {
    true
}
fn default_wear_exponent() -> f64 {
    1.0
}
fn default_ecc_bits() -> u32 {
    40
}
fn default_codeword_bytes() -> u32 {
    1024
}
fn default_retry_max() -> u32 {
    5
}
fn default_retry_divisor() -> f64 {
    4.0
}

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig {
            nop_limit: default_nop(),
            endurance_cycles: default_endurance(),
            in_order_programming: true,
            rber_base: 0.0,
            rber_wear_coeff: 0.0,
            rber_wear_exponent: default_wear_exponent(),
            rber_retention_coeff_per_day: 0.0,
            ecc_correctable_bits: default_ecc_bits(),
            ecc_codeword_bytes: default_codeword_bytes(),
            read_retry_max: default_retry_max(),
            read_retry_rber_divisor: default_retry_divisor(),
        }
    }
}

fn positive(key: &str, value: f64) -> NandResult<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(config_error(
            key,
            format!("{value} must be a positive number"),
        ))
    }
}

fn non_negative(key: &str, value: f64) -> NandResult<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(config_error(
            key,
            format!("{value} must be zero or positive"),
        ))
    }
}

impl NandConfig {
    /// Checks every key; the first problem found is returned with its key.
    pub fn validate(&self) -> NandResult<()> {
        self.geometry.validate()?;
        let layout = self.cell.layout;
        layout
            .check_pages_per_block(self.geometry.pages_per_block)
            .map_err(|m| config_error("geometry.pages_per_block", m))?;
        let types = layout.page_type_count();
        let t = &self.timing;
        t.read_us.validate("timing.read_us", types)?;
        t.program_us.validate("timing.program_us", types)?;
        positive("timing.erase_us", t.erase_us)?;
        positive("timing.bus_data_rate_mts", t.bus_data_rate_mts)?;
        positive("timing.command_cycle_ns", t.command_cycle_ns)?;
        if !matches!(t.bus_width_bits, 8 | 16) {
            return Err(config_error(
                "timing.bus_width_bits",
                format!("{} bits; the bus is 8 or 16 bits wide", t.bus_width_bits),
            ));
        }
        if t.page_address_cycles == 0 || t.page_address_cycles > 8 {
            return Err(config_error(
                "timing.page_address_cycles",
                "must be between 1 and 8",
            ));
        }
        if t.block_address_cycles == 0 || t.block_address_cycles > 8 {
            return Err(config_error(
                "timing.block_address_cycles",
                "must be between 1 and 8",
            ));
        }
        let e = &self.electrical;
        positive("electrical.supply_voltage_v", e.supply_voltage_v)?;
        non_negative("electrical.array_current_ma", e.array_current_ma)?;
        non_negative("electrical.interface_current_ma", e.interface_current_ma)?;
        non_negative("electrical.standby_current_ua", e.standby_current_ua)?;
        for (key, v) in [
            ("electrical.read_current_ma", e.read_current_ma),
            ("electrical.program_current_ma", e.program_current_ma),
            ("electrical.erase_current_ma", e.erase_current_ma),
        ] {
            if let Some(v) = v {
                non_negative(key, v)?;
            }
        }
        let r = &self.reliability;
        if r.nop_limit == 0 {
            return Err(config_error("reliability.nop_limit", "must be at least 1"));
        }
        if r.endurance_cycles == 0 {
            return Err(config_error(
                "reliability.endurance_cycles",
                "must be at least 1",
            ));
        }
        for (key, v) in [
            ("reliability.rber_base", r.rber_base),
            ("reliability.rber_wear_coeff", r.rber_wear_coeff),
            ("reliability.rber_wear_exponent", r.rber_wear_exponent),
            (
                "reliability.rber_retention_coeff_per_day",
                r.rber_retention_coeff_per_day,
            ),
        ] {
            non_negative(key, v)?;
        }
        if r.ecc_codeword_bytes == 0 {
            return Err(config_error(
                "reliability.ecc_codeword_bytes",
                "must be at least 1",
            ));
        }
        if !(r.read_retry_rber_divisor.is_finite() && r.read_retry_rber_divisor >= 1.0) {
            return Err(config_error(
                "reliability.read_retry_rber_divisor",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}
