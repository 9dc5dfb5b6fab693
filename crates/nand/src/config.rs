//! Chip configuration as users write it (TOML, units in the key names), and its validation.
//!
//! A config is a preset (see [`crate::preset()`]) optionally overridden key by key. Every number
//! carries its source in the `source` strings of the preset; `validate` names the offending key.

use crate::cell::PageLayout;
use crate::error::{NandResult, config_error};
use crate::geometry::{Geometry, MAX_PAGE_SIZE_BYTES};
use nandlab_core::message::number;
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
    /// Search-in-Memory parameters (paper 004); absent: the device has no SiM commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchConfig>,
    /// Program and erase suspend/resume (SPEC C1); absent: a read waits for the program or
    /// erase ahead of it on its die.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<SuspendConfig>,
}

/// Program and erase suspension (ONFI's suspend and resume commands; SPEC C1): a read that
/// arrives at a die busy programming or erasing may suspend the operation, be served, and let
/// it resume. The controller decides which reads may suspend
/// ([`crate::NandSim::submit_read_suspending`]); this section gives the chip's timing.
///
/// The model (after MQSim's `Flash_Chip::Suspend`): the array keeps working for the suspend
/// latency (until the program's ISPP loop or the erase pulse under way reaches a point where
/// it can stop), then frees the die; the reads run; the operation resumes with the array time
/// it had left plus the resume penalty. The suspend and resume commands' few bus cycles are
/// folded into those two times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspendConfig {
    /// From a program suspend command until the die is free for a read.
    pub program_suspend_us: f64,
    /// From an erase suspend command until the die is free for a read.
    pub erase_suspend_us: f64,
    /// Array time a resumed operation needs on top of what it had left (the interrupted
    /// ISPP loop or erase pulse is redone); 0 if the source gives none.
    #[serde(default)]
    pub resume_penalty_us: f64,
    /// Reads served ahead of one program or erase: each either suspends it or joins a
    /// suspension in progress (the first of a run pays the suspend latency and the penalty).
    /// Beyond it, reads wait for the operation, so a stream of reads cannot starve it.
    pub max_suspended_reads: u32,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: String,
}

/// Longest suspend latency or resume penalty accepted, in microseconds.
const SUSPEND_TIME_US: (f64, f64) = (0.0, 100_000.0);

impl SuspendConfig {
    fn validate(&self) -> NandResult<()> {
        for (key, value) in [
            ("suspend.program_suspend_us", self.program_suspend_us),
            ("suspend.erase_suspend_us", self.erase_suspend_us),
            ("suspend.resume_penalty_us", self.resume_penalty_us),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(config_error(
                    key,
                    format!("{} is not a time (use 0 or more)", number(value)),
                ));
            }
            within(key, value, SUSPEND_TIME_US, "us")?;
        }
        if self.max_suspended_reads == 0 {
            return Err(config_error(
                "suspend.max_suspended_reads",
                "0 reads would never suspend anything; remove the [suspend] section instead",
            ));
        }
        Ok(())
    }
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
                return Err(config_error(
                    key,
                    format!("{} is not a positive time", number(*v)),
                ));
            }
            within(key, *v, ARRAY_TIME_US, "us")?;
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
    /// Per-page spread of TIN within a page type: each programmed page takes its type's
    /// `program_us` times a factor uniform in `[1 - v, 1 + v]`, drawn from the run's seed, the
    /// page address and its block's erase count (deterministic; 0 = off, the default). Paper 003
    /// §8.2 reports TIN fluctuating from 0.65 to 5 ms on its MLC device; the spread within one
    /// page type is not given there, so any value here is an assumption of the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub program_variation: f64,
    /// tR of a page in a block programmed in SLC mode (one bit per cell; SPEC C3), for the
    /// controller's SLC cache on TLC/QLC devices. Absent: the device offers no SLC mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_read_us: Option<f64>,
    /// tPROG of a page in a block programmed in SLC mode (with `slc_read_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_program_us: Option<f64>,
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

