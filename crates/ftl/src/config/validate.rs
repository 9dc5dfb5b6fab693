//! [`SsdConfig::validate`] and [`SsdConfig::ignored_keys`]: the checks across keys, each error
//! naming the key it is about.

use super::{
    FtlConfig, GcScheduling, GcScope, MappingKind, PayloadMode, ReadScheduling, SsdConfig,
    WearLeveling, logical_pages, parse_allocation_order,
};
use crate::error::{FtlResult, config_error};
use nandlab_nand::NandConfig;

impl SsdConfig {
    /// Checks every key; the first problem found is returned with its key.
    pub fn validate(&self) -> FtlResult<()> {
        let nand = self.nand_config()?;
        self.validate_pools(&nand)?;
        self.validate_limits()?;
        self.validate_geometry(&nand.geometry)
    }

    /// Placement ids, the SiM region, read suspension and the keys that need the page mapping.
    fn validate_pools(&self, nand: &NandConfig) -> FtlResult<()> {
        let f = &self.ftl;
        f.controller.validate()?;
        if f.mapping.placement_ids == 0 || f.mapping.placement_ids > 256 {
            return Err(config_error(
                "ftl.placement_ids",
                format!("{} ids (use 1 to 256)", f.mapping.placement_ids),
            ));
        }
        self.validate_sim(nand)?;
        if f.scheduler.reads == ReadScheduling::Suspend && nand.suspend.is_none() {
            return Err(config_error(
                "ftl.read_scheduling",
                "\"suspend\" needs the chip's program/erase suspend timing: add a [suspend] section to the NAND config (docs/nand.md)",
            ));
        }
        let ids = f.pool_ids();
        if ids > 1 && f.gc.threshold_blocks <= u32::from(ids) {
            return Err(config_error(
                "ftl.gc_threshold_blocks",
                format!(
                    "{} free blocks per plane cannot hold a GC block for each of {} placement ids{} (use at least {})",
                    f.gc.threshold_blocks,
                    ids,
                    if f.search.pages > 0 {
                        " (one is the SiM pool)"
                    } else {
                        ""
                    },
                    ids + 1
                ),
            ));
        }
        if f.mapping.placement_ids > 1 && f.mapping.kind != MappingKind::Page {
            return Err(config_error(
                "ftl.placement_ids",
                format!(
                    "{} ids need the page mapping (the {:?} mapping places by logical block)",
                    f.mapping.placement_ids, f.mapping.kind
                ),
            ));
        }
        if f.mapping.checkpoint_interval_pages > 0 && f.mapping.kind != MappingKind::Page {
            return Err(config_error(
                "ftl.map_checkpoint_interval_pages",
                format!(
                    "{} pages: map checkpoints need the page mapping (the {:?} mapping programs pages out of order, so pages written after a checkpoint are not at the end of their blocks)",
                    f.mapping.checkpoint_interval_pages, f.mapping.kind
                ),
            ));
        }
        // checked here as well as in `Cmt::new`, so the error reaches the stack's key name
        if f.mapping.cache_entries > 0 && f.mapping.kind != MappingKind::Page {
            return Err(config_error(
                "ftl.cmt_entries",
                format!(
                    "a cached mapping table applies to the page mapping only, not {:?}",
                    f.mapping.kind
                ),
            ));
        }
        self.validate_slc_cache(nand)
    }

    /// The SLC cache's keys (`frontend/slc.rs`).
    fn validate_slc_cache(&self, nand: &NandConfig) -> FtlResult<()> {
        let f = &self.ftl;
        if f.slc_cache.blocks > 0 && f.mapping.kind != MappingKind::Page {
            return Err(config_error(
                "ftl.slc_cache_blocks",
                format!(
                    "the SLC cache needs the page mapping, not {:?}",
                    f.mapping.kind
                ),
            ));
        }
        if f.slc_cache.blocks > 0 && nand.timing.slc_program_us.is_none() {
            return Err(config_error(
                "device.timing.slc_program_us",
                format!(
                    "the SLC cache needs SLC-mode times, which chip {} lacks (set timing.slc_read_us and slc_program_us)",
                    nand.name
                ),
            ));
        }
        if f.slc_cache.idle_fold_us > 0 && f.slc_cache.blocks == 0 {
            return Err(config_error(
                "ftl.slc_idle_fold_us",
                "needs an SLC cache (`slc_cache_blocks` > 0)",
            ));
        }
        Ok(())
    }

