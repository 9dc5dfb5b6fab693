//! The SSD's flash scheduler: what the SSD (`ssd/flash_io.rs`) hands decided ops to.
//!
//! [`FlashScheduler`] owns the per-die queues (blocking or interleaved GC), the die slots (how
//! many ops each die holds in the chip model), multiplane merging of a decided batch and of
//! queued ops (`ftl.multiplane`), cache-mode register use (`ftl.cache_mode`), erase gates (an
//! erase held until programs on other dies complete: `Flash::erase`) and the submission of an
//! op to the chip model. Its API is pull-shaped so the world loop keeps the routing:
//! - [`FlashScheduler::place`] / [`FlashScheduler::place_erase`]: a decided op goes to the chip
//!   now (returned) or waits in its die's queue;
//! - [`FlashScheduler::next`]: the next op `die` may take (after a completion: pumping);
//! - [`FlashScheduler::open_gate`]: a held erase whose waits are over;
//! - [`FlashScheduler::submit`]: an op (or merged op) onto the chip model;
//! - [`FlashScheduler::take_merged`] / [`FlashScheduler::release_merged`]: a merged op's
//!   members when it completes.

use crate::address::{DieId, Ppa};
use crate::config::{FtlConfig, ReadScheduling};
use crate::error::FtlResult;
use crate::flash::blocks::BlockManager;
use crate::flash::codec::AddressCodec;
use crate::flash::emit::{PendingOp, Tag};
use crate::flash::oob::OobStore;
use crate::flash::{Flash, ProgramWait};
use crate::sched::merge::{DieSlots, Merge, Offer, Passing, PlaneSlot, register_mode};
use crate::sched::{MergedOps, OpQueues};
use nandlab_core::SimTime;
use nandlab_nand::{FlashOp, Geometry, NandSim, OpKind, PageAddress};

/// What the scheduler is built from (the `ftl.*` keys it reads, fixed for the device's life).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SchedConfig {
    /// Decided reads/programs of one die merge into multiplane ops (`ftl.multiplane`).
    pub multiplane: bool,
    /// Reads and programs use the cache register (`ftl.cache_mode`).
    pub cache_mode: bool,
    /// GC superblocks (`ftl.superpage_planes > 1`).
    pub superblocks: bool,
    /// Blocking or interleaved GC (`ftl.gc_scheduling`).
    pub gc_scheduling: crate::config::GcScheduling,
    /// Free blocks below which interleaved GC passes host ops (`ftl.gc_urgent_free_blocks`).
    pub gc_urgent_free_blocks: u32,
    /// Host reads of programmed pages go to the chip ahead of the die's queue
    /// (`ftl.read_scheduling` = `priority` or `suspend`).
    pub reads_first: bool,
    /// ... and may suspend a program or erase under way (`ftl.read_scheduling = "suspend"`).
    pub reads_suspend: bool,
}

impl SchedConfig {
    /// The scheduler's keys of `f`.
    pub fn of(f: &FtlConfig) -> Self {
        SchedConfig {
            multiplane: f.scheduler.multiplane,
            cache_mode: f.scheduler.cache,
            superblocks: f.scheduler.superpage_planes > 1,
            gc_scheduling: f.gc.scheduling,
            gc_urgent_free_blocks: f.gc.urgent_free_blocks,
            reads_first: f.scheduler.reads != ReadScheduling::Fifo,
            reads_suspend: f.scheduler.reads == ReadScheduling::Suspend,
        }
    }
}

/// Multiplane ops the scheduler formed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SchedCounters {
    /// Multiplane ops submitted, by kind (the other modes are counted by the chip model).
    pub multiplane_ops: [u64; OpKind::COUNT],
    /// Page (or block) ops carried by the multiplane ops submitted.
    pub multiplane_plane_ops: u64,
    /// Multiplane ops formed from ops already queued on a die ([`FlashScheduler::next`]).
    pub queued_merges: u64,
    /// Erases that had to wait for programs on other dies.
    pub erases_held: u64,
    /// Host reads sent to the chip ahead of ops waiting in their die's queue
    /// (`ftl.read_scheduling`).
    pub reads_ahead: u64,
    /// Host reads of a page whose GC copyback had not run, served from the copyback's source
    /// (interleaved GC).
    pub reads_of_moving_pages: u64,
}

