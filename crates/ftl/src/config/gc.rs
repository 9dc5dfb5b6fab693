//! [`GcConfig`]: the garbage collector's typed config, the `[ssd.gc]` section of a stack config
//! (the legacy flat `[ftl]` keys `gc_policy`, `gc_threshold_blocks`, … map onto it), with the
//! checks that need no other section.

use super::{GcPolicy, GcScheduling, GcScope};
use crate::error::{FtlResult, config_error};
use serde::{Deserialize, Serialize};

/// The garbage collector's settings (`[ssd.gc]`): the victim policy, when GC runs and how its
/// ops are ordered against host ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GcConfig {
    /// Victim policy (page mapping).
    pub policy: GcPolicy,
    /// GC runs on a plane when its free blocks drop below this count (at least 2); with
    /// `scope = "device"`, when the device's drop below this count × planes.
    pub threshold_blocks: u32,
    /// Per-plane or device-wide GC (page mapping).
    pub scope: GcScope,
    /// Device-wide GC reserve (page mapping, `scope = "device"`): this many free blocks
    /// anywhere on the device are kept for GC moves, which may then cross planes (one open GC
    /// block for the device), instead of one free block per plane; GC runs when a host write
    /// needs a block and the device has fewer than `threshold_blocks` free blocks besides the
    /// reserve (the threshold then counts device-wide). 0 (default): the per-plane reserve.
    pub device_reserve_blocks: u32,
    /// Background GC (page mapping): while the device is idle before a timed arrival, one
    /// victim at a time is collected on the plane with the fewest free blocks as long as it has
    /// fewer than this many (device scope: the device fewer than this × planes). 0 disables it;
    /// otherwise it must exceed `threshold_blocks`.
    pub idle_threshold_blocks: u32,
    /// Use copyback (internal data move) for GC page moves within a plane.
    pub copyback: bool,
    /// How GC ops are ordered against host ops on each die.
    pub scheduling: GcScheduling,
    /// Interleaved GC: GC goes before host ops on a die while a plane of it has fewer
    /// physically free blocks (erase already run) than this; 0 (default): only when a host op
    /// needs a block GC has not erased yet.
    pub urgent_free_blocks: u32,
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            policy: GcPolicy::Greedy,
            threshold_blocks: 3,
            scope: GcScope::Plane,
            device_reserve_blocks: 0,
            idle_threshold_blocks: 0,
            copyback: true,
            scheduling: GcScheduling::Blocking,
            urgent_free_blocks: 0,
        }
    }
}

impl GcConfig {
    /// The checks of this section alone: a threshold of at least 2 and a background threshold
    /// of 0 or above it. Errors name the FTL key (`ftl.gc_threshold_blocks`; a stack config
    /// reports it as `ssd.gc.threshold_blocks`).
    pub fn validate(&self) -> FtlResult<()> {
        if self.idle_threshold_blocks != 0 && self.idle_threshold_blocks <= self.threshold_blocks {
            return Err(config_error(
                "ftl.idle_gc_threshold_blocks",
                format!(
                    "{} must be 0 (off) or above gc_threshold_blocks ({})",
                    self.idle_threshold_blocks, self.threshold_blocks
                ),
            ));
        }
        if self.threshold_blocks < 2 {
            return Err(config_error(
                "ftl.gc_threshold_blocks",
                "must be at least 2 (one block is reserved for GC moves)",
            ));
        }
        Ok(())
    }

    /// Keys set to a non-default value that only the page mapping reads (FTL key names).
    pub fn page_only_keys_set(&self) -> impl Iterator<Item = &'static str> {
        let d = GcConfig::default();
        [
            ("ftl.gc_policy", self.policy != d.policy),
            ("ftl.gc_scope", self.scope != d.scope),
            (
                "ftl.idle_gc_threshold_blocks",
                self.idle_threshold_blocks != d.idle_threshold_blocks,
            ),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(key, _)| key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl6_gc_section_deserializes_into_the_config() {
        let c: GcConfig = toml::from_str(
            "policy = \"fifo\"\nthreshold_blocks = 4\nscheduling = \"interleaved\"\n",
        )
        .unwrap();
        assert_eq!(c.policy, GcPolicy::Fifo);
        assert_eq!(c.threshold_blocks, 4);
        assert_eq!(c.scheduling, GcScheduling::Interleaved);
        assert!(c.copyback, "keys not given keep their defaults");
        let err = toml::from_str::<GcConfig>("treshold_blocks = 4\n").unwrap_err();
        assert!(err.message().contains("treshold_blocks"), "{err}");
    }

    #[test]
    fn ctrl6_gc_validation_names_its_keys() {
        let mut c = GcConfig {
            threshold_blocks: 1,
            ..GcConfig::default()
        };
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("gc_threshold_blocks")
        );
        c.threshold_blocks = 4;
        c.idle_threshold_blocks = 4;
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("idle_gc_threshold_blocks")
        );
        c.idle_threshold_blocks = 5;
        assert!(c.validate().is_ok());
        assert_eq!(
            c.page_only_keys_set().collect::<Vec<_>>(),
            ["ftl.idle_gc_threshold_blocks"]
        );
    }
}
