//! `[ssd]`: the controller, in grouped tables (`host`, `mapping`, `gc`, `wear`, `buffer`,
//! `hints`, `scheduler`, `slc_cache`, `sim`, `controller`, `nvme`), each deserialized straight
//! into its component's typed config (`nandlab_ftl::MappingConfig`, `GcConfig`, …; an unknown
//! key or a bad value is serde's error at `ssd.SECTION.key`) and put together into the FTL's
//! [`FtlConfig`]. Every key is optional (an SSD preset or the component's default fills it); a
//! key that does not apply to the chosen mapping, policy or scheme is an error naming it
//! ([`SsdSection::check`]), never silently ignored.

use super::written::Written;
use nandlab_ftl::sched::SchedulerPolicy;
use nandlab_ftl::{
    BufferConfig, ControllerCosts, FtlConfig, GcConfig, GcScheduling, HintsConfig, HostConfig,
    MappingConfig, MappingKind, PayloadMode, SchedulerConfig, SearchRegionConfig, SlcCacheConfig,
    WearConfig, WearLeveling,
};
use serde::{Deserialize, Serialize};

/// `[ssd]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdSection {
    /// An SSD preset (`presets/ssd/NAME.toml`) whose `[nand]` and `[ssd]` this config starts
    /// from; the keys given here override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Over-provisioning as spare / logical (0.25 = 25 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_fraction: Option<f64>,
    /// `full` (page bytes kept) or `timing-only`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadMode>,
    /// `[ssd.host]`: the host interface (`queue_depth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Written<HostConfig>>,
    /// `[ssd.mapping]`: `kind` (`page`, `block`, `hybrid`, `zoned`), `allocation_order`,
    /// `random_log_blocks` (hybrid only), `placement_ids`, `paired_page_padding`,
    /// `map_checkpoint_interval_pages` (page only), `zone_planes` (zoned only) and
    /// `cache_entries` (a cached mapping table, DFTL; page only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<Written<MappingConfig>>,
    /// `[ssd.gc]`: `policy`, `scope`, `device_reserve_blocks` and `idle_threshold_blocks` (page
    /// mapping only), `threshold_blocks`, `copyback`, `scheduling`, `urgent_free_blocks`
    /// (interleaved only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<Written<GcConfig>>,
    /// `[ssd.wear]`: `leveling` (`static` with the page mapping only) and
    /// `erase_gap_threshold` (`static` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear: Option<Written<WearConfig>>,
    /// `[ssd.buffer]`: the DRAM write buffer, `pages` and `policy` (needs `pages` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Written<BufferConfig>>,
    /// `[ssd.hints]`: the co-design hint interface (paper 000 IAA, SPEC F7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Written<HintsConfig>>,
    /// `[ssd.scheduler]`: the flash transaction scheduler; its `policy` (`die-first` or
    /// `plane-first`) sets `mapping.allocation_order` and, plane-first, `multiplane` (SPEC N10,
    /// paper 003 §8.8); `superpage_planes` above 1 turns `multiplane` on and `ssd.gc.copyback`
    /// off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<Written<SchedulerConfig>>,
    /// `[ssd.controller]`: the controller's time and energy costs (firmware, DRAM, host
    /// link, ECC), each key optional (0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerCosts>,
    /// `[ssd.slc_cache]`: an SLC cache on a TLC/QLC device (docs/ftl.md; needs the chip's
    /// `timing.slc_read_us` and `slc_program_us`, and `blocks` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<Written<SlcCacheConfig>>,
    /// `[ssd.sim]`: a Search-in-Memory region (docs/sim.md; needs a `[search]` chip such as
    /// the `sim2024` preset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<Written<SearchRegionConfig>>,
    /// `[ssd.nvme]`: the NVMe host interface (namespaces, queue pairs, arbitration, zones,
    /// FDP); block workloads then run through it (docs/ftl.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<nandlab_ftl::nvme::NvmeConfig>,
}

/// An error found while turning `[ssd]` into an [`FtlConfig`]: the key path and the message.
pub type KeyError = (String, String);

