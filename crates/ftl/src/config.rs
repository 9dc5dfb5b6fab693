//! Controller configuration (`SsdConfig`): a `[device]` section naming the chip model and an
//! `[ftl]` section for the controller. Every struct denies unknown keys; [`SsdConfig::validate`]
//! names the offending key.
//!
//! Over-provisioning is defined as **spare / logical**: with `op_fraction = 0.25` the physical
//! pages are 1.25 × the logical pages (logical = ⌊physical / 1.25⌋). This is the usual industry
//! definition (7 % OP = 2^30 / 10^9 − 1).

mod allocation;
mod components;
mod flat;
mod gc;
mod mapping;
mod policies;
mod validate;

pub use allocation::{Level, parse_allocation_order};
pub use components::{
    BufferConfig, HintsConfig, HostConfig, SIM_REFRESH_AGE_S, SchedulerConfig, SearchRegionConfig,
    SlcCacheConfig, WearConfig,
};
pub use gc::GcConfig;
pub use mapping::MappingConfig;
pub use policies::{
    BufferPolicy, GcPolicy, GcScheduling, GcScope, MappingKind, PayloadMode, ReadScheduling,
    WearLeveling,
};

use crate::controller::ControllerCosts;
use crate::error::{FtlResult, config_error};
use nandlab_nand::{NandConfig, preset::preset_toml};
use serde::{Deserialize, Serialize};

/// A full SSD configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdConfig {
    /// The flash chips behind the controller.
    pub device: DeviceConfig,
    /// Controller and FTL policies.
    #[serde(default)]
    pub ftl: FtlConfig,
}

/// Which chip model: a preset name with optional key overrides, or a full chip config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Name of a built-in preset (`nandlab_nand::preset_names()`).
    #[serde(default)]
    pub preset: Option<String>,
    /// Keys merged over the preset, in the preset's own layout (e.g. `[device.overrides.geometry]`
    /// `blocks_per_plane = 64`).
    #[serde(default)]
    pub overrides: Option<toml::Table>,
    /// A full chip config instead of a preset.
    #[serde(default)]
    pub nand: Option<NandConfig>,
}

/// Controller and FTL settings: one typed config per component, each the `[ssd.*]` section of a
/// stack config it comes from and handed to its component at construction (`mapping`, `host`,
/// `gc`, `wear`, `buffer`, `scheduler`, `hints`, `slc_cache`, `search`, `controller`), plus the
/// device-wide over-provisioning and payload mode. (De)serializes in the flat legacy `[ftl]` form
/// (`gc_policy`, `gc_threshold_blocks`, …; `config/flat.rs`): what `SsdConfig` files and a
/// resolved config's JSON carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "flat::FlatFtl", into = "flat::FlatFtl")]
pub struct FtlConfig {
    /// The logical-to-physical mapping and where it places pages (`[ssd.mapping]`).
    pub mapping: MappingConfig,
    /// The host interface (`[ssd.host]`).
    pub host: HostConfig,
    /// Garbage collection (`[ssd.gc]`).
    pub gc: GcConfig,
    /// Wear-leveling (`[ssd.wear]`).
    pub wear: WearConfig,
    /// The DRAM write buffer (`[ssd.buffer]`).
    pub buffer: BufferConfig,
    /// The flash scheduler (`[ssd.scheduler]`).
    pub scheduler: SchedulerConfig,
    /// The co-design hint (`[ssd.hints]`).
    pub hints: HintsConfig,
    /// The SLC cache (`[ssd.slc_cache]`).
    pub slc_cache: SlcCacheConfig,
    /// The Search-in-Memory region (`[ssd.sim]`).
    pub search: SearchRegionConfig,
    /// Over-provisioning as spare / logical (0.25 = 25 %).
    pub op_fraction: f64,
    /// Whether page bytes are kept.
    pub payload: PayloadMode,
    /// The controller's own time and energy costs (all zero: none; `[ssd.controller]`).
    pub controller: ControllerCosts,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            mapping: MappingConfig::default(),
            host: HostConfig::default(),
            gc: GcConfig::default(),
            wear: WearConfig::default(),
            buffer: BufferConfig::default(),
            scheduler: SchedulerConfig::default(),
            hints: HintsConfig::default(),
            slc_cache: SlcCacheConfig::default(),
            search: SearchRegionConfig::default(),
            op_fraction: 0.25,
            payload: PayloadMode::TimingOnly,
            controller: ControllerCosts::default(),
        }
    }
}

