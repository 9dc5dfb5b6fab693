//! The controller's view of the flash space, shared by every mapping scheme: block accounting
//! and free lists ([`blocks`]), the list of flash operations decided but not yet submitted
//! ([`emit`]) and their observers ([`observer`]), page payloads ([`payload`]), out-of-band
//! metadata and program completion ([`oob`]), GC job tracking and the counters.
//!
//! Functional state changes here, when the FTL decides; the decided ops are then submitted to
//! the chip model by the world loop in [`crate::ssd`], which owns the timing.

pub(crate) mod bad_blocks;
pub(crate) mod blocks;
pub(crate) mod codec;
pub(crate) mod emit;
pub(crate) mod log_area;
pub(crate) mod observer;
pub(crate) mod oob;
pub(crate) mod payload;
pub(crate) mod placement;
pub(crate) mod read_reclaim;
pub(crate) mod slc_area;
pub(crate) mod tickets;

use crate::address::{BlockId, Lpa, Ppa};
use crate::stats::FtlCounters;
use blocks::BlockManager;
use emit::{Emitter, Tag};
use nandlab_core::{LatencyHistogram, SimTime};
use nandlab_nand::OpKind;
use oob::OobStore;
use payload::Payload;

/// The bytes of a host page write (`full` payload mode).
#[derive(Clone, Copy, Debug)]
pub(crate) enum PageData<'a> {
    /// Zeros (and every write in `timing-only` mode).
    Zeros,
    /// A whole page.
    Page(&'a [u8]),
    /// `bytes` at byte `start` over the logical page's current bytes on flash (zeros if it has
    /// none): a partial page's read-modify-write, merged in the payload store itself rather
    /// than in a scratch page ([`payload::Payload::write`]). Only without front-end stages
    /// (with them a page's current bytes may be in a stage).
    Over { start: u32, bytes: &'a [u8] },
    /// A whole page already copied into a payload slot of its own ([`payload::Payload::stage`]),
    /// which the program takes. Only without front-end stages.
    Staged(u32),
}

impl<'a> From<Option<&'a [u8]>> for PageData<'a> {
    fn from(data: Option<&'a [u8]>) -> Self {
        data.map_or(PageData::Zeros, PageData::Page)
    }
}

impl<'a> PageData<'a> {
    /// Whether the bytes are merged over the page's current ones (the mapping then looks the
    /// current page up for [`Flash::program`]).
    #[inline]
    pub fn is_over(&self) -> bool {
        matches!(self, PageData::Over { .. })
    }
    /// The whole page (`None`: zeros); `None` for a merge ([`PageData::Over`]) and for a staged
    /// page ([`PageData::Staged`], whose bytes are in the payload store).
    pub fn whole(&self) -> Option<Option<&'a [u8]>> {
        match *self {
            PageData::Zeros => Some(None),
            PageData::Page(d) => Some(Some(d)),
            PageData::Over { .. } | PageData::Staged(_) => None,
        }
    }
}

/// One host page write as the FTL decided it: the logical page, the write's sequence number
/// (recorded in the page's OOB) and its bytes (`full` payload mode).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostWrite<'a> {
    pub lpa: Lpa,
    pub sequence: u64,
    pub data: PageData<'a>,
    /// Placement id (0 unless `ftl.placement_ids` > 1).
    pub placement: u16,
}

/// A program an erase waits for: the page, the sequence number it was programmed with, and how
/// many times the page's block had been erased when the wait was noted.
/// The wait is over once that program has completed, or once the page no longer holds it
/// (its block erased since, which on its die comes after the program). The erase count tells
/// the second case even when the page holds the same write again: a GC move keeps the
/// sequence number of the page it copies, so a write moved out of a block and back into the
/// same page after the block's erase looks the same by sequence number alone (without the
/// count, an erase could wait for that later move, queued behind itself: issue 31 item 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProgramWait {
    pub ppa: Ppa,
    pub sequence: u64,
    pub block_erases: u32,
}

impl ProgramWait {
    /// Whether the awaited program has completed (or its page was erased since).
    pub fn done(&self, flash: &Flash) -> bool {
        let oob = &flash.oob;
        oob.get(self.ppa).map(|(_, s)| s) != Some(self.sequence)
            || oob.is_durable_fast(self.ppa)
            || flash.blocks.erase_count(flash.blocks.block_of(self.ppa)) != self.block_erases
    }
}

