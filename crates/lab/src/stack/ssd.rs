//! `[ssd]`: the controller, in grouped tables (host, mapping, gc, wear, buffer, hints), turned
//! into the FTL's typed [`FtlConfig`]. Every key is optional (an SSD preset or the FTL's
//! default fills it); a key that does not apply to the chosen mapping, policy or scheme is an
//! error naming it, never silently ignored.

use nandlab_ftl::sched::SchedulerPolicy;
use nandlab_ftl::{
    BufferPolicy, ControllerCosts, FtlConfig, GcPolicy, GcScheduling, GcScope, MappingKind,
    PayloadMode, ReadScheduling, WearLeveling,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<MappingSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear: Option<WearSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<HintsSection>,
    /// `[ssd.scheduler]`: the flash transaction scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedulerSection>,
    /// `[ssd.controller]`: the controller's time and energy costs (firmware, DRAM, host
    /// link, ECC), each key optional (0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerCosts>,
    /// `[ssd.slc_cache]`: an SLC cache on a TLC/QLC device (docs/ftl.md; needs the chip's
    /// `timing.slc_read_us` and `slc_program_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcCacheSection>,
    /// `[ssd.sim]`: a Search-in-Memory region (docs/sim.md; needs a `[search]` chip such as
    /// the `sim2024` preset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimSection>,
    /// `[ssd.nvme]`: the NVMe host interface (namespaces, queue pairs, arbitration, zones,
    /// FDP); block workloads then run through it (docs/ftl.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<nandlab_ftl::nvme::NvmeConfig>,
}

/// `[ssd.sim]`: the SiM region and its controller (paper 004 §VI-A1, §IV-C, §IV-E).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    /// The last this many logical pages form the SiM region (`ftl.sim_pages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// The integrity layer: header, chunk ECC, fallback reads, refresh (`ftl.sim_integrity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<bool>,
    /// Pages older than this are read out and refreshed (`ftl.sim_refresh_age_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_age_s: Option<u64>,
    /// Deadline of the search batch scheduler in ns (`ftl.sim_batch_deadline_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_deadline_ns: Option<u64>,
}

/// `[ssd.slc_cache]`: blocks programmed in SLC mode that absorb host writes, folded to the
/// chip's own cell type when full or when the host idles (SPEC C3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheSection {
    /// Blocks in SLC mode (`ftl.slc_cache_blocks`; taken from the over-provisioning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    /// Fold the oldest cache block once the host has been idle this many µs (host reads and
    /// writes go first; `ftl.slc_idle_fold_us`; 0 or absent: fold only when the cache is full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_fold_us: Option<u64>,
}

/// `[ssd.host]`: the host interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSection {
    /// Submission-queue depth (requests in flight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
}

/// `[ssd.scheduler]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerSection {
    /// `die-first` (stripe pages over dies, then planes) or `plane-first` (fill the planes of a
    /// die first and merge them into multiplane ops): sets `mapping.allocation_order`, and
    /// plane-first turns `multiplane` on (SPEC N10, paper 003 §8.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Merge decided reads or programs of one die (same page offset, other planes) into
    /// multiplane ops; pair with a plane-first `mapping.allocation_order` so consecutive pages
    /// land on the planes of one die at the same offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplane: Option<bool>,
    /// Issue reads and programs in cache mode (consecutive ops on a die overlap a data
    /// transfer with the previous op's cell stage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<bool>,
    /// Superpage width in planes (1: off): the planes of a die form groups of this many whose
    /// host and GC write frontiers are superblocks filled in lockstep, so host writes and GC
    /// moves form multiplane programs. Above 1 it turns `multiplane` on and `ssd.gc.copyback`
    /// off (GC moves cross planes within the die); page mapping only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superpage_planes: Option<u32>,
    /// Host reads against the other ops of their die: `fifo` (default: decision order),
    /// `priority` (a read of a programmed page goes to the chip ahead of the die's queue) or
    /// `suspend` (also suspends a program or erase under way; needs the chip's `[suspend]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<ReadScheduling>,
}

/// `[ssd.mapping]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappingSection {
    /// `page`, `block`, `hybrid` or `zoned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<MappingKind>,
    /// Striping order of consecutive page writes, fastest-varying first (`channel-chip-die-plane`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_order: Option<String>,
    /// Random log blocks (hybrid mapping only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_log_blocks: Option<u32>,
    /// Placement ids (NVMe FDP reclaim-unit handles) writes may carry (page mapping only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_ids: Option<u16>,
    /// Pad open word lines on a Flush and before erasing a block whose data sits on lower pages
    /// with unprogrammed upper pages (page mapping only; docs/power.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_page_padding: Option<bool>,
    /// Map checkpoints under power-loss runs: pages decided between two (0: none; page
    /// mapping only; docs/power.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_checkpoint_interval_pages: Option<u32>,
    /// Planes per zone (zoned mapping only; 0 = every plane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_planes: Option<u32>,
    /// A cached mapping table (DFTL): mapping entries kept in DRAM, the rest in translation
    /// pages on flash (page mapping only; 0 or absent: the whole table in DRAM; docs/ftl.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_entries: Option<u32>,
}