impl SsdConfig {
    /// A config from a preset name with default FTL settings.
    pub fn from_preset(name: &str) -> Self {
        SsdConfig {
            device: DeviceConfig {
                preset: Some(name.to_string()),
                ..DeviceConfig::default()
            },
            ftl: FtlConfig::default(),
        }
    }

    /// A config wrapping a full chip config.
    pub fn from_nand(nand: NandConfig) -> Self {
        SsdConfig {
            device: DeviceConfig {
                nand: Some(nand),
                ..DeviceConfig::default()
            },
            ftl: FtlConfig::default(),
        }
    }

    /// Parses TOML text (unknown keys are errors naming the key).
    pub fn from_toml(text: &str) -> FtlResult<Self> {
        let config: SsdConfig = toml::from_str(text).map_err(|e| {
            config_error(
                "ssd config",
                nandlab_core::message::with_line(e.message(), text, e.span().map(|s| s.start)),
            )
        })?;
        config.validate()?;
        Ok(config)
    }

    /// The chip config this SSD is built on (preset + overrides, or the full config).
    pub fn nand_config(&self) -> FtlResult<NandConfig> {
        let d = &self.device;
        let config = match (&d.preset, &d.nand) {
            (Some(_), Some(_)) => {
                return Err(config_error(
                    "device",
                    "give either `preset` (with optional `overrides`) or `nand`, not both",
                ));
            }
            (None, None) => return Err(config_error("device", "`preset` or `nand` is required")),
            (None, Some(nand)) => {
                if d.overrides.is_some() {
                    return Err(config_error(
                        "device.overrides",
                        "overrides apply to a preset; edit `device.nand` directly",
                    ));
                }
                nand.clone()
            }
            (Some(name), None) => {
                let text =
                    preset_toml(name).map_err(|e| config_error("device.preset", e.to_string()))?;
                let mut table: toml::Table = toml::from_str(text)
                    .map_err(|e| config_error("device.preset", e.message().to_string()))?;
                if let Some(overrides) = &d.overrides {
                    merge_tables(&mut table, overrides);
                }
                NandConfig::deserialize(toml::Value::Table(table))
                    .map_err(|e| config_error("device.overrides", e.message().to_string()))?
            }
        };
        config
            .validate()
            .map_err(|e| config_error("device", e.to_string()))?;
        Ok(config)
    }
}

impl FtlConfig {
    /// Placement ids the mapping keeps: the host's, plus the SiM pool's when a SiM region is
    /// configured (the last id).
    pub fn pool_ids(&self) -> u16 {
        self.mapping.placement_ids + u16::from(self.search.pages > 0)
    }
}

fn merge_tables(base: &mut toml::Table, overrides: &toml::Table) {
    for (key, value) in overrides {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Logical pages of a device with over-provisioning `op_fraction` (spare / logical).
pub fn logical_pages(geometry: &nandlab_nand::Geometry, op_fraction: f64) -> u64 {
    (geometry.total_pages() as f64 / (1.0 + op_fraction)).floor() as u64
}

/// Sets key `path` (dot separated) of `table` to `value`, creating the tables on the way (a
/// value in the way is replaced by a table).
pub fn set_key(table: &mut toml::Table, path: &str, value: toml::Value) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let leaf = parts.pop().expect("split yields one part");
    let mut t = table;
    for part in parts {
        let entry = t
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        t = entry.as_table_mut().expect("a table");
    }
    t.insert(leaf.to_string(), value);
}

#[cfg(test)]
mod tests;