impl SsdSection {
    /// The FTL config: each section's component config (its default when the section is
    /// absent), after the rules across sections ([`SsdSection::check`]) and the scheduler's
    /// shorthands (`policy`, `superpage_planes`).
    pub fn to_ftl(&self) -> Result<FtlConfig, KeyError> {
        self.check()?;
        let default = FtlConfig::default();
        let mut f = FtlConfig {
            mapping: config_of(&self.mapping),
            host: config_of(&self.host),
            gc: config_of(&self.gc),
            wear: config_of(&self.wear),
            buffer: config_of(&self.buffer),
            scheduler: config_of(&self.scheduler),
            hints: config_of(&self.hints),
            slc_cache: config_of(&self.slc_cache),
            search: config_of(&self.sim),
            op_fraction: self.op_fraction.unwrap_or(default.op_fraction),
            payload: self.payload.unwrap_or(default.payload),
            controller: self.controller.clone().unwrap_or(default.controller),
        };
        if let Some(s) = &self.scheduler {
            if let Some(name) = f.scheduler.policy.take() {
                apply_policy(&name, s, given(&self.mapping, "allocation_order"), &mut f)?;
            }
            if s.has("superpage_planes") {
                apply_superpage(s, self.gc.as_ref(), &mut f)?;
            }
        }
        Ok(f)
    }

    /// The rules across keys and sections, each error naming the stack key: a key given that
    /// does not apply to the chosen mapping, GC scheduling, wear-leveling or buffer, an
    /// allocation order without a level, an SLC cache without blocks. (The rules that need the
    /// chip are the FTL's, `SsdConfig::validate`.)
    pub fn check(&self) -> Result<(), KeyError> {
        let mapping = config_of(&self.mapping);
        let kind = mapping.kind;
        let order = &mapping.allocation_order;
        if order.split('-').all(|level| level.trim().is_empty()) {
            return Err((
                "ssd.mapping.allocation_order".into(),
                format!("`{order}` names no level (e.g. channel-chip-die-plane)"),
            ));
        }
        if mapping.paired_page_padding && kind != MappingKind::Page {
            return Err(inapplicable(
                "ssd.mapping.paired_page_padding",
                "applies to the page mapping only",
                kind,
            ));
        }
        if given(&self.mapping, "random_log_blocks") && kind != MappingKind::Hybrid {
            return Err(inapplicable(
                "ssd.mapping.random_log_blocks",
                "applies to the hybrid mapping only",
                kind,
            ));
        }
        if let Some(gc) = &self.gc {
            check_gc(gc, kind)?;
        }
        if let Some(w) = &self.wear {
            // issue 31 item 6: the block and hybrid mappings have no static wear-leveling
            if w.config.leveling == WearLeveling::Static && kind != MappingKind::Page {
                return Err(inapplicable(
                    "ssd.wear.leveling",
                    "`static` wear-leveling runs with the page mapping only",
                    kind,
                ));
            }
            if w.has("erase_gap_threshold") && w.config.leveling != WearLeveling::Static {
                return Err((
                    "ssd.wear.erase_gap_threshold".into(),
                    "applies to `leveling = \"static\"` only".into(),
                ));
            }
        }
        if given(&self.buffer, "policy") && config_of(&self.buffer).pages == 0 {
            return Err((
                "ssd.buffer.policy".into(),
                "needs a write buffer (`ssd.buffer.pages` > 0)".into(),
            ));
        }
        if self
            .slc_cache
            .as_ref()
            .is_some_and(|c| c.config.blocks == 0)
        {
            return Err((
                "ssd.slc_cache.blocks".into(),
                "an [ssd.slc_cache] needs `blocks` > 0 (drop the section for no cache)".into(),
            ));
        }
        Ok(())
    }
}

/// `[ssd.gc]`: the keys only the page mapping reads, and `urgent_free_blocks` only interleaved
/// GC reads.
fn check_gc(gc: &Written<GcConfig>, kind: MappingKind) -> Result<(), KeyError> {
    let page_only = [
        "policy",
        "scope",
        "device_reserve_blocks",
        "idle_threshold_blocks",
    ];
    if kind != MappingKind::Page
        && let Some(key) = page_only.iter().find(|key| gc.has(key))
    {
        return Err(inapplicable(
            &format!("ssd.gc.{key}"),
            "applies to the page mapping only",
            kind,
        ));
    }
    if gc.has("urgent_free_blocks") && gc.config.scheduling != GcScheduling::Interleaved {
        return Err((
            "ssd.gc.urgent_free_blocks".into(),
            "applies to `scheduling = \"interleaved\"` only".into(),
        ));
    }
    Ok(())
}

