//! The optional features of the controller, chosen once when the SSD is built: controller
//! costs (the firmware, DRAM and host-link resources) and the Search-in-Memory region, with
//! the paths the world loop and host path take because of them resolved at build time, so
//! the hot path reads one flag instead of asking each feature whether it is on. (The power
//! trace and other watchers are [`crate::flash::observer::FlashObserver`]s; the front-end
//! stages are the [`crate::frontend::Chain`].)

use crate::controller::Controller;
use crate::search::SearchRegion;

/// The build-time features and the paths they select.
#[derive(Debug)]
pub(super) struct Stages {
    /// The controller's resources (`None`: no controller costs, the pure-chip path).
    pub controller: Option<Controller>,
    /// The Search-in-Memory component: region, pool, integrity, batcher (`ftl.sim_pages > 0`;
    /// `search/`, its SSD side in `ssd/search.rs`).
    pub search: Option<Box<SearchRegion>>,
    /// The world has event sources besides the host and the chip (controller resources, a
    /// front-end stage with its own device).
    pub other_sources: bool,
    /// A page-aligned write is decided at admission and its bytes are used where they are
    /// (no controller costs: with them the decision comes later, so the data is kept).
    pub direct_writes: bool,
    /// A whole-page write may be copied straight into the payload slot its program takes:
    /// page mapping, payloads kept, no front-end stage and no SiM region.
    pub plain_page_writes: bool,
    /// Host writes take the SiM region's placement (its pages go to the region's pool).
    pub search_placement: bool,
    /// Flash ops pass the SiM region's chip path (match-mode blocks, search commands).
    pub search_path: bool,
    /// Background work runs while the device idles: GC (`ftl.idle_gc_threshold_blocks > 0`)
    /// or SLC cache folding (`slc_idle_fold`).
    pub idle_gc: bool,
    /// The SLC cache folds once the host has idled this long (`ftl.slc_idle_fold_us > 0`).
    pub slc_idle_fold: Option<nandlab_core::SimTime>,
    /// Pages between map checkpoints of a power trace, once one starts
    /// (`ftl.map_checkpoint_interval_pages`; 0: none).
    pub checkpoint_interval_pages: u32,
}

/// What the build decided that the paths depend on besides the features themselves.
pub(super) struct Built {
    /// A front-end stage has its own device events.
    pub timed_front: bool,
    /// The front-end chain has no stage.
    pub no_front: bool,
    /// The page mapping, with page payloads kept.
    pub page_payloads: bool,
    /// More than one placement id is in use.
    pub placement: bool,
    /// Background GC is configured.
    pub idle_gc: bool,
    /// SLC idle folding is configured (its idle time).
    pub slc_idle_fold: Option<nandlab_core::SimTime>,
    /// The power trace's checkpoint interval.
    pub checkpoint_interval_pages: u32,
}

impl Stages {
    pub fn new(
        controller: Option<Controller>,
        search: Option<Box<SearchRegion>>,
        built: Built,
    ) -> Self {
        let searching = search.is_some();
        Stages {
            other_sources: controller.is_some() || built.timed_front,
            direct_writes: controller.is_none(),
            plain_page_writes: built.no_front && built.page_payloads && !searching,
            search_placement: searching && built.placement,
            search_path: searching,
            idle_gc: built.idle_gc || built.slc_idle_fold.is_some(),
            slc_idle_fold: built.slc_idle_fold,
            checkpoint_interval_pages: built.checkpoint_interval_pages,
            controller,
            search,
        }
    }
}
