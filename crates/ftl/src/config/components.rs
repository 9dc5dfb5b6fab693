//! The typed configs of the controller's smaller components, each the section of a stack
//! config it comes from (`[ssd.host]`, `[ssd.wear]`, `[ssd.buffer]`, `[ssd.scheduler]`,
//! `[ssd.hints]`, `[ssd.slc_cache]`, `[ssd.sim]`; the legacy flat `[ftl]` keys map onto them,
//! `config/flat.rs`), with the checks that need no other section.

use super::{BufferPolicy, ReadScheduling, WearLeveling};
use crate::error::{FtlResult, config_error};
use serde::{Deserialize, Serialize};

/// The host interface (`[ssd.host]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Submission-queue depth: requests in flight (`ftl.host.queue_depth`).
    pub queue_depth: u32,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { queue_depth: 32 }
    }
}

/// Default of `[ssd.sim] refresh_age_s` (`ftl.search.refresh_age_s`): 30 days.
pub const SIM_REFRESH_AGE_S: u64 = 30 * 86_400;

/// The SLC cache (`[ssd.slc_cache]`, SPEC C3, `frontend/slc.rs`): blocks programmed in SLC
/// mode absorb host writes and are folded to the chip's own cell type when full or when the
/// host idles (page mapping; needs the chip's `timing.slc_read_us` / `slc_program_us`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlcCacheConfig {
    /// Blocks in SLC mode, taken from the over-provisioning; 0 (default): no cache
    /// (`ftl.slc_cache.blocks`).
    pub blocks: u32,
    /// Fold the oldest cache block once the host has been idle this long (µs; host reads and
    /// writes go first). 0 (default): fold only when the cache is full (`ftl.slc_cache.idle_fold_us`).
    pub idle_fold_us: u64,
}

/// The Search-in-Memory region and its controller (`[ssd.sim]`, paper 004 §VI-A1, §IV-C,
/// §IV-E; docs/sim.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchRegionConfig {
    /// The last this many logical pages take the SiM vendor commands (search `81h`, gather
    /// `82h`, [`crate::Ssd::execute_search`]) and live in match-mode (SLC) blocks of their own
    /// pool (an extra placement id), which GC keeps them in. Needs a device with a `[search]`
    /// section, the page mapping, per-plane GC and no multiplane merging. 0 (default): no SiM
    /// region (`ftl.search.pages`).
    pub pages: u32,
    /// The controller's integrity layer on the region (paper 004 §IV-C, SPEC S4): chunk 0 of
    /// every region page holds a verification header (CRC-64, write time, magic, LPA) on flash
    /// and the spare area a 4-byte ECC per chunk; page-open checks the header, a failed check
    /// or an aged page falls back to a full read through the page ECC and is queued for
    /// refresh ([`crate::Ssd::search_refresh`]). Needs `pages > 0` and `payload = "full"`. Off
    /// by default (the region's pages are the host's bytes, chunk 0 included;
    /// `ftl.search.integrity`).
    pub integrity: bool,
    /// With `integrity`: a page whose header is older than this many seconds is read out in
    /// full on page-open and queued for refresh (paper §IV-C2's safety margin). Default 30
    /// days (the store's default in `nandlab-search`; `ftl.search.refresh_age_s`).
    pub refresh_age_s: u64,
    /// Deadline of the controller's search batch scheduler (paper §IV-E, SPEC S5) in ns: a
    /// search waits this long for other searches of its page, which then go to the chip as one
    /// batched search ([`crate::Ssd::run_search`]). 0 (default): no batching
    /// (`ftl.search.batch_deadline_ns`).
    pub batch_deadline_ns: u64,
}

impl Default for SearchRegionConfig {
    fn default() -> Self {
        SearchRegionConfig {
            pages: 0,
            integrity: false,
            refresh_age_s: SIM_REFRESH_AGE_S,
            batch_deadline_ns: 0,
        }
    }
}

/// Wear-leveling (`[ssd.wear]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WearConfig {
    /// Wear-leveling scheme (`ftl.wear_leveling`).
    pub leveling: WearLeveling,
    /// Erase-count gap (max − min within a plane) that triggers static wear-leveling
    /// (`ftl.wl_erase_gap_threshold`).
    pub erase_gap_threshold: u32,
}

impl Default for WearConfig {
    fn default() -> Self {
        WearConfig {
            leveling: WearLeveling::RoundRobin,
            erase_gap_threshold: 64,
        }
    }
}