fn is_zero(v: &f64) -> bool {
    *v == 0.0
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
    /// Fraction of blocks marked bad at the factory (a seeded per-block draw; SPEC C4). 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub factory_bad_block_fraction: f64,
    /// Grown bad blocks: an erase fails (and the FTL retires the block) with probability
    /// erase_fail_base + erase_fail_wear_coeff · (PE cycles)^rber_wear_exponent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub erase_fail_base: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub erase_fail_wear_coeff: f64,
    /// Program-status failures: a program fails (the FTL rewrites the block's data elsewhere
    /// and retires it) with probability program_fail_base + program_fail_wear_coeff ·
    /// (PE cycles)^rber_wear_exponent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub program_fail_base: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub program_fail_wear_coeff: f64,
    /// Read disturb (issue 34 item 4): every read of a block raises the raw bit error rate of
    /// its pages by this much until the block is erased (a linear fit of Cai et al., DSN'15,
    /// "Read Disturb Errors in MLC NAND Flash Memory", Fig. 3). 0: off.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_disturb_coeff: f64,
    /// Read reclaim: the controller rewrites a block's valid pages elsewhere once its expected
    /// bit errors per codeword reach this fraction of `ecc_correctable_bits` (0: no reclaim).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_reclaim_margin: f64,
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
            factory_bad_block_fraction: 0.0,
            erase_fail_base: 0.0,
            erase_fail_wear_coeff: 0.0,
            program_fail_base: 0.0,
            program_fail_wear_coeff: 0.0,
            read_disturb_coeff: 0.0,
            read_reclaim_margin: 0.0,
        }
    }
}

/// Bounds of array times (tR, tPROG, tBERS) in microseconds: 1 ns to 1 s. Real parts take
/// 20 us to 20 ms; the bounds only refuse nonsense (a time that rounds to 0 ps, or an op so long
/// that a run reaches the end of simulated time, 2^64 ps, after a few million ops).
pub const ARRAY_TIME_US: (f64, f64) = (1e-3, 1e6);
/// Bounds of the command/address cycle time in nanoseconds: 10 ps to 1 ms.
pub const COMMAND_CYCLE_NS: (f64, f64) = (1e-2, 1e6);
/// Bounds of the bus data rate in MT/s: 0.1 (10 us per transfer) to 100,000 (10 ps).
pub const BUS_DATA_RATE_MTS: (f64, f64) = (0.1, 1e5);
/// Bounds of the supply voltage in volts.
pub const SUPPLY_VOLTAGE_V: (f64, f64) = (0.1, 100.0);
/// Upper bound of every current in milliamperes (100 A); currents in microamperes get the
/// same bound (100 A = 1e8 uA).
pub const CURRENT_MA_MAX: f64 = 1e5;
/// Upper bound of the read-retry steps: each repeats a sense and a transfer.
pub const READ_RETRY_MAX: u32 = 64;
/// Upper bound of the partial-page programs per page (NOP).
pub const NOP_LIMIT_MAX: u32 = 64;

/// `value` must lie within `bounds` (inclusive); the message gives the range with its unit.
fn within(key: &str, value: f64, bounds: (f64, f64), unit: &str) -> NandResult<()> {
    match nandlab_core::message::outside_range(value, bounds, unit) {
        None => Ok(()),
        Some(message) => Err(config_error(key, message)),
    }
}

fn positive(key: &str, value: f64) -> NandResult<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(config_error(
            key,
            format!("{} must be a positive number", number(value)),
        ))
    }
}

fn non_negative(key: &str, value: f64) -> NandResult<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(config_error(
            key,
            format!("{} must be zero or positive", number(value)),
        ))
    }
}

/// Estimates below this many bytes are not checked against the memory budget (the check reads
/// the environment and `/proc/meminfo`; small devices need neither).
pub const MEMORY_CHECK_THRESHOLD_BYTES: u64 = 256 << 20;

