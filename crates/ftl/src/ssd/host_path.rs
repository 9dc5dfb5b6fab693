//! The host path: admission of a request, splitting into logical pages, read-modify-write of
//! partial pages, the write buffer, TRIM and flush.

use super::Ssd;
use crate::address::{Lpa, Ppa};
use crate::controller::CtrlEvent;
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::Tag;
use crate::flash::observer::FlushDecided;
use crate::flash::{HostWrite, PageData};
use crate::frontend::{PageWrite, PageWrites};
use crate::host::queue::Deferred;
use crate::host::{HostOp, HostRequest};
use crate::mapping::{Mapper, Mapping};
use nandlab_core::SimTime;
use nandlab_nand::OpKind;

impl Ssd {
    /// Admits `request` (latency measured from `start`), decides its page operations and
    /// submits their flash ops. The queue must have room.
    pub(super) fn admit(
        &mut self,
        request: &HostRequest,
        start: SimTime,
        data: Option<&[u8]>,
    ) -> FtlResult<()> {
        if request.op != HostOp::Flush {
            if request.op.is_search() {
                return Err(FtlError::BadRequest {
                    message: format!(
                        "{:?} is a SiM vendor command: submit it with Ssd::execute_search (it carries a key or chunk bitmap)",
                        request.op
                    ),
                });
            }
            if request.size_bytes == 0 {
                return Err(FtlError::BadRequest {
                    message: format!(
                        "{:?} of 0 bytes at offset {}",
                        request.op, request.offset_bytes
                    ),
                });
            }
            self.check_range(request.offset_bytes, request.size_bytes)?;
        }
        if let Some(d) = data
            && (request.op != HostOp::Write || d.len() as u64 != request.size_bytes)
        {
            return Err(FtlError::BadRequest {
                message: format!(
                    "{} data bytes given for a {:?} of {} bytes",
                    d.len(),
                    request.op,
                    request.size_bytes
                ),
            });
        }
        if request.placement_id >= self.layout.placement_ids {
            return Err(FtlError::BadRequest {
                message: format!(
                    "placement id {} of a {:?} at offset {}: the device has {} (ftl.placement_ids)",
                    request.placement_id,
                    request.op,
                    request.offset_bytes,
                    self.layout.placement_ids
                ),
            });
        }
        if request.op == HostOp::Write && self.flash.payload.limited() {
            // sparse page payloads under a memory budget (issue 33): refuse a write whose
            // pages may not fit, before anything is simulated
            let page = u64::from(self.layout.page_size_bytes);
            let first = request.offset_bytes / page;
            let last = (request.offset_bytes + request.size_bytes).div_ceil(page);
            self.flash
                .payload
                .check_room(last - first)
                .map_err(|message| FtlError::DeviceFull { message })?;
        }
        let slot = self
            .host
            .requests
            .alloc()
            .expect("admit needs room in the queue");
        // a page-aligned write needs no read-modify-write, so its bytes are used where they are
        // (no copy into the request slot)
        let page = u64::from(self.layout.page_size_bytes);
        let aligned =
            request.offset_bytes.is_multiple_of(page) && request.size_bytes.is_multiple_of(page);
        // (with controller costs the decision comes later, so the data is kept in the slot)
        let direct = request.op == HostOp::Write && aligned && self.stages.direct_writes;
        // ... or, for one whole page on the plain page mapping (no front-end stage, SiM region
        // or power trace), in the payload slot its program will take (copied once, not twice)
        let stage = !direct
            && request.op == HostOp::Write
            && aligned
            && request.size_bytes == page
            && data.is_some()
            && self.stages.plain_page_writes
            && !self.flash.observed();
        {
            let s = &mut self.host.requests.slots[slot as usize];
            s.op = request.op;
            s.start = start;
            s.offset_bytes = request.offset_bytes;
            s.size_bytes = request.size_bytes;
            s.placement_id = request.placement_id;
            // the admission itself is one outstanding step, so nothing completes mid-decision
            s.outstanding = 1;
            s.staged = None;
            s.gather = !(request.op == HostOp::Read && self.host.uncopied_read);
            if stage {
                let bytes = data.expect("checked: a staged write has data");
                s.staged = Some(self.flash.payload.stage(bytes));
            } else if self.flash.payload.enabled() && request.op == HostOp::Write && !direct {
                match data {
                    Some(d) => s.data.extend_from_slice(d),
                    None => s.data.resize(request.size_bytes as usize, 0),
                }
            }
        }
        if request.fua {
            // (cleared when its decision takes it: `decide_fua`)
            self.host.mark_fua(slot, true);
        }
        if self.measurement.host_op() {
            self.refresh_hint();
        }
        if let Some(c) = &mut self.stages.controller {
            // the data crosses the host link, the firmware processes the command, then the
            // FTL decides (a controller event)
            let write_bytes = if request.op == HostOp::Write {
                request.size_bytes
            } else {
                0
            };
            let ready = c.command(self.now, write_bytes);
            c.events.schedule(ready, CtrlEvent::Decide(slot));
            return Ok(());
        }
        let direct_data = direct.then_some(data);
        self.decide(slot, direct_data)
    }

