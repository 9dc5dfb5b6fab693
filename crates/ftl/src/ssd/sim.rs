//! Search-in-Memory through the SSD (paper 004 §VI-A1; issue 16 item 3): search (`81h`) and
//! gather (`82h`) as host commands on the LPAs of a SiM region (`ftl.sim_pages`, the last
//! logical pages), routed by the page mapping to the physical page.
//!
//! - **Pool**: the region's pages are written to blocks of their own placement id (the last
//!   one, after the host's), so GC moves them only into blocks of that id (`relocate_block`,
//!   wear-leveling) and never mixes them with storage data. A block is switched to match mode
//!   (SLC) on the chip when its first program of the pool is submitted, and back to storage
//!   mode when a storage program reuses it (the chip allows a switch only while the block is
//!   erased, and its erase is submitted before any program of the block's next use).
//! - **Randomization** (§IV-C1): the chip matches against bytes XORed with a keystream of the
//!   *chunk address*, `64 × PPA + chunk`. A pool page is programmed with the controller's
//!   randomized copy for its physical page, so a GC move is a read, de-randomization and a
//!   program randomized for the new page; copyback is never used for the pool (it would keep
//!   the old page's keystream, and every later search of the moved page would miss).
//! - **Commands**: a search is one decided op that goes to the chip as page-open, search (its k
//!   keys) and page-close, submitted together so no other op reaches the plane while its page
//!   is in the latches; a gather is one gather op (the chip senses the page into Latch 1).
//!   Both queue per die with the other ops (scheduler, GC ordering) and complete through the
//!   world loop; their timing is the chip model's stage chains. With `ftl.payload = "full"`
//!   the results are what the chip computes from the bytes it stores (the match bitmap; the
//!   gathered chunks, de-randomized by the controller); in timing-only mode they are empty. A
//!   page in the write buffer, or never written (zeros), is answered by the controller from
//!   its own copy, without a flash op.
//!
//! With `ftl.sim_integrity` the controller's integrity layer guards the region
//! (`sim/integrity.rs`: verification header, chunk ECC, fallback reads, refresh).

use super::{Executed, Ssd};
use crate::address::{DieId, Lpa, Ppa};
use crate::config::FtlConfig;
use crate::controller::CtrlEvent;
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::{PendingOp, Tag};
use crate::host::HostOp;
use crate::mapping::Mapping;
use integrity::Verdict;
use nandlab_core::SimTime;
use nandlab_nand::search::format::{self, CHUNK_BYTES, SIM_PAGE_BYTES};
use nandlab_nand::search::header::{self, Header};
use nandlab_nand::search::randomize;
use nandlab_nand::{BlockMode, ChunkMask, FlashOp, MatchBitmap, OpKind, PageAddress, SearchKey};

/// A SiM vendor command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimOp {
    /// Search `81h` with k keys (1 to the chip's `batch_keys_max`, one batched search on the
    /// chip): the slots of the page matching each key; returns k 64-byte bitmaps in key order
    /// (slot `i` = bit `i % 64` of little-endian word `i / 64`).
    Search(Vec<SearchKey>),
    /// Gather `82h`: the page's chunks of the bitmap, 64 bytes each, in chunk order.
    Gather(ChunkMask),
}

/// A SiM command on one logical page of the SiM region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimRequest {
    /// Submission time, or `None`: now.
    pub arrival: Option<SimTime>,
    /// The logical page (inside the SiM region, [`Ssd::sim_region`]).
    pub lpa: Lpa,
    /// The command.
    pub op: SimOp,
}

