//! Controller configuration (`SsdConfig`): a `[device]` section naming the chip model and an
//! `[ftl]` section for the controller. Every struct denies unknown keys; [`SsdConfig::validate`]
//! names the offending key.
//!
//! Over-provisioning is defined as **spare / logical**: with `op_fraction = 0.25` the physical
//! pages are 1.25 × the logical pages (logical = ⌊physical / 1.25⌋). This is the usual industry
//! definition (7 % OP = 2^30 / 10^9 − 1).

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

/// Logical-to-physical mapping scheme (SPEC F2, F5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingKind {
    /// Page-level mapping (L2P + P2L tables).
    #[default]
    Page,
    /// Block-level mapping: logical block → physical block, page offset fixed.
    Block,
    /// FAST-style hybrid log-block mapping: block-mapped data blocks, one sequential log block
    /// and `hybrid_random_log_blocks` page-mapped random log blocks.
    Hybrid,
    /// Zoned mapping (NVMe ZNS, `mapping/zoned.rs`): the device is one zoned namespace whose
    /// zones are fixed superblocks of `zone_planes` planes, written only at their write
    /// pointers and erased whole when every written page is trimmed (a zone reset); no GC.
    Zoned,
}

/// Garbage-collection victim policy (SPEC F3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Oldest closed block first (round robin over the plane, as in paper 000).
    Fifo,
    /// Fewest valid pages (ties: lowest block index).
    #[default]
    Greedy,
    /// Largest (1 − u) / 2u × age (Kawaguchi et al. / Rosenblum's LFS).
    CostBenefit,
    /// Uniformly random among reclaimable blocks (seeded, drawn ahead so the hint is exact).
    Random,
}

impl GcPolicy {
    /// Every policy, in report order.
    pub const ALL: [GcPolicy; 4] = [
        GcPolicy::Fifo,
        GcPolicy::Greedy,
        GcPolicy::CostBenefit,
        GcPolicy::Random,
    ];
    /// The config and metric name (`fifo`, `greedy`, `cost-benefit`, `random`).
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Fifo => "fifo",
            GcPolicy::Greedy => "greedy",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::Random => "random",
        }
    }
}

/// Where GC looks for free space and victims (page mapping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcScope {
    /// Each plane collects its own garbage: it runs when the plane's free blocks drop below
    /// `gc_threshold_blocks` and picks its victim among the plane's blocks.
    #[default]
    Plane,
    /// One GC stream for the device (paper 000's FTL): it runs when the device's free blocks
    /// drop below `gc_threshold_blocks` × planes and picks its victim among all blocks; the
    /// valid pages still move within the victim's plane (so copyback applies), and the
    /// co-design hint is the one block erased next.
    Device,
}

/// How GC work is ordered against host I/O on each die ([`crate::sched`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcScheduling {
    /// Foreground GC: GC ops and host ops share one FIFO per die in decision order, so host
    /// ops decided after a GC wait for all of its work on that die (paper 000's `t_GC`).
    #[default]
    Blocking,
    /// GC ops wait in their own queue and run only when the die has no host op waiting, unless
    /// a plane of the die is short of physically free blocks (`gc_urgent_free_blocks`), or the
    /// host op needs GC work first (MQSim's preemptible GC).
    Interleaved,
}

/// How host reads are scheduled against the other ops of their die ([`crate::sched`];
/// SPEC C1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadScheduling {
    /// Host reads wait in the die's queue in decision order like every other op.
    #[default]
    Fifo,
    /// A host read whose page is programmed goes to the chip at once, ahead of the ops
    /// waiting in the controller's queue for its die (it still waits for the ops already on
    /// the chip, a whole program or erase among them).
    Priority,
    /// As `priority`, and the read may also suspend a program or erase under way on its die
    /// (the chip's `[suspend]` section: latencies and the reads served per suspension).
    Suspend,
}

fn is_fifo(s: &ReadScheduling) -> bool {
    *s == ReadScheduling::Fifo
}

/// Wear-leveling (SPEC F4). Block allocation is always round robin (free blocks are reused in
/// the order they were erased); `static` adds migration of cold blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WearLeveling {
    /// Round-robin allocation only (paper 000).
    #[default]
    RoundRobin,
    /// Round robin plus static wear-leveling: when a plane's erase-count gap exceeds
    /// `wl_erase_gap_threshold`, the least-worn block's data is moved and the block recycled.
    Static,
}