    /// The keys checked on their own: ranges and the allocation order.
    fn validate_limits(&self) -> FtlResult<()> {
        let f = &self.ftl;
        if !(f.op_fraction.is_finite() && f.op_fraction > 0.0 && f.op_fraction <= 10.0) {
            return Err(config_error(
                "ftl.op_fraction",
                format!("{} must be in (0, 10]", f.op_fraction),
            ));
        }
        f.gc.validate()?;
        if f.host.queue_depth == 0 || f.host.queue_depth > 65_536 {
            return Err(config_error(
                "ftl.queue_depth",
                "must be between 1 and 65536",
            ));
        }
        f.wear.validate()?;
        parse_allocation_order(&f.mapping.allocation_order)?;
        Ok(())
    }

    /// The keys checked against the chip's geometry.
    fn validate_geometry(&self, g: &nandlab_nand::Geometry) -> FtlResult<()> {
        let f = &self.ftl;
        self.validate_superpage(g)?;
        if g.total_pages() >= u64::from(u32::MAX) {
            return Err(config_error(
                "device",
                format!("{} pages; at most 2^32 - 2 are supported", g.total_pages()),
            ));
        }
        let blocks = g.blocks_per_plane;
        let logical = logical_pages(g, f.op_fraction);
        if f.gc.device_reserve_blocks > 0 {
            self.validate_device_reserve(g, logical)?;
        } else {
            self.validate_plane_reserve(g, logical)?;
        }
        if f.gc.idle_threshold_blocks > blocks {
            return Err(config_error(
                "ftl.idle_gc_threshold_blocks",
                format!(
                    "{} exceeds the {blocks} blocks of a plane",
                    f.gc.idle_threshold_blocks
                ),
            ));
        }
        if f.mapping.kind == MappingKind::Hybrid && f.mapping.random_log_blocks == 0 {
            return Err(config_error(
                "ftl.hybrid_random_log_blocks",
                "the hybrid mapping needs at least one random log block",
            ));
        }
        if f.mapping.kind == MappingKind::Hybrid
            && f.mapping.random_log_blocks >= g.blocks_per_plane
        {
            return Err(config_error(
                "ftl.hybrid_random_log_blocks",
                format!(
                    "{} log blocks; must be fewer than the {} blocks of a plane",
                    f.mapping.random_log_blocks, g.blocks_per_plane
                ),
            ));
        }
        if f.buffer.pages as u64 > logical {
            return Err(config_error(
                "ftl.write_buffer_pages",
                "larger than the logical capacity",
            ));
        }
        Ok(())
    }
}

impl SsdConfig {
    /// `ftl.superpage_planes`: divides the planes per die; above 1 it needs the page mapping,
    /// multiplane merging, the per-plane GC reserve and no copyback.
    fn validate_superpage(&self, g: &nandlab_nand::Geometry) -> FtlResult<()> {
        let f = &self.ftl;
        let w = f.scheduler.superpage_planes;
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
        let why = if f.mapping.kind != MappingKind::Page {
            format!("needs the page mapping (not {:?})", f.mapping.kind)
        } else if !f.scheduler.multiplane {
            "needs `multiplane` (the superblock's pages are written to form multiplane ops)".into()
        } else if f.gc.device_reserve_blocks > 0 {
            "does not work with `gc_device_reserve_blocks` (that keeps one GC block for the device, not a superblock)".into()
        } else if f.gc.copyback {
            "needs `copyback` off (GC moves fill the group's GC superblock across planes; a copyback stays in its plane)".into()
        } else {
            return Ok(());
        };
        Err(config_error(key, format!("{w} planes {why}")))
    }

    /// The SiM region's conditions (`ftl.sim_pages`).
    fn validate_sim(&self, nand: &NandConfig) -> FtlResult<()> {
        let f = &self.ftl;
        if f.search.pages == 0 {
            for (key, set) in [
                ("ftl.sim_integrity", f.search.integrity),
                ("ftl.sim_batch_deadline_ns", f.search.batch_deadline_ns > 0),
            ] {
                if set {
                    return Err(config_error(key, "needs a SiM region (ftl.sim_pages > 0)"));
                }
            }
            return Ok(());
        }
        self.validate_sim_integrity(nand)?;
        let key = "ftl.sim_pages";
        let refuse = |why: String| {
            Err(config_error(
                key,
                format!("{} pages: {why}", f.search.pages),
            ))
        };
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
        if f.mapping.kind != MappingKind::Page {
            return refuse(format!(
                "the SiM pool needs the page mapping, not {:?}",
                f.mapping.kind
            ));
        }
        if f.gc.device_reserve_blocks > 0 {
            return refuse("the SiM pool needs per-plane GC reserves (gc_device_reserve_blocks = 0): device-wide GC moves pages into one shared block".into());
        }
        if f.scheduler.multiplane {
            return refuse("multiplane merging would program SiM pages without their bytes (set multiplane = false)".into());
        }
        if f.mapping.placement_ids == 256 {
            return refuse("no placement id left for the SiM pool (placement_ids = 256)".into());
        }
        let logical = logical_pages(&nand.geometry, f.op_fraction);
        if u64::from(f.search.pages) >= logical {
            return refuse(format!(
                "the device has {logical} logical pages; leave some for storage"
            ));
        }
        Ok(())
    }