impl WearConfig {
    /// A gap of at least 1.
    pub fn validate(&self) -> FtlResult<()> {
        if self.erase_gap_threshold == 0 {
            return Err(config_error(
                "ftl.wl_erase_gap_threshold",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

/// The DRAM write buffer (`[ssd.buffer]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    /// Capacity in pages (0 disables the buffer; `ftl.write_buffer_pages`).
    pub pages: u32,
    /// Eviction order (`ftl.write_buffer_policy`).
    pub policy: BufferPolicy,
}

/// The flash scheduler (`[ssd.scheduler]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerConfig {
    /// A stack config's shorthand for an allocation order and multiplane merging: `die-first`
    /// or `plane-first` (`crate::sched::SchedulerPolicy`). The stack resolves it into
    /// `mapping.allocation_order` and `multiplane` and leaves `None`; the FTL never reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The scheduler merges decided reads or programs of one die (same page offset, different
    /// planes) into multiplane ops (`ftl.multiplane`).
    pub multiplane: bool,
    /// Reads and programs go to the chip in cache mode: an op that follows one of the same
    /// kind on its die moves its data through the cache register while the previous op's cell
    /// stage runs (a change of kind drains the die first; the chip model's rule;
    /// `ftl.cache_mode`).
    pub cache: bool,
    /// Superpage width in planes (page mapping; 1: off; `ftl.superpage_planes`). With more
    /// than 1, the planes of each die form groups of this many (planes 0..w, w..2w, …) whose
    /// host and GC write frontiers are superblocks: one block per plane, opened together
    /// (after GC on every plane of the group) and filled in lockstep, page offset k on each
    /// plane before k + 1, so consecutive pages form multiplane programs. GC moves fill the
    /// group's GC superblock the same way (a move may cross planes within the die, so no
    /// copyback: `gc.copyback` must be off). Needs `multiplane`; must divide the planes per die.
    pub superpage_planes: u32,
    /// How host reads are ordered against the other ops of their die (program/erase
    /// suspension needs the chip's `[suspend]` section; `ftl.read_scheduling`).
    pub reads: ReadScheduling,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            policy: None,
            reads: ReadScheduling::Fifo,
            multiplane: false,
            cache: false,
            superpage_planes: 1,
        }
    }
}

/// The co-design hint interface (`[ssd.hints]`, paper 000 IAA, SPEC F7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HintsConfig {
    /// Host requests between refreshes of the co-design hint (paper 000: 16); 0 keeps no
    /// hint up to date (a controller without the co-design interface: only an explicit
    /// `Ssd::refresh_hint` computes one; `ftl.hint_refresh_ops`).
    pub refresh_ops: u32,
    /// The hint lists the valid pages of the next victim of every plane (each plane collects
    /// its own garbage), soonest first, instead of only the block erased next
    /// (`ftl.hint_all_planes`).
    pub all_planes: bool,
}

impl Default for HintsConfig {
    fn default() -> Self {
        HintsConfig {
            refresh_ops: 16,
            all_planes: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl6_sections_deserialize_into_the_component_configs() {
        let w: WearConfig =
            toml::from_str("leveling = \"static\"\nerase_gap_threshold = 9\n").unwrap();
        assert_eq!(
            (w.leveling, w.erase_gap_threshold),
            (WearLeveling::Static, 9)
        );
        let b: BufferConfig = toml::from_str("pages = 16\npolicy = \"fifo\"\n").unwrap();
        assert_eq!((b.pages, b.policy), (16, BufferPolicy::Fifo));
        let s: SchedulerConfig = toml::from_str("reads = \"priority\"\ncache = true\n").unwrap();
        assert_eq!(s.reads, ReadScheduling::Priority);
        assert!(s.cache && !s.multiplane && s.superpage_planes == 1);
        let h: HintsConfig = toml::from_str("all_planes = true\n").unwrap();
        let q: HostConfig = toml::from_str("queue_depth = 4\n").unwrap();
        assert_eq!(q.queue_depth, 4);
        let c: SlcCacheConfig = toml::from_str("blocks = 12\n").unwrap();
        assert_eq!((c.blocks, c.idle_fold_us), (12, 0));
        let r: SearchRegionConfig = toml::from_str("pages = 64\nintegrity = true\n").unwrap();
        assert_eq!(
            (r.pages, r.integrity, r.refresh_age_s),
            (64, true, SIM_REFRESH_AGE_S)
        );
        assert!(toml::from_str::<SearchRegionConfig>("keys = 3\n").is_err());
        assert_eq!((h.refresh_ops, h.all_planes), (16, true));
        assert!(toml::from_str::<BufferConfig>("size = 3\n").is_err());
        let zero = WearConfig {
            erase_gap_threshold: 0,
            ..WearConfig::default()
        };
        assert!(
            zero.validate()
                .unwrap_err()
                .to_string()
                .contains("wl_erase_gap_threshold")
        );
    }
}