/// Write-buffer eviction order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferPolicy {
    /// Least recently used page first (a hit moves the page to the front).
    #[default]
    Lru,
    /// Oldest inserted page first.
    Fifo,
}

/// Whether page bytes are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PayloadMode {
    /// Page bytes kept per physical page; reads return what was last written.
    Full,
    /// No bytes; memory does not depend on the data written.
    #[default]
    TimingOnly,
}

fn is_one(n: &u16) -> bool {
    *n == 1
}

fn is_one_u32(n: &u32) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Default of `ftl.sim_refresh_age_s`: 30 days.
pub const SIM_REFRESH_AGE_S: u64 = 30 * 86_400;

fn is_default_refresh_age(n: &u64) -> bool {
    *n == SIM_REFRESH_AGE_S
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_blocking(s: &GcScheduling) -> bool {
    *s == GcScheduling::Blocking
}

/// Controller and FTL settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Logical-to-physical mapping scheme.
    pub mapping: MappingKind,
    /// GC victim policy (page mapping).
    pub gc_policy: GcPolicy,
    /// GC runs on a plane when its free blocks drop below this count (at least 2); with
    /// `gc_scope = "device"`, when the device's drop below this count × planes.
    pub gc_threshold_blocks: u32,
    /// Per-plane or device-wide GC (page mapping).
    pub gc_scope: GcScope,
    /// Device-wide GC reserve (page mapping, `gc_scope = "device"`): this many free blocks
    /// anywhere on the device are kept for GC moves, which may then cross planes (one open GC
    /// block for the device), instead of one free block per plane; GC runs when a host write
    /// needs a block and the device has fewer than `gc_threshold_blocks` free blocks besides the
    /// reserve (the threshold then counts device-wide). 0 (default): the per-plane reserve.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub gc_device_reserve_blocks: u32,
    /// Background GC (page mapping): while the device is idle before a timed arrival, one
    /// victim at a time is collected on the plane with the fewest free blocks as long as it has
    /// fewer than this many (device scope: the device fewer than this × planes). 0 disables it;
    /// otherwise it must exceed `gc_threshold_blocks`.
    pub idle_gc_threshold_blocks: u32,
    /// How GC ops are ordered against host ops on each die.
    #[serde(skip_serializing_if = "is_blocking")]
    pub gc_scheduling: GcScheduling,
    /// How host reads are ordered against the other ops of their die (program/erase
    /// suspension needs the chip's `[suspend]` section).
    #[serde(skip_serializing_if = "is_fifo")]
    pub read_scheduling: ReadScheduling,
    /// Interleaved GC: GC goes before host ops on a die while a plane of it has fewer
    /// physically free blocks (erase already run) than this; 0 (default): only when a host op
    /// needs a block GC has not erased yet.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub gc_urgent_free_blocks: u32,
    /// Over-provisioning as spare / logical (0.25 = 25 %).
    pub op_fraction: f64,
    /// Wear-leveling scheme.
    pub wear_leveling: WearLeveling,
    /// Erase-count gap (max − min within a plane) that triggers static wear-leveling.
    pub wl_erase_gap_threshold: u32,
    /// Use copyback (internal data move) for GC page moves within a plane.
    pub copyback: bool,
    /// DRAM write-buffer capacity in pages (0 disables the buffer).
    pub write_buffer_pages: u32,
    /// Write-buffer eviction order.
    pub write_buffer_policy: BufferPolicy,
    /// Whether page bytes are kept.
    pub payload: PayloadMode,
    /// Striping order of consecutive page writes over the parallel units, fastest-varying
    /// first, dash separated: any order of `channel`, `chip` (alias `way`), `die`, `plane`;
    /// levels left out vary slowest, in the order channel, chip, die, plane.
    pub allocation_order: String,
    /// Host requests between refreshes of the co-design hint (paper 000: 16); 0 keeps no
    /// hint up to date (a controller without the co-design interface: only an explicit
    /// `Ssd::refresh_hint` computes one).
    pub hint_refresh_ops: u32,
    /// The hint lists the valid pages of the next victim of every plane (each plane collects
    /// its own garbage), soonest first, instead of only the block erased next.
    pub hint_all_planes: bool,
    /// Host submission-queue depth (requests in flight).
    pub queue_depth: u32,
    /// Random log blocks of the hybrid mapping.
    pub hybrid_random_log_blocks: u32,
    /// The scheduler merges decided reads or programs of one die (same page offset, different
    /// planes) into multiplane ops.
    #[serde(skip_serializing_if = "is_false")]
    pub multiplane: bool,
    /// Reads and programs go to the chip in cache mode: an op that follows one of the same
    /// kind on its die moves its data through the cache register while the previous op's cell
    /// stage runs (a change of kind drains the die first; the chip model's rule).
    #[serde(skip_serializing_if = "is_false")]
    pub cache_mode: bool,
    /// Superpage width in planes (page mapping; 1: off). With more than 1, the planes of each
    /// die form groups of this many (planes 0..w, w..2w, …) whose host and GC write frontiers
    /// are superblocks: one block per plane, opened together (after GC on every plane of the
    /// group) and filled in lockstep, page offset k on each plane before k + 1, so consecutive
    /// pages form multiplane programs. GC moves fill the group's GC superblock the same way
    /// (a move may cross planes within the die, so no copyback: `copyback` must be off).
    /// Needs `multiplane`; must divide the planes per die.
    #[serde(skip_serializing_if = "is_one_u32")]
    pub superpage_planes: u32,
    /// Zoned mapping: planes per zone (a zone is one block of each; 0: every plane).
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub zone_planes: u32,
    /// Placement ids (NVMe FDP reclaim-unit handles) host writes may carry: the page mapping
    /// keeps separate write frontiers, so separate blocks, per id (1: off).
    #[serde(skip_serializing_if = "is_one")]
    pub placement_ids: u16,
    /// Paired-page protection (issue 14, page mapping): on MLC/TLC/QLC an interrupted
    /// program of an upper page can destroy the lower pages of its word line. With this on,
    /// a Flush pads every open block with dummy pages up to the end of the word lines holding
    /// data, and an erase that would leave the newest copy of one of its LPAs on a lower page
    /// whose upper pages are not programmed first pads that word line (and waits for it), as
    /// pblk (LightNVM) pads a flush to a full write unit. Costs the padding pages. Off by
    /// default (results without power cuts stay as they were).
    #[serde(skip_serializing_if = "is_false")]
    pub paired_page_padding: bool,
    /// Map checkpoints (issue 14, docs/power.md): under a power-loss trace, a copy of the L2P
    /// map is written to a metadata area every this many pages decided, and a mount reads the
    /// newest committed one plus the pages written after it instead of every page (0: none,
    /// the mount scans everything). Page mapping only.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub map_checkpoint_interval_pages: u32,
    /// Search-in-Memory region (paper 004 §VI-A1, docs/sim.md): the last this many logical
    /// pages take the SiM vendor commands (search `81h`, gather `82h`, [`crate::Ssd::execute_search`])
    /// and live in match-mode (SLC) blocks of their own pool (an extra placement id), which
    /// GC keeps them in. Needs a device with a `[search]` section, the page mapping, per-plane
    /// GC and no multiplane merging. 0 (default): no SiM region.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub sim_pages: u32,
    /// A cached mapping table (DFTL, `mapping/dftl`): this many mapping entries in DRAM, the
    /// rest in translation pages on flash (page mapping only). 0 (default): the whole table
    /// in DRAM.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub cmt_entries: u32,
    /// SLC cache (SPEC C3, `frontend/slc.rs`): this many blocks in SLC mode absorb host
    /// writes and are folded to TLC/QLC when full (page mapping; needs the chip's
    /// `timing.slc_read_us` / `slc_program_us`). 0 (default): no cache.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub slc_cache_blocks: u32,
    /// SLC cache: fold the oldest cache block once the host has been idle this long (µs;
    /// host reads and writes go first). 0 (default): fold only when the cache is full.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub slc_idle_fold_us: u64,
    /// The controller's integrity layer on the SiM region (paper 004 §IV-C, SPEC S4): chunk 0
    /// of every region page holds a verification header (CRC-64, write time, magic, LPA) on
    /// flash and the spare area a 4-byte ECC per chunk; page-open checks the header, a failed
    /// check or an aged page falls back to a full read through the page ECC and is queued for
    /// refresh ([`crate::Ssd::search_refresh`]). Needs `sim_pages > 0` and `payload = "full"`.
    /// Off by default (the region's pages are the host's bytes, chunk 0 included).
    #[serde(skip_serializing_if = "is_false")]
    pub sim_integrity: bool,
    /// With `sim_integrity`: a page whose header is older than this many seconds is read out
    /// in full on page-open and queued for refresh (paper §IV-C2's safety margin). Default 30
    /// days (the store's default in `nandlab-search`).
    #[serde(skip_serializing_if = "is_default_refresh_age")]
    pub sim_refresh_age_s: u64,
    /// Deadline of the controller's search batch scheduler (paper §IV-E, SPEC S5) in ns: a
    /// search waits this long for other searches of its page, which then go to the chip as one
    /// batched search ([`crate::Ssd::run_search`]). 0 (default): no batching.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub sim_batch_deadline_ns: u64,
    /// The controller's own time and energy costs (all zero: none).
    #[serde(skip_serializing_if = "ControllerCosts::is_zero")]
    pub controller: ControllerCosts,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            mapping: MappingKind::Page,
            gc_policy: GcPolicy::Greedy,
            gc_threshold_blocks: 3,
            gc_scope: GcScope::Plane,
            gc_device_reserve_blocks: 0,
            idle_gc_threshold_blocks: 0,
            gc_scheduling: GcScheduling::Blocking,
            read_scheduling: ReadScheduling::Fifo,
            gc_urgent_free_blocks: 0,
            op_fraction: 0.25,
            wear_leveling: WearLeveling::RoundRobin,
            wl_erase_gap_threshold: 64,
            copyback: true,
            write_buffer_pages: 0,
            write_buffer_policy: BufferPolicy::Lru,
            payload: PayloadMode::TimingOnly,
            allocation_order: "channel-chip-die-plane".into(),
            hint_refresh_ops: 16,
            hint_all_planes: false,
            queue_depth: 32,
            hybrid_random_log_blocks: 8,
            placement_ids: 1,
            multiplane: false,
            paired_page_padding: false,
            map_checkpoint_interval_pages: 0,
            sim_pages: 0,
            cmt_entries: 0,
            slc_cache_blocks: 0,
            slc_idle_fold_us: 0,
            sim_integrity: false,
            sim_refresh_age_s: SIM_REFRESH_AGE_S,
            sim_batch_deadline_ns: 0,
            cache_mode: false,
            superpage_planes: 1,
            zone_planes: 0,
            controller: ControllerCosts::default(),
        }
    }
}