/// `[ssd.gc]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcSection {
    /// Victim policy: `fifo`, `greedy`, `cost-benefit`, `random` (page mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<GcPolicy>,
    /// Free blocks per plane below which GC runs (at least 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_blocks: Option<u32>,
    /// `plane` or `device` (page mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<GcScope>,
    /// Device-wide GC reserve in blocks (`scope = "device"`, page mapping): GC keeps this many
    /// free blocks anywhere on the device and may move pages across planes, instead of one free
    /// block per plane; `threshold_blocks` then counts device-wide beyond the reserve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reserve_blocks: Option<u32>,
    /// Background GC threshold (page mapping; 0 = off; otherwise above `threshold_blocks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_threshold_blocks: Option<u32>,
    /// Copyback (internal data move) for page moves within a plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copyback: Option<bool>,
    /// `blocking` (GC work before later host ops on its die) or `interleaved` (host ops
    /// first unless GC is urgent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<GcScheduling>,
    /// Interleaved GC turns urgent below this many physically free blocks in a plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urgent_free_blocks: Option<u32>,
}

/// `[ssd.wear]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WearSection {
    /// `round-robin` or `static`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leveling: Option<WearLeveling>,
    /// Erase-count gap that triggers static wear-leveling (`static` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_gap_threshold: Option<u32>,
}

/// `[ssd.buffer]`: the DRAM write buffer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSection {
    /// Capacity in pages (0 = no buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// Eviction order `lru` or `fifo` (needs `pages` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<BufferPolicy>,
}

/// `[ssd.hints]`: the co-design hint interface (paper 000 IAA, SPEC F7).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HintsSection {
    /// Host requests between hint refreshes (0 = no hint kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_ops: Option<u32>,
    /// List the next victim of every plane, not only the block erased next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_planes: Option<bool>,
}

/// An error found while turning `[ssd]` into an [`FtlConfig`]: the key path and the message.
pub type KeyError = (String, String);

impl SsdSection {
    /// The FTL config: the FTL's defaults with every given key applied; a key that does not
    /// apply to the chosen mapping, GC policy, wear-leveling or buffer is an error.
    pub fn to_ftl(&self) -> Result<FtlConfig, KeyError> {
        let mut f = FtlConfig::default();
        set(&mut f.op_fraction, self.op_fraction);
        set(&mut f.payload, self.payload);
        if let Some(h) = &self.host {
            set(&mut f.host.queue_depth, h.queue_depth);
        }
        let mapping = self.mapping.clone().unwrap_or_default();
        set(&mut f.mapping.kind, mapping.kind);
        if let Some(order) = &mapping.allocation_order
            && order.split('-').all(|level| level.trim().is_empty())
        {
            return Err((
                "ssd.mapping.allocation_order".into(),
                format!("`{order}` names no level (e.g. channel-chip-die-plane)"),
            ));
        }
        set(
            &mut f.mapping.allocation_order,
            mapping.allocation_order.clone(),
        );
        if mapping.paired_page_padding == Some(true) && f.mapping.kind != MappingKind::Page {
            return Err(inapplicable(
                "ssd.mapping.paired_page_padding",
                "applies to the page mapping only",
                f.mapping.kind,
            ));
        }
        set(
            &mut f.mapping.paired_page_padding,
            mapping.paired_page_padding,
        );
        set(
            &mut f.mapping.checkpoint_interval_pages,
            mapping.map_checkpoint_interval_pages,
        );
        if let Some(n) = mapping.random_log_blocks {
            if f.mapping.kind != MappingKind::Hybrid {
                return Err(inapplicable(
                    "ssd.mapping.random_log_blocks",
                    "applies to the hybrid mapping only",
                    f.mapping.kind,
                ));
            }
            f.mapping.random_log_blocks = n;
        }
        set(&mut f.mapping.placement_ids, mapping.placement_ids);
        set(&mut f.mapping.zone_planes, mapping.zone_planes);
        set(&mut f.mapping.cache_entries, mapping.cache_entries);
        if let Some(gc) = &self.gc {
            self.apply_gc(gc, &mut f)?;
        }
        if let Some(w) = &self.wear {
            set(&mut f.wear.leveling, w.leveling);
            // issue 31 item 6: the block and hybrid mappings have no static wear-leveling
            if f.wear.leveling == WearLeveling::Static && f.mapping.kind != MappingKind::Page {
                return Err(inapplicable(
                    "ssd.wear.leveling",
                    "`static` wear-leveling runs with the page mapping only",
                    f.mapping.kind,
                ));
            }
            if let Some(gap) = w.erase_gap_threshold {
                if f.wear.leveling != WearLeveling::Static {
                    return Err((
                        "ssd.wear.erase_gap_threshold".into(),
                        "applies to `leveling = \"static\"` only".into(),
                    ));
                }
                f.wear.erase_gap_threshold = gap;
            }
        }
        if let Some(b) = &self.buffer {
            set(&mut f.buffer.pages, b.pages);
            if let Some(policy) = b.policy {
                if f.buffer.pages == 0 {
                    return Err((
                        "ssd.buffer.policy".into(),
                        "needs a write buffer (`ssd.buffer.pages` > 0)".into(),
                    ));
                }
                f.buffer.policy = policy;
            }
        }
        if let Some(h) = &self.hints {
            set(&mut f.hints.refresh_ops, h.refresh_ops);
            set(&mut f.hints.all_planes, h.all_planes);
        }
        set(&mut f.controller, self.controller.clone());
        if let Some(c) = &self.slc_cache {
            if c.blocks.unwrap_or(0) == 0 {
                return Err((
                    "ssd.slc_cache.blocks".into(),
                    "an [ssd.slc_cache] needs `blocks` > 0 (drop the section for no cache)".into(),
                ));
            }
            set(&mut f.slc_cache.blocks, c.blocks);
            set(&mut f.slc_cache.idle_fold_us, c.idle_fold_us);
        }
        if let Some(sim) = &self.sim {
            set(&mut f.search.pages, sim.pages);
            set(&mut f.search.integrity, sim.integrity);
            set(&mut f.search.refresh_age_s, sim.refresh_age_s);
            set(&mut f.search.batch_deadline_ns, sim.batch_deadline_ns);
        }
        if let Some(s) = &self.scheduler {
            set(&mut f.scheduler.multiplane, s.multiplane);
            set(&mut f.scheduler.cache, s.cache);
            set(&mut f.scheduler.reads, s.reads);
            if let Some(name) = &s.policy {
                apply_policy(name, s, &mapping, &mut f)?;
            }
            if let Some(w) = s.superpage_planes {
                apply_superpage(w, s, self.gc.as_ref(), &mut f)?;
            }
        }
        Ok(f)
    }