impl NandConfig {
    /// Bytes the chip model's tables need for this config (per-block state, per-page program
    /// counts when out-of-order programming is allowed, per-die and per-channel state), an
    /// upper estimate computed before anything is allocated. Call after [`NandConfig::validate`].
    pub fn memory_estimate_bytes(&self) -> u64 {
        let g = &self.geometry;
        let blocks = u64::from(g.channels)
            .saturating_mul(u64::from(g.chips_per_channel))
            .saturating_mul(u64::from(g.dies_per_chip))
            .saturating_mul(u64::from(g.planes_per_die))
            .saturating_mul(u64::from(g.blocks_per_plane));
        let pages = blocks.saturating_mul(u64::from(g.pages_per_block));
        let dies = u64::from(g.channels)
            .saturating_mul(u64::from(g.chips_per_channel))
            .saturating_mul(u64::from(g.dies_per_chip));
        let block_state = std::mem::size_of::<crate::reliability::BlockState>() as u64;
        let page_programs = if self.reliability.in_order_programming {
            0
        } else {
            pages
        };
        // SiM: a block mode per block and a byte-store slot per page (the bytes of match-mode
        // pages programmed with data come on top, page by page)
        let search = if self.search.is_some() {
            blocks.saturating_add(pages.saturating_mul(16))
        } else {
            0
        };
        blocks
            .saturating_mul(block_state)
            .saturating_add(page_programs)
            .saturating_add(search)
            .saturating_add(dies.saturating_mul(256))
            .saturating_add(u64::from(g.channels).saturating_mul(128))
            .saturating_add(u64::from(g.pages_per_block))
    }