impl SimRequest {
    /// A search of `lpa` for `key`.
    pub fn search(lpa: Lpa, key: SearchKey) -> Self {
        SimRequest {
            arrival: None,
            lpa,
            op: SimOp::Search(vec![key]),
        }
    }
    /// A batched search of `lpa` for `keys` (k bitmaps back).
    pub fn search_batch(lpa: Lpa, keys: &[SearchKey]) -> Self {
        SimRequest {
            arrival: None,
            lpa,
            op: SimOp::Search(keys.to_vec()),
        }
    }
    /// A gather of `chunks` of `lpa`.
    pub fn gather(lpa: Lpa, chunks: ChunkMask) -> Self {
        SimRequest {
            arrival: None,
            lpa,
            op: SimOp::Gather(chunks),
        }
    }
    /// The same command submitted at `arrival`.
    pub fn at(mut self, arrival: SimTime) -> Self {
        self.arrival = Some(arrival);
        self
    }
}

/// What the SiM region has done since the SSD was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SimCounters {
    /// Search commands completed on the chip (page-open, search, page-close).
    pub chip_searches: u64,
    /// Gather commands completed on the chip.
    pub chip_gathers: u64,
    /// Commands answered by the controller from the write buffer or for a never-written page.
    pub controller_answers: u64,
    /// Pool programs submitted with the page's randomized bytes (host writes and GC moves).
    pub pool_programs: u64,
    /// Blocks switched to match mode on the chip.
    pub blocks_to_match: u64,
    /// Blocks switched back to storage mode on the chip.
    pub blocks_to_storage: u64,
    /// Keys searched (a batched search counts each key).
    pub keys_searched: u64,
    /// Integrity layer (`ftl.sim_integrity`): page-opens whose header the controller checked.
    pub opens_checked: u64,
    /// ... of them with a failed CRC (or magic number, or LPA).
    pub crc_failures: u64,
    /// ... of them older than `ftl.sim_refresh_age_s`.
    pub aged_opens: u64,
    /// Fallback full-page reads through the page ECC (failed opens and uncorrectable chunks).
    pub fallback_reads: u64,
    /// Read retries of those reads.
    pub fallback_read_retries: u64,
    /// Fallback reads the page ECC could not decode (the command returns no bytes).
    pub uncorrectable_reads: u64,
    /// Commands answered by the controller from a fallback read's corrected copy.
    pub corrected_answers: u64,
    /// Gathered chunks with one bit corrected by the chunk ECC.
    pub chunk_bits_corrected: u64,
    /// Gathered chunks the chunk ECC could not correct.
    pub chunks_uncorrectable: u64,
    /// Pages queued for refresh.
    pub refreshes_queued: u64,
    /// Pages rewritten by [`Ssd::sim_refresh`].
    pub refreshes_done: u64,
    /// Search commands the batch scheduler of [`Ssd::run_sim`] dispatched.
    pub batches: u64,
    /// Search requests that joined an earlier request's batch (`ftl.sim_batch_deadline_ns`).
    pub merged_searches: u64,
}

impl SimCounters {
    /// What happened since `start` (an earlier reading of the same device's counters).
    pub fn since(&self, start: &SimCounters) -> SimCounters {
        SimCounters {
            chip_searches: self.chip_searches - start.chip_searches,
            chip_gathers: self.chip_gathers - start.chip_gathers,
            controller_answers: self.controller_answers - start.controller_answers,
            pool_programs: self.pool_programs - start.pool_programs,
            blocks_to_match: self.blocks_to_match - start.blocks_to_match,
            blocks_to_storage: self.blocks_to_storage - start.blocks_to_storage,
            keys_searched: self.keys_searched - start.keys_searched,
            opens_checked: self.opens_checked - start.opens_checked,
            crc_failures: self.crc_failures - start.crc_failures,
            aged_opens: self.aged_opens - start.aged_opens,
            fallback_reads: self.fallback_reads - start.fallback_reads,
            fallback_read_retries: self.fallback_read_retries - start.fallback_read_retries,
            uncorrectable_reads: self.uncorrectable_reads - start.uncorrectable_reads,
            corrected_answers: self.corrected_answers - start.corrected_answers,
            chunk_bits_corrected: self.chunk_bits_corrected - start.chunk_bits_corrected,
            chunks_uncorrectable: self.chunks_uncorrectable - start.chunks_uncorrectable,
            refreshes_queued: self.refreshes_queued - start.refreshes_queued,
            refreshes_done: self.refreshes_done - start.refreshes_done,
            batches: self.batches - start.batches,
            merged_searches: self.merged_searches - start.merged_searches,
        }
    }
}