/// The flash scheduler (see the module documentation).
#[derive(Debug)]
pub(crate) struct FlashScheduler {
    config: SchedConfig,
    planes_per_die: u32,
    codec: AddressCodec,
    /// Ops decided but not yet given to the chip model, per die, ordered by the GC
    /// scheduling policy.
    queues: OpQueues,
    /// Multiplane ops formed by the scheduler, with their constituents.
    merged: MergedOps,
    /// Erases held at the head of their die's queue until programs on other dies complete
    /// (`Flash::erase`), oldest first.
    gates: Vec<EraseGate>,
    /// Ops in flight per die in the chip model ([`ssd_die_slots`]).
    die_slots: DieSlots,
    /// Scratch of a batch: which decided ops joined a multiplane op.
    merge_taken: Vec<bool>,
    /// Scratch: the members of the multiplane op being formed.
    merge_group: Vec<PendingOp>,
    /// Reusable one-target ops, one per op kind (so submitting allocates nothing).
    templates: [FlashOp; OpKind::COUNT],
    /// The reusable multi-target op (multiplane submissions).
    multi_template: FlashOp,
    counters: SchedCounters,
}

impl FlashScheduler {
    pub fn new(config: SchedConfig, geometry: &Geometry) -> Self {
        let first = PageAddress::default();
        // the register mode per kind (cache mode for reads and programs if on)
        let mode = |mut op: FlashOp| {
            op.mode = register_mode(op.kind, config.cache_mode);
            op
        };
        let templates = OpKind::ALL.map(|kind| match kind {
            OpKind::Read => mode(FlashOp::read(first)),
            OpKind::Program => mode(FlashOp::program(first)),
            OpKind::Erase => mode(FlashOp::erase(first)),
            OpKind::Copyback => mode(FlashOp::copyback(first, first)),
            // SiM kinds: submitted by `ssd/search.rs` (functional calls of the chip model)
            _ => FlashOp::of_kind(kind, first),
        });
        FlashScheduler {
            config,
            planes_per_die: geometry.planes_per_die,
            codec: AddressCodec::new(geometry),
            queues: OpQueues::new(
                config.gc_scheduling,
                config.gc_urgent_free_blocks,
                geometry.total_dies(),
                geometry.planes_per_die,
                geometry.blocks_per_plane,
                geometry.pages_per_block,
            ),
            merged: MergedOps::default(),
            gates: Vec::new(),
            die_slots: ssd_die_slots(config.multiplane, config.cache_mode),
            merge_taken: Vec::new(),
            merge_group: Vec::new(),
            templates,
            multi_template: FlashOp::read(PageAddress::default()),
            counters: SchedCounters::default(),
        }
    }

    /// Device addresses of flash pages.
    #[inline]
    pub fn codec(&self) -> &AddressCodec {
        &self.codec
    }

    /// Whether decided batches merge into multiplane ops.
    #[inline]
    pub fn multiplane(&self) -> bool {
        self.config.multiplane
    }

    pub fn counters(&self) -> &SchedCounters {
        &self.counters
    }

    /// GC ops the interleaved scheduler sent before a waiting host op because GC was urgent.
    pub fn cache_mode(&self) -> bool {
        self.config.cache_mode
    }

    /// GC ops sent to the chip before a waiting host op because GC was urgent.
    pub fn urgent_passes(&self) -> u64 {
        self.queues.urgent_passes()
    }

    /// Whether no decided op waits in any die's queue.
    pub fn all_empty(&self) -> bool {
        self.queues.all_empty()
    }