    /// The firmware has processed request `slot` (controller costs): decide its page
    /// operations now.
    pub(super) fn decide_processed(&mut self, slot: u32) -> FtlResult<()> {
        self.decide(slot, None)
    }

    /// Decides the page operations of request `slot` and submits them. `direct` carries the
    /// data of a page-aligned write used where it is (not copied into the slot).
    #[inline(always)]
    pub(super) fn decide(&mut self, slot: u32, direct: Option<Option<&[u8]>>) -> FtlResult<()> {
        let mut decided = match (self.host.requests.slots[slot as usize].op, direct) {
            (HostOp::Read, _) => self.decide_read(slot),
            (HostOp::Write, Some(data)) => self.decide_aligned_write(slot, data),
            (HostOp::Write, None) => self.decide_write(slot),
            (HostOp::Trim, _) => self.decide_trim(slot),
            (HostOp::Flush, _) => self.decide_flush(slot),
            (HostOp::Search | HostOp::Gather, _) => self.decide_search(slot),
        };
        // FUA: the write, then what a Flush does (write buffer out, word lines padded), all
        // before the request completes
        if self.host.any_fua() && decided.is_ok() {
            decided = self.decide_fua(slot);
        }
        self.submit_then_done(slot, decided)
    }

    /// Submits the decided ops, then counts the decision step of request `slot` done (so
    /// nothing completes mid-decision); the decision's error, if any, comes first.
    #[inline(always)]
    fn submit_then_done(&mut self, slot: u32, decided: FtlResult<()>) -> FtlResult<()> {
        let submitted = self.submit_pending();
        decided?;
        submitted?;
        self.op_done(slot);
        Ok(())
    }

    /// A page of request `tag` moves into or out of the DRAM buffer (controller costs): the
    /// request waits for the transfer.
    pub(super) fn dram_page(&mut self, tag: Tag) {
        if let Some(c) = &mut self.stages.controller
            && let Some(done) = c.dram_pages(self.now, 1)
            && let Tag::Host(slot) = tag
        {
            self.host.requests.slots[slot as usize].outstanding += 1;
            c.events.schedule(done, CtrlEvent::StepDone(slot));
        }
    }

    /// Pages `(lpa, byte offset within the page, length, offset in the request)` of a range.
    fn pages_of(
        &self,
        offset_bytes: u64,
        size_bytes: u64,
    ) -> impl Iterator<Item = (Lpa, u32, u32, u32)> + use<> {
        let page = u64::from(self.layout.page_size_bytes);
        let end = offset_bytes + size_bytes;
        let first = offset_bytes / page;
        let last = (end - 1) / page;
        (first..=last).map(move |lpa| {
            let start = (lpa * page).max(offset_bytes);
            let stop = ((lpa + 1) * page).min(end);
            (
                Lpa(lpa as u32),
                (start - lpa * page) as u32,
                (stop - start) as u32,
                (start - offset_bytes) as u32,
            )
        })
    }

