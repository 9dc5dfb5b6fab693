//! The SSD's side of the flash scheduler: the ops the host path, GC and wear-leveling decided
//! go to the scheduler (`sched/scheduler.rs`, `FlashScheduler`), which places, merges, gates
//! and submits them to the chip model; the chip's completions come back here and are routed to
//! their owners (`world.rs`'s `on_completion`) before the die is pumped for its next op.

use super::Ssd;
use crate::address::DieId;
use crate::error::FtlResult;
use crate::flash::Flash;
use crate::flash::emit::{PendingOp, Tag};
use crate::host::queue::RequestTable;
use crate::sched::scheduler::die_bit;
use nandlab_nand::OpKind;

impl Ssd {
    /// Runs the chip model to its next completions (`ChipPort::run_to_completion`), routes
    /// each to its owner, pumps the completing dies, and opens the erase gates that may go.
    pub(super) fn step_chip(&mut self) -> FtlResult<()> {
        let mut completions = std::mem::take(&mut self.chip.completions);
        // chip events that complete nothing need no controller action: run them back to back
        // while no other source's event is due first (ties go to the host and the stages)
        let other = self.next_other_event();
        let time = self.chip.run_to_completion(&mut completions, other);
        self.set_now(time);
        if time.is_end() {
            return Err(self.end_of_time());
        }
        let mut result = Ok(());
        let mut completed_dies = 0u64;
        for c in completions.drain(..) {
            let die = Tag::die_of(c.tag);
            completed_dies |= die_bit(die);
            let tag = Tag::decode(c.tag);
            let done = if let Tag::Multi(id) = tag {
                self.complete_merged(id, die, c.kind, c.read_retries, c.uncorrectable)
            } else {
                // the page a completed program wrote is durable before anyone hears of it
                self.flash.oob.completed(die);
                if c.uncorrectable {
                    self.note_uncorrectable(tag);
                }
                self.on_completion(tag, c.kind, c.read_retries)
            }
            .and_then(|()| self.pump(die));
            if let Err(e) = done {
                result = Err(e);
                break;
            }
        }
        completions.clear();
        self.chip.completions = completions;
        if result.is_ok() && self.sched.gates_held() {
            result = self.release_gates(completed_dies);
        }
        result
    }

    /// Queues every decided op on its die, in decision order, counts it against its owner,
    /// and feeds the chip model.
    pub(super) fn submit_pending(&mut self) -> FtlResult<()> {
        let mut ops = std::mem::take(&mut self.flash.emit.ops);
        if let Some(c) = &mut self.stages.controller {
            // the firmware handles every GC / wear-leveling page move (its program side)
            let moves = ops
                .iter()
                .filter(|op| {
                    matches!(op.tag, Tag::Gc(_))
                        && matches!(op.kind, OpKind::Program | OpKind::Copyback)
                })
                .count();
            c.gc_moves(self.now, moves as u64);
        }
        let mut result = Ok(());
        if (self.sched.multiplane() && ops.len() > 1) || !self.flash.erase_waits.is_empty() {
            // (erases that may wait for other dies: `FlashScheduler::place_erase`)
            result = self.submit_merging(&ops);
        } else {
            for &op in &ops {
                self.count_submitted(op.tag);
                if let Err(e) = self.dispatch(op) {
                    result = Err(e);
                    break;
                }
            }
        }
        ops.clear();
        self.flash.emit.ops = ops;
        result
    }

    /// The decided ops with multiplane merging (`FlashScheduler::merge_multiplane`), and
    /// erases that may have to wait for programs on other dies
    /// (`FlashScheduler::place_erase`).
    #[inline(never)]
    fn submit_merging(&mut self, ops: &[PendingOp]) -> FtlResult<()> {
        self.sched.begin_batch(ops.len());
        let merging = self.sched.multiplane();
        for i in 0..ops.len() {
            if self.sched.taken(i) {
                continue;
            }
            self.count_submitted(ops[i].tag);
            let op = if merging {
                let op = self.sched.merge_multiplane(ops, i, &self.flash);
                if let Tag::Multi(id) = op.tag {
                    // the members that joined the first
                    for member in &self.sched.merged_members(id)[1..] {
                        count_submitted(&mut self.host.requests, &mut self.flash, member.tag);
                    }
                }
                op
            } else {
                ops[i]
            };
            if op.kind == OpKind::Erase && !self.flash.erase_waits.is_empty() {
                let die = self.sched.codec().die_of(op.source);
                if let Some(op) = self
                    .sched
                    .place_erase(die, op, &mut self.flash, &self.chip.nand)
                {
                    self.submit_to_chip(die, op)?;
                }
            } else {
                self.dispatch(op)?;
            }
        }
        Ok(())
    }