/// One level of the parallel hierarchy used for striping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Channels (independent buses).
    Channel,
    /// Chips (ways) of a channel.
    Chip,
    /// Dies of a chip.
    Die,
    /// Planes of a die.
    Plane,
}

/// Parses `allocation_order` into four levels, fastest-varying first.
pub fn parse_allocation_order(text: &str) -> FtlResult<[Level; 4]> {
    let mut levels: Vec<Level> = Vec::with_capacity(4);
    for part in text.split('-').map(str::trim).filter(|p| !p.is_empty()) {
        let level = match part {
            "channel" => Level::Channel,
            "chip" | "way" => Level::Chip,
            "die" => Level::Die,
            "plane" => Level::Plane,
            other => {
                return Err(config_error(
                    "ftl.allocation_order",
                    format!("unknown level `{other}` (use channel, chip, die, plane)"),
                ));
            }
        };
        if levels.contains(&level) {
            return Err(config_error(
                "ftl.allocation_order",
                format!("level `{part}` named twice in `{text}`"),
            ));
        }
        levels.push(level);
    }
    for level in [Level::Channel, Level::Chip, Level::Die, Level::Plane] {
        if !levels.contains(&level) {
            levels.push(level);
        }
    }
    Ok([levels[0], levels[1], levels[2], levels[3]])
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

    /// Checks every key; the first problem found is returned with its key.
    pub fn validate(&self) -> FtlResult<()> {
        let nand = self.nand_config()?;
        let f = &self.ftl;
        f.controller.validate()?;
        if f.placement_ids == 0 || f.placement_ids > 256 {
            return Err(config_error(
                "ftl.placement_ids",
                format!("{} ids (use 1 to 256)", f.placement_ids),
            ));
        }
        self.validate_sim(&nand)?;
        if f.read_scheduling == ReadScheduling::Suspend && nand.suspend.is_none() {
            return Err(config_error(
                "ftl.read_scheduling",
                "\"suspend\" needs the chip's program/erase suspend timing: add a [suspend] section to the NAND config (docs/nand.md)",
            ));
        }
        let ids = f.pool_ids();
        if ids > 1 && f.gc_threshold_blocks <= u32::from(ids) {
            return Err(config_error(
                "ftl.gc_threshold_blocks",
                format!(
                    "{} free blocks per plane cannot hold a GC block for each of {} placement ids{} (use at least {})",
                    f.gc_threshold_blocks,
                    ids,
                    if f.sim_pages > 0 {
                        " (one is the SiM pool)"
                    } else {
                        ""
                    },
                    ids + 1
                ),
            ));
        }
        if f.placement_ids > 1 && f.mapping != MappingKind::Page {
            return Err(config_error(
                "ftl.placement_ids",
                format!(
                    "{} ids need the page mapping (the {:?} mapping places by logical block)",
                    f.placement_ids, f.mapping
                ),
            ));
        }
        if f.map_checkpoint_interval_pages > 0 && f.mapping != MappingKind::Page {
            return Err(config_error(
                "ftl.map_checkpoint_interval_pages",
                format!(
                    "{} pages: map checkpoints need the page mapping (the {:?} mapping programs pages out of order, so pages written after a checkpoint are not at the end of their blocks)",
                    f.map_checkpoint_interval_pages, f.mapping
                ),
            ));
        }
        if f.slc_cache_blocks > 0 && f.mapping != MappingKind::Page {
            return Err(config_error(
                "ftl.slc_cache_blocks",
                format!("the SLC cache needs the page mapping, not {:?}", f.mapping),
            ));
        }
        if f.slc_cache_blocks > 0 && nand.timing.slc_program_us.is_none() {
            return Err(config_error(
                "device.timing.slc_program_us",
                format!(
                    "the SLC cache needs SLC-mode times, which chip {} lacks (set timing.slc_read_us and slc_program_us)",
                    nand.name
                ),
            ));
        }
        if f.slc_idle_fold_us > 0 && f.slc_cache_blocks == 0 {
            return Err(config_error(
                "ftl.slc_idle_fold_us",
                "needs an SLC cache (`slc_cache_blocks` > 0)",
            ));
        }
        if !(f.op_fraction.is_finite() && f.op_fraction > 0.0 && f.op_fraction <= 10.0) {
            return Err(config_error(
                "ftl.op_fraction",
                format!("{} must be in (0, 10]", f.op_fraction),
            ));
        }
        if f.idle_gc_threshold_blocks != 0 && f.idle_gc_threshold_blocks <= f.gc_threshold_blocks {
            return Err(config_error(
                "ftl.idle_gc_threshold_blocks",
                format!(
                    "{} must be 0 (off) or above gc_threshold_blocks ({})",
                    f.idle_gc_threshold_blocks, f.gc_threshold_blocks
                ),
            ));
        }
        if f.gc_threshold_blocks < 2 {
            return Err(config_error(
                "ftl.gc_threshold_blocks",
                "must be at least 2 (one block is reserved for GC moves)",
            ));
        }
        if f.queue_depth == 0 || f.queue_depth > 65_536 {
            return Err(config_error(
                "ftl.queue_depth",
                "must be between 1 and 65536",
            ));
        }
        if f.wl_erase_gap_threshold == 0 {
            return Err(config_error(
                "ftl.wl_erase_gap_threshold",
                "must be at least 1",
            ));
        }
        parse_allocation_order(&f.allocation_order)?;
        let g = &nand.geometry;
        self.validate_superpage(g)?;
        if g.total_pages() >= u64::from(u32::MAX) {
            return Err(config_error(
                "device",
                format!("{} pages; at most 2^32 - 2 are supported", g.total_pages()),
            ));
        }
        let blocks = g.blocks_per_plane;
        let logical = logical_pages(g, f.op_fraction);
        if f.gc_device_reserve_blocks > 0 {
            self.validate_device_reserve(g, logical)?;
        } else {
            // the GC threshold, plus an open host and GC frontier block per placement id (and
            // the SiM pool's)
            let reserved = f
                .gc_threshold_blocks
                .saturating_add(2 * u32::from(f.pool_ids().max(1)));
            if blocks <= reserved {
                return Err(config_error(
                    "ftl.gc_threshold_blocks",
                    format!(
                        "{} blocks per plane leave nothing for data after {} reserved (threshold + 2 write frontiers)",
                        blocks, reserved
                    ),
                ));
            }
            let spare_blocks = (g.total_pages() - logical)
                / u64::from(g.pages_per_block)
                / u64::from(g.total_planes());
            if spare_blocks < u64::from(reserved) {
                return Err(config_error(
                    "ftl.op_fraction",
                    format!(
                        "{} leaves {spare_blocks} spare blocks per plane; GC needs at least {reserved} (gc_threshold_blocks + 2 per placement id)",
                        f.op_fraction
                    ),
                ));
            }
        }
        if f.idle_gc_threshold_blocks > blocks {
            return Err(config_error(
                "ftl.idle_gc_threshold_blocks",
                format!(
                    "{} exceeds the {blocks} blocks of a plane",
                    f.idle_gc_threshold_blocks
                ),
            ));
        }
        if f.mapping == MappingKind::Hybrid && f.hybrid_random_log_blocks == 0 {
            return Err(config_error(
                "ftl.hybrid_random_log_blocks",
                "the hybrid mapping needs at least one random log block",
            ));
        }
        if f.mapping == MappingKind::Hybrid && f.hybrid_random_log_blocks >= g.blocks_per_plane {
            return Err(config_error(
                "ftl.hybrid_random_log_blocks",
                format!(
                    "{} log blocks; must be fewer than the {} blocks of a plane",
                    f.hybrid_random_log_blocks, g.blocks_per_plane
                ),
            ));
        }
        if f.write_buffer_pages as u64 > logical {
            return Err(config_error(
                "ftl.write_buffer_pages",
                "larger than the logical capacity",
            ));
        }
        Ok(())
    }
}