    /// `ftl.sim_integrity`: the full payload, the chip's chunk ECC size and a refresh age.
    fn validate_sim_integrity(&self, nand: &NandConfig) -> FtlResult<()> {
        let f = &self.ftl;
        if !f.search.integrity {
            return Ok(());
        }
        let key = "ftl.sim_integrity";
        if f.payload != PayloadMode::Full {
            return Err(config_error(
                key,
                "needs ftl.payload = \"full\": the controller checks the bytes the chip sends",
            ));
        }
        let ecc = nand.search.as_ref().map_or(0, |s| s.chunk_ecc_bytes);
        if nand.search.is_some() && ecc as usize != nandlab_nand::search::chunk_ecc::CHUNK_ECC_BYTES
        {
            return Err(config_error(
                key,
                format!(
                    "search.chunk_ecc_bytes is {ecc}; the chunk ECC has {}",
                    nandlab_nand::search::chunk_ecc::CHUNK_ECC_BYTES
                ),
            ));
        }
        if f.search.refresh_age_s == 0 {
            return Err(config_error("ftl.sim_refresh_age_s", "must be at least 1"));
        }
        Ok(())
    }

    /// The device-wide GC reserve's conditions: device-scope GC on the page mapping with one
    /// placement id, and enough spare blocks for the reserve, the threshold, a host write
    /// frontier per plane and the one GC frontier.
    fn validate_device_reserve(&self, g: &nandlab_nand::Geometry, logical: u64) -> FtlResult<()> {
        let f = &self.ftl;
        let key = "ftl.gc_device_reserve_blocks";
        let r = f.gc.device_reserve_blocks;
        if f.mapping.kind != MappingKind::Page || f.gc.scope != GcScope::Device {
            return Err(config_error(
                key,
                format!(
                    "{r} needs the page mapping with `gc_scope = \"device\"` (one GC stream that may move pages across planes)"
                ),
            ));
        }
        if f.mapping.placement_ids > 1 {
            return Err(config_error(
                key,
                format!(
                    "{r} with {} placement ids (the device reserve keeps one GC block for the device: use 1 id)",
                    f.mapping.placement_ids
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
        let needed = u64::from(r) + u64::from(f.gc.threshold_blocks) + planes + 1;
        if spare < needed {
            return Err(config_error(
                "ftl.op_fraction",
                format!(
                    "{} leaves {spare} spare blocks on the device; the device-wide GC reserve needs at least {needed} (gc_device_reserve_blocks {r} + gc_threshold_blocks {} + a host frontier per plane ({planes}) + one GC frontier)",
                    f.op_fraction, f.gc.threshold_blocks
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
        if f.mapping.kind != MappingKind::Page {
            let page_only = [
                ("ftl.wear_leveling", f.wear.leveling != d.wear.leveling),
                (
                    "ftl.wl_erase_gap_threshold",
                    f.wear.erase_gap_threshold != d.wear.erase_gap_threshold,
                ),
                (
                    "ftl.hint_all_planes",
                    f.hints.all_planes != d.hints.all_planes,
                ),
            ];
            keys.extend(f.gc.page_only_keys_set());
            keys.extend(page_only.iter().filter(|(_, set)| *set).map(|(k, _)| *k));
        } else if f.wear.leveling != WearLeveling::Static
            && f.wear.erase_gap_threshold != d.wear.erase_gap_threshold
        {
            keys.push("ftl.wl_erase_gap_threshold");
        }
        if f.mapping.kind != MappingKind::Hybrid
            && f.mapping.random_log_blocks != d.mapping.random_log_blocks
        {
            keys.push("ftl.hybrid_random_log_blocks");
        }
        if f.buffer.pages == 0 && f.buffer.policy != d.buffer.policy {
            keys.push("ftl.write_buffer_policy");
        }
        if f.gc.scheduling == GcScheduling::Blocking
            && f.gc.urgent_free_blocks != d.gc.urgent_free_blocks
        {
            keys.push("ftl.gc_urgent_free_blocks");
        }
        keys
    }
}

impl SsdConfig {
    /// The per-plane GC reserve: the GC threshold, plus an open host and GC frontier block per
    /// placement id (and the SiM pool's), must fit in a plane and in the spare blocks.
    fn validate_plane_reserve(&self, g: &nandlab_nand::Geometry, logical: u64) -> FtlResult<()> {
        let f = &self.ftl;
        let blocks = g.blocks_per_plane;
        let reserved =
            f.gc.threshold_blocks
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
        Ok(())
    }
}
