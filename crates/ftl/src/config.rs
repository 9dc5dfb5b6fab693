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
mod policies;
mod validate;

pub use allocation::{Level, parse_allocation_order};
pub use components::{BufferConfig, HintsConfig, SchedulerConfig, WearConfig};
pub use gc::GcConfig;
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

/// Default of `ftl.sim_refresh_age_s`: 30 days.
pub const SIM_REFRESH_AGE_S: u64 = 30 * 86_400;

/// Controller and FTL settings. A component's keys form its own typed config (`gc`, `wear`,
/// `buffer`, `scheduler`, `hints`), which the component gets at construction. (De)serializes in the flat legacy `[ftl]` form
/// (`gc_policy`, `gc_threshold_blocks`, …; `config/flat.rs`): what `SsdConfig` files and a
/// resolved config's JSON carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "flat::FlatFtl", into = "flat::FlatFtl")]
pub struct FtlConfig {
    /// Logical-to-physical mapping scheme.
    pub mapping: MappingKind,
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
    /// Over-provisioning as spare / logical (0.25 = 25 %).
    pub op_fraction: f64,
    /// Whether page bytes are kept.
    pub payload: PayloadMode,
    /// Striping order of consecutive page writes over the parallel units, fastest-varying
    /// first, dash separated: any order of `channel`, `chip` (alias `way`), `die`, `plane`;
    /// levels left out vary slowest, in the order channel, chip, die, plane.
    pub allocation_order: String,
    /// Host submission-queue depth (requests in flight).
    pub queue_depth: u32,
    /// Random log blocks of the hybrid mapping.
    pub hybrid_random_log_blocks: u32,
    /// Zoned mapping: planes per zone (a zone is one block of each; 0: every plane).
    pub zone_planes: u32,
    /// Placement ids (NVMe FDP reclaim-unit handles) host writes may carry: the page mapping
    /// keeps separate write frontiers, so separate blocks, per id (1: off).
    pub placement_ids: u16,
    /// Paired-page protection (issue 14, page mapping): on MLC/TLC/QLC an interrupted
    /// program of an upper page can destroy the lower pages of its word line. With this on,
    /// a Flush pads every open block with dummy pages up to the end of the word lines holding
    /// data, and an erase that would leave the newest copy of one of its LPAs on a lower page
    /// whose upper pages are not programmed first pads that word line (and waits for it), as
    /// pblk (LightNVM) pads a flush to a full write unit. Costs the padding pages. Off by
    /// default (results without power cuts stay as they were).
    pub paired_page_padding: bool,
    /// Map checkpoints (issue 14, docs/power.md): under a power-loss trace, a copy of the L2P
    /// map is written to a metadata area every this many pages decided, and a mount reads the
    /// newest committed one plus the pages written after it instead of every page (0: none,
    /// the mount scans everything). Page mapping only.
    pub map_checkpoint_interval_pages: u32,
    /// Search-in-Memory region (paper 004 §VI-A1, docs/sim.md): the last this many logical
    /// pages take the SiM vendor commands (search `81h`, gather `82h`, [`crate::Ssd::execute_search`])
    /// and live in match-mode (SLC) blocks of their own pool (an extra placement id), which
    /// GC keeps them in. Needs a device with a `[search]` section, the page mapping, per-plane
    /// GC and no multiplane merging. 0 (default): no SiM region.
    pub sim_pages: u32,
    /// A cached mapping table (DFTL, `mapping/dftl`): this many mapping entries in DRAM, the
    /// rest in translation pages on flash (page mapping only). 0 (default): the whole table
    /// in DRAM.
    pub cmt_entries: u32,
    /// SLC cache (SPEC C3, `frontend/slc.rs`): this many blocks in SLC mode absorb host
    /// writes and are folded to TLC/QLC when full (page mapping; needs the chip's
    /// `timing.slc_read_us` / `slc_program_us`). 0 (default): no cache.
    pub slc_cache_blocks: u32,
    /// SLC cache: fold the oldest cache block once the host has been idle this long (µs;
    /// host reads and writes go first). 0 (default): fold only when the cache is full.
    pub slc_idle_fold_us: u64,
    /// The controller's integrity layer on the SiM region (paper 004 §IV-C, SPEC S4): chunk 0
    /// of every region page holds a verification header (CRC-64, write time, magic, LPA) on
    /// flash and the spare area a 4-byte ECC per chunk; page-open checks the header, a failed
    /// check or an aged page falls back to a full read through the page ECC and is queued for
    /// refresh ([`crate::Ssd::search_refresh`]). Needs `sim_pages > 0` and `payload = "full"`.
    /// Off by default (the region's pages are the host's bytes, chunk 0 included).
    pub sim_integrity: bool,
    /// With `sim_integrity`: a page whose header is older than this many seconds is read out
    /// in full on page-open and queued for refresh (paper §IV-C2's safety margin). Default 30
    /// days (the store's default in `nandlab-search`).
    pub sim_refresh_age_s: u64,
    /// Deadline of the controller's search batch scheduler (paper §IV-E, SPEC S5) in ns: a
    /// search waits this long for other searches of its page, which then go to the chip as one
    /// batched search ([`crate::Ssd::run_search`]). 0 (default): no batching.
    pub sim_batch_deadline_ns: u64,
    /// The controller's own time and energy costs (all zero: none).
    pub controller: ControllerCosts,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            mapping: MappingKind::Page,
            gc: GcConfig::default(),
            wear: WearConfig::default(),
            buffer: BufferConfig::default(),
            scheduler: SchedulerConfig::default(),
            hints: HintsConfig::default(),
            op_fraction: 0.25,
            payload: PayloadMode::TimingOnly,
            allocation_order: "channel-chip-die-plane".into(),
            queue_depth: 32,
            hybrid_random_log_blocks: 8,
            placement_ids: 1,
            paired_page_padding: false,
            map_checkpoint_interval_pages: 0,
            sim_pages: 0,
            cmt_entries: 0,
            slc_cache_blocks: 0,
            slc_idle_fold_us: 0,
            sim_integrity: false,
            sim_refresh_age_s: SIM_REFRESH_AGE_S,
            sim_batch_deadline_ns: 0,
            zone_planes: 0,
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
        self.placement_ids + u16::from(self.sim_pages > 0)
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

#[cfg(test)]
mod tests;