    /// Merged ops in the chip model.
    pub fn merged_in_flight(&self) -> usize {
        self.merged.in_flight()
    }

    /// Members of merged op `id` (in flight).
    pub fn merged_members(&self, id: u32) -> &[PendingOp] {
        self.merged.get(id)
    }

    /// Merged op `id` completed: its members (give them back with
    /// [`FlashScheduler::release_merged`]).
    pub fn take_merged(&mut self, id: u32) -> Vec<PendingOp> {
        self.merged.take(id)
    }

    pub fn release_merged(&mut self, id: u32, members: Vec<PendingOp>) {
        self.merged.release(id, members);
    }

    /// Whether an erase waits at a gate.
    #[inline]
    pub fn gates_held(&self) -> bool {
        !self.gates.is_empty()
    }

    /// Decided op `op` goes to `die`: true if it may go to the chip now (nothing waits for the
    /// die and the die has room: the caller submits it), else it is queued (ops wait only while
    /// the die is full: [`FlashScheduler::next`] runs at each of its completions).
    /// With `ftl.read_scheduling` on, a host read whose page is programmed goes now whatever
    /// waits ([`FlashScheduler::read_goes_first`]). Under interleaved GC, a host read of a page
    /// whose GC move has not gone to the chip reads the move's source instead, now
    /// ([`FlashScheduler::read_moved_page`]: `op` is changed).
    #[inline(always)]
    pub fn place(
        &mut self,
        die: DieId,
        op: &mut PendingOp,
        nand: &NandSim,
        oob: &OobStore,
    ) -> bool {
        if (self.queues.is_empty(die) && self.die_slots.can_take(nand.die_ops_in_flight(die), 0))
            || (self.config.reads_first && self.read_goes_first(*op, oob))
            || (self.queues.interleaved() && host_read(*op) && self.read_moved_page(op))
        {
            return true;
        }
        self.queues.push(die, *op);
        false
    }

    /// Interleaved GC: whether host read `op` is of a page a queued GC copyback has not
    /// written yet; if so it is turned into a read of the copyback's source page, which goes
    /// to the chip now, as a controller serves a read of a page under migration from its old
    /// location. The source still holds the data (the victim's erase waits behind the move in
    /// the die's GC queue, and the chip runs a die's ops in submission order); waiting in the
    /// queue instead would put the read, and the host ops behind it, behind every GC op queued
    /// before the move. Only copybacks are tracked (source and copy on one plane, so the read
    /// stays on its die); a read of a page moved by a read and a program waits for the
    /// program ([`OpQueues`]).
    #[cold]
    #[inline(never)]
    fn read_moved_page(&mut self, op: &mut PendingOp) -> bool {
        let Some(source) = self.queues.moved_from(op.source) else {
            return false;
        };
        op.source = source;
        self.counters.reads_of_moving_pages += 1;
        true
    }

    /// Whether host read `op` may go to the chip ahead of the ops waiting for its die: its
    /// page's program has completed, so nothing queued can be the program it must follow (an
    /// erase of its block is decided only after its page moved, and the mapping then points
    /// at the copy). The chip model orders it after the ops already submitted, or, with
    /// suspension, ahead of a program or erase under way.
    #[cold]
    #[inline(never)]
    fn read_goes_first(&mut self, op: PendingOp, oob: &OobStore) -> bool {
        let goes = host_read(op) && oob.is_durable_fast(op.source);
        self.counters.reads_ahead += u64::from(goes);
        goes
    }