/// `ssd.scheduler.policy`: the allocation order (and, plane-first, multiplane merging) of the
/// controller's scheduler policy; `order_given`: `ssd.mapping.allocation_order` is written too.
fn apply_policy(
    name: &str,
    s: &Written<SchedulerConfig>,
    order_given: bool,
    f: &mut FtlConfig,
) -> Result<(), KeyError> {
    let key = "ssd.scheduler.policy";
    let policy: SchedulerPolicy = name.parse().map_err(|_| {
        (
            key.to_string(),
            format!("unknown policy `{name}` (the SSD takes die-first or plane-first)"),
        )
    })?;
    let Some(order) = policy.ssd_allocation_order() else {
        return Err((
            key.into(),
            "`fcfs` (no striping, one queue for all dies) is a chip-level baseline (`nandlab chip`); the SSD takes die-first or plane-first".into(),
        ));
    };
    if order_given {
        return Err((
            key.into(),
            "sets the allocation order: give it or `ssd.mapping.allocation_order`, not both".into(),
        ));
    }
    if policy.merges_multiplane() && s.has("multiplane") && !s.config.multiplane {
        return Err((
            key.into(),
            "plane-first serves requests with multiplane ops: drop `multiplane = false` or use die-first".into(),
        ));
    }
    f.mapping.allocation_order = order.into();
    f.scheduler.multiplane |= policy.merges_multiplane();
    Ok(())
}

/// `ssd.scheduler.superpage_planes`: above 1, multiplane merging on and GC copyback off
/// (refused when the config writes the opposite); the width itself is checked with the
/// device (`ftl.superpage_planes`).
fn apply_superpage(
    s: &Written<SchedulerConfig>,
    gc: Option<&Written<GcConfig>>,
    f: &mut FtlConfig,
) -> Result<(), KeyError> {
    let key = "ssd.scheduler.superpage_planes";
    let w = s.config.superpage_planes;
    if w > 1 {
        if s.has("multiplane") && !s.config.multiplane {
            return Err((
                key.into(),
                format!("{w} planes form multiplane programs: drop `multiplane = false`"),
            ));
        }
        if gc.is_some_and(|g| g.has("copyback") && g.config.copyback) {
            return Err((
                key.into(),
                format!(
                    "{w} planes: GC moves fill a superblock across planes, which a copyback cannot (drop `ssd.gc.copyback = true`)"
                ),
            ));
        }
        f.scheduler.multiplane = true;
        f.gc.copyback = false;
    }
    Ok(())
}

/// A section's component config, or the component's default when the section is absent.
fn config_of<T: Clone + Default>(section: &Option<Written<T>>) -> T {
    section
        .as_ref()
        .map(|s| s.config.clone())
        .unwrap_or_default()
}

/// Whether `section` is present and writes `key`.
fn given<T>(section: &Option<Written<T>>, key: &str) -> bool {
    section.as_ref().is_some_and(|s| s.has(key))
}

fn inapplicable(key: &str, what: &str, mapping: MappingKind) -> KeyError {
    let name = match mapping {
        MappingKind::Page => "page",
        MappingKind::Block => "block",
        MappingKind::Hybrid => "hybrid",
        MappingKind::Zoned => "zoned",
    };
    (
        key.to_string(),
        format!("{what}, but `ssd.mapping.kind` is `{name}`"),
    )
}