    fn decide_read(&mut self, slot: u32) -> FtlResult<()> {
        let (offset, size) = {
            let s = &self.host.requests.slots[slot as usize];
            (s.offset_bytes, s.size_bytes)
        };
        let full = self.flash.payload.enabled() && self.host.requests.slots[slot as usize].gather;
        let mut data = std::mem::take(&mut self.host.requests.slots[slot as usize].data);
        for (lpa, start, len, _) in self.pages_of(offset, size) {
            self.flash.counters.host_pages_read += 1;
            if full {
                let range = start as usize..(start + len) as usize;
                match self.current_page(lpa) {
                    Some(bytes) => data.extend_from_slice(&bytes[range]),
                    None => data.resize(data.len() + len as usize, 0),
                }
            }
            if !self.front.is_empty() {
                if self.front.read(lpa, &mut self.flash.counters) {
                    self.dram_page(Tag::Host(slot));
                    continue;
                }
                if let Some(op) = self.front.flash_read(lpa) {
                    // the SLC cache: the page is in an SLC-mode block
                    self.flash.log_area_op(op, Tag::Host(slot))?;
                    continue;
                }
                if self.front.logged_on_flash(lpa) {
                    // In-Page Logging: the page's changes are in log pages on flash
                    self.flash.read_log_pages_of(lpa, Tag::Host(slot));
                }
            }
            if let Some(c) = &mut self.cmt {
                c.access(
                    lpa,
                    false,
                    &mut self.mapper,
                    &mut self.flash,
                    Tag::Host(slot),
                )?;
            }
            if let Some(ppa) = self.mapper.locate(lpa) {
                self.flash
                    .emit
                    .push(OpKind::Read, ppa, Ppa::NONE, Tag::Host(slot));
                self.note_disturb(ppa);
            }
        }
        self.host.requests.slots[slot as usize].data = data;
        self.reclaim_disturbed()
    }

    /// Read disturb: counts a read of `ppa`'s block (`flash/read_reclaim.rs`; no cost when off).
    #[inline]
    fn note_disturb(&mut self, ppa: Ppa) {
        if let Some(rr) = &mut self.flash.read_reclaim {
            let block = self.flash.blocks.block_of(ppa);
            rr.on_read(block, self.flash.blocks.erase_count(block));
        }
    }

    /// Read reclaim: rewrites the valid pages of each block whose read disturb crossed the
    /// margin (decided after the reads that disturbed it, so they run first on its die).
    fn reclaim_disturbed(&mut self) -> FtlResult<()> {
        if !self
            .flash
            .read_reclaim
            .as_ref()
            .is_some_and(|r| r.has_pending())
        {
            return Ok(());
        }
        let pending = self
            .flash
            .read_reclaim
            .as_mut()
            .expect("checked")
            .take_pending();
        for block in pending {
            let Mapper::Page(m) = &mut self.mapper else {
                unreachable!("read reclaim is built for the page mapping only");
            };
            if !m.reclaim_block(&mut self.flash, block)? {
                let rr = self.flash.read_reclaim.as_mut().expect("checked");
                rr.skipped(block);
            }
        }
        Ok(())
    }

    /// Whole pages: each is written from `data` (zeros when `None`), without a copy.
    fn decide_aligned_write(&mut self, slot: u32, data: Option<&[u8]>) -> FtlResult<()> {
        let (offset, size) = {
            let s = &self.host.requests.slots[slot as usize];
            (s.offset_bytes, s.size_bytes)
        };
        let full = self.flash.payload.enabled();
        for (lpa, _, len, data_offset) in self.pages_of(offset, size) {
            debug_assert_eq!(len, self.layout.page_size_bytes);
            let bytes = data
                .filter(|_| full)
                .map(|d| &d[data_offset as usize..(data_offset + len) as usize]);
            self.write_page(lpa, bytes, Tag::Host(slot))?;
        }
        Ok(())
    }

    fn decide_write(&mut self, slot: u32) -> FtlResult<()> {
        let (offset, size) = {
            let s = &self.host.requests.slots[slot as usize];
            (s.offset_bytes, s.size_bytes)
        };
        if let Some(staged) = self.host.requests.slots[slot as usize].staged.take() {
            // one whole page, its bytes in the payload slot its program takes
            let lpa = Lpa((offset / u64::from(self.layout.page_size_bytes)) as u32);
            let result = self.write_page_data(lpa, PageData::Staged(staged), Tag::Host(slot));
            if result.is_err() {
                self.flash.payload.unstage(staged);
            }
            return result;
        }
        let page = self.layout.page_size_bytes;
        let full = self.flash.payload.enabled();
        let data = std::mem::take(&mut self.host.requests.slots[slot as usize].data);
        let mut result = Ok(());
        for (lpa, start, len, data_offset) in self.pages_of(offset, size) {
            let bytes = full.then(|| &data[data_offset as usize..(data_offset + len) as usize]);
            let step = if len == page {
                self.write_page(lpa, bytes, Tag::Host(slot))
            } else if self.front.contains(lpa) || self.mapper.locate(lpa).is_none() {
                // merge with the buffered page, or with zeros: no flash read needed
                self.merge_and_write(lpa, start, bytes, slot)
            } else {
                let id = self.host.deferred.alloc(Deferred {
                    request: slot,
                    lpa,
                    page_offset: start,
                    len,
                    data_offset,
                });
                self.flash.counters.rmw_reads += 1;
                self.host.requests.slots[slot as usize].outstanding += 1;
                let ppa = self
                    .mapper
                    .locate(lpa)
                    .expect("checked above: the page is mapped");
                self.flash
                    .emit
                    .push(OpKind::Read, ppa, Ppa::NONE, Tag::Deferred(id));
                self.note_disturb(ppa);
                Ok(())
            };
            if let Err(e) = step {
                result = Err(e);
                break;
            }
        }
        self.host.requests.slots[slot as usize].data = data;
        result
    }