    /// [`FlashScheduler::place`] of an erase that may have to wait for programs on other dies
    /// (`flash.erase_waits`): it waits at a gate while they have not completed.
    #[cold]
    #[inline(never)]
    pub fn place_erase(
        &mut self,
        die: DieId,
        op: PendingOp,
        flash: &mut Flash,
        nand: &NandSim,
    ) -> Option<PendingOp> {
        // what this erase waits for, or every member erase of a multiplane erase (blocking GC
        // merges a superblock's erases at decision): the entries are those of the erases
        // decided in this batch and not yet dispatched, picked out by source — the oldest
        // decision of each member's block, as a block erased twice in the batch is placed
        // in decision order — wherever a member's entries are
        let members = match op.tag {
            Tag::Multi(id) => self.merged.get(id),
            _ => std::slice::from_ref(&op),
        };
        let mut waits = Vec::new();
        for member in members {
            let Some(decision) = flash
                .erase_waits
                .iter()
                .find(|e| e.source == member.source)
                .map(|e| e.decision)
            else {
                debug_assert!(
                    false,
                    "every erase decided notes its waits or their absence"
                );
                continue;
            };
            let mut entries = std::mem::take(&mut flash.erase_waits);
            entries.retain(|e| {
                if e.source != member.source || e.decision != decision {
                    return true;
                }
                if let Some(wait) = e.wait
                    && !wait.done(flash)
                {
                    waits.push(wait);
                }
                false
            });
            flash.erase_waits = entries;
        }
        if waits.is_empty() {
            if self.queues.is_empty(die) && self.die_slots.can_take(nand.die_ops_in_flight(die), 0)
            {
                return Some(op);
            }
            self.queues.push(die, op);
        } else {
            self.counters.erases_held += 1;
            let queued = self.queues.push(die, op);
            self.gates.push(EraseGate { die, queued, waits });
        }
        None
    }

    /// The next queued op `die` takes now, if it has room: merged with later queued ops of
    /// other planes (`ftl.multiplane`); an erase held at its gate stays at the head of the
    /// queue (under interleaved GC a host op that needs no GC work may go meanwhile).
    #[inline(always)]
    pub fn next(&mut self, die: DieId, nand: &NandSim, flash: &Flash) -> Option<PendingOp> {
        if !self.die_slots.can_take(nand.die_ops_in_flight(die), 0) {
            return None;
        }
        let blocks = &flash.blocks;
        let op = self.queues.pop(die, |plane| blocks.free_count(plane))?;
        if self.config.multiplane && matches!(op.kind, OpKind::Read | OpKind::Program) {
            return Some(self.merge_queued(die, op, blocks));
        }
        if !self.gates.is_empty() && op.kind == OpKind::Erase {
            return self.next_past_gate(die, op, flash);
        }
        Some(op)
    }

    /// [`FlashScheduler::next`] of erase `op`, which may be held at its gate.
    #[cold]
    #[inline(never)]
    fn next_past_gate(&mut self, die: DieId, op: PendingOp, flash: &Flash) -> Option<PendingOp> {
        if !self.gate_holds(die, op, flash) {
            return Some(op);
        }
        // (interleaved GC, a GC erase held: host ops that need no GC work go on meanwhile; an
        // erase held in the host queue is that queue's head)
        if !matches!(op.tag, Tag::Gc(_)) {
            return None;
        }
        let host = self.queues.pop_host_independent(die)?;
        // the host queue's head may be an erase with a gate of its own (an SLC cache erase a
        // host write's fold decided): it waits there too (issue 34: passed by a held GC erase,
        // it ran before the fold's main-area program on another die, and a cut resurrected an
        // older version, `nandlab crash --controller --seed 2 --case 6940`)
        if host.kind == OpKind::Erase && self.gate_holds(die, host, flash) {
            return None;
        }
        Some(host)
    }

    /// Whether erase `op`, popped for `die`, must still wait (it goes back to the head of the
    /// die's queue); a gate whose waits are over is removed. The gate is the popped erase's
    /// own, found by its queue number: the same block may have a second erase queued behind
    /// the first (erased, reused, collected again), whose gate awaits programs queued after
    /// the first — holding the first at it could close a cycle of gates across dies.
    fn gate_holds(&mut self, die: DieId, op: PendingOp, flash: &Flash) -> bool {
        let queued = self.queues.popped_number();
        let Some(i) = self.gates.iter().position(|g| g.queued == queued) else {
            return false;
        };
        if self.gates[i].over(flash) {
            self.gates.remove(i);
            return false;
        }
        self.queues.push_front(die, op);
        true
    }