impl FtlConfig {
    /// Placement ids the mapping keeps: the host's, plus the SiM pool's when a SiM region is
    /// configured (the last id).
    pub fn pool_ids(&self) -> u16 {
        self.placement_ids + u16::from(self.sim_pages > 0)
    }
}

impl SsdConfig {
    /// `ftl.superpage_planes`: divides the planes per die; above 1 it needs the page mapping,
    /// multiplane merging, the per-plane GC reserve and no copyback.
    fn validate_superpage(&self, g: &nandlab_nand::Geometry) -> FtlResult<()> {
        let f = &self.ftl;
        let w = f.superpage_planes;
        let key = "ftl.superpage_planes";
        if w == 0 || w > g.planes_per_die || !g.planes_per_die.is_multiple_of(w) {
            return Err(config_error(
                key,
                format!(
                    "{w} planes: must be at least 1 and divide the {} planes per die",
                    g.planes_per_die
                ),
            ));
        }
        if w == 1 {
            return Ok(());
        }
        let why = if f.mapping != MappingKind::Page {
            format!("needs the page mapping (not {:?})", f.mapping)
        } else if !f.multiplane {
            "needs `multiplane` (the superblock's pages are written to form multiplane ops)".into()
        } else if f.gc_device_reserve_blocks > 0 {
            "does not work with `gc_device_reserve_blocks` (that keeps one GC block for the device, not a superblock)".into()
        } else if f.copyback {
            "needs `copyback` off (GC moves fill the group's GC superblock across planes; a copyback stays in its plane)".into()
        } else {
            return Ok(());
        };
        Err(config_error(key, format!("{w} planes {why}")))
    }