/// The SiM region and pool of an SSD.
#[derive(Debug)]
pub(crate) struct SimRegion {
    /// First LPA of the region (it runs to the end of the logical space).
    pub first_lpa: u32,
    pub pages: u32,
    /// Placement id of the pool.
    pub pool: u16,
    /// Scratch: a page's randomized bytes for a program.
    page: Vec<u8>,
    /// Scratch: a search command's keys.
    keys: Vec<SearchKey>,
    /// A fallback read's corrected, de-randomized page.
    corrected: Vec<u8>,
    /// The integrity layer (`ftl.sim_integrity`).
    integrity: Option<integrity::Integrity>,
    /// [`Ssd::run_sim`]'s commands in flight (request slot, batch) and finished (batch,
    /// completion time, data).
    in_flight: Vec<(u32, usize)>,
    finished: Vec<(usize, SimTime, Vec<u8>)>,
    pub counters: SimCounters,
}

impl SimRegion {
    /// The region of `config` on a device with `logical` logical pages (`None`: none).
    pub fn new(config: &FtlConfig, logical: u32) -> Option<Box<Self>> {
        (config.sim_pages > 0).then(|| {
            Box::new(SimRegion {
                first_lpa: logical - config.sim_pages,
                pages: config.sim_pages,
                pool: config.placement_ids,
                page: Vec::new(),
                keys: Vec::new(),
                corrected: Vec::new(),
                in_flight: Vec::new(),
                finished: Vec::new(),
                integrity: config
                    .sim_integrity
                    .then(|| integrity::Integrity::new(config.sim_refresh_age_s, config.sim_pages)),
                counters: SimCounters::default(),
            })
        })
    }

    #[inline]
    pub fn contains(&self, lpa: Lpa) -> bool {
        lpa.0 >= self.first_lpa && lpa.0 - self.first_lpa < self.pages
    }
}

impl Ssd {
    /// The SiM region's logical pages (`ftl.sim_pages`), if the device has one.
    pub fn sim_region(&self) -> Option<std::ops::Range<u64>> {
        self.sim
            .as_ref()
            .map(|s| u64::from(s.first_lpa)..u64::from(s.first_lpa) + u64::from(s.pages))
    }

    /// The SiM region's counters (zero without a region).
    pub fn sim_counters(&self) -> SimCounters {
        self.sim
            .as_ref()
            .map_or_else(SimCounters::default, |s| s.counters)
    }

    /// Submits one SiM command now (or at its arrival, if later) and simulates until it
    /// completes. `data` of the result: a search's 64-byte match bitmaps (one per key), a
    /// gather's chunks (64 bytes each, de-randomized); empty in timing-only payload mode.
    pub fn execute_sim(&mut self, request: &SimRequest) -> FtlResult<Executed> {
        let at = request.arrival.unwrap_or(self.now).max(self.now);
        self.check_sim(request)?;
        self.execute_at(at, |ssd| ssd.admit_sim(request, at).map(|_| ()))
    }

    /// The search bitmap of an [`Executed`] one-key SiM search.
    pub fn bitmap_of(executed: &Executed) -> Option<MatchBitmap> {
        (executed.data.len() == 64).then(|| Self::bitmaps_of(executed)[0])
    }

    /// The bitmaps of an [`Executed`] SiM search, one per key (none in timing-only mode).
    pub fn bitmaps_of(executed: &Executed) -> Vec<MatchBitmap> {
        executed
            .data
            .chunks_exact(64)
            .map(|bitmap| {
                let mut words = [0u64; 8];
                for (w, bytes) in words.iter_mut().zip(bitmap.chunks_exact(8)) {
                    *w = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                }
                MatchBitmap(words)
            })
            .collect()
    }