    /// Starting at gate `*at`, the die of the first gate found open, which is dropped (its
    /// erase, not necessarily at the head of its die's queue yet, goes when the die's pumping
    /// reaches it); `None` once every gate from `*at` on was looked at. Only gates whose next
    /// wait is on one of `completed_dies` ([`die_bit`]) are looked at, unless an erase was
    /// decided since the last pass (`erased`: it may have erased an awaited page).
    #[cold]
    #[inline(never)]
    pub fn open_gate(
        &mut self,
        at: &mut usize,
        flash: &Flash,
        completed_dies: u64,
        erased: bool,
    ) -> Option<DieId> {
        while *at < self.gates.len() {
            let gate = &mut self.gates[*at];
            if gate.may_open(&flash.oob, completed_dies, erased) && gate.over(flash) {
                return Some(self.gates.remove(*at).die);
            }
            *at += 1;
        }
        None
    }

    /// Scratch for a decided batch of `ops` ops ([`FlashScheduler::merge_multiplane`]).
    pub fn begin_batch(&mut self, ops: usize) {
        self.merge_taken.clear();
        self.merge_taken.resize(ops, false);
    }

    /// Whether decided op `index` of the batch joined an earlier op's multiplane op.
    #[inline]
    pub fn taken(&self, index: usize) -> bool {
        self.merge_taken[index]
    }

    /// Multiplane (`ftl.multiplane`): decided op `ops[first]` joined by later decided ops of
    /// the same kind on other planes of its die that the plane rule lets share one op, each the
    /// first op on its plane after `first` (so no plane's order changes): reads and programs at
    /// the same page offset; with blocking GC also GC's ops, erases (any block) and copybacks
    /// (same source offset, same destination offset). Returns the op to submit: `ops[first]`
    /// alone, or the merged op (whose members after the first the caller counts).
    pub fn merge_multiplane(
        &mut self,
        ops: &[PendingOp],
        first: usize,
        flash: &Flash,
    ) -> PendingOp {
        let blocks = &flash.blocks;
        let op = ops[first];
        // interleaved GC keeps GC ops in their own queues: only host-side reads and programs
        // merge there
        let gc_merges = !self.queues.interleaved();
        let kind_merges = match op.kind {
            OpKind::Program | OpKind::Read => true,
            OpKind::Erase | OpKind::Copyback => gc_merges,
            _ => false,
        };
        // (a partial-page program transfers its own bytes: it stays a single-plane op)
        if !kind_merges || (matches!(op.tag, Tag::Gc(_)) && !gc_merges) || op.transfer_bytes != 0 {
            return op;
        }
        let die = self.codec.die_of(op.source);
        let planes_per_die = self.planes_per_die as usize;
        let mut merge = Merge::new(
            self.plane_slot(op, blocks),
            planes_per_die,
            Passing::KeepPlaneOrder,
        );
        self.merge_group.clear();
        self.merge_group.push(op);
        let superblocks = self.config.superblocks;
        let mut passed = false;
        let planes = self.planes_per_die;
        for (j, &other) in ops.iter().enumerate().skip(first + 1) {
            if merge.settled(planes) {
                break;
            }
            if self.merge_taken[j] || self.codec.die_of(other.source) != die {
                continue;
            }
            // GC ops kept in their own queues (interleaved GC) and host ops that depend on
            // queued GC work never join
            // (a GC move's program waits for its read, which may be among the ops passed)
            let held_move = superblocks && passed && moved_program(other);
            let kept_gc = !gc_merges && matches!(other.tag, Tag::Gc(_));
            // (a partial-page program, IPL's log sectors, never joins)
            let eligible = !(held_move
                || kept_gc
                || (other.kind == OpKind::Erase && erase_waits_outstanding(flash, other.source))
                || self.queues.gc_pending(other.source)
                || other.transfer_bytes != 0);
            match merge.offer(&self.plane_slot(other, blocks), eligible) {
                Offer::Join => {
                    self.merge_taken[j] = true;
                    self.merge_group.push(other);
                }
                Offer::Pass => passed = true,
                Offer::Stop => break,
            }
        }
        if self.merge_group.len() == 1 {
            return op;
        }
        let id = self.merged.add(&self.merge_group);
        PendingOp::multi(op.kind, op.source, id)
    }