    fn apply_gc(&self, gc: &GcSection, f: &mut FtlConfig) -> Result<(), KeyError> {
        let page_only = [
            ("ssd.gc.policy", gc.policy.is_some()),
            ("ssd.gc.scope", gc.scope.is_some()),
            (
                "ssd.gc.device_reserve_blocks",
                gc.device_reserve_blocks.is_some(),
            ),
            (
                "ssd.gc.idle_threshold_blocks",
                gc.idle_threshold_blocks.is_some(),
            ),
        ];
        if f.mapping.kind != MappingKind::Page
            && let Some((key, _)) = page_only.iter().find(|(_, given)| *given)
        {
            return Err(inapplicable(
                key,
                "applies to the page mapping only",
                f.mapping.kind,
            ));
        }
        set(&mut f.gc.policy, gc.policy);
        set(&mut f.gc.threshold_blocks, gc.threshold_blocks);
        set(&mut f.gc.scope, gc.scope);
        set(&mut f.gc.device_reserve_blocks, gc.device_reserve_blocks);
        set(&mut f.gc.idle_threshold_blocks, gc.idle_threshold_blocks);
        set(&mut f.gc.copyback, gc.copyback);
        set(&mut f.gc.scheduling, gc.scheduling);
        if let Some(n) = gc.urgent_free_blocks {
            if f.gc.scheduling != GcScheduling::Interleaved {
                return Err((
                    "ssd.gc.urgent_free_blocks".into(),
                    "applies to `scheduling = \"interleaved\"` only".into(),
                ));
            }
            f.gc.urgent_free_blocks = n;
        }
        Ok(())
    }
}

/// `ssd.scheduler.policy`: the allocation order (and, plane-first, multiplane merging) of the
/// controller's scheduler policy.
fn apply_policy(
    name: &str,
    s: &SchedulerSection,
    mapping: &MappingSection,
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
    if mapping.allocation_order.is_some() {
        return Err((
            key.into(),
            "sets the allocation order: give it or `ssd.mapping.allocation_order`, not both".into(),
        ));
    }
    if policy.merges_multiplane() && s.multiplane == Some(false) {
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
/// (refused when the config asks for the opposite); the width itself is checked with the
/// device (`ftl.superpage_planes`).
fn apply_superpage(
    w: u32,
    s: &SchedulerSection,
    gc: Option<&GcSection>,
    f: &mut FtlConfig,
) -> Result<(), KeyError> {
    let key = "ssd.scheduler.superpage_planes";
    if w > 1 {
        if s.multiplane == Some(false) {
            return Err((
                key.into(),
                format!("{w} planes form multiplane programs: drop `multiplane = false`"),
            ));
        }
        if gc.and_then(|g| g.copyback) == Some(true) {
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
    f.scheduler.superpage_planes = w;
    Ok(())
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
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