    pub(super) fn check_sim(&self, request: &SimRequest) -> FtlResult<()> {
        let Some(sim) = &self.sim else {
            return Err(FtlError::BadRequest {
                message: "SiM command on a device without a SiM region (ftl.sim_pages = 0)".into(),
            });
        };
        if !sim.contains(request.lpa) {
            return Err(FtlError::BadRequest {
                message: format!(
                    "SiM command on lpa {}: the SiM region is lpa {}..{}",
                    request.lpa.0,
                    sim.first_lpa,
                    u64::from(sim.first_lpa) + u64::from(sim.pages)
                ),
            });
        }
        let refuse = |message: String| Err(FtlError::BadRequest { message });
        match &request.op {
            SimOp::Gather(chunks) if chunks.0 == 0 => refuse(format!(
                "gather of lpa {}: empty chunk bitmap",
                request.lpa.0
            )),
            SimOp::Gather(chunks) if chunks.contains(0) && sim.integrity.is_some() => {
                refuse(format!(
                    "gather of lpa {}: chunk 0 holds the verification header (ftl.sim_integrity); give chunks 1 to 63",
                    request.lpa.0
                ))
            }
            SimOp::Search(keys) => {
                let max = self
                    .nand
                    .search_config()
                    .map_or(1, |c| c.batch_keys_max as usize);
                if keys.is_empty() || keys.len() > max {
                    return refuse(format!(
                        "search of lpa {}: {} keys; a search command takes 1 to {max} (search.batch_keys_max)",
                        request.lpa.0,
                        keys.len()
                    ));
                }
                Ok(())
            }
            SimOp::Gather(_) => Ok(()),
        }
    }

    /// Admits a checked SiM command (the queue has room); its request slot.
    pub(super) fn admit_sim(&mut self, request: &SimRequest, start: SimTime) -> FtlResult<u32> {
        let slot = self
            .requests
            .alloc()
            .expect("admit needs room in the queue");
        if self.watch == Some(super::WATCH_NEXT) {
            self.watch = Some(slot);
        }
        let s = &mut self.requests.slots[slot as usize];
        s.data.clear();
        // what crosses the host link: 16 bytes per key in; 64 per bitmap or chunk out
        let (op, bytes, args, keys_bytes) = match &request.op {
            SimOp::Search(keys) => {
                for k in keys {
                    s.data.extend_from_slice(&k.key.to_le_bytes());
                    s.data.extend_from_slice(&k.mask.to_le_bytes());
                }
                let k = keys.len() as u64;
                (HostOp::Search, 64 * k, (k, 0), KEY_BYTES * k)
            }
            SimOp::Gather(c) => (
                HostOp::Gather,
                u64::from(c.count()) * u64::from(CHUNK_BYTES),
                (c.0, 0),
                GATHER_ARGUMENT_BYTES,
            ),
        };
        s.op = op;
        s.start = start;
        s.offset_bytes = u64::from(request.lpa.0) * u64::from(self.page_size_bytes);
        s.size_bytes = bytes;
        s.placement_id = 0;
        s.outstanding = 1;
        s.sim_args = args;
        self.measure.submitted += 1;
        if let Some(c) = &mut self.controller {
            let ready = c.command(self.now, keys_bytes);
            c.events.schedule(ready, CtrlEvent::Decide(slot));
            return Ok(slot);
        }
        self.decide(slot, None).map(|()| slot)
    }

    /// Decides SiM command `slot`: one op on the page's die, or the controller's answer from
    /// the write buffer's copy or a never-written page (zeros).
    pub(super) fn decide_sim(&mut self, slot: u32) -> FtlResult<()> {
        let (op, offset, args) = {
            let s = &self.requests.slots[slot as usize];
            (s.op, s.offset_bytes, s.sim_args)
        };
        let lpa = Lpa((offset / u64::from(self.page_size_bytes)) as u32);
        let buffered = !self.front.is_empty() && self.front.contains(lpa);
        let located = if buffered {
            None
        } else {
            self.mapper.locate(lpa)
        };
        let Some(ppa) = located else {
            self.sim_answer(slot, op, args, lpa);
            if buffered {
                self.dram_page(Tag::Host(slot));
            }
            return Ok(());
        };
        let kind = if op == HostOp::Search {
            OpKind::Search
        } else {
            OpKind::Gather
        };
        self.flash.emit.push(kind, ppa, Ppa::NONE, Tag::Host(slot));
        Ok(())
    }