    /// The SiM region's conditions (`ftl.sim_pages`).
    fn validate_sim(&self, nand: &NandConfig) -> FtlResult<()> {
        let f = &self.ftl;
        if f.sim_pages == 0 {
            for (key, set) in [
                ("ftl.sim_integrity", f.sim_integrity),
                ("ftl.sim_batch_deadline_ns", f.sim_batch_deadline_ns > 0),
            ] {
                if set {
                    return Err(config_error(key, "needs a SiM region (ftl.sim_pages > 0)"));
                }
            }
            return Ok(());
        }
        if f.sim_integrity {
            let key = "ftl.sim_integrity";
            if f.payload != PayloadMode::Full {
                return Err(config_error(
                    key,
                    "needs ftl.payload = \"full\": the controller checks the bytes the chip sends",
                ));
            }
            let ecc = nand.search.as_ref().map_or(0, |s| s.chunk_ecc_bytes);
            if nand.search.is_some()
                && ecc as usize != nandlab_nand::search::chunk_ecc::CHUNK_ECC_BYTES
            {
                return Err(config_error(
                    key,
                    format!(
                        "search.chunk_ecc_bytes is {ecc}; the chunk ECC has {}",
                        nandlab_nand::search::chunk_ecc::CHUNK_ECC_BYTES
                    ),
                ));
            }
            if f.sim_refresh_age_s == 0 {
                return Err(config_error("ftl.sim_refresh_age_s", "must be at least 1"));
            }
        }
        let key = "ftl.sim_pages";
        let refuse = |why: String| Err(config_error(key, format!("{} pages: {why}", f.sim_pages)));
        if nand.search.is_none() {
            return refuse(
                "the device has no [search] section (use a SiM preset such as sim2024)".into(),
            );
        }
        if nand.geometry.page_size_bytes != nandlab_nand::search::format::SIM_PAGE_BYTES {
            return refuse(format!(
                "SiM pages are {} bytes; the device's are {}",
                nandlab_nand::search::format::SIM_PAGE_BYTES,
                nand.geometry.page_size_bytes
            ));
        }
        if f.mapping != MappingKind::Page {
            return refuse(format!(
                "the SiM pool needs the page mapping, not {:?}",
                f.mapping
            ));
        }
        if f.gc_device_reserve_blocks > 0 {
            return refuse("the SiM pool needs per-plane GC reserves (gc_device_reserve_blocks = 0): device-wide GC moves pages into one shared block".into());
        }
        if f.multiplane {
            return refuse("multiplane merging would program SiM pages without their bytes (set multiplane = false)".into());
        }
        if f.placement_ids == 256 {
            return refuse("no placement id left for the SiM pool (placement_ids = 256)".into());
        }
        let logical = logical_pages(&nand.geometry, f.op_fraction);
        if u64::from(f.sim_pages) >= logical {
            return refuse(format!(
                "the device has {logical} logical pages; leave some for storage"
            ));
        }
        Ok(())
    }

