//! The SSD: controller + FTL + chip model, and the world loop that drives them.
//!
//! [`Ssd`] owns the [`NandSim`] and a host-side [`EventQueue`] (arrivals). The loop compares
//! the chip model's next event time with the host queue's and processes the earlier one;
//! **on a tie the host event goes first**. Functional state (mapping, valid counts, payloads)
//! changes when the FTL decides (at admission, or when the old page of a read-modify-write has
//! been read); the decided flash ops are then submitted in decision order, so the chip model's
//! per-die ordering keeps GC moves before their erase and erases before reuse.

mod checkpoint;
mod chip_port;
#[cfg(test)]
mod cmt_tests;
mod durability;
mod flash_io;
#[cfg(test)]
mod gate_tests;
mod host_if;
mod host_path;
mod layout;
mod measurement;
mod namespaces;
mod open_loop;
mod power;
mod precondition;
#[cfg(test)]
mod release_tests;
mod report;
mod request_hook;
mod search;
mod slc_idle;
#[cfg(test)]
mod staged_tests;
mod stages;
#[cfg(test)]
mod stages_tests;
#[cfg(test)]
mod superblock_tests;
#[cfg(test)]
pub(crate) mod test_device;
mod txn;
mod uncorrectable;
mod world;

pub use durability::{WriteState, WriteStateCounts};
pub use open_loop::HostCompletion;
pub use precondition::{PRECONDITION_PROGRESS_WRITES, Precondition};
pub use request_hook::{CutOutcome, RequestHook, hook_as};
pub use txn::{COMMIT_RECORD_MAGIC, TxStats};

use crate::address::{BlockId, Lpa};
use crate::config::{MappingKind, PayloadMode, SsdConfig, parse_allocation_order};
use crate::controller::Controller;
use crate::error::{FtlError, FtlResult};
use crate::flash::Flash;
use crate::flash::bad_blocks;
use crate::flash::blocks::BlockManager;
use crate::flash::payload::Payload;
use crate::flash::read_reclaim;
use crate::frontend::{Chain, FrontEnd, buffer::WriteBuffer};
use crate::gc::Collector;
use crate::gc::policy::VictimPolicy;
use crate::mapping::page::{PageConfig, PageFtl, PageMap};
use crate::mapping::{Mapper, Mapping, block::BlockFtl, hybrid::HybridFtl, stripe_order};
use crate::sched::scheduler::{FlashScheduler, SchedConfig};
use crate::search::SearchRegion;
use crate::wear::{WearConfig, WearLeveler};
use chip_port::ChipPort;
use host_if::HostInterface;
use layout::Layout;
use measurement::Measurement;
use nandlab_core::SimTime;
use nandlab_nand::{Geometry, NandSim};
use stages::Stages;

/// Result of one synchronously executed request ([`Ssd::execute`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executed {
    /// From submission to completion.
    pub latency: SimTime,
    /// Completion time.
    pub completed: SimTime,
    /// The bytes read (reads in full payload mode), or a SiM search's match bitmap or
    /// gather's chunks ([`Ssd::execute_search`]); empty otherwise.
    pub data: Vec<u8>,
}

/// A simulated SSD: the components the world loop (`world.rs`) drives, each owning its state.
#[derive(Debug)]
pub struct Ssd {
    /// Seed, geometry, page size, logical pages (`layout.rs`).
    layout: Layout,
    /// The chip model and its completions (`chip_port.rs`).
    chip: ChipPort,
    mapper: Mapper,
    flash: Flash,
    /// The front-end chain (write buffer, …) between the host path and the mapping.
    front: Chain,
    /// Request slots, arrivals, deferred steps, FUA, transactional and
    /// open-loop state (`host_if.rs`).
    host: HostInterface,
    /// Simulated time of the last event processed.
    now: SimTime,
    /// The measured counters and the co-design hint (`measurement.rs`).
    measurement: Measurement,
    /// The flash scheduler: per-die queues, multiplane merging, erase gates, chip submission.
    sched: FlashScheduler,
    /// The optional features chosen at build time (controller costs, the SiM region) and the
    /// paths they select (`stages.rs`).
    stages: Stages,
    /// The cached mapping table (`ftl.cmt_entries > 0`; `mapping/dftl`).
    cmt: Option<Box<crate::mapping::dftl::Cmt>>,
}

pub use crate::config::logical_pages;

