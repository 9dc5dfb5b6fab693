//! Per-die queues of the SSD's decided ops, and the GC scheduling policy that orders them
//! (issue 12).
//!
//! - **Blocking** GC (paper 000, and nandlab's default): one FIFO per die in decision order, so
//!   host ops decided after a GC wait for all of its moves and its erase on that die.
//! - **Interleaved** GC (MQSim's preemptible GC): GC ops (moves, erases, wear-leveling and merge
//!   work) wait in their own per-die queue and go to the chip only when the die has no host op
//!   waiting, unless GC is urgent: a plane of the die has fewer physically free blocks (free in
//!   the FTL's accounting minus erases still queued) than `gc_urgent_free_blocks` (default 0:
//!   never). A host op never overtakes GC work it depends on: one that touches a block with GC
//!   ops still queued (a moved page not yet programmed, a victim not yet erased and already
//!   reused) lets those go first; and new write frontiers prefer free blocks whose erase has
//!   already run (`BlockManager::take_free`), so that dependency is rare while GC keeps up.
//!
//! The FTL's functional decisions (mapping, victims, WAF) are the same under both policies; only
//! the order in which the chip model runs the ops, hence the timing, differs.

use crate::address::{BlockId, DieId, PlaneId, Ppa};
use crate::config::GcScheduling;
use crate::flash::emit::{PendingOp, Tag};
use nandlab_nand::OpKind;
use std::collections::VecDeque;

/// Decided ops waiting for their die, and what interleaved GC needs to order them.
#[derive(Debug)]
pub(crate) struct OpQueues {
    mode: GcScheduling,
    /// Host ops (and everything not GC), per die, in decision order. Under blocking GC, every op.
    host: Vec<VecDeque<PendingOp>>,
    /// GC ops per die (interleaved GC only).
    gc: Vec<VecDeque<PendingOp>>,
    /// GC ops still queued that program or erase each block (interleaved only).
    gc_pending_by_block: Vec<u32>,
    /// Erases still queued per plane (interleaved only).
    erases_pending_by_plane: Vec<u32>,
    pages_per_block: u32,
    blocks_per_plane: u32,
    planes_per_die: u32,
    urgent_free_blocks: u32,
}

impl OpQueues {
    pub fn new(
        mode: GcScheduling,
        urgent_free_blocks: u32,
        dies: u32,
        planes_per_die: u32,
        blocks_per_plane: u32,
        pages_per_block: u32,
    ) -> Self {
        let interleaved = mode == GcScheduling::Interleaved;
        let blocks = (dies * planes_per_die * blocks_per_plane) as usize;
        OpQueues {
            mode,
            host: (0..dies).map(|_| VecDeque::new()).collect(),
            gc: (0..dies).map(|_| VecDeque::new()).collect(),
            gc_pending_by_block: if interleaved {
                vec![0; blocks]
            } else {
                Vec::new()
            },
            erases_pending_by_plane: if interleaved {
                vec![0; (dies * planes_per_die) as usize]
            } else {
                Vec::new()
            },
            pages_per_block,
            blocks_per_plane,
            planes_per_die,
            urgent_free_blocks,
        }
    }

    #[inline]
    pub fn interleaved(&self) -> bool {
        self.mode == GcScheduling::Interleaved
    }

    /// Whether nothing waits for `die`.
    #[inline(always)]
    pub fn is_empty(&self, die: DieId) -> bool {
        self.host[die.index()].is_empty() && self.gc[die.index()].is_empty()
    }

    /// Whether nothing waits anywhere.
    pub fn all_empty(&self) -> bool {
        self.host.iter().all(VecDeque::is_empty) && self.gc.iter().all(VecDeque::is_empty)
    }

    fn block(&self, ppa: Ppa) -> BlockId {
        BlockId(ppa.0 / self.pages_per_block)
    }

    /// The block a GC op programs or erases (`None` for its reads).
    fn written_block(&self, op: &PendingOp) -> Option<BlockId> {
        match op.kind {
            OpKind::Program | OpKind::Erase => Some(self.block(op.source)),
            OpKind::Copyback => Some(self.block(op.target)),
            _ => None,
        }
    }

    fn plane_of(&self, block: BlockId) -> PlaneId {
        PlaneId(block.0 / self.blocks_per_plane)
    }

    /// Queues `op` for `die`.
    #[inline]
    pub fn push(&mut self, die: DieId, op: PendingOp) {
        if self.counts_as_gc(&op) {
            self.gc[die.index()].push_back(op);
        } else {
            self.host[die.index()].push_back(op);
        }
    }

    /// Puts `op`, just popped for `die`, back at the head of its queue.
    pub fn push_front(&mut self, die: DieId, op: PendingOp) {
        if self.counts_as_gc(&op) {
            self.gc[die.index()].push_front(op);
        } else {
            self.host[die.index()].push_front(op);
        }
    }

    /// Whether `op` goes to the GC queue (interleaved GC, a GC op); if so, counts it as pending
    /// on the block it writes and, for an erase, on its plane.
    #[inline]
    fn counts_as_gc(&mut self, op: &PendingOp) -> bool {
        if !(self.interleaved() && matches!(op.tag, Tag::Gc(_))) {
            return false;
        }
        if let Some(block) = self.written_block(op) {
            self.gc_pending_by_block[block.index()] += 1;
            if op.kind == OpKind::Erase {
                let plane = self.plane_of(block).index();
                self.erases_pending_by_plane[plane] += 1;
            }
        }
        true
    }

