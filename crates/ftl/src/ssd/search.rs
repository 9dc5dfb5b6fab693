//! The SSD's side of the search component ([`crate::search`]): admitting and deciding search
//! and gather commands, submitting them to the chip, programming the pool's pages and the
//! integrity layer's fallback reads and refresh — the parts that touch the SSD's request table,
//! mapping and chip port.

use super::{Executed, Ssd};
use crate::address::{DieId, Lpa, Ppa};
use crate::controller::CtrlEvent;
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::{PendingOp, Tag};
use crate::host::HostOp;
use crate::mapping::Mapping;
use crate::search::integrity::{self, Verdict};
use crate::search::region::{GATHER_ARGUMENT_BYTES, KEY_BYTES, answer, push_bitmap};
use crate::search::{SearchCounters, SearchOp, SearchRequest};
use nandlab_core::SimTime;
use nandlab_nand::search::format::{self, CHUNK_BYTES, SIM_PAGE_BYTES};
use nandlab_nand::search::header::{self, Header};
use nandlab_nand::search::randomize;
use nandlab_nand::{BlockMode, ChunkMask, FlashOp, MatchBitmap, OpKind, PageAddress, SearchKey};

impl Ssd {
    /// The SiM region's logical pages (`ftl.sim_pages`), if the device has one.
    pub fn search_region(&self) -> Option<std::ops::Range<u64>> {
        self.stages
            .search
            .as_ref()
            .map(|s| u64::from(s.first_lpa)..u64::from(s.first_lpa) + u64::from(s.pages))
    }

    /// The SiM region's counters (zero without a region).
    pub fn search_counters(&self) -> SearchCounters {
        self.stages
            .search
            .as_ref()
            .map_or_else(SearchCounters::default, |s| s.counters)
    }

    /// Submits one SiM command now (or at its arrival, if later) and simulates until it
    /// completes. `data` of the result: a search's 64-byte match bitmaps (one per key), a
    /// gather's chunks (64 bytes each, de-randomized); empty in timing-only payload mode.
    pub fn execute_search(&mut self, request: &SearchRequest) -> FtlResult<Executed> {
        self.execute_search_open(request)
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
            .map(|bitmap| MatchBitmap::from_le_bytes(bitmap.try_into().expect("64 bytes")))
            .collect()
    }