    /// The device-wide GC reserve's conditions: device-scope GC on the page mapping with one
    /// placement id, and enough spare blocks for the reserve, the threshold, a host write
    /// frontier per plane and the one GC frontier.
    fn validate_device_reserve(&self, g: &nandlab_nand::Geometry, logical: u64) -> FtlResult<()> {
        let f = &self.ftl;
        let key = "ftl.gc_device_reserve_blocks";
        let r = f.gc_device_reserve_blocks;
        if f.mapping != MappingKind::Page || f.gc_scope != GcScope::Device {
            return Err(config_error(
                key,
                format!(
                    "{r} needs the page mapping with `gc_scope = \"device\"` (one GC stream that may move pages across planes)"
                ),
            ));
        }
        if f.placement_ids > 1 {
            return Err(config_error(
                key,
                format!(
                    "{r} with {} placement ids (the device reserve keeps one GC block for the device: use 1 id)",
                    f.placement_ids
                ),
            ));
        }
        if r > 64 {
            return Err(config_error(
                key,
                format!("{r} blocks (a device-wide reserve is 1 or 2 blocks; at most 64)"),
            ));
        }
        let spare = (g.total_pages() - logical) / u64::from(g.pages_per_block);
        let planes = u64::from(g.total_planes());
        let needed = u64::from(r) + u64::from(f.gc_threshold_blocks) + planes + 1;
        if spare < needed {
            return Err(config_error(
                "ftl.op_fraction",
                format!(
                    "{} leaves {spare} spare blocks on the device; the device-wide GC reserve needs at least {needed} (gc_device_reserve_blocks {r} + gc_threshold_blocks {} + a host frontier per plane ({planes}) + one GC frontier)",
                    f.op_fraction, f.gc_threshold_blocks
                ),
            ));
        }
        Ok(())
    }
}