/// An entry of [`Flash::erase_waits`]: a program that one erase decision waits for, or (`wait`
/// `None`) the mark of an erase decision that waits for nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EraseWait {
    /// Page 0 of the erased block.
    pub source: Ppa,
    /// Which erase decision ([`Flash::erase`] numbers them). A block may be erased, reused and
    /// erased again within one batch of decided ops (blocks of one or two pages, many requests
    /// admitted at one instant): each erase waits only for the programs decided before it, and
    /// the scheduler takes a block's entries one decision at a time, the oldest first — an
    /// erase that took a later decision's waits could wait for a program queued behind itself
    /// on another die and close a cycle of gates (issue 31 item 4).
    pub decision: u64,
    pub wait: Option<ProgramWait>,
}

/// One GC (or wear-leveling / merge) job: the moves and the erase of one victim block.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Job {
    pub started: SimTime,
    pub outstanding: u32,
    pub in_use: bool,
}

/// Shared mechanics: program, move, erase, with their functional effects.
#[derive(Debug)]
pub(crate) struct Flash {
    /// Placement ids: which id each block holds, per-id counters.
    pub placement: placement::Placement,
    pub blocks: BlockManager,
    pub emit: Emitter,
    pub payload: Payload,
    /// OOB of every physical page and which programs completed.
    pub oob: OobStore,
    /// Sequence number of the last host write decided (0: none yet).
    pub write_sequence: u64,
    pub counters: FtlCounters,
    pub copyback: bool,
    pub now: SimTime,
    jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    /// Latency of finished GC jobs (first op submitted to erase completed).
    pub gc_latency: LatencyHistogram,
    /// The erases decided in this batch and the programs on other dies each must wait for, in
    /// decision order (see [`Flash::erase`], [`EraseWait`]). Taken by the world loop when it
    /// hands each erase to its die.
    pub erase_waits: Vec<EraseWait>,
    /// Erases decided so far (numbers the entries of [`Flash::erase_waits`]).
    erases_decided: u64,
    /// Paired-page padding (`ftl.paired_page_padding`, [`Flash::pad_word_lines`]): per write
    /// pointer (0 to pages per block), the write pointer a block needs so that no page below
    /// it has an unprogrammed paired upper page; empty when off (or SLC).
    pad_to: Vec<u32>,
    /// Per page offset, one past its last paired upper page (offset + 1 when it has none).
    upper_end: Vec<u32>,
    /// Dummy pages programmed by paired-page padding.
    pub pad_pages: u64,
    /// An erase was decided since the world loop last looked at its held erases (an erase
    /// can end a held erase's wait: see `Ssd::release_gates`).
    pub erased_since_gates: bool,
    /// In-Page Logging's log sectors on the chip, when a front-end stage asked for them.
    pub log_area: Option<Box<log_area::LogArea>>,
    /// The SLC cache's reserved blocks (`slc_area.rs`), when a stage asks for them.
    pub slc_area: Option<slc_area::SlcArea>,
    /// The placement id of the Search-in-Memory pool (`ftl.sim_pages > 0`): its blocks are
    /// in match mode on the chip.
    pub search_pool: Option<u16>,
    /// Factory and grown bad blocks (`bad_blocks.rs`), when the reliability config asks.
    pub bad_blocks: Option<Box<bad_blocks::BadBlocks>>,
    /// Read-disturb counts and read reclaim (`read_reclaim.rs`), when the reliability config
    /// asks.
    pub read_reclaim: Option<Box<read_reclaim::ReadReclaim>>,
    /// The cached mapping table's (`mapping/dftl`) log of GC moves: the LPA of each page
    /// moved while ops are emitted, with its job's tag (`None`: no table, nothing logged).
    pub moved_lpas: Option<Vec<(Lpa, Tag)>>,
}

