//! The legacy flat `[ftl]` form of [`FtlConfig`]: every key at the top level (`gc_policy`,
//! `gc_threshold_blocks`, …). `FtlConfig` (de)serializes through it, so `SsdConfig` TOML files
//! keep working and a resolved config's JSON (what results record and cache keys hash) keeps
//! its shape; the grouped sections (`gc`, …) are split out here.

use super::{
    BufferConfig, BufferPolicy, FtlConfig, GcConfig, GcPolicy, GcScheduling, GcScope, HintsConfig,
    HostConfig, MappingConfig, MappingKind, PayloadMode, ReadScheduling, SIM_REFRESH_AGE_S,
    SchedulerConfig, SearchRegionConfig, SlcCacheConfig, WearConfig, WearLeveling,
};
use crate::controller::ControllerCosts;
use serde::{Deserialize, Serialize};

fn is_fifo(s: &ReadScheduling) -> bool {
    *s == ReadScheduling::Fifo
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

/// The flat `[ftl]` form of [`FtlConfig`] (every key at top level): what legacy
/// `SsdConfig` TOML files and `resolved_json` (results, cache keys) carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct FlatFtl {
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

impl Default for FlatFtl {
    fn default() -> Self {
        FtlConfig::default().into()
    }
}

impl From<FlatFtl> for FtlConfig {
    fn from(f: FlatFtl) -> Self {
        FtlConfig {
            mapping: MappingConfig {
                kind: f.mapping,
                allocation_order: f.allocation_order,
                paired_page_padding: f.paired_page_padding,
                checkpoint_interval_pages: f.map_checkpoint_interval_pages,
                random_log_blocks: f.hybrid_random_log_blocks,
                placement_ids: f.placement_ids,
                zone_planes: f.zone_planes,
                cache_entries: f.cmt_entries,
            },
            host: HostConfig {
                queue_depth: f.queue_depth,
            },
            gc: GcConfig {
                policy: f.gc_policy,
                threshold_blocks: f.gc_threshold_blocks,
                scope: f.gc_scope,
                device_reserve_blocks: f.gc_device_reserve_blocks,
                idle_threshold_blocks: f.idle_gc_threshold_blocks,
                copyback: f.copyback,
                scheduling: f.gc_scheduling,
                urgent_free_blocks: f.gc_urgent_free_blocks,
            },
            wear: WearConfig {
                leveling: f.wear_leveling,
                erase_gap_threshold: f.wl_erase_gap_threshold,
            },
            buffer: BufferConfig {
                pages: f.write_buffer_pages,
                policy: f.write_buffer_policy,
            },
            scheduler: SchedulerConfig {
                policy: None,
                reads: f.read_scheduling,
                multiplane: f.multiplane,
                cache: f.cache_mode,
                superpage_planes: f.superpage_planes,
            },
            hints: HintsConfig {
                refresh_ops: f.hint_refresh_ops,
                all_planes: f.hint_all_planes,
            },
            slc_cache: SlcCacheConfig {
                blocks: f.slc_cache_blocks,
                idle_fold_us: f.slc_idle_fold_us,
            },
            search: SearchRegionConfig {
                pages: f.sim_pages,
                integrity: f.sim_integrity,
                refresh_age_s: f.sim_refresh_age_s,
                batch_deadline_ns: f.sim_batch_deadline_ns,
            },
            op_fraction: f.op_fraction,
            payload: f.payload,
            controller: f.controller,
        }
    }
}

impl From<FtlConfig> for FlatFtl {
    fn from(f: FtlConfig) -> Self {
        FlatFtl {
            mapping: f.mapping.kind,
            gc_policy: f.gc.policy,
            gc_threshold_blocks: f.gc.threshold_blocks,
            gc_scope: f.gc.scope,
            gc_device_reserve_blocks: f.gc.device_reserve_blocks,
            idle_gc_threshold_blocks: f.gc.idle_threshold_blocks,
            gc_scheduling: f.gc.scheduling,
            read_scheduling: f.scheduler.reads,
            gc_urgent_free_blocks: f.gc.urgent_free_blocks,
            op_fraction: f.op_fraction,
            wear_leveling: f.wear.leveling,
            wl_erase_gap_threshold: f.wear.erase_gap_threshold,
            copyback: f.gc.copyback,
            write_buffer_pages: f.buffer.pages,
            write_buffer_policy: f.buffer.policy,
            payload: f.payload,
            allocation_order: f.mapping.allocation_order,
            hint_refresh_ops: f.hints.refresh_ops,
            hint_all_planes: f.hints.all_planes,
            queue_depth: f.host.queue_depth,
            hybrid_random_log_blocks: f.mapping.random_log_blocks,
            multiplane: f.scheduler.multiplane,
            cache_mode: f.scheduler.cache,
            superpage_planes: f.scheduler.superpage_planes,
            zone_planes: f.mapping.zone_planes,
            placement_ids: f.mapping.placement_ids,
            paired_page_padding: f.mapping.paired_page_padding,
            map_checkpoint_interval_pages: f.mapping.checkpoint_interval_pages,
            sim_pages: f.search.pages,
            cmt_entries: f.mapping.cache_entries,
            slc_cache_blocks: f.slc_cache.blocks,
            slc_idle_fold_us: f.slc_cache.idle_fold_us,
            sim_integrity: f.search.integrity,
            sim_refresh_age_s: f.search.refresh_age_s,
            sim_batch_deadline_ns: f.search.batch_deadline_ns,
            controller: f.controller,
        }
    }
}