    /// The controller answers command `slot` from the current bytes of `lpa` (buffered, or
    /// zeros), not randomized.
    fn sim_answer(&mut self, slot: u32, op: HostOp, args: (u64, u64), lpa: Lpa) {
        self.sim
            .as_mut()
            .expect("SiM region")
            .counters
            .controller_answers += 1;
        if op == HostOp::Search {
            self.take_keys(slot);
        }
        if !self.flash.payload.enabled() {
            return;
        }
        let zeros = [0u8; SIM_PAGE_BYTES as usize];
        let page = self.front.page(lpa).unwrap_or(&zeros);
        let sim = self.sim.as_mut().expect("SiM region");
        let out = &mut self.requests.slots[slot as usize].data;
        answer(sim, page, op, args, out);
    }

    /// Moves the keys of search command `slot` (kept in its data until the command runs) into
    /// the region's scratch and clears the data for the results.
    fn take_keys(&mut self, slot: u32) {
        let sim = self.sim.as_mut().expect("SiM region");
        let data = &mut self.requests.slots[slot as usize].data;
        sim.keys.clear();
        sim.keys
            .extend(data.chunks_exact(KEY_BYTES as usize).map(|k| SearchKey {
                key: u64::from_le_bytes(k[..8].try_into().expect("8 bytes")),
                mask: u64::from_le_bytes(k[8..].try_into().expect("8 bytes")),
            }));
        data.clear();
        sim.counters.keys_searched += sim.keys.len() as u64;
    }

    /// The placement id of a write of `lpa` with `tag` on a device with a SiM region: the
    /// pool's for the region's pages, else the request's (and the per-id host counter).
    pub(super) fn sim_placement(&mut self, lpa: Lpa, tag: Tag) -> u16 {
        let sim = self.sim.as_ref().expect("SiM region");
        let id = if sim.contains(lpa) {
            sim.pool
        } else if let Tag::Host(slot) = tag {
            self.requests.slots[slot as usize].placement_id
        } else {
            return 0;
        };
        if matches!(tag, Tag::Host(_)) {
            self.flash.placement.host_pages[usize::from(id)] += 1;
        }
        id
    }