    /// Refuses the config when its tables would need more than `budget` (an error naming the
    /// geometry keys).
    pub fn check_memory(&self, budget: &nandlab_core::memory::MemoryBudget) -> NandResult<()> {
        let needed = self.memory_estimate_bytes();
        if needed <= budget.bytes {
            return Ok(());
        }
        Err(config_error(
            "geometry",
            format!(
                "the chip model needs about {} for {} blocks{} but the memory budget is {}: lower \
                 geometry.channels, chips_per_channel, dies_per_chip, planes_per_die or blocks_per_plane",
                nandlab_core::memory::format_bytes(needed),
                u64::from(self.geometry.total_planes()) * u64::from(self.geometry.blocks_per_plane),
                if self.reliability.in_order_programming {
                    ""
                } else {
                    " (and a program count per page: reliability.in_order_programming = false)"
                },
                budget.describe()
            ),
        ))
    }

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
        if !(0.0..1.0).contains(&t.program_variation) {
            return Err(config_error(
                "timing.program_variation",
                format!(
                    "{}; must be at least 0 and below 1 (a relative half-width)",
                    t.program_variation
                ),
            ));
        }
        match (t.slc_read_us, t.slc_program_us) {
            (None, None) => {}
            (Some(read), Some(program)) => {
                positive("timing.slc_read_us", read)?;
                within("timing.slc_read_us", read, ARRAY_TIME_US, "us")?;
                positive("timing.slc_program_us", program)?;
                within("timing.slc_program_us", program, ARRAY_TIME_US, "us")?;
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(config_error(
                    "timing.slc_read_us",
                    String::from(
                        "SLC mode needs both timing.slc_read_us and timing.slc_program_us",
                    ),
                ));
            }
        }
        positive("timing.erase_us", t.erase_us)?;
        within("timing.erase_us", t.erase_us, ARRAY_TIME_US, "us")?;
        positive("timing.bus_data_rate_mts", t.bus_data_rate_mts)?;
        within(
            "timing.bus_data_rate_mts",
            t.bus_data_rate_mts,
            BUS_DATA_RATE_MTS,
            "MT/s",
        )?;
        positive("timing.command_cycle_ns", t.command_cycle_ns)?;
        within(
            "timing.command_cycle_ns",
            t.command_cycle_ns,
            COMMAND_CYCLE_NS,
            "ns",
        )?;
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
        within(
            "electrical.supply_voltage_v",
            e.supply_voltage_v,
            SUPPLY_VOLTAGE_V,
            "V",
        )?;
        let currents = [
            ("electrical.array_current_ma", Some(e.array_current_ma)),
            (
                "electrical.interface_current_ma",
                Some(e.interface_current_ma),
            ),
            ("electrical.read_current_ma", e.read_current_ma),
            ("electrical.program_current_ma", e.program_current_ma),
            ("electrical.erase_current_ma", e.erase_current_ma),
        ];
        for (key, v) in currents {
            if let Some(v) = v {
                non_negative(key, v)?;
                within(key, v, (0.0, CURRENT_MA_MAX), "mA")?;
            }
        }
        non_negative("electrical.standby_current_ua", e.standby_current_ua)?;
        within(
            "electrical.standby_current_ua",
            e.standby_current_ua,
            (0.0, CURRENT_MA_MAX * 1e3),
            "uA",
        )?;
        let r = &self.reliability;
        if r.nop_limit == 0 || r.nop_limit > NOP_LIMIT_MAX {
            return Err(config_error(
                "reliability.nop_limit",
                format!(
                    "{} programs per page; must be between 1 and {NOP_LIMIT_MAX}",
                    r.nop_limit
                ),
            ));
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
        if r.rber_base > 1.0 {
            return Err(config_error(
                "reliability.rber_base",
                format!("{} is a bit error rate above 1", r.rber_base),
            ));
        }
        if r.rber_wear_exponent > 16.0 {
            return Err(config_error(
                "reliability.rber_wear_exponent",
                format!("{} must be at most 16", r.rber_wear_exponent),
            ));
        }
        if r.ecc_codeword_bytes == 0 || r.ecc_codeword_bytes > MAX_PAGE_SIZE_BYTES {
            return Err(config_error(
                "reliability.ecc_codeword_bytes",
                format!(
                    "{} bytes; must be between 1 and 16 MiB",
                    r.ecc_codeword_bytes
                ),
            ));
        }
        if u64::from(r.ecc_correctable_bits) > u64::from(r.ecc_codeword_bytes) * 8 {
            return Err(config_error(
                "reliability.ecc_correctable_bits",
                format!(
                    "{} bits exceed the {}-bit codeword",
                    r.ecc_correctable_bits,
                    u64::from(r.ecc_codeword_bytes) * 8
                ),
            ));
        }
        if r.read_retry_max > READ_RETRY_MAX {
            return Err(config_error(
                "reliability.read_retry_max",
                format!("{} steps; at most {READ_RETRY_MAX}", r.read_retry_max),
            ));
        }
        if !(r.read_retry_rber_divisor.is_finite() && r.read_retry_rber_divisor >= 1.0) {
            return Err(config_error(
                "reliability.read_retry_rber_divisor",
                "must be at least 1",
            ));
        }
        r.validate_bad_blocks()?;
        if let Some(search) = &self.search {
            search.validate(&self.geometry)?;
        }
        if let Some(suspend) = &self.suspend {
            suspend.validate()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::error::NandError;
    use crate::preset::{parse_config, preset_toml};

    /// The `mlc1` preset text with `key = old` replaced by `key = new` in its section.
    fn with(old: &str, new: &str) -> String {
        let text = preset_toml("mlc1").unwrap();
        assert!(text.contains(old), "mlc1 has no `{old}`");
        text.replacen(old, new, 1)
    }

    fn refused_key(text: &str) -> String {
        match parse_config("test", text) {
            Err(NandError::Config { key, message }) => {
                assert!(!message.contains('\n'), "one-line message: {message}");
                key
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    /// Regression (issue 11): a chip with `program_us = 1e12` (or any absurd timing) passed
    /// validation and then drove simulated time past 2^64 ps, a panic in the event queue. Every
    /// timing key is now bounded (array times 1 ns..1 s, command cycle 10 ps..1 ms, bus
    /// 0.1..100,000 MT/s) and refused with its key named; NaN and infinities too.
    #[test]
    fn absurd_timing_values_are_refused_with_the_key() {
        let cases = [
            (
                "program_us = [250, 2200]",
                "program_us = [250, 1e12]",
                "timing.program_us",
            ),
            ("read_us = [50, 50]", "read_us = 1e-9", "timing.read_us"),
            ("erase_us = 2500", "erase_us = 1e12", "timing.erase_us"),
            ("erase_us = 2500", "erase_us = nan", "timing.erase_us"),
            ("erase_us = 2500", "erase_us = inf", "timing.erase_us"),
            ("erase_us = 2500", "erase_us = -3", "timing.erase_us"),
            (
                "bus_data_rate_mts = 40",
                "bus_data_rate_mts = 1e-6",
                "timing.bus_data_rate_mts",
            ),
            (
                "bus_data_rate_mts = 40",
                "bus_data_rate_mts = 1e9",
                "timing.bus_data_rate_mts",
            ),
            (
                "command_cycle_ns = 25",
                "command_cycle_ns = 1e12",
                "timing.command_cycle_ns",
            ),
            (
                "supply_voltage_v = 3.3",
                "supply_voltage_v = 1e9",
                "electrical.supply_voltage_v",
            ),
            (
                "array_current_ma = 20",
                "array_current_ma = 1e300",
                "electrical.array_current_ma",
            ),
            (
                "nop_limit = 1",
                "nop_limit = 100000",
                "reliability.nop_limit",
            ),
        ];
        for (old, new, key) in cases {
            assert_eq!(refused_key(&with(old, new)), key, "{new}");
        }
        // tiny and huge numbers are shown in exponent form, not as hundreds of digits
        let text = with("bus_data_rate_mts = 40", "bus_data_rate_mts = 1e-300");
        let e = parse_config("t", &text).unwrap_err().to_string();
        assert!(e.contains("1e-300 MT/s") && e.len() < 150, "{e}");
    }

    /// Regression (issue 11): a 1-byte or non-power-of-two page size was accepted silently,
    /// and five large geometry counts overflowed the block-count product (a panic in debug
    /// builds, a wrapped and accepted count in release builds).
    #[test]
    fn nonsense_geometry_is_refused_with_the_key() {
        for size in ["1", "3000", "256", "33554432"] {
            let text = with(
                "page_size_bytes = 2048",
                &format!("page_size_bytes = {size}"),
            );
            assert_eq!(refused_key(&text), "geometry.page_size_bytes", "{size}");
        }
        let text = with("spare_bytes_per_page = 64", "spare_bytes_per_page = 4096");
        assert_eq!(refused_key(&text), "geometry.spare_bytes_per_page");
        let huge = with("channels = 1", "channels = 4294967295")
            .replacen("chips_per_channel = 1", "chips_per_channel = 4294967295", 1)
            .replacen("dies_per_chip = 1", "dies_per_chip = 4294967295", 1)
            .replacen(
                "blocks_per_plane = 4096",
                "blocks_per_plane = 4294967295",
                1,
            );
        assert_eq!(refused_key(&huge), "geometry");
        let text = with("pages_per_block = 128", "pages_per_block = 4294967292");
        assert_eq!(refused_key(&text), "geometry.pages_per_block");
    }

    #[test]
    fn reliability_values_beyond_their_meaning_are_refused() {
        let text = preset_toml("mlc1").unwrap().to_string();
        for (line, key) in [
            ("rber_base = 2.0", "reliability.rber_base"),
            ("rber_wear_exponent = 1e6", "reliability.rber_wear_exponent"),
            ("ecc_codeword_bytes = 0", "reliability.ecc_codeword_bytes"),
            (
                "ecc_correctable_bits = 100000",
                "reliability.ecc_correctable_bits",
            ),
            ("read_retry_max = 1000000", "reliability.read_retry_max"),
        ] {
            let t = text.replacen("[reliability]", &format!("[reliability]\n{line}"), 1);
            assert_eq!(refused_key(&t), key, "{line}");
        }
    }

    /// Regression (issue 11): the chip model's per-page program counts (kept when
    /// out-of-order programming is allowed) were allocated for any validated geometry, up to
    /// 2^46 bytes; the estimate is now checked against the memory budget first.
    #[test]
    fn chip_tables_beyond_the_budget_are_refused() {
        use nandlab_core::memory::{BudgetSource, MemoryBudget};
        let mut c = parse_config("mlc1", preset_toml("mlc1").unwrap()).unwrap();
        c.geometry.blocks_per_plane = 1 << 20;
        c.geometry.pages_per_block = 1 << 12;
        c.reliability.in_order_programming = false;
        c.validate().unwrap();
        assert!(c.memory_estimate_bytes() > 1 << 33);
        let budget = MemoryBudget {
            bytes: 1 << 30,
            source: BudgetSource::MachineMemory,
        };
        let err = c.check_memory(&budget).unwrap_err().to_string();
        assert!(
            err.contains("`geometry`") && err.contains("in_order_programming"),
            "{err}"
        );
        assert!(err.contains("NANDLAB_MEMORY_BUDGET_BYTES"), "{err}");
    }
}