    pub(super) fn check_search(&self, request: &SearchRequest) -> FtlResult<()> {
        let Some(search) = &self.stages.search else {
            return Err(FtlError::BadRequest {
                message: "SiM command on a device without a SiM region (ftl.sim_pages = 0)".into(),
            });
        };
        if !search.contains(request.lpa) {
            return Err(FtlError::BadRequest {
                message: format!(
                    "SiM command on lpa {}: the SiM region is lpa {}..{}",
                    request.lpa.0,
                    search.first_lpa,
                    u64::from(search.first_lpa) + u64::from(search.pages)
                ),
            });
        }
        let refuse = |message: String| Err(FtlError::BadRequest { message });
        match &request.op {
            SearchOp::Gather(chunks) if chunks.0 == 0 => refuse(format!(
                "gather of lpa {}: empty chunk bitmap",
                request.lpa.0
            )),
            SearchOp::Gather(chunks) if chunks.contains(0) && search.integrity.is_some() => {
                refuse(format!(
                    "gather of lpa {}: chunk 0 holds the verification header (ftl.sim_integrity); give chunks 1 to 63",
                    request.lpa.0
                ))
            }
            SearchOp::Search(keys) => {
                let max = self
                    .chip
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
            SearchOp::Gather(_) => Ok(()),
        }
    }

    /// Admits a checked SiM command (the queue has room); its request slot.
    pub(super) fn admit_search(
        &mut self,
        request: &SearchRequest,
        start: SimTime,
    ) -> FtlResult<u32> {
        let slot = self
            .host
            .requests
            .alloc()
            .expect("admit needs room in the queue");
        let s = &mut self.host.requests.slots[slot as usize];
        s.data.clear();
        // what crosses the host link: 16 bytes per key in; 64 per bitmap or chunk out
        let (op, bytes, args, keys_bytes) = match &request.op {
            SearchOp::Search(keys) => {
                for k in keys {
                    s.data.extend_from_slice(&k.key.to_le_bytes());
                    s.data.extend_from_slice(&k.mask.to_le_bytes());
                }
                let k = keys.len() as u64;
                (HostOp::Search, 64 * k, (k, 0), KEY_BYTES * k)
            }
            SearchOp::Gather(c) => (
                HostOp::Gather,
                u64::from(c.count()) * u64::from(CHUNK_BYTES),
                (c.0, 0),
                GATHER_ARGUMENT_BYTES,
            ),
        };
        s.op = op;
        s.start = start;
        s.offset_bytes = u64::from(request.lpa.0) * u64::from(self.layout.page_size_bytes);
        s.size_bytes = bytes;
        s.placement_id = 0;
        s.outstanding = 1;
        s.sim_args = args;
        self.measurement.measure.submitted += 1;
        if let Some(c) = &mut self.stages.controller {
            let ready = c.command(self.now, keys_bytes);
            c.events.schedule(ready, CtrlEvent::Decide(slot));
            return Ok(slot);
        }
        self.decide(slot, None).map(|()| slot)
    }

    /// Decides SiM command `slot`: one op on the page's die, or the controller's answer from
    /// the write buffer's copy or a never-written page (zeros).
    pub(super) fn decide_search(&mut self, slot: u32) -> FtlResult<()> {
        let (op, offset, args) = {
            let s = &self.host.requests.slots[slot as usize];
            (s.op, s.offset_bytes, s.sim_args)
        };
        let lpa = Lpa((offset / u64::from(self.layout.page_size_bytes)) as u32);
        let buffered = !self.front.is_empty() && self.front.contains(lpa);
        let located = if buffered {
            None
        } else {
            self.mapper.locate(lpa)
        };
        let Some(ppa) = located else {
            self.search_answer(slot, op, args, lpa);
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
    fn search_answer(&mut self, slot: u32, op: HostOp, args: (u64, u64), lpa: Lpa) {
        self.stages
            .search
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
        let search = self.stages.search.as_mut().expect("SiM region");
        let out = &mut self.host.requests.slots[slot as usize].data;
        answer(search, page, op, args, out);
    }

    /// Moves the keys of search command `slot` (kept in its data until the command runs) into
    /// the region's scratch and clears the data for the results.
    fn take_keys(&mut self, slot: u32) {
        let search = self.stages.search.as_mut().expect("SiM region");
        let data = &mut self.host.requests.slots[slot as usize].data;
        search.keys.clear();
        search
            .keys
            .extend(data.chunks_exact(KEY_BYTES as usize).map(|k| SearchKey {
                key: u64::from_le_bytes(k[..8].try_into().expect("8 bytes")),
                mask: u64::from_le_bytes(k[8..].try_into().expect("8 bytes")),
            }));
        data.clear();
        search.counters.keys_searched += search.keys.len() as u64;
    }

    /// The placement id of a write of `lpa` with `tag` on a device with a SiM region: the
    /// pool's for the region's pages, else the request's (and the per-id host counter).
    pub(super) fn search_placement(&mut self, lpa: Lpa, tag: Tag) -> u16 {
        let search = self.stages.search.as_ref().expect("SiM region");
        let id = if search.contains(lpa) {
            search.pool
        } else if let Tag::Host(slot) = tag {
            self.host.requests.slots[slot as usize].placement_id
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
    pub(super) fn submit_search_path(&mut self, die: DieId, op: PendingOp) -> FtlResult<bool> {
        match op.kind {
            OpKind::Program => {
                self.set_pool_mode(op.source)?;
                if self.flash.in_search_pool(op.source) && self.flash.payload.enabled() {
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
        let want = if self.flash.in_search_pool(ppa) {
            BlockMode::Match
        } else {
            BlockMode::Storage
        };
        let address = self.sched.codec().address(ppa)?;
        if self.chip.nand.block_mode(&address)? == want {
            return Ok(());
        }
        let block = self.flash.blocks.block_of(ppa);
        let first = self.flash.blocks.page(block, 0);
        let first = self.sched.codec().address(first)?;
        self.chip.nand.set_block_mode(&first, want)?;
        let c = &mut self.stages.search.as_mut().expect("SiM region").counters;
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
        let chip_ppa = self.chip.nand.geometry().ppa(&address).0;
        let search = self.stages.search.as_mut().expect("SiM region");
        let mut page = std::mem::take(&mut search.page);
        page.clear();
        match self.flash.payload.read(op.source) {
            Some(bytes) => page.extend_from_slice(bytes),
            None => page.resize(self.layout.page_size_bytes as usize, 0),
        }
        if search.integrity.is_some() {
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
        let result =
            self.chip
                .nand
                .program_page(self.now, address, &page, op.tag.encode_with_die(die));
        let search = self.stages.search.as_mut().expect("SiM region");
        search.page = page;
        result?;
        search.counters.pool_programs += 1;
        self.flash.oob.submitted(die, op.source);
        self.flash
            .trace_submitted(die.index(), OpKind::Program, op.source, Ppa::NONE);
        Ok(())
    }

    /// After a functional load of the mapping ([`Ssd::load_recovered`]): programs every mapped
    /// page of the SiM region on the chip, in physical order, with its bytes randomized for its
    /// address (sealed with a header with the integrity layer; without bytes in timing-only
    /// mode), switching its block to match mode first, and simulates until the chip is idle.
    pub(super) fn load_search_pool(&mut self) -> FtlResult<()> {
        let search = self.stages.search.as_ref().expect("SiM region");
        let mut pages: Vec<Ppa> = (search.first_lpa..search.first_lpa + search.pages)
            .filter_map(|lpa| self.mapper.locate(Lpa(lpa)))
            .collect();
        pages.sort_unstable();
        for ppa in pages {
            debug_assert!(self.flash.in_search_pool(ppa));
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
                self.chip
                    .nand
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
        let chip_ppa = self.chip.nand.geometry().ppa(&address).0;
        let tag = op.tag.encode_with_die(die);
        let (args, offset) = {
            let s = &self.host.requests.slots[slot as usize];
            (s.sim_args, s.offset_bytes)
        };
        let lpa = Lpa((offset / u64::from(self.layout.page_size_bytes)) as u32);
        // the chip has the page's bytes when it was programmed with them (full payloads)
        let functional = self.chip.nand.stored_page(&address).is_some();
        let chip_ops = if op.kind == OpKind::Search {
            self.take_keys(slot);
            let keys = std::mem::take(&mut self.stages.search.as_mut().expect("SiM region").keys);
            let result =
                self.submit_chip_search(address, chip_ppa, lpa, slot, tag, &keys, functional);
            self.stages.search.as_mut().expect("SiM region").keys = keys;
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
        self.host.requests.slots[slot as usize].outstanding += chip_ops - 1;
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
    fn submit_chip_search(
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
        let window = self.chip.nand.page_open(now, address, tag)?;
        let search = self.stages.search.as_mut().expect("SiM region");
        let verdict = if functional {
            search.check_window(&window, chip_ppa, lpa, now)
        } else {
            Verdict::OnChip
        };
        let mut out = std::mem::take(&mut self.host.requests.slots[slot as usize].data);
        out.clear();
        let result = self.run_search_ops(
            address, chip_ppa, lpa, tag, keys, functional, verdict, &mut out,
        );
        self.host.requests.slots[slot as usize].data = out;
        result?;
        self.stages
            .search
            .as_mut()
            .expect("SiM region")
            .counters
            .chip_searches += 1;
        Ok(3)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_search_ops(
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
            self.chip.nand.page_close(now, address, tag)?;
            self.stages
                .search
                .as_mut()
                .expect("SiM region")
                .queue_refresh(lpa);
            if self.search_full_read(address, chip_ppa, tag)? {
                let search = self.stages.search.as_mut().expect("SiM region");
                search.counters.corrected_answers += 1;
                for k in keys {
                    push_bitmap(out, format::match_page(&search.corrected, *k), true);
                }
            }
            return Ok(());
        }
        if functional {
            let clear = self
                .stages
                .search
                .as_ref()
                .expect("SiM region")
                .integrity
                .is_some();
            for bitmap in self.chip.nand.search_page(now, address, keys, tag)? {
                push_bitmap(out, bitmap, clear);
            }
        } else {
            self.chip.nand.submit(
                now,
                &FlashOp::search(address, keys.len() as u32).with_tag(tag),
            )?;
        }
        self.chip.nand.page_close(now, address, tag)?;
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
        self.stages
            .search
            .as_mut()
            .expect("SiM region")
            .counters
            .chip_gathers += 1;
        if !functional {
            self.chip
                .nand
                .submit(now, &FlashOp::gather(address, chunks.0).with_tag(tag))?;
            return Ok(1);
        }
        let mut out = std::mem::take(&mut self.host.requests.slots[slot as usize].data);
        out.clear();
        let raw = self.chip.nand.gather_chunks(now, address, chunks, tag)?;
        let search = self.stages.search.as_mut().expect("SiM region");
        let ops = if search.integrity.is_none() {
            let ecc = self
                .chip
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
        } else if search.check_chunks(&raw, chunks, chip_ppa, &mut out) {
            1
        } else {
            out.clear();
            search.queue_refresh(lpa);
            let decoded = self.search_full_read(address, chip_ppa, tag);
            let search = self.stages.search.as_mut().expect("SiM region");
            if matches!(decoded, Ok(true)) {
                search.counters.corrected_answers += 1;
                for chunk in chunks.chunks() {
                    out.extend_from_slice(format::chunk_bytes(&search.corrected, chunk));
                }
            }
            self.host.requests.slots[slot as usize].data = out;
            decoded?;
            return Ok(2);
        };
        self.host.requests.slots[slot as usize].data = out;
        Ok(ops)
    }
}

/// Bytes a search key takes on the host link (key and mask).
mod batch;
mod refresh;

#[cfg(test)]
mod batch_tests;
#[cfg(test)]
mod integrity_tests;
#[cfg(test)]
mod remount_tests;
#[cfg(test)]
mod tests;