/// The stack-config key of each FTL config key (the FTL names its keys `ftl.<field>` in its
/// errors), so that an FTL validation error names the key the user wrote.
pub const FTL_KEYS: &[(&str, &str)] = &[
    ("ftl.mapping", "ssd.mapping.kind"),
    ("ftl.allocation_order", "ssd.mapping.allocation_order"),
    ("ftl.paired_page_padding", "ssd.mapping.paired_page_padding"),
    (
        "ftl.map_checkpoint_interval_pages",
        "ssd.mapping.map_checkpoint_interval_pages",
    ),
    (
        "ftl.hybrid_random_log_blocks",
        "ssd.mapping.random_log_blocks",
    ),
    ("ftl.gc_policy", "ssd.gc.policy"),
    ("ftl.gc_threshold_blocks", "ssd.gc.threshold_blocks"),
    ("ftl.gc_scope", "ssd.gc.scope"),
    (
        "ftl.gc_device_reserve_blocks",
        "ssd.gc.device_reserve_blocks",
    ),
    (
        "ftl.idle_gc_threshold_blocks",
        "ssd.gc.idle_threshold_blocks",
    ),
    ("ftl.copyback", "ssd.gc.copyback"),
    ("ftl.superpage_planes", "ssd.scheduler.superpage_planes"),
    ("ftl.gc_scheduling", "ssd.gc.scheduling"),
    ("ftl.gc_urgent_free_blocks", "ssd.gc.urgent_free_blocks"),
    ("ftl.read_scheduling", "ssd.scheduler.reads"),
    ("ftl.placement_ids", "ssd.mapping.placement_ids"),
    ("ftl.zone_planes", "ssd.mapping.zone_planes"),
    ("ftl.op_fraction", "ssd.op_fraction"),
    ("ftl.payload", "ssd.payload"),
    ("ftl.queue_depth", "ssd.host.queue_depth"),
    ("ftl.wear_leveling", "ssd.wear.leveling"),
    ("ftl.wl_erase_gap_threshold", "ssd.wear.erase_gap_threshold"),
    ("ftl.write_buffer_pages", "ssd.buffer.pages"),
    ("ftl.write_buffer_policy", "ssd.buffer.policy"),
    ("ftl.hint_refresh_ops", "ssd.hints.refresh_ops"),
    ("ftl.hint_all_planes", "ssd.hints.all_planes"),
    ("ftl.sim_pages", "ssd.sim.pages"),
    ("ftl.cmt_entries", "ssd.mapping.cache_entries"),
    ("ftl.slc_cache_blocks", "ssd.slc_cache.blocks"),
    ("ftl.slc_idle_fold_us", "ssd.slc_cache.idle_fold_us"),
    ("ftl.sim_integrity", "ssd.sim.integrity"),
    ("ftl.sim_refresh_age_s", "ssd.sim.refresh_age_s"),
    ("ftl.sim_batch_deadline_ns", "ssd.sim.batch_deadline_ns"),
    ("device", "nand"),
];

