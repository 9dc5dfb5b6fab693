//! The SSD: controller + FTL + chip model, and the world loop that drives them.
//!
//! [`Ssd`] owns the [`NandSim`] and a host-side [`EventQueue`] (arrivals). The loop compares
//! the chip model's next event time with the host queue's and processes the earlier one;
//! **on a tie the host event goes first**. Functional state (mapping, valid counts, payloads)
//! changes when the FTL decides (at admission, or when the old page of a read-modify-write has
//! been read); the decided flash ops are then submitted in decision order, so the chip model's
//! per-die ordering keeps GC moves before their erase and erases before reuse.

mod durability;
mod host_path;
mod precondition;
mod report;
mod world;

pub use durability::{WriteState, WriteStateCounts};
pub use precondition::{PRECONDITION_PROGRESS_WRITES, Precondition};

use crate::address::{BlockId, Lpa};
use crate::buffer::WriteBuffer;
use crate::config::{
    GcScope, MappingKind, PayloadMode, SsdConfig, WearLeveling, parse_allocation_order,
};
use crate::error::{FtlError, FtlResult};
use crate::flash::Flash;
use crate::flash::blocks::BlockManager;
use crate::flash::codec::AddressCodec;
use crate::flash::emit::PendingOp;
use crate::flash::payload::Payload;
use crate::gc::VictimPicker;
use crate::host::queue::{DeferredTable, RequestTable};
use crate::mapping::{Mapper, block::BlockFtl, hybrid::HybridFtl, page::PageFtl, stripe_order};
use crate::stats::Measure;
use nandlab_core::{EventQueue, SimTime};
use nandlab_nand::{Completion, FlashOp, Geometry, NandSim, OpKind, PageAddress};
use std::collections::VecDeque;

/// Result of one synchronously executed request ([`Ssd::execute`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executed {
    /// From submission to completion.
    pub latency: SimTime,
    /// Completion time.
    pub completed: SimTime,
    /// The bytes read (reads in full payload mode; empty otherwise).
    pub data: Vec<u8>,
}

/// A simulated SSD.
#[derive(Debug)]
pub struct Ssd {
    config: SsdConfig,
    seed: u64,
    geometry: Geometry,
    nand: NandSim,
    mapper: Mapper,
    flash: Flash,
    buffer: Option<WriteBuffer>,
    requests: RequestTable,
    deferred: DeferredTable,
    events: EventQueue<()>,
    completions: Vec<Completion>,
    /// Reusable one-target ops, one per op kind (so submitting allocates nothing).
    templates: [FlashOp; OpKind::COUNT],
    now: SimTime,
    page_size_bytes: u32,
    logical_pages: u32,
    measure: Measure,
    hint: Vec<Lpa>,
    host_ops_since_hint: u32,
    /// Scratch page buffers (full mode).
    scratch: Vec<u8>,
    evicted: Vec<u8>,
    /// Request slot that [`Ssd::execute`] waits for, and its result when done.
    watch: Option<u32>,
    watched: Option<Executed>,
    /// Ops decided but not yet given to the chip model, per die (FIFO).
    die_queues: Vec<VecDeque<PendingOp>>,
    codec: AddressCodec,
}

