//! The typed configs of the controller's smaller components, each the section of a stack
//! config it comes from (`[ssd.wear]`, `[ssd.buffer]`, `[ssd.scheduler]`, `[ssd.hints]`; the
//! legacy flat `[ftl]` keys map onto them, `config/flat.rs`), with the checks that need no
//! other section.

use super::{BufferPolicy, ReadScheduling, WearLeveling};
use crate::error::{FtlResult, config_error};
use serde::{Deserialize, Serialize};

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

/// The flash scheduler (`[ssd.scheduler]`; its `policy` key is the stack's shorthand for an
/// allocation order and multiplane merging).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerConfig {
    /// How host reads are ordered against the other ops of their die (program/erase
    /// suspension needs the chip's `[suspend]` section; `ftl.read_scheduling`).
    pub reads: ReadScheduling,
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
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
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