/// The stack-config key for an FTL error key (unknown ones pass through).
pub fn stack_key(ftl_key: &str) -> std::borrow::Cow<'_, str> {
    if let Some(rest) = ftl_key.strip_prefix("device.") {
        // chip keys keep their layout under [nand]
        return rest.into();
    }
    if let Some(rest) = ftl_key.strip_prefix("ftl.controller.") {
        return format!("ssd.controller.{rest}").into();
    }
    FTL_KEYS
        .iter()
        .find(|(f, _)| *f == ftl_key)
        .map_or(ftl_key, |(_, s)| s)
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_ftl::{BufferPolicy, GcPolicy};

    fn section(text: &str) -> SsdSection {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn sim_keys_reach_the_ftl_config_and_errors_name_them() {
        let f = section(
            "payload = \"full\"\n[sim]\npages = 64\nintegrity = true\nrefresh_age_s = 3600\nbatch_deadline_ns = 4000\n",
        )
        .to_ftl()
        .unwrap();
        assert_eq!(
            (
                f.search.pages,
                f.search.integrity,
                f.search.refresh_age_s,
                f.search.batch_deadline_ns
            ),
            (64, true, 3600, 4000)
        );
        assert_eq!(stack_key("ftl.sim_integrity"), "ssd.sim.integrity");
        assert_eq!(stack_key("ftl.sim_pages"), "ssd.sim.pages");
        assert!(toml::from_str::<SsdSection>("[sim]\nkeys = 3\n").is_err());
    }

    #[test]
    fn grouped_keys_reach_the_ftl_config() {
        let f = section(
            "op_fraction = 0.07\n[host]\nqueue_depth = 8\n[gc]\npolicy = \"fifo\"\nthreshold_blocks = 4\n\
             [wear]\nleveling = \"static\"\nerase_gap_threshold = 9\n[buffer]\npages = 16\npolicy = \"fifo\"\n\
             [hints]\nrefresh_ops = 0\n[mapping]\npaired_page_padding = true\n",
        )
        .to_ftl()
        .unwrap();
        assert!(f.mapping.paired_page_padding);
        assert_eq!(f.op_fraction, 0.07);
        assert_eq!(f.host.queue_depth, 8);
        assert_eq!(f.gc.policy, GcPolicy::Fifo);
        assert_eq!(f.gc.threshold_blocks, 4);
        assert_eq!(f.wear.leveling, WearLeveling::Static);
        assert_eq!(f.wear.erase_gap_threshold, 9);
        assert_eq!(f.buffer.pages, 16);
        assert_eq!(f.buffer.policy, BufferPolicy::Fifo);
        assert_eq!(f.hints.refresh_ops, 0);
        // untouched keys keep the FTL's defaults
        assert_eq!(section("").to_ftl().unwrap(), FtlConfig::default());
    }

    #[test]
    fn keys_that_do_not_apply_are_errors_naming_them() {
        let cases = [
            (
                "[mapping]\nkind = \"block\"\n[gc]\npolicy = \"greedy\"\n",
                "ssd.gc.policy",
            ),
            (
                "[mapping]\nkind = \"hybrid\"\n[gc]\nscope = \"device\"\n",
                "ssd.gc.scope",
            ),
            (
                "[mapping]\nrandom_log_blocks = 4\n",
                "ssd.mapping.random_log_blocks",
            ),
            (
                "[wear]\nerase_gap_threshold = 4\n",
                "ssd.wear.erase_gap_threshold",
            ),
            (
                "[mapping]\nkind = \"block\"\n[wear]\nleveling = \"static\"\n",
                "ssd.wear.leveling",
            ),
            (
                "[mapping]\nkind = \"hybrid\"\n[wear]\nleveling = \"static\"\n",
                "ssd.wear.leveling",
            ),
            ("[buffer]\npolicy = \"lru\"\n", "ssd.buffer.policy"),
            (
                "[mapping]\nkind = \"hybrid\"\npaired_page_padding = true\n",
                "ssd.mapping.paired_page_padding",
            ),
            (
                "[scheduler]\npolicy = \"elevator\"\n",
                "ssd.scheduler.policy",
            ),
            ("[scheduler]\npolicy = \"fcfs\"\n", "ssd.scheduler.policy"),
            (
                "[scheduler]\npolicy = \"plane-first\"\n[mapping]\nallocation_order = \"die\"\n",
                "ssd.scheduler.policy",
            ),
            (
                "[scheduler]\npolicy = \"plane-first\"\nmultiplane = false\n",
                "ssd.scheduler.policy",
            ),
            (
                "[scheduler]\nsuperpage_planes = 2\nmultiplane = false\n",
                "ssd.scheduler.superpage_planes",
            ),
            (
                "[scheduler]\nsuperpage_planes = 2\n[gc]\ncopyback = true\n",
                "ssd.scheduler.superpage_planes",
            ),
        ];
        for (text, key) in cases {
            let (got, message) = section(text).to_ftl().unwrap_err();
            assert_eq!(got, key, "{text}");
            assert!(!message.is_empty());
        }
    }

    #[test]
    fn slc_cache_keys_reach_the_ftl_config_and_errors_name_them() {
        let f = section("[slc_cache]\nblocks = 12\nidle_fold_us = 500\n")
            .to_ftl()
            .unwrap();
        assert_eq!((f.slc_cache.blocks, f.slc_cache.idle_fold_us), (12, 500));
        let (key, message) = section("[slc_cache]\nidle_fold_us = 500\n")
            .to_ftl()
            .unwrap_err();
        assert_eq!(key, "ssd.slc_cache.blocks");
        assert!(!message.contains('\n'), "{message}");
        assert_eq!(stack_key("ftl.slc_cache_blocks"), "ssd.slc_cache.blocks");
        assert_eq!(
            stack_key("ftl.slc_idle_fold_us"),
            "ssd.slc_cache.idle_fold_us"
        );
        assert!(toml::from_str::<SsdSection>("[slc_cache]\nsize = 3\n").is_err());
    }

    #[test]
    fn the_scheduler_policy_sets_striping_and_merging() {
        let f = section("[scheduler]\npolicy = \"plane-first\"\n")
            .to_ftl()
            .unwrap();
        assert_eq!(f.mapping.allocation_order, "plane-channel-chip-die");
        assert!(f.scheduler.multiplane);
        let f = section("[scheduler]\npolicy = \"die-first\"\n")
            .to_ftl()
            .unwrap();
        assert_eq!(f, FtlConfig::default());
        let (_, message) = section("[scheduler]\npolicy = \"elevator\"\n")
            .to_ftl()
            .unwrap_err();
        assert!(
            !message.contains('\n') && message.contains("elevator"),
            "{message}"
        );
    }

    #[test]
    fn superpages_turn_multiplane_on_and_copyback_off() {
        let f = section("[scheduler]\nsuperpage_planes = 2\n")
            .to_ftl()
            .unwrap();
        assert_eq!(f.scheduler.superpage_planes, 2);
        assert!(f.scheduler.multiplane && !f.gc.copyback);
        // 1: nothing changes
        let f = section("[scheduler]\nsuperpage_planes = 1\n")
            .to_ftl()
            .unwrap();
        assert_eq!(f, FtlConfig::default());
        assert_eq!(
            stack_key("ftl.superpage_planes"),
            "ssd.scheduler.superpage_planes"
        );
    }

    /// A measure's point is a stack config read back from its JSON text (another process may
    /// measure it): a section must come back with the keys it wrote, or a default value
    /// written where it does not apply would pass there and fail here.
    #[test]
    fn sections_keep_their_written_keys_through_json() {
        for text in [
            "[mapping]\nkind = \"block\"\n[gc]\npolicy = \"greedy\"\n",
            "[scheduler]\nsuperpage_planes = 2\nmultiplane = false\n",
            "[scheduler]\npolicy = \"plane-first\"\n[gc]\nthreshold_blocks = 4\n",
            "op_fraction = 0.07\n[sim]\npages = 64\n[slc_cache]\nblocks = 12\n",
        ] {
            let written = section(text);
            let json = serde_json::to_string(&written).unwrap();
            let back: SsdSection = serde_json::from_str(&json).unwrap();
            assert_eq!(back, written, "{json}");
            assert_eq!(back.to_ftl(), written.to_ftl(), "{json}");
        }
        let json = serde_json::to_string(&section("[gc]\npolicy = \"fifo\"\n")).unwrap();
        assert_eq!(json, r#"{"gc":{"policy":"fifo"}}"#);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_in_its_section() {
        for (text, path) in [
            ("[gc]\ntreshold_blocks = 4\n", "gc.treshold_blocks"),
            ("[mapping]\ncmt_entries = 4\n", "mapping.cmt_entries"),
            ("[sim]\npages = \"many\"\n", "sim.pages"),
            ("[host]\nqueue_depth = -1\n", "host.queue_depth"),
        ] {
            let table: toml::Table = toml::from_str(text).unwrap();
            let err = serde_path_to_error::deserialize::<_, SsdSection>(toml::Value::Table(table))
                .unwrap_err();
            assert_eq!(err.path().to_string(), path, "{text}");
            assert!(!err.inner().message().contains('\n'), "{err}");
        }
    }

    #[test]
    fn ftl_keys_translate_to_stack_keys() {
        assert_eq!(
            stack_key("ftl.gc_threshold_blocks"),
            "ssd.gc.threshold_blocks"
        );
        assert_eq!(stack_key("device.geometry.channels"), "geometry.channels");
        assert_eq!(stack_key("something.else"), "something.else");
        assert_eq!(
            stack_key("ftl.controller.ecc_decode_ns"),
            "ssd.controller.ecc_decode_ns"
        );
    }
}