    /// Submits `op` if it needs the SiM path (a SiM command; a program of a pool page with its
    /// bytes); first switches the block a program or copyback writes to the mode of its pool.
    /// Whether it submitted the op.
    #[cold]
    #[inline(never)]
    pub(super) fn submit_sim(&mut self, die: DieId, op: PendingOp) -> FtlResult<bool> {
        match op.kind {
            OpKind::Program => {
                self.set_pool_mode(op.source)?;
                if self.flash.in_sim_pool(op.source) && self.flash.payload.enabled() {
                    self.program_pool_page(die, op)?;
                    return Ok(true);
                }
                Ok(false)
            }
            OpKind::Copyback => {
                self.set_pool_mode(op.target)?;
                Ok(false)
            }
            OpKind::Search | OpKind::Gather => {
                self.submit_command(die, op)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Switches the block of `ppa` to its pool's mode if its chip block is still erased (a
    /// block being written keeps the mode its first program set).
    fn set_pool_mode(&mut self, ppa: Ppa) -> FtlResult<()> {
        let want = if self.flash.in_sim_pool(ppa) {
            BlockMode::Match
        } else {
            BlockMode::Storage
        };
        let address = self.sched.codec().address(ppa)?;
        if self.nand.block_mode(&address)? == want {
            return Ok(());
        }
        let block = self.flash.blocks.block_of(ppa);
        let first = self.flash.blocks.page(block, 0);
        let first = self.sched.codec().address(first)?;
        self.nand.set_block_mode(&first, want)?;
        let c = &mut self.sim.as_mut().expect("SiM region").counters;
        match want {
            BlockMode::Match => c.blocks_to_match += 1,
            BlockMode::Storage => c.blocks_to_storage += 1,
        }
        Ok(())
    }

    /// Programs pool page `op.source` with its bytes randomized for its chunk addresses (with
    /// the integrity layer: header in chunk 0, chunk ECC in the spare area).
    fn program_pool_page(&mut self, die: DieId, op: PendingOp) -> FtlResult<()> {
        let address = self.sched.codec().address(op.source)?;
        let chip_ppa = self.nand.geometry().ppa(&address).0;
        let sim = self.sim.as_mut().expect("SiM region");
        let mut page = std::mem::take(&mut sim.page);
        page.clear();
        match self.flash.payload.read(op.source) {
            Some(bytes) => page.extend_from_slice(bytes),
            None => page.resize(self.page_size_bytes as usize, 0),
        }
        if sim.integrity.is_some() {
            // the page's LPA (the mapping recorded it in the OOB when it decided the program)
            let lpa = self.flash.oob.get(op.source).and_then(|(lpa, _)| lpa);
            let header = Header {
                written_at: self.now,
                magic: integrity::SIM_MAGIC,
                page: lpa.map_or(u32::MAX, |l| l.0),
            };
            header::seal_page(&mut page, &header, chip_ppa, true);
        } else {
            randomize::randomize_page(chip_ppa, &mut page);
        }
        let result = self
            .nand
            .program_page(self.now, address, &page, op.tag.encode_with_die(die));
        let sim = self.sim.as_mut().expect("SiM region");
        sim.page = page;
        result?;
        sim.counters.pool_programs += 1;
        self.flash.oob.submitted(die, op.source);
        self.flash
            .trace_submitted(die.index(), OpKind::Program, op.source, Ppa::NONE);
        Ok(())
    }

    /// After a functional load of the mapping ([`Ssd::load_recovered`]): programs every mapped
    /// page of the SiM region on the chip, in physical order, with its bytes randomized for its
    /// address (sealed with a header with the integrity layer; without bytes in timing-only
    /// mode), switching its block to match mode first, and simulates until the chip is idle.
    pub(super) fn load_sim_pool(&mut self) -> FtlResult<()> {
        let sim = self.sim.as_ref().expect("SiM region");
        let mut pages: Vec<Ppa> = (sim.first_lpa..sim.first_lpa + sim.pages)
            .filter_map(|lpa| self.mapper.locate(Lpa(lpa)))
            .collect();
        pages.sort_unstable();
        for ppa in pages {
            debug_assert!(self.flash.in_sim_pool(ppa));
            let die = self.flash.oob.die_of(ppa);
            self.set_pool_mode(ppa)?;
            // the mount loaded the page as done; its program on the chip is pending again, so
            // the block's unsubmitted count (erase gating, durability) sees it
            self.flash.oob.reprogram(ppa, false);
            if self.flash.payload.enabled() {
                let op = PendingOp {
                    kind: OpKind::Program,
                    source: ppa,
                    target: Ppa::NONE,
                    tag: Tag::Internal,
                    transfer_bytes: 0,
                };
                self.program_pool_page(die, op)?;
            } else {
                // timing only: the chip needs the page programmed (without bytes) to open it
                let address = self.sched.codec().address(ppa)?;
                let tag = Tag::Internal.encode_with_die(die);
                self.nand
                    .submit(self.now, &FlashOp::program(address).with_tag(tag))?;
                self.flash.oob.submitted(die, ppa);
            }
        }
        self.drain()
    }

    /// Submits SiM command op `op` (tag: its request): a search as page-open, search and
    /// page-close at once (nothing else reaches the plane while its page is latched), a gather
    /// as one op. With full payloads the chip's results go into the request's data. With the
    /// integrity layer a failed header check (or an uncorrectable gathered chunk) adds a full
    /// read of the page and the controller answers from its corrected copy.
    fn submit_command(&mut self, die: DieId, op: PendingOp) -> FtlResult<()> {
        let Tag::Host(slot) = op.tag else {
            unreachable!("SiM commands are host requests");
        };
        let address = self.sched.codec().address(op.source)?;
        let chip_ppa = self.nand.geometry().ppa(&address).0;
        let tag = op.tag.encode_with_die(die);
        let (args, offset) = {
            let s = &self.requests.slots[slot as usize];
            (s.sim_args, s.offset_bytes)
        };
        let lpa = Lpa((offset / u64::from(self.page_size_bytes)) as u32);
        // the chip has the page's bytes when it was programmed with them (full payloads)
        let functional = self.nand.stored_page(&address).is_some();
        let chip_ops = if op.kind == OpKind::Search {
            self.take_keys(slot);
            let keys = std::mem::take(&mut self.sim.as_mut().expect("SiM region").keys);
            let result = self.submit_search(address, chip_ppa, lpa, slot, tag, &keys, functional);
            self.sim.as_mut().expect("SiM region").keys = keys;
            result?
        } else {
            self.submit_gather(
                address,
                chip_ppa,
                lpa,
                slot,
                tag,
                ChunkMask(args.0),
                functional,
            )?
        };
        // the decided op counted once; the chip completes each of its ops
        self.requests.slots[slot as usize].outstanding += chip_ops - 1;
        for _ in 0..chip_ops {
            self.flash.oob.submitted(die, Ppa::NONE);
        }
        // a power-loss trace folds one decided op per completion: the others join it
        self.flash
            .trace_submitted(die.index(), op.kind, op.source, op.target);
        for _ in 1..chip_ops {
            self.flash.trace_extra(die.index(), OpKind::PageOpen);
        }
        Ok(())
    }

    /// A search's chip ops; their number.
    #[allow(clippy::too_many_arguments)]
    fn submit_search(
        &mut self,
        address: PageAddress,
        chip_ppa: u64,
        lpa: Lpa,
        slot: u32,
        tag: u64,
        keys: &[SearchKey],
        functional: bool,
    ) -> FtlResult<u32> {
        let now = self.now;
        let window = self.nand.page_open(now, address, tag)?;
        let sim = self.sim.as_mut().expect("SiM region");
        let verdict = if functional {
            sim.check_window(&window, chip_ppa, lpa, now)
        } else {
            Verdict::OnChip
        };
        let mut out = std::mem::take(&mut self.requests.slots[slot as usize].data);
        out.clear();
        let result = self.run_search(
            address, chip_ppa, lpa, tag, keys, functional, verdict, &mut out,
        );
        self.requests.slots[slot as usize].data = out;
        result?;
        self.sim
            .as_mut()
            .expect("SiM region")
            .counters
            .chip_searches += 1;
        Ok(3)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_search(
        &mut self,
        address: PageAddress,
        chip_ppa: u64,
        lpa: Lpa,
        tag: u64,
        keys: &[SearchKey],
        functional: bool,
        verdict: Verdict,
        out: &mut Vec<u8>,
    ) -> FtlResult<()> {
        let now = self.now;
        if verdict != Verdict::OnChip {
            // optimistic correction failed: close, read in full, answer from the copy
            self.nand.page_close(now, address, tag)?;
            self.sim.as_mut().expect("SiM region").queue_refresh(lpa);
            if self.sim_full_read(address, chip_ppa, tag)? {
                let sim = self.sim.as_mut().expect("SiM region");
                sim.counters.corrected_answers += 1;
                for k in keys {
                    push_bitmap(out, format::match_page(&sim.corrected, *k), true);
                }
            }
            return Ok(());
        }
        if functional {
            let clear = self.sim.as_ref().expect("SiM region").integrity.is_some();
            for bitmap in self.nand.search_page(now, address, keys, tag)? {
                push_bitmap(out, bitmap, clear);
            }
        } else {
            self.nand.submit(
                now,
                &FlashOp::search(address, keys.len() as u32).with_tag(tag),
            )?;
        }
        self.nand.page_close(now, address, tag)?;
        Ok(())
    }

    /// A gather's chip ops (the gather, and a full read when a chunk is uncorrectable); their
    /// number.
    #[allow(clippy::too_many_arguments)]
    fn submit_gather(
        &mut self,
        address: PageAddress,
        chip_ppa: u64,
        lpa: Lpa,
        slot: u32,
        tag: u64,
        chunks: ChunkMask,
        functional: bool,
    ) -> FtlResult<u32> {
        let now = self.now;
        self.sim.as_mut().expect("SiM region").counters.chip_gathers += 1;
        if !functional {
            self.nand
                .submit(now, &FlashOp::gather(address, chunks.0).with_tag(tag))?;
            return Ok(1);
        }
        let mut out = std::mem::take(&mut self.requests.slots[slot as usize].data);
        out.clear();
        let raw = self.nand.gather_chunks(now, address, chunks, tag)?;
        let sim = self.sim.as_mut().expect("SiM region");
        let ops = if sim.integrity.is_none() {
            let ecc = self
                .nand
                .search_config()
                .map_or(0, |c| c.chunk_ecc_bytes as usize);
            for (chunk, bytes) in chunks.chunks().zip(raw.chunks_exact(64 + ecc)) {
                let at = out.len();
                out.extend_from_slice(&bytes[..64]);
                let chunk_address = randomize::chunk_address(chip_ppa, chunk);
                randomize::randomize_chunk(chunk_address, &mut out[at..]);
            }
            1
        } else if sim.check_chunks(&raw, chunks, chip_ppa, &mut out) {
            1
        } else {
            out.clear();
            sim.queue_refresh(lpa);
            let decoded = self.sim_full_read(address, chip_ppa, tag);
            let sim = self.sim.as_mut().expect("SiM region");
            if matches!(decoded, Ok(true)) {
                sim.counters.corrected_answers += 1;
                for chunk in chunks.chunks() {
                    out.extend_from_slice(format::chunk_bytes(&sim.corrected, chunk));
                }
            }
            self.requests.slots[slot as usize].data = out;
            decoded?;
            return Ok(2);
        };
        self.requests.slots[slot as usize].data = out;
        Ok(ops)
    }
}

/// Bytes a search key takes on the host link (key and mask).
const KEY_BYTES: u64 = 16;
/// Bytes of a gather command's argument on the host link (the chunk bitmap).
const GATHER_ARGUMENT_BYTES: u64 = 8;

/// Appends `bitmap`'s 64 bytes to `out`, without the header chunk's slots if `clear_header`.
fn push_bitmap(out: &mut Vec<u8>, mut bitmap: MatchBitmap, clear_header: bool) {
    if clear_header {
        bitmap.0[0] &= !integrity::HEADER_SLOTS;
    }
    out.extend(bitmap.0.iter().flat_map(|w| w.to_le_bytes()));
}

/// The controller's answer to a command from a page's plain bytes (`sim.keys`: a search's
/// keys) into `out`.
fn answer(sim: &SimRegion, page: &[u8], op: HostOp, args: (u64, u64), out: &mut Vec<u8>) {
    out.clear();
    if op == HostOp::Search {
        for k in &sim.keys {
            push_bitmap(out, format::match_page(page, *k), sim.integrity.is_some());
        }
    } else {
        for chunk in ChunkMask(args.0).chunks() {
            out.extend_from_slice(format::chunk_bytes(page, chunk));
        }
    }
}

mod batch;
mod integrity;

#[cfg(test)]
mod batch_tests;
#[cfg(test)]
mod integrity_tests;
#[cfg(test)]
mod remount_tests;
#[cfg(test)]
mod tests;