impl Flash {
    pub fn new(
        blocks: BlockManager,
        dies: u32,
        payload: Payload,
        copyback: bool,
        placement_ids: u16,
    ) -> Self {
        let physical = blocks.planes() * blocks.blocks_per_plane() * blocks.pages_per_block();
        let pages_per_die = physical / dies;
        Flash {
            placement: placement::Placement::new(
                placement_ids,
                blocks.planes() * blocks.blocks_per_plane(),
                blocks.pages_per_block(),
            ),
            oob: OobStore::new(physical, blocks.pages_per_block(), pages_per_die),
            write_sequence: 0,
            blocks,
            emit: Emitter::default(),
            payload,
            counters: FtlCounters::default(),
            copyback,
            now: SimTime::ZERO,
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            gc_latency: LatencyHistogram::new(),
            erase_waits: Vec::new(),
            erases_decided: 0,
            pad_to: Vec::new(),
            upper_end: Vec::new(),
            pad_pages: 0,
            erased_since_gates: false,
            log_area: None,
            slc_area: None,
            search_pool: None,
            bad_blocks: None,
            read_reclaim: None,
            moved_lpas: None,
        }
    }

    /// Whether `ppa` is a page of a block of the SiM pool.
    #[inline]
    pub fn in_search_pool(&self, ppa: Ppa) -> bool {
        self.search_pool
            .is_some_and(|pool| self.placement.of_block(self.blocks.block_of(ppa)) == pool)
    }

    /// Turns paired-page padding on for a chip of page layout `layout`.
    pub fn enable_paired_page_padding(&mut self, layout: nandlab_nand::PageLayout) {
        let ppb = self.blocks.pages_per_block();
        let mut upper_end: Vec<u32> = (1..=ppb).collect();
        for upper in 0..ppb {
            for lower in nandlab_nand::sim::paired_lower_pages(layout, upper, ppb) {
                let end = &mut upper_end[lower as usize];
                *end = (*end).max(upper + 1);
            }
        }
        if upper_end
            .iter()
            .enumerate()
            .all(|(o, &e)| e == o as u32 + 1)
        {
            return; // no pairs (SLC): nothing to protect
        }
        let mut pad_to = vec![0; ppb as usize + 1];
        let mut needed = 0;
        for wp in 0..=ppb {
            pad_to[wp as usize] = needed.max(wp);
            if wp < ppb {
                needed = needed.max(upper_end[wp as usize]);
            }
        }
        self.pad_to = pad_to;
        self.upper_end = upper_end;
    }

    /// Whether paired-page padding is on.
    #[inline]
    pub fn pads(&self) -> bool {
        !self.pad_to.is_empty()
    }

    /// Paired-page padding: programs dummy pages (no LPA, invalid at once) into open `block`
    /// until no page below its write pointer has an unprogrammed paired upper page. Returns
    /// the pages padded (0 when off, or the block is closed or already safe).
    pub fn pad_word_lines(&mut self, block: BlockId, tag: Tag) -> u32 {
        if self.pad_to.is_empty() || !self.blocks.is_open(block) {
            return 0;
        }
        let target = self.pad_to[self.blocks.next_page(block) as usize];
        let mut padded = 0;
        while self.blocks.next_page(block) < target {
            let Some(ppa) = self.blocks.next_ppa(block) else {
                break;
            };
            self.program_pad(ppa, tag);
            padded += 1;
        }
        padded
    }

    /// Programs one dummy page (no LPA, invalid at once) at `ppa`, already allocated at its
    /// block's write pointer.
    pub fn program_pad(&mut self, ppa: Ppa, tag: Tag) {
        let sequence = self.next_sequence();
        self.payload
            .write(ppa, PageData::Zeros, None, None, sequence);
        self.oob
            .program(ppa, Lpa::NONE, sequence, !self.emit.enabled);
        self.counters.flash_pages_programmed += 1;
        self.placement.programmed(ppa);
        self.emit.push(OpKind::Program, ppa, Ppa::NONE, tag);
        self.trace_content(ppa);
        self.pad_pages += 1;
    }

    /// Opens a GC job (returns the tag its ops carry); functional-only runs get no job.
    pub fn open_job(&mut self) -> Tag {
        if !self.emit.enabled {
            return Tag::Internal;
        }
        let id = match self.free_jobs.pop() {
            Some(id) => id,
            None => {
                self.jobs.push(Job::default());
                (self.jobs.len() - 1) as u32
            }
        };
        self.jobs[id as usize] = Job {
            started: self.now,
            outstanding: 0,
            in_use: true,
        };
        Tag::Gc(id)
    }

    /// Called by the world loop when it submits an op of job `id`.
    pub fn job_op_submitted(&mut self, id: u32) {
        self.jobs[id as usize].outstanding += 1;
    }