/// Logical pages of a device with over-provisioning `op_fraction` (spare / logical).
pub fn logical_pages(geometry: &Geometry, op_fraction: f64) -> u64 {
    (geometry.total_pages() as f64 / (1.0 + op_fraction)).floor() as u64
}

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
        config.validate()?;
        config.check_memory_budget()?;
        let nand_config = config.nand_config()?;
        let geometry = nand_config.geometry.clone();
        let nand = NandSim::new(nand_config, seed)?;
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
            f.copyback,
        );
        let stripe = stripe_order(&geometry, parse_allocation_order(&f.allocation_order)?);
        let wl_gap = (f.wear_leveling == WearLeveling::Static).then_some(f.wl_erase_gap_threshold);
        let mapper = match f.mapping {
            MappingKind::Page => {
                let mut page = PageFtl::new(
                    logical,
                    physical,
                    stripe,
                    VictimPicker::new(f.gc_policy, seed),
                    f.gc_threshold_blocks,
                    wl_gap,
                );
                page.set_hint_all_planes(f.hint_all_planes);
                page.set_device_gc(f.gc_scope == GcScope::Device);
                Mapper::Page(page)
            }
            MappingKind::Block => {
                let m = BlockFtl::new(&geometry, logical, stripe, f.gc_threshold_blocks);
                logical = m.logical_pages();
                Mapper::Block(m)
            }
            MappingKind::Hybrid => {
                let m = HybridFtl::new(
                    &geometry,
                    logical,
                    stripe,
                    f.gc_threshold_blocks,
                    f.hybrid_random_log_blocks,
                );
                logical = m.logical_pages();
                Mapper::Hybrid(m)
            }
        };
        if logical == 0 || u64::from(f.write_buffer_pages) > u64::from(logical) {
            return Err(crate::error::config_error(
                "ftl.mapping",
                format!(
                    "{:?} mapping leaves {logical} logical pages on this device (write buffer {} pages)",
                    f.mapping, f.write_buffer_pages
                ),
            ));
        }
        let buffer = (f.write_buffer_pages > 0).then(|| {
            WriteBuffer::new(
                f.write_buffer_pages,
                logical,
                geometry.page_size_bytes,
                f.write_buffer_policy,
                full,
            )
        });
        let first = PageAddress::default();
        let templates = OpKind::ALL.map(|kind| match kind {
            OpKind::Read => FlashOp::read(first),
            OpKind::Program => FlashOp::program(first),
            OpKind::Erase => FlashOp::erase(first),
            OpKind::Copyback => FlashOp::copyback(first, first),
            // SiM kinds: not issued by the FTL (yet)
            _ => FlashOp::of_kind(kind, first),
        });
        Ok(Ssd {
            requests: RequestTable::new(f.queue_depth),
            deferred: DeferredTable::default(),
            events: EventQueue::with_capacity(4),
            completions: Vec::with_capacity(64),
            templates,
            now: SimTime::ZERO,
            page_size_bytes: geometry.page_size_bytes,
            logical_pages: logical,
            measure: Measure::default(),
            hint: Vec::new(),
            host_ops_since_hint: 0,
            scratch: Vec::new(),
            evicted: Vec::new(),
            watch: None,
            watched: None,
            die_queues: (0..geometry.total_dies())
                .map(|_| VecDeque::new())
                .collect(),
            codec: AddressCodec::new(&geometry),
            config,
            seed,
            geometry,
            nand,
            mapper,
            flash,
            buffer,
        })
    }

    /// The configuration the SSD was built from.
    pub fn config(&self) -> &SsdConfig {
        &self.config
    }
    /// The chip geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    /// The chip model (read-only: statistics, block table).
    pub fn nand(&self) -> &NandSim {
        &self.nand
    }
    /// Simulated time of the last event processed.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Co-design hint (SPEC F7): the flash page size.
    pub fn page_size_bytes(&self) -> u32 {
        self.page_size_bytes
    }
    /// Logical pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        u64::from(self.logical_pages)
    }
    /// Logical capacity in bytes.
    pub fn logical_capacity_bytes(&self) -> u64 {
        u64::from(self.logical_pages) * u64::from(self.page_size_bytes)
    }
    /// Physical pages of the device.
    pub fn physical_pages(&self) -> u64 {
        self.geometry.total_pages()
    }

    /// Co-design hint (SPEC F7): the LPAs of the valid pages of the block GC will erase next
    /// (per the active victim policy), as of the last refresh. The engine refreshes it every
    /// `ftl.hint_refresh_ops` host requests; [`Ssd::refresh_hint`] refreshes it now.
    pub fn next_erase_block_valid_lpas(&self) -> Vec<Lpa> {
        self.hint.clone()
    }

    /// Recomputes the co-design hint from the current state.
    pub fn refresh_hint(&mut self) {
        self.mapper
            .next_erase_block_valid_lpas(&self.flash, &mut self.hint);
        self.host_ops_since_hint = 0;
    }

    /// The block (dense chip-model id) the next GC will erase, when the mapping can tell.
    pub fn next_victim_block(&self) -> Option<BlockId> {
        match &self.mapper {
            Mapper::Page(m) => m.next_victim_block(&self.flash),
            _ => None,
        }
    }

    /// The current bytes of a logical byte range (full payload mode; zeros where nothing was
    /// written). Functional: no simulated time passes.
    pub fn read_bytes(&self, offset_bytes: u64, size_bytes: u64) -> FtlResult<Vec<u8>> {
        if self.config.ftl.payload != PayloadMode::Full {
            return Err(FtlError::BadRequest {
                message: "read_bytes needs ftl.payload = \"full\"".into(),
            });
        }
        self.check_range(offset_bytes, size_bytes)?;
        let page = u64::from(self.page_size_bytes);
        let mut out = Vec::with_capacity(size_bytes as usize);
        let mut at = offset_bytes;
        while at < offset_bytes + size_bytes {
            let lpa = Lpa((at / page) as u32);
            let start = (at % page) as usize;
            let end = (page as usize).min(start + (offset_bytes + size_bytes - at) as usize);
            match self.current_page(lpa) {
                Some(bytes) => out.extend_from_slice(&bytes[start..end]),
                None => out.resize(out.len() + end - start, 0),
            }
            at += (end - start) as u64;
        }
        Ok(out)
    }

    /// Bytes of logical page `lpa` now: the write buffer first, then flash.
    fn current_page(&self, lpa: Lpa) -> Option<&[u8]> {
        if let Some(bytes) = self.buffer.as_ref().and_then(|b| b.page(lpa)) {
            return Some(bytes);
        }
        self.flash.payload.read(self.mapper.locate(lpa)?)
    }

    fn check_range(&self, offset_bytes: u64, size_bytes: u64) -> FtlResult<()> {
        let end = offset_bytes.saturating_add(size_bytes);
        if end > self.logical_capacity_bytes() {
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

/// `watch` value meaning "the next admitted request".
const WATCH_NEXT: u32 = u32::MAX;