/// Builds an SSD from `config` and `seed`, runs `requests` and returns the report.
pub fn simulate<I>(config: SsdConfig, seed: u64, requests: I) -> FtlResult<crate::SsdReport>
where
    I: IntoIterator<Item = crate::HostRequest>,
{
    Ssd::new(config, seed)?.run(requests)
}

impl Ssd {
    /// Builds the SSD (validating the config); `seed` drives every random choice.
    pub fn new(config: SsdConfig, seed: u64) -> FtlResult<Self> {
        Self::with_front_ends(config, seed, Vec::new())
    }

    /// Builds the SSD with extra front-end stages after the configured ones (the DRAM write
    /// buffer first, when `ftl.write_buffer_pages > 0`), in order toward the flash.
    pub fn with_front_ends(
        config: SsdConfig,
        seed: u64,
        extra: Vec<Box<dyn FrontEnd>>,
    ) -> FtlResult<Self> {
        Self::build(config, seed, extra, None)
    }

    /// Builds the SSD with a GC victim policy of the caller's instead of the configured one
    /// (page mapping; a policy under test).
    #[cfg(test)]
    pub(crate) fn with_victim_policy(
        config: SsdConfig,
        seed: u64,
        policy: Box<dyn VictimPolicy>,
    ) -> FtlResult<Self> {
        Self::build(config, seed, Vec::new(), Some(policy))
    }