    /// Called by the world loop when an op of job `id` completes at `now`.
    pub fn job_op_completed(&mut self, id: u32, now: SimTime) {
        let job = &mut self.jobs[id as usize];
        debug_assert!(job.in_use && job.outstanding > 0);
        job.outstanding -= 1;
        if job.outstanding == 0 {
            job.in_use = false;
            self.gc_latency.record(now - job.started);
            self.free_jobs.push(id);
        }
    }

    /// Jobs with ops still in flight.
    pub fn jobs_in_flight(&self) -> usize {
        self.jobs.len() - self.free_jobs.len()
    }

    /// The sequence number of a new host write (decided now).
    #[inline]
    pub fn next_sequence(&mut self) -> u64 {
        self.write_sequence += 1;
        self.write_sequence
    }

    /// Programs `ppa` (already allocated) with the host write `write` (data and OOB). `base`
    /// is the page holding the LPA's current bytes when `write` merges over them
    /// ([`PageData::Over`]), looked up by the mapping just before it mapped `ppa` (after any GC
    /// the allocation ran); it may be the page that mapping just invalidated.
    #[inline(always)]
    pub fn program(&mut self, ppa: Ppa, write: HostWrite<'_>, base: Option<Ppa>, tag: Tag) {
        self.payload
            .write(ppa, write.data, base, Some(write.lpa), write.sequence);
        // functional only (preconditioning): no op is timed, the program is done at once
        self.oob
            .program(ppa, write.lpa, write.sequence, !self.emit.enabled);
        self.counters.flash_pages_programmed += 1;
        self.placement.programmed(ppa);
        self.emit.push(OpKind::Program, ppa, Ppa::NONE, tag);
        self.trace_content(ppa);
    }

    /// The mapping no longer points at `ppa` (an overwrite, a TRIM, a transactional shadow
    /// dropped or switched): one valid page less in its block, and its payload slot released
    /// when the device releases stale payloads ([`payload`]). GC and wear-leveling moves call
    /// `blocks.invalidate` instead: they read the source after invalidating it, and its block
    /// is erased right after.
    #[inline]
    pub fn invalidate(&mut self, ppa: Ppa) {
        self.blocks.invalidate(ppa);
        self.payload.release(ppa);
    }

    /// Moves the data of `source` to the allocated page `target` (copyback within a plane when
    /// enabled, otherwise a read then a program). Mapping updates are the caller's.
    pub fn move_page(&mut self, source: Ppa, target: Ppa, tag: Tag) {
        self.payload.relocate(source, target);
        self.oob.copy(source, target, !self.emit.enabled);
        self.counters.flash_pages_programmed += 1;
        self.counters.gc_page_copies += 1;
        self.placement.programmed(target);
        let same_plane = self.blocks.plane_of_ppa(source) == self.blocks.plane_of_ppa(target);
        // a SiM page is randomized by its chunk addresses (paper 004 §IV-C1): the controller
        // reads it, de-randomizes it and programs it randomized for its new address, so no
        // copyback (which would keep the old keystream)
        if self.copyback && same_plane && !self.in_search_pool(target) {
            self.counters.copybacks += 1;
            self.emit.push(OpKind::Copyback, source, target, tag);
        } else {
            self.emit.push(OpKind::Read, source, Ppa::NONE, tag);
            self.emit.push(OpKind::Program, target, Ppa::NONE, tag);
        }
        self.trace_content(target);
        if self.emit.enabled
            && let Some(moved) = &mut self.moved_lpas
            && let Some((Some(lpa), _)) = self.oob.get(target)
        {
            moved.push((lpa, tag));
        }
    }