    /// Multiplane merging of queued ops (`ftl.multiplane`): read or program `op`, just taken
    /// from `die`'s queue, joined by later queued ops of the die that the plane rule lets
    /// share one op, each the first queued op of its plane (no plane's order changes), looking
    /// at most [`QUEUED_MERGE_WINDOW`] ops ahead. Ops decided in different batches (one-page
    /// host writes, the moves of a GC superblock) merge here when they wait for a busy die.
    /// Returns the op to submit: `op` alone, or the merged op.
    #[inline(never)]
    fn merge_queued(&mut self, die: DieId, op: PendingOp, blocks: &BlockManager) -> PendingOp {
        // a partial-page program (IPL's log sectors) never merges
        if matches!(op.tag, Tag::Multi(_)) || op.transfer_bytes != 0 {
            return op;
        }
        let interleaved = self.queues.interleaved();
        // interleaved GC: a GC op came from the die's GC queue and merges with GC ops there
        let from_gc = interleaved && matches!(op.tag, Tag::Gc(_));
        let superblocks = self.config.superblocks;
        let planes_per_die = self.planes_per_die as usize;
        let mut merge = Merge::new(
            self.plane_slot(op, blocks),
            planes_per_die,
            Passing::KeepPlaneOrder,
        );
        let mut members = std::mem::take(&mut self.merge_group);
        members.clear();
        members.push(op);
        let mut passed = false;
        let mut index = 0;
        for _ in 0..QUEUED_MERGE_WINDOW {
            if merge.settled(planes_per_die as u32) {
                break;
            }
            let queued = if from_gc {
                self.queues.gc_op(die, index)
            } else {
                self.queues.host_op(die, index)
            };
            let Some(other) = queued else {
                break;
            };
            if matches!(other.tag, Tag::Multi(_)) {
                // a merged op holds several planes: nothing passes it
                break;
            }
            // (a GC op joins only if no queued host op touches its blocks: it would pass host
            // ops decided before it)
            let eligible = (from_gc
                && !self.queues.host_pending(other.source)
                && !self.queues.host_pending(other.target)
                || !from_gc
                    && (!interleaved || !matches!(other.tag, Tag::Gc(_)))
                    && !self.queues.gc_pending(other.source))
                && !(superblocks && passed && moved_program(other))
                && other.transfer_bytes == 0;
            match merge.offer(&self.plane_slot(other, blocks), eligible) {
                Offer::Join if from_gc => members.push(self.queues.take_gc_op(die, index)),
                Offer::Join => members.push(self.queues.take_host_op(die, index)),
                Offer::Pass => {
                    passed = true;
                    index += 1;
                }
                Offer::Stop => break,
            }
        }
        let merged = if members.len() == 1 {
            op
        } else {
            let id = self.merged.add(&members);
            self.counters.queued_merges += 1;
            PendingOp::multi(op.kind, op.source, id)
        };
        self.merge_group = members;
        merged
    }

    /// Decided op `op` as the merging rule sees it.
    #[inline]
    fn plane_slot(&self, op: PendingOp, blocks: &BlockManager) -> PlaneSlot {
        let ppb = blocks.pages_per_block();
        PlaneSlot {
            kind: op.kind,
            plane: blocks.plane_of_ppa(op.source).0 % self.planes_per_die,
            page: op.source.0 % ppb,
            target_page: if op.target.is_none() {
                0
            } else {
                op.target.0 % ppb
            },
        }
    }