    /// Interleaved GC, while the GC op at the head of `die`'s queue is held: the next host op
    /// if it does not depend on queued GC work.
    pub fn pop_host_independent(&mut self, die: DieId) -> Option<PendingOp> {
        let d = die.index();
        if !self.interleaved() || self.depends_on_gc(self.host[d].front()?) {
            return None;
        }
        self.host[d].pop_front()
    }

    /// The next op for `die` under the policy; `free_blocks(plane)` is the FTL's free-block
    /// count of a plane.
    #[inline]
    pub fn pop(&mut self, die: DieId, free_blocks: impl Fn(PlaneId) -> u32) -> Option<PendingOp> {
        let d = die.index();
        if self.gc[d].is_empty() {
            return self.host[d].pop_front();
        }
        self.pop_with_gc(die, free_blocks)
    }

    /// [`OpQueues::pop`] when GC work waits for `die` (interleaved GC).
    #[inline(never)]
    fn pop_with_gc(
        &mut self,
        die: DieId,
        free_blocks: impl Fn(PlaneId) -> u32,
    ) -> Option<PendingOp> {
        let d = die.index();
        let gc_first = match self.host[d].front() {
            None => true,
            Some(host) => self.depends_on_gc(host) || self.urgent(die, free_blocks),
        };
        if !gc_first {
            return self.host[d].pop_front();
        }
        let op = self.gc[d].pop_front()?;
        self.uncount_gc(&op);
        Some(op)
    }

    /// A GC op leaves its queue: no longer pending on the block it writes (nor, an erase, on
    /// its plane).
    fn uncount_gc(&mut self, op: &PendingOp) {
        if let Some(block) = self.written_block(op) {
            self.gc_pending_by_block[block.index()] -= 1;
            if op.kind == OpKind::Erase {
                let plane = self.plane_of(block).index();
                self.erases_pending_by_plane[plane] -= 1;
            }
        }
    }

    /// Whether host op `op` touches a block that queued GC ops still program or erase.
    fn depends_on_gc(&self, op: &PendingOp) -> bool {
        let touched = [op.source, op.target];
        touched
            .iter()
            .filter(|p| !p.is_none())
            .any(|&p| self.gc_pending_by_block[self.block(p).index()] > 0)
    }

    /// Whether a plane of `die` has fewer physically free blocks than the urgency threshold.
    fn urgent(&self, die: DieId, free_blocks: impl Fn(PlaneId) -> u32) -> bool {
        let first = die.0 * self.planes_per_die;
        (first..first + self.planes_per_die)
            .map(PlaneId)
            .any(|plane| {
                let pending = self.erases_pending_by_plane[plane.index()];
                free_blocks(plane).saturating_sub(pending) < self.urgent_free_blocks
            })
    }
}

/// Multiplane ops the scheduler formed from several decided ops of one die (same kind, same
/// page offset, different planes): each entry holds the constituent ops, whose completions are
/// reported one by one when the merged op completes. Entries and their lists are reused.
#[derive(Debug, Default)]
pub(crate) struct MergedOps {
    groups: Vec<Vec<PendingOp>>,
    free: Vec<u32>,
}

impl MergedOps {
    /// Stores a group; returns its id.
    pub fn add(&mut self, ops: &[PendingOp]) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.groups.push(Vec::with_capacity(ops.len()));
                (self.groups.len() - 1) as u32
            }
        };
        let group = &mut self.groups[id as usize];
        group.clear();
        group.extend_from_slice(ops);
        id
    }
    /// The constituents of group `id`.
    pub fn get(&self, id: u32) -> &[PendingOp] {
        &self.groups[id as usize]
    }
    /// Takes group `id`'s list out (give it back with [`MergedOps::release`]).
    pub fn take(&mut self, id: u32) -> Vec<PendingOp> {
        std::mem::take(&mut self.groups[id as usize])
    }
    /// Returns the list of group `id` and frees the entry.
    pub fn release(&mut self, id: u32, list: Vec<PendingOp>) {
        self.groups[id as usize] = list;
        self.free.push(id);
    }
    /// Groups still in flight.
    pub fn in_flight(&self) -> usize {
        self.groups.len() - self.free.len()
    }
}

impl OpQueues {
    /// Whether queued GC ops still program or erase the block of `ppa` (interleaved GC).
    pub fn gc_pending(&self, ppa: Ppa) -> bool {
        self.interleaved() && self.gc_pending_by_block[self.block(ppa).index()] > 0
    }

    /// The `index`-th op of `die`'s host queue (under blocking GC: of its only queue), for
    /// merging queued ops into a multiplane op.
    #[inline]
    pub fn host_op(&self, die: DieId, index: usize) -> Option<PendingOp> {
        self.host[die.index()].get(index).copied()
    }

    /// The `index`-th op of `die`'s GC queue (interleaved GC).
    #[inline]
    pub fn gc_op(&self, die: DieId, index: usize) -> Option<PendingOp> {
        self.gc[die.index()].get(index).copied()
    }

    /// Takes the `index`-th op out of `die`'s GC queue (it joined a multiplane op).
    pub fn take_gc_op(&mut self, die: DieId, index: usize) -> PendingOp {
        let op = self.gc[die.index()]
            .remove(index)
            .expect("a queued op's index");
        self.uncount_gc(&op);
        op
    }

    /// Takes the `index`-th op out of `die`'s host queue (it joined a multiplane op).
    #[inline]
    pub fn take_host_op(&mut self, die: DieId, index: usize) -> PendingOp {
        self.host[die.index()]
            .remove(index)
            .expect("a queued op's index")
    }
}