    /// Erases `block` (all its pages must be invalid) and returns it to its plane's free list.
    /// `locate` is the mapping's current page of an LPA.
    ///
    /// Erase ordering (issue 14): a page of `block` may hold the last copy on flash of its LPA
    /// while the newer program that superseded it (a host write or buffer eviction on another
    /// die, or a merge copy there) has not completed. Erasing first would leave a power cut
    /// with an older copy or none. So the erase waits until every such program has completed:
    /// they are noted in [`Flash::erase_waits`], and the world loop keeps the erase at the
    /// head of its die's queue until they have. Every awaited program was decided before the
    /// erase, so waits never form a cycle — provided each erase waits for its own programs
    /// only: a block may be erased, reused and erased again before its first erase runs, so
    /// the waits are numbered by erase decision ([`EraseWait`]), each gate is its erase's own
    /// (`FlashScheduler::gate_holds`) and a wait ends when its block is erased again
    /// ([`ProgramWait`]); `crates/ftl/tests/erase_gates.rs`. Programs on the erase's own die
    /// need no wait: a die runs its ops in decision order (blocking GC scheduling). Nor does a newer write's GC
    /// move whose source was durable when it was decided: the write is on flash at the source
    /// until the move completes (without that exception, an erase under interleaved GC waited
    /// for moves at the back of other dies' GC queues, and the example's write p99.9 rose from
    /// 5.0 ms to 919 ms).
    pub fn erase(&mut self, block: BlockId, tag: Tag, locate: impl Fn(Lpa) -> Option<Ppa>) {
        let first = self.blocks.page(block, 0);
        self.erases_decided += 1;
        if self.emit.enabled {
            self.note_erase_waits(block, first, locate);
        }
        self.payload
            .clear_block(first, self.blocks.pages_per_block());
        self.oob.erase(block);
        self.blocks.release(block);
        if let Some(bad) = &mut self.bad_blocks {
            bad.after_erase(&mut self.blocks, block);
        }
        if let Some(rr) = &mut self.read_reclaim {
            rr.on_erase(block);
        }
        self.counters.erases += 1;
        self.erased_since_gates = true;
        if self.emit.enabled && self.blocks.erase_queue_on() {
            self.blocks.set_erase_queued(block, true);
        }
        self.emit.push(OpKind::Erase, first, Ppa::NONE, tag);
    }

    /// The dies whose incomplete programs hold the newest copy of an LPA whose older copy is
    /// in `block` (see [`Flash::erase`]).
    fn note_erase_waits(
        &mut self,
        block: BlockId,
        first: Ppa,
        locate: impl Fn(Lpa) -> Option<Ppa>,
    ) {
        let die = self.oob.die_of(first);
        let waits_before = self.erase_waits.len();
        for ppa in self.blocks.written_pages(block) {
            let Some((Some(lpa), own_sequence)) = self.oob.get(ppa) else {
                continue;
            };
            // (a transactional page names its host LPA with a marker bit, mapping/txn.rs)
            let Some(newest) = locate(crate::address::host_lpa(lpa)) else {
                continue;
            };
            if newest == ppa {
                continue;
            }
            // paired-page padding: the newest copy must also be safe from a torn program of
            // an upper page of its word line (padded now if not programmed yet)
            let mut wait_for = newest;
            // (an SLC cache page has no paired pages: `flash/slc_area.rs`)
            if self.pads() && !self.is_slc_block(self.blocks.block_of(newest)) {
                let newest_block = self.blocks.block_of(newest);
                let offset = newest.0 % self.blocks.pages_per_block();
                let end = self.upper_end[offset as usize];
                if self.blocks.next_page(newest_block) < end {
                    self.pad_word_lines(newest_block, Tag::Internal);
                }
                wait_for = self.blocks.page(newest_block, end - 1);
            }
            // (the die first: no memory access; then the per-block summary before the page)
            if self.oob.die_of(wait_for) == die || self.oob.is_durable_fast(wait_for) {
                continue;
            }
            let Some((_, sequence)) = self.oob.get(wait_for) else {
                continue;
            };
            // the newest copy is a move of a newer write whose data was already on flash at
            // its source: that write survives a cut on the source page, which is erased only
            // after the move completes (on the move's die, or by this same ordering), so this
            // older page is not its last copy. Not so when this page is the move's source:
            // same write, same sequence number, and the erase waits for the move.
            if self.oob.copy_of_durable_source(newest)
                && self.oob.get(newest).map(|(_, s)| s) != Some(own_sequence)
            {
                continue;
            }
            self.erase_waits.push(EraseWait {
                source: first,
                decision: self.erases_decided,
                wait: Some(ProgramWait {
                    ppa: wait_for,
                    sequence,
                    block_erases: self.blocks.erase_count(self.blocks.block_of(wait_for)),
                }),
            });
        }
        if self.erase_waits.len() == waits_before {
            self.erase_waits.push(EraseWait {
                source: first,
                decision: self.erases_decided,
                wait: None,
            });
        }
    }
}