impl SsdConfig {
    /// FTL keys set to a non-default value that the chosen `ftl.mapping` ignores (e.g.
    /// `ftl.gc_policy` with the block mapping, `ftl.hybrid_random_log_blocks` with the page
    /// mapping), as dotted keys. Validation accepts them (configs shared across mappings set
    /// them on purpose); a front end can warn about them or refuse them.
    pub fn ignored_keys(&self) -> Vec<&'static str> {
        let f = &self.ftl;
        let d = FtlConfig::default();
        let mut keys = Vec::new();
        if f.mapping != MappingKind::Page {
            let page_only = [
                ("ftl.gc_policy", f.gc_policy != d.gc_policy),
                ("ftl.gc_scope", f.gc_scope != d.gc_scope),
                (
                    "ftl.idle_gc_threshold_blocks",
                    f.idle_gc_threshold_blocks != d.idle_gc_threshold_blocks,
                ),
                ("ftl.wear_leveling", f.wear_leveling != d.wear_leveling),
                (
                    "ftl.wl_erase_gap_threshold",
                    f.wl_erase_gap_threshold != d.wl_erase_gap_threshold,
                ),
                (
                    "ftl.hint_all_planes",
                    f.hint_all_planes != d.hint_all_planes,
                ),
            ];
            keys.extend(page_only.iter().filter(|(_, set)| *set).map(|(k, _)| *k));
        } else if f.wear_leveling != WearLeveling::Static
            && f.wl_erase_gap_threshold != d.wl_erase_gap_threshold
        {
            keys.push("ftl.wl_erase_gap_threshold");
        }
        if f.mapping != MappingKind::Hybrid
            && f.hybrid_random_log_blocks != d.hybrid_random_log_blocks
        {
            keys.push("ftl.hybrid_random_log_blocks");
        }
        if f.write_buffer_pages == 0 && f.write_buffer_policy != d.write_buffer_policy {
            keys.push("ftl.write_buffer_policy");
        }
        if f.gc_scheduling == GcScheduling::Blocking
            && f.gc_urgent_free_blocks != d.gc_urgent_free_blocks
        {
            keys.push("ftl.gc_urgent_free_blocks");
        }
        keys
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
mod tests {
    use super::*;