    /// Submits `op` (or merged op) on `die` to the chip model at `now` and notes it in the
    /// flash layer's bookkeeping (erase queue, OOB, power-loss trace).
    #[inline]
    pub fn submit(
        &mut self,
        die: DieId,
        op: PendingOp,
        nand: &mut NandSim,
        flash: &mut Flash,
        now: SimTime,
    ) -> FtlResult<()> {
        if let Tag::Multi(id) = op.tag {
            return self.submit_merged(die, op.kind, id, nand, flash, now);
        }
        let address = self.codec.address(op.source)?;
        let flash_op = &mut self.templates[op.kind.index()];
        if op.kind == OpKind::Copyback {
            flash_op.destinations[0] = self.codec.address(op.target)?;
        }
        flash_op.targets[0] = address;
        flash_op.tag = op.tag.encode_with_die(die);
        flash_op.transfer_bytes = (op.transfer_bytes != 0).then_some(op.transfer_bytes);
        if self.config.reads_suspend && host_read(op) {
            nand.submit_read_suspending(now, flash_op)?;
        } else if op.kind == OpKind::Copyback {
            nand.submit(now, flash_op)?;
        } else {
            // (the codec range-checked the address; the template is well formed)
            nand.submit_prechecked(now, flash_op)?;
        }
        if op.kind == OpKind::Erase && flash.blocks.erase_queue_on() {
            let block = flash.blocks.block_of(op.source);
            flash.blocks.set_erase_queued(block, false);
        }
        let programmed = match op.kind {
            OpKind::Program => op.source,
            OpKind::Copyback => op.target,
            OpKind::Read | OpKind::Erase => Ppa::NONE,
            // SiM kinds: submitted by `submit_search_path`
            OpKind::PageOpen | OpKind::PageClose | OpKind::Search | OpKind::Gather => Ppa::NONE,
        };
        flash.oob.submitted(die, programmed);
        flash.trace_submitted(die.index(), op.kind, op.source, op.target);
        Ok(())
    }

    /// Submits merged group `id` as one multiplane op.
    fn submit_merged(
        &mut self,
        die: DieId,
        kind: OpKind,
        id: u32,
        nand: &mut NandSim,
        flash: &mut Flash,
        now: SimTime,
    ) -> FtlResult<()> {
        self.counters.multiplane_ops[kind.index()] += 1;
        self.counters.multiplane_plane_ops += self.merged.get(id).len() as u64;
        let multi = &mut self.multi_template;
        multi.kind = kind;
        // merged reads and programs are multiplane cache ops when the scheduler uses cache mode
        multi.mode = register_mode(kind, self.config.cache_mode);
        multi.targets.clear();
        multi.destinations.clear();
        for member in self.merged.get(id) {
            multi.targets.push(self.codec.address(member.source)?);
            if kind == OpKind::Copyback {
                multi.destinations.push(self.codec.address(member.target)?);
            }
        }
        multi.tag = Tag::Multi(id).encode_with_die(die);
        nand.submit(now, multi)?;
        for k in 0..self.merged.get(id).len() {
            let member = self.merged.get(id)[k];
            let programmed = match kind {
                OpKind::Program => member.source,
                OpKind::Copyback => member.target,
                _ => Ppa::NONE,
            };
            if kind == OpKind::Erase && flash.blocks.erase_queue_on() {
                let block = flash.blocks.block_of(member.source);
                flash.blocks.set_erase_queued(block, false);
            }
            flash.oob.submitted(die, programmed);
            flash.trace_submitted(die.index(), kind, member.source, member.target);
        }
        Ok(())
    }
}

/// An erase held at the head of its die's queue until the programs it waits for (on other
/// dies) have completed: see `Flash::erase`.
#[derive(Debug)]
struct EraseGate {
    die: DieId,
    /// The erase's number in the die queues ([`OpQueues::push`]).
    queued: u64,
    waits: Vec<ProgramWait>,
}