    fn build(
        config: SsdConfig,
        seed: u64,
        extra: Vec<Box<dyn FrontEnd>>,
        victim_policy: Option<Box<dyn VictimPolicy>>,
    ) -> FtlResult<Self> {
        config.validate()?;
        let payload_limit = config.check_memory_budget()?;
        let nand_config = config.nand_config()?;
        let geometry = nand_config.geometry.clone();
        let mut nand = NandSim::new(nand_config, seed)?;
        let f = &config.ftl;
        let physical = geometry.total_pages() as u32;
        let mut logical = logical_pages(&geometry, f.op_fraction) as u32;
        let blocks = BlockManager::new(
            geometry.total_planes(),
            geometry.blocks_per_plane,
            geometry.pages_per_block,
        );
        let full = f.payload == PayloadMode::Full;
        let flash = Flash::new(
            blocks,
            geometry.total_dies(),
            Payload::new(full, physical as usize, geometry.page_size_bytes as usize),
            f.gc.copyback,
            f.pool_ids(),
        );
        let mut flash = flash;
        if let Some((bytes, budget)) = payload_limit {
            // page bytes are stored as written: the budget left after the rest bounds them
            flash.payload.set_limit_bytes(
                bytes,
                format!(
                    "{} of {}",
                    nandlab_core::memory::format_bytes(bytes),
                    budget.describe()
                ),
            );
        }
        flash.bad_blocks = bad_blocks::build_for(
            &nand.config().reliability,
            f,
            seed,
            &mut flash.blocks,
            logical,
        )?;
        flash.read_reclaim = read_reclaim::build_for(
            &nand.config().reliability,
            f,
            geometry.total_planes() * geometry.blocks_per_plane,
        )?;
        let gc_config = f.gc;
        if gc_config.scheduling == crate::config::GcScheduling::Interleaved {
            // which free blocks still wait for their erase (allocation prefers the others)
            flash.blocks.enable_erase_queue();
        }
        if f.mapping.paired_page_padding && f.mapping.kind == MappingKind::Page {
            flash.enable_paired_page_padding(nand.timing().layout);
        }
        let stripe = stripe_order(
            &geometry,
            parse_allocation_order(&f.mapping.allocation_order)?,
        );
        crate::mapping::zoned::check_config(f)?;
        let mapper = match f.mapping.kind {
            MappingKind::Page => {
                let settings = PageConfig {
                    device_reserve_blocks: f.gc.device_reserve_blocks,
                    superpage_planes: f.scheduler.superpage_planes,
                };
                let map = PageMap::new(logical, physical, stripe, settings, f.pool_ids());
                let gc = match victim_policy {
                    Some(policy) => Collector::with_policy(gc_config, f.hints.all_planes, policy),
                    None => Collector::new(gc_config, f.hints.all_planes, seed),
                };
                let wear = WearLeveler::new(WearConfig::of(f));
                Mapper::Page(PageFtl::new(map, gc, wear))
            }
            MappingKind::Block => {
                let m = BlockFtl::new(&geometry, logical, stripe, f.gc.threshold_blocks);
                logical = m.logical_pages();
                Mapper::Block(m)
            }
            MappingKind::Hybrid => {
                let m = HybridFtl::new(
                    &geometry,
                    logical,
                    stripe,
                    f.gc.threshold_blocks,
                    f.mapping.random_log_blocks,
                );
                logical = m.logical_pages();
                Mapper::Hybrid(m)
            }
            MappingKind::Zoned => {
                let m =
                    crate::mapping::zoned::ZonedFtl::new(&geometry, stripe, f.mapping.zone_planes)
                        .map_err(|e| crate::error::config_error(e.key, e.message))?;
                logical = m.logical_pages();
                Mapper::Zoned(m)
            }
        };
        let cmt = crate::mapping::dftl::Cmt::new(
            f.mapping.cache_entries,
            logical,
            geometry.page_size_bytes,
            f.mapping.kind == MappingKind::Page,
        )?;
        if let Some(c) = &cmt {
            logical = c.host_pages(); // the rest hold translation pages
        }
        if logical == 0 || u64::from(f.buffer.pages) > u64::from(logical) {
            return Err(crate::error::config_error(
                "ftl.mapping",
                format!(
                    "{:?} mapping leaves {logical} logical pages on this device (write buffer {} pages)",
                    f.mapping.kind, f.buffer.pages
                ),
            ));
        }
        let mut stages: Vec<Box<dyn FrontEnd>> = Vec::new();
        if f.buffer.pages > 0 {
            stages.push(Box::new(WriteBuffer::new(
                f.buffer.pages,
                logical,
                geometry.page_size_bytes,
                f.buffer.policy,
                full,
            )));
        }
        stages.extend(extra);
        if f.slc_cache.blocks > 0 {
            // nearest the flash: the stages above it see its pages as written
            let config = crate::frontend::slc::SlcCacheConfig {
                blocks: f.slc_cache.blocks,
                idle_fold_us: f.slc_cache.idle_fold_us,
            };
            let bits = nand.timing().layout.cell_type().bits_per_cell();
            let cache =
                crate::frontend::slc::SlcCache::new(config, geometry.pages_per_block, bits, full);
            stages.push(Box::new(cache));
        }
        let front = Chain::new(stages, geometry.page_size_bytes, full);
        if let Some(area) = front.flash_log_area() {
            flash.reserve_log_area(
                area,
                geometry.page_size_bytes,
                nand.config().reliability.nop_limit,
                logical,
            )?;
        }
        let slc_blocks = front.slc_blocks();
        if slc_blocks > 0 {
            for block in flash.reserve_slc_area(slc_blocks, logical)? {
                let first = flash.blocks.page(block, 0);
                nand.set_block_slc(&geometry.address_of(first.into())?, true)?;
            }
        }
        let search = SearchRegion::new(&f.search, f.mapping.placement_ids, logical);
        if search.is_some() {
            flash.search_pool = Some(f.mapping.placement_ids);
        }
        if cmt.is_some() {
            flash.moved_lpas = Some(Vec::new()); // GC moves update the cached table
        }
        let built = stages::Built {
            timed_front: front.is_timed(),
            no_front: front.is_empty(),
            page_payloads: flash.payload.enabled() && matches!(mapper, Mapper::Page(_)),
            placement: flash.placement.active(),
            idle_gc: f.gc.idle_threshold_blocks > 0,
            slc_idle_fold: (f.slc_cache.idle_fold_us > 0)
                .then(|| SimTime::from_us(f.slc_cache.idle_fold_us)),
            checkpoint_interval_pages: f.mapping.checkpoint_interval_pages,
        };
        let controller = Controller::new(&f.controller, geometry.page_size_bytes);
        Ok(Ssd {
            stages: Stages::new(controller, search, built),
            cmt,
            host: HostInterface::new(f.host.queue_depth),
            now: SimTime::ZERO,
            measurement: Measurement::new(f.hints.refresh_ops),
            sched: FlashScheduler::new(SchedConfig::of(f), &geometry),
            layout: Layout::new(seed, geometry, logical, f.mapping.placement_ids),
            chip: ChipPort::new(nand),
            mapper,
            flash,
            front,
        })
    }