    #[test]
    fn preset_with_overrides_parses() {
        let text = r#"
            [device]
            preset = "slc"
            [device.overrides.geometry]
            blocks_per_plane = 64
            [ftl]
            gc_policy = "cost-benefit"
            op_fraction = 0.5
        "#;
        let c = SsdConfig::from_toml(text).unwrap();
        assert_eq!(c.nand_config().unwrap().geometry.blocks_per_plane, 64);
        assert_eq!(c.ftl.gc_policy, GcPolicy::CostBenefit);
    }

    #[test]
    fn errors_name_the_key() {
        let err = SsdConfig::from_toml("[device]\npreset = \"slc\"\n[ftl]\ngc_polcy = \"fifo\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("gc_polcy"), "{err}");
        let mut c = SsdConfig::from_preset("slc");
        c.ftl.gc_threshold_blocks = 1;
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("gc_threshold_blocks")
        );
        c.ftl.gc_threshold_blocks = 3;
        c.ftl.op_fraction = -1.0;
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("op_fraction")
        );
        c.ftl.op_fraction = 0.25;
        c.ftl.map_checkpoint_interval_pages = 64;
        assert!(c.validate().is_ok());
        c.ftl.mapping = MappingKind::Block;
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("map_checkpoint_interval_pages")
        );
        c.ftl.mapping = MappingKind::Page;
        c.ftl.map_checkpoint_interval_pages = 0;
        c.ftl.allocation_order = "channel-lun".into();
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("allocation_order")
        );
        let c = SsdConfig::from_preset("mlc7");
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("device.preset")
        );
    }

    /// Regression (issue 11): keys the chosen mapping ignores were accepted without a word;
    /// `ignored_keys` lists them so a front end can warn or refuse.
    #[test]
    fn keys_the_mapping_ignores_are_listed() {
        let mut c = SsdConfig::from_preset("slc");
        assert!(c.ignored_keys().is_empty());
        c.ftl.hybrid_random_log_blocks = 2;
        c.ftl.write_buffer_policy = BufferPolicy::Fifo;
        assert_eq!(
            c.ignored_keys(),
            ["ftl.hybrid_random_log_blocks", "ftl.write_buffer_policy"]
        );
        c.ftl.mapping = MappingKind::Block;
        c.ftl.gc_policy = GcPolicy::Fifo;
        c.ftl.wear_leveling = WearLeveling::Static;
        c.ftl.write_buffer_pages = 4;
        assert_eq!(
            c.ignored_keys(),
            [
                "ftl.gc_policy",
                "ftl.wear_leveling",
                "ftl.hybrid_random_log_blocks"
            ]
        );
    }

    #[test]
    fn allocation_order_fills_missing_levels() {
        assert_eq!(
            parse_allocation_order("plane-die").unwrap(),
            [Level::Plane, Level::Die, Level::Channel, Level::Chip]
        );
        assert!(parse_allocation_order("die-die").is_err());
    }
}