    /// Second half of a read-modify-write: the old page has been read.
    pub(super) fn finish_deferred(&mut self, id: u32) -> FtlResult<()> {
        let d = self.host.deferred.release(id);
        let data = std::mem::take(&mut self.host.requests.slots[d.request as usize].data);
        let bytes = self
            .flash
            .payload
            .enabled()
            .then(|| &data[d.data_offset as usize..(d.data_offset + d.len) as usize]);
        let result = self.merge_and_write(d.lpa, d.page_offset, bytes, d.request);
        self.host.requests.slots[d.request as usize].data = data;
        self.submit_then_done(d.request, result)
    }

    /// Merges `bytes` at `start` into the current content of `lpa` and writes the page.
    fn merge_and_write(
        &mut self,
        lpa: Lpa,
        start: u32,
        bytes: Option<&[u8]>,
        slot: u32,
    ) -> FtlResult<()> {
        let Some(bytes) = bytes else {
            return self.write_page(lpa, None, Tag::Host(slot));
        };
        if self.front.is_empty() {
            // the current bytes are on flash: merged in the payload store, no scratch page
            let data = PageData::Over { start, bytes };
            return self.write_page_data(lpa, data, Tag::Host(slot));
        }
        let mut page = std::mem::take(&mut self.front.scratch);
        page.clear();
        match self.current_page(lpa) {
            Some(old) => page.extend_from_slice(old),
            None => page.resize(self.layout.page_size_bytes as usize, 0),
        }
        page[start as usize..start as usize + bytes.len()].copy_from_slice(bytes);
        let result = self.write_page(lpa, Some(&page), Tag::Host(slot));
        self.front.scratch = page;
        result
    }

    /// Writes a whole logical page through the front-end chain (the write buffer, …); the
    /// pages leaving it are written by the mapping.
    fn write_page(&mut self, lpa: Lpa, bytes: Option<&[u8]>, tag: Tag) -> FtlResult<()> {
        self.write_page_data(lpa, bytes.into(), tag)
    }

    /// [`Ssd::write_page`] of `data`, which may merge over the page's current bytes
    /// ([`PageData::Over`]) only when there is no front-end stage.
    fn write_page_data(&mut self, lpa: Lpa, data: PageData<'_>, tag: Tag) -> FtlResult<()> {
        self.flash.counters.host_pages_written += 1;
        let sequence = self.flash.next_sequence();
        debug_assert!(matches!(tag, Tag::Host(_)), "write_page writes host pages");
        let placement = match tag {
            // (a SiM region is a placement id of its own: placement is active with one)
            Tag::Host(_) if self.stages.search_placement => self.search_placement(lpa, tag),
            Tag::Host(slot) if self.flash.placement.active() => {
                let id = self.host.requests.slots[slot as usize].placement_id;
                self.flash.placement.host_pages[id as usize] += 1;
                id
            }
            _ => 0,
        };
        if let Some(c) = &mut self.cmt {
            c.access(lpa, true, &mut self.mapper, &mut self.flash, tag)?;
        }
        if self.front.is_empty() {
            let write = HostWrite {
                lpa,
                sequence,
                data,
                placement,
            };
            self.mapper.write(&mut self.flash, write, tag)?;
            return self.settle_cmt();
        }
        let bytes = data
            .whole()
            .expect("a front-end stage takes whole pages (merged before it)");
        let page = PageWrite {
            lpa,
            sequence,
            data: bytes,
            placement,
            request: tag.encode(),
        };
        self.dram_page(tag);
        let mut out = std::mem::take(&mut self.front.out);
        let hold = self
            .front
            .write(self.now, page, &mut out, &mut self.flash.counters);
        self.hold(tag, hold);
        let result = self.write_out(&out, tag);
        self.front.out = out;
        result
    }