    /// Hands `op` to the chip now if nothing waits for its die and the die has room, else
    /// the scheduler queues it.
    #[inline(always)]
    fn dispatch(&mut self, op: PendingOp) -> FtlResult<()> {
        let die = self.sched.codec().die_of(op.source);
        let mut placed = op;
        if self
            .sched
            .place(die, &mut placed, &self.chip.nand, &self.flash.oob)
        {
            if placed.source != op.source && self.flash.observed() {
                // a read of a page under GC migration reads the move's source
                self.flash
                    .trace_read_redirected(die.index(), op.source, placed.source);
            }
            self.submit_to_chip(die, placed)
        } else {
            Ok(())
        }
    }

    /// An op of `tag` goes to the chip: its owner waits for one more op.
    #[inline]
    fn count_submitted(&mut self, tag: Tag) {
        count_submitted(&mut self.host.requests, &mut self.flash, tag);
    }

    /// Submits queued ops of `die` while it has room (see `sched::scheduler::ssd_die_slots`).
    #[inline(always)]
    pub(super) fn pump(&mut self, die: DieId) -> FtlResult<()> {
        while let Some(op) = self.sched.next(die, &self.chip.nand, &self.flash) {
            self.submit_to_chip(die, op)?;
        }
        Ok(())
    }

    /// The chip port: `op` onto the chip model, through the SiM region's path for its ops
    /// and programs (match-mode blocks, `ssd/search.rs`).
    #[inline]
    fn submit_to_chip(&mut self, die: DieId, op: PendingOp) -> FtlResult<()> {
        if self.stages.search_path
            && !matches!(op.tag, Tag::Multi(_))
            && self.submit_search_path(die, op)?
        {
            return Ok(());
        }
        self.sched
            .submit(die, op, &mut self.chip.nand, &mut self.flash, self.now)
    }

    /// Merged group `id` completed on `die`: each member completes in turn.
    fn complete_merged(
        &mut self,
        id: u32,
        die: DieId,
        kind: OpKind,
        read_retries: u32,
        uncorrectable: bool,
    ) -> FtlResult<()> {
        let members = self.sched.take_merged(id);
        let mut result = Ok(());
        for member in &members {
            self.flash.oob.completed(die);
            if uncorrectable {
                self.note_uncorrectable(member.tag);
            }
            if result.is_ok() {
                result = self.on_completion(member.tag, kind, read_retries);
            }
        }
        self.sched.release_merged(id, members);
        result
    }

    /// Pumps the dies whose held erase may go now, after a batch of chip completions on
    /// `completed_dies` (`die_bit`). Only gates whose next wait is on one of those dies are
    /// looked at, unless an erase was decided since the last call (it may have erased an
    /// awaited page); a gate found open is dropped at once (its erase, not necessarily at
    /// the head of its die's queue yet, goes when the die's pumping reaches it) and its die
    /// pumped. The same erases go at the same instants as when every gate is rechecked, and
    /// its die pumped, after every batch until the erase is taken (measured: bench ssd and
    /// crash outcomes identical).
    #[cold]
    #[inline(never)]
    fn release_gates(&mut self, completed_dies: u64) -> FtlResult<()> {
        let mut erased = std::mem::take(&mut self.flash.erased_since_gates);
        let mut at = 0;
        while let Some(die) = self
            .sched
            .open_gate(&mut at, &self.flash, completed_dies, erased)
        {
            // open: the erase goes when its die's pumping reaches it (no gate: no hold)
            self.pump(die)?;
            // an erase decided while pumping may open any gate: the rest of this pass looks
            // at all of them, and the flag stays set for the next pass (gates before this one)
            erased |= self.flash.erased_since_gates;
        }
        Ok(())
    }
}

/// An op of `tag` goes to the chip: its owner (a host request, a GC job) waits for one more op.
#[inline]
fn count_submitted(requests: &mut RequestTable, flash: &mut Flash, tag: Tag) {
    match tag {
        Tag::Host(slot) => requests.slots[slot as usize].outstanding += 1,
        Tag::Gc(job) => flash.job_op_submitted(job),
        Tag::Deferred(_) | Tag::Internal | Tag::Multi(_) => {}
    }
}