/// The bit of `die` in a set of dies kept as a `u64` (die numbers modulo 64: a larger device
/// shares bits, which only makes [`FlashScheduler::open_gate`] look at more gates).
#[inline]
pub(crate) fn die_bit(die: DieId) -> u64 {
    1 << (die.0 % 64)
}

impl EraseGate {
    /// Whether the gate may have become open since it was last looked at, given the dies that
    /// completed ops since then (`completed_dies`, [`die_bit`]) and whether an erase was
    /// decided since then (`erased`). A wait ends only when its program completes (an op
    /// completion on the page's die) or its page is erased (an erase decision), so a gate
    /// whose first open wait saw neither is still closed.
    fn may_open(&self, oob: &OobStore, completed_dies: u64, erased: bool) -> bool {
        match self.waits.last() {
            Some(wait) => erased || completed_dies & die_bit(oob.die_of(wait.ppa)) != 0,
            None => true,
        }
    }

    /// Whether every awaited program has completed. A wait once over stays over (the page
    /// completed that program, or no longer holds it), so the waits found over are dropped and
    /// each is checked until it is over, not again at every later completion.
    fn over(&mut self, flash: &Flash) -> bool {
        while let Some(wait) = self.waits.last() {
            if !wait.done(flash) {
                return false;
            }
            self.waits.pop();
        }
        true
    }
}

/// Whether an erase of the block starting at `source`, decided in this batch, waits for a
/// program that has not completed (`Flash::erase_waits`). Such an erase does not join an
/// earlier op of the batch in a multiplane op: placed at the earlier op's turn in its die's
/// queue, it would wait for programs decided after that turn, and with an erase on another
/// die decided in between, waiting for a program queued behind the merged erase, the gates
/// close a cycle (issue 34: `nandlab crash --controller --seed 2 --case 4233` stalled).
fn erase_waits_outstanding(flash: &Flash, source: Ppa) -> bool {
    flash
        .erase_waits
        .iter()
        .any(|e| e.source == source && e.wait.is_some_and(|w| !w.done(flash)))
}

/// How far into a die's queue [`FlashScheduler::merge_queued`] looks for ops to join a
/// multiplane op (bounds its cost when GC has queued long runs of moves).
const QUEUED_MERGE_WINDOW: usize = 32;

/// Whether `op` is the program of a GC page move. Under superblocks a move's program may be on
/// another plane than its read, so it joins a multiplane op only if no queued op was passed
/// over (its read, emitted before it, may be among them).
/// A host read, or the read of a host write's read-modify-write (what `ftl.read_scheduling`
/// orders).
#[inline]
fn host_read(op: PendingOp) -> bool {
    op.kind == OpKind::Read && matches!(op.tag, Tag::Host(_) | Tag::Deferred(_))
}

#[inline]
fn moved_program(op: PendingOp) -> bool {
    op.kind == OpKind::Program && matches!(op.tag, Tag::Gc(_))
}

/// Ops the controller keeps in flight per die in the chip model; the rest wait in the
/// controller's per-die FIFO (order is kept either way). Two let one op's completion and the
/// next op's start coincide without the chip model scanning long wait lists.
pub(crate) const CHIP_OPS_PER_DIE: u32 = 2;

/// The SSD's die slots, dies of a channel interleaved: [`CHIP_OPS_PER_DIE`] ops per die, or
/// one with multiplane merging and no cache mode. A second op in the chip model gains nothing
/// then (the die runs one op at a time, and the next starts at the previous one's completion
/// either way: same results), while an op held in the controller's queue can still be joined
/// by a later op of another plane of its die (`merge_queued`). Cache mode needs the second op
/// in the chip to overlap its data transfer with the previous op's cell stage.
pub(crate) fn ssd_die_slots(multiplane: bool, cache: bool) -> DieSlots {
    DieSlots {
        ops_per_die: if multiplane && !cache {
            1
        } else {
            CHIP_OPS_PER_DIE
        },
        interleave: true,
    }
}