    /// `ops` device operations of a front-end stage now count against `tag`'s request.
    fn hold(&mut self, tag: Tag, ops: u32) {
        if ops > 0
            && let Tag::Host(slot) = tag
        {
            self.host.requests.slots[slot as usize].outstanding += ops;
        }
    }

    /// Writes the pages that left the front-end chain, in order (their programs carry `tag`).
    pub(super) fn write_out(&mut self, out: &PageWrites, tag: Tag) -> FtlResult<()> {
        for i in 0..out.len() {
            let o = out.get(i);
            if let Some(same_as) = o.same_as {
                self.mapper.share(&mut self.flash, o.lpa, same_as)?;
                continue;
            }
            // a page a stage sends on without a host write of its own (a PCM log merge
            // rewriting a preconditioned page) is a new write of its current bytes
            let sequence = match o.sequence {
                0 => self.flash.next_sequence(),
                s => s,
            };
            let write = HostWrite {
                lpa: o.lpa,
                sequence,
                data: o.data.into(),
                placement: o.placement,
            };
            if let Some(c) = &mut self.cmt {
                c.access(o.lpa, true, &mut self.mapper, &mut self.flash, tag)?;
            }
            self.mapper.write(&mut self.flash, write, tag)?;
            self.settle_cmt()?;
        }
        for &op in out.log_ops() {
            self.log_area_op(op, tag)?;
        }
        Ok(())
    }

    fn decide_trim(&mut self, slot: u32) -> FtlResult<()> {
        let s = &self.host.requests.slots[slot as usize];
        let (offset, size, tag) = (s.offset_bytes, s.size_bytes, Tag::Host(slot));
        if self.cmt.is_none() && self.front.is_empty() && !self.flash.observed() && size > 0 {
            // nothing to tell per page: the whole pages in one mapping call (a zone reset)
            let page = u64::from(self.layout.page_size_bytes);
            let first = offset.div_ceil(page);
            let count = ((offset + size) / page).saturating_sub(first);
            self.flash.counters.host_pages_trimmed += count;
            self.mapper
                .trim_range(&mut self.flash, Lpa(first as u32), count as u32);
        } else {
            for (lpa, _, len, _) in self.pages_of(offset, size) {
                if len != self.layout.page_size_bytes {
                    continue;
                }
                self.flash.counters.host_pages_trimmed += 1;
                if let Some(c) = &mut self.cmt {
                    // the trim changes the page's entry (DFTL: like a write's)
                    c.access(lpa, true, &mut self.mapper, &mut self.flash, tag)?;
                }
                self.front.trim(lpa);
                self.mapper.trim(&mut self.flash, lpa);
                self.flash.trace_trim(lpa);
            }
        }
        // the zoned mapping erases a zone whose last page this trim invalidated (a reset)
        self.mapper.trim_done(&mut self.flash, tag);
        Ok(())
    }

    /// The cached mapping table pays for the GC moves just decided (`mapping/dftl`).
    #[inline]
    pub(super) fn settle_cmt(&mut self) -> FtlResult<()> {
        match &mut self.cmt {
            Some(c) => c.settle_moves(&mut self.mapper, &mut self.flash),
            None => Ok(()),
        }
    }

    /// The flush step of request `slot` if it is a FUA write (off the hot path).
    #[cold]
    #[inline(never)]
    fn decide_fua(&mut self, slot: u32) -> FtlResult<()> {
        if !self.host.is_fua(slot) {
            return Ok(());
        }
        self.host.mark_fua(slot, false);
        self.decide_flush(slot)
    }

    fn decide_flush(&mut self, slot: u32) -> FtlResult<()> {
        let tag = Tag::Host(slot);
        let mut result = Ok(());
        if !self.front.is_empty() {
            let mut out = std::mem::take(&mut self.front.out);
            let hold = self
                .front
                .flush(self.now, tag.encode(), &mut out, &mut self.flash.counters);
            self.hold(tag, hold);
            result = self.write_out(&out, tag);
            self.front.out = out;
        }
        if result.is_ok() && self.flash.pads() {
            // the flushed pages' word lines are completed before the flush completes
            self.mapper.pad_open_blocks(&mut self.flash, tag);
        }
        if result.is_ok() {
            // its observers may hold it (the power trace logs the trims decided before it, and
            // with other requests in flight waits for the ops decided before it)
            let flush = FlushDecided {
                slot,
                now_ps: self.now.as_ps(),
                others_in_flight: self.host.requests.in_flight() > 1,
            };
            self.host.requests.slots[slot as usize].outstanding += self.flash.trace_flush(&flush);
        }
        result
    }
}