    /// Requests the host interface holds in flight at most (`ftl.queue_depth`).
    pub fn queue_depth(&self) -> u32 {
        self.host.requests.slots.len() as u32
    }
    /// Placement ids the host may name (`ftl.placement_ids`).
    pub fn placement_ids(&self) -> u16 {
        self.layout.placement_ids
    }
    /// Whether the device keeps page bytes (`ftl.payload = "full"`).
    pub fn keeps_payloads(&self) -> bool {
        self.flash.payload.enabled()
    }
    /// Whether the page mapping pads word lines so no acknowledged lower page waits for its
    /// paired upper page (`ftl.paired_page_padding` on the page mapping).
    pub fn pads_paired_pages(&self) -> bool {
        self.flash.pads()
    }
    /// The controller's costs (`None`: no controller costs, the pure-chip path).
    pub fn controller_costs(&self) -> Option<&crate::controller::ControllerCosts> {
        self.stages.controller.as_ref().map(|c| c.costs())
    }
    /// The chip geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.layout.geometry
    }
    /// The chip model (read-only: statistics, block table).
    pub fn nand(&self) -> &NandSim {
        &self.chip.nand
    }
    /// Simulated time of the last event processed.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Co-design hint (SPEC F7): the flash page size.
    pub fn page_size_bytes(&self) -> u32 {
        self.layout.page_size_bytes
    }
    /// Logical pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        u64::from(self.layout.logical_pages)
    }
    /// Logical capacity in bytes.
    pub fn logical_capacity_bytes(&self) -> u64 {
        self.layout.logical_capacity_bytes()
    }
    /// Physical pages of the device.
    pub fn physical_pages(&self) -> u64 {
        self.layout.geometry.total_pages()
    }
    /// Free (erased, unallocated) blocks of the whole device.
    pub fn free_blocks(&self) -> u32 {
        self.flash.blocks.free_total()
    }
    /// GC runs (victims collected) since the SSD was built; cheap, for a host that reacts to
    /// the GC its own write triggered.
    pub fn gc_runs(&self) -> u64 {
        self.flash.counters.gc_runs
    }
    /// Multiplane ops the scheduler formed (merged ops of one die on several planes), since
    /// the SSD was built.
    pub fn multiplane_ops(&self) -> u64 {
        self.sched.counters().multiplane_ops.iter().sum()
    }
    /// GC ops the interleaved scheduler sent to the chip before a waiting host op because GC
    /// was urgent (`gc_urgent_free_blocks`), since the SSD was built.
    pub fn urgent_gc_passes(&self) -> u64 {
        self.sched.urgent_passes()
    }
    /// Controller-side energy (controller, DRAM, host link; not static power) since the SSD was
    /// built, in millijoules; 0 without controller costs.
    pub fn controller_energy_mj(&self) -> f64 {
        self.stages
            .controller
            .as_ref()
            .map_or(0.0, |c| c.totals().energy_pj() / 1e9)
    }

    /// Co-design hint (SPEC F7): the LPAs of the valid pages of the block GC will erase next
    /// (per the active victim policy), as of the last refresh. The engine refreshes it every
    /// `ftl.hint_refresh_ops` host requests; [`Ssd::refresh_hint`] refreshes it now.
    pub fn next_erase_block_valid_lpas(&self) -> Vec<Lpa> {
        self.measurement.hint.clone()
    }

    /// Recomputes the co-design hint from the current state.
    pub fn refresh_hint(&mut self) {
        self.mapper
            .next_erase_block_valid_lpas(&self.flash, self.measurement.refreshing_hint());
    }

    /// How many logical pages map to physical page `ppa` (0: invalid; more than 1: shared by a
    /// dedup stage's duplicate writes).
    pub fn refcount(&self, ppa: crate::address::Ppa) -> u32 {
        self.mapper.refcount(ppa)
    }

    /// What In-Page Logging's log area did on the chip (`None`: no stage asked for one).
    pub fn log_area_stats(&self) -> Option<crate::LogAreaStats> {
        self.flash.log_area.as_ref().map(|a| a.stats)
    }

    /// Whether a front-end stage (the write buffer, …) sits between the host path and the
    /// mapping: a write may complete before it reaches flash.
    pub fn has_front_end(&self) -> bool {
        !self.front.is_empty()
    }

    /// The first front-end stage of type `T` (one that offers [`FrontEnd::as_any`]).
    pub fn front_end<T: 'static>(&self) -> Option<&T> {
        self.front
            .stages()
            .find_map(|s| s.as_any().and_then(|a| a.downcast_ref::<T>()))
    }

    /// The first front-end stage of type `T`, mutably (one that offers
    /// [`FrontEnd::as_any_mut`]): for setup outside a run, e.g. telling a PCM stage which pages
    /// preconditioning wrote.
    pub fn front_end_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.front
            .stages_mut()
            .find_map(|s| s.as_any_mut().and_then(|a| a.downcast_mut::<T>()))
    }

    /// The block (dense chip-model id) the next GC will erase, when the mapping can tell.
    pub fn next_victim_block(&self) -> Option<BlockId> {
        self.mapper.next_victim_block(&self.flash)
    }

    /// The current bytes of a logical byte range (full payload mode; zeros where nothing was
    /// written). Functional: no simulated time passes.
    pub fn read_bytes(&self, offset_bytes: u64, size_bytes: u64) -> FtlResult<Vec<u8>> {
        let mut out = Vec::with_capacity(size_bytes as usize);
        self.for_each_piece(offset_bytes, size_bytes, |len, bytes| match bytes {
            Some(bytes) => out.extend_from_slice(bytes),
            None => out.resize(out.len() + len, 0),
        })?;
        Ok(out)
    }

    /// [`Ssd::read_bytes`] into `out` (its length is the range's size): no allocation.
    pub fn read_bytes_into(&self, offset_bytes: u64, out: &mut [u8]) -> FtlResult<()> {
        let mut at = 0;
        self.for_each_piece(offset_bytes, out.len() as u64, |len, bytes| {
            match bytes {
                Some(bytes) => out[at..at + len].copy_from_slice(bytes),
                None => out[at..at + len].fill(0),
            }
            at += len;
        })
    }

    /// Whether the current bytes of the range starting at `offset_bytes` equal `expected`
    /// (its length is the range's size; zeros where nothing was written): [`Ssd::read_bytes`]
    /// compared in place, without a copy.
    pub fn bytes_equal(&self, offset_bytes: u64, expected: &[u8]) -> FtlResult<bool> {
        let mut at = 0;
        let mut equal = true;
        self.for_each_piece(offset_bytes, expected.len() as u64, |len, bytes| {
            let want = &expected[at..at + len];
            equal &= match bytes {
                Some(bytes) => bytes == want,
                None => want.iter().all(|&b| b == 0),
            };
            at += len;
        })?;
        Ok(equal)
    }

    /// Walks a logical byte range (full payload mode) page piece by page piece, in order:
    /// `piece(len, Some(bytes))` for written pages, `piece(len, None)` where nothing was.
    fn for_each_piece(
        &self,
        offset_bytes: u64,
        size_bytes: u64,
        mut piece: impl FnMut(usize, Option<&[u8]>),
    ) -> FtlResult<()> {
        if !self.flash.payload.enabled() {
            return Err(FtlError::BadRequest {
                message: "read_bytes needs ftl.payload = \"full\"".into(),
            });
        }
        self.check_range(offset_bytes, size_bytes)?;
        let page = u64::from(self.layout.page_size_bytes);
        let mut at = offset_bytes;
        while at < offset_bytes + size_bytes {
            let lpa = Lpa((at / page) as u32);
            let start = (at % page) as usize;
            let end = (page as usize).min(start + (offset_bytes + size_bytes - at) as usize);
            piece(
                end - start,
                self.current_page(lpa).map(|bytes| &bytes[start..end]),
            );
            at += (end - start) as u64;
        }
        Ok(())
    }

    /// Bytes of logical page `lpa` now: the front-end stages first, then flash.
    fn current_page(&self, lpa: Lpa) -> Option<&[u8]> {
        if let Some(bytes) = self.front.page(lpa) {
            return Some(bytes);
        }
        self.flash.payload.read(self.mapper.locate(lpa)?)
    }

    fn check_range(&self, offset_bytes: u64, size_bytes: u64) -> FtlResult<()> {
        let end = offset_bytes.saturating_add(size_bytes);
        if end > self.logical_capacity_bytes() && !self.is_commit_record(offset_bytes, size_bytes) {
            return Err(FtlError::OutOfRange {
                offset_bytes,
                end_bytes: end,
                capacity_bytes: self.logical_capacity_bytes(),
            });
        }
        Ok(())
    }

    /// Full consistency check: L2P and P2L agree with each other and with the block counts.
    pub fn check_consistency(&self) -> FtlResult<()> {
        self.mapper
            .check(&self.flash)
            .map_err(|message| FtlError::Stalled {
                message: format!("mapping inconsistent: {message}"),
            })
    }
}
