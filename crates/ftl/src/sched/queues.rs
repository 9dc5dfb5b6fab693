//! Per-die queues of the SSD's decided ops, and the GC scheduling policy that orders them
//! (issue 12).
//!
//! - **Blocking** GC (paper 000, and nandlab's default): one FIFO per die in decision order, so
//!   host ops decided after a GC wait for all of its moves and its erase on that die.
//! - **Interleaved** GC (MQSim's preemptible GC): GC ops (moves, erases, wear-leveling and merge
//!   work) wait in their own per-die queue and go to the chip only when the die has no host op
//!   waiting, unless GC is urgent: a plane of the die has fewer physically free blocks (free in
//!   the FTL's accounting minus erases still queued) than `gc_urgent_free_blocks` (default 0:
//!   never). Ops that touch the same block keep their decision order across the two queues:
//!   a host op never overtakes GC work decided before it on one of its blocks (a moved page
//!   not yet programmed, a victim not yet erased and already reused: those go first), and GC
//!   work never overtakes host ops decided before it on its blocks (a host program still
//!   queued in a block the GC then picks as victim, whose valid pages it reads and which it
//!   erases: the program goes first, also when GC is urgent); an urgent GC erase does not
//!   overtake older host ops either (one may program the newest copy of a page the erase
//!   destroys: the erase ordering of issue 14 awaits only other dies). Every queued op
//!   carries its decision number; of the two heads, the older one never waits for the other
//!   queue, so the order cannot deadlock. New write frontiers prefer free blocks whose erase has
//!   already run (`BlockManager::take_free`), so a host op rarely waits for GC work.
//!
//! The FTL's functional decisions (mapping, victims, WAF) are the same under both policies; only
//! the order in which the chip model runs the ops, hence the timing, differs.

use crate::address::{BlockId, DieId, PlaneId, Ppa};
use crate::config::GcScheduling;
use crate::flash::emit::{PendingOp, Tag};
use nandlab_nand::OpKind;
use std::collections::{HashMap, VecDeque};

/// A queued op and its decision number (interleaved GC orders the two queues by it).
#[derive(Clone, Copy, Debug)]
struct Queued {
    op: PendingOp,
    decided: u64,
}

/// Decided ops waiting for their die, and what interleaved GC needs to order them.
#[derive(Debug)]
pub(crate) struct OpQueues {
    mode: GcScheduling,
    /// Host ops (and everything not GC), per die, in decision order. Under blocking GC, every op.
    host: Vec<VecDeque<Queued>>,
    /// GC ops per die (interleaved GC only).
    gc: Vec<VecDeque<Queued>>,
    /// Decision number of the next op pushed.
    next_decided: u64,
    /// Decision number of the op [`OpQueues::pop`] last returned (for `push_front`).
    popped_decided: u64,
    /// GC ops still queued that program or erase each block (interleaved only).
    gc_pending_by_block: Vec<u32>,
    /// Host-queue ops still queued that touch each block (interleaved only).
    host_pending_by_block: Vec<u32>,
    /// Erases still queued per plane (interleaved only).
    erases_pending_by_plane: Vec<u32>,
    pages_per_block: u32,
    blocks_per_plane: u32,
    planes_per_die: u32,
    urgent_free_blocks: u32,
    /// GC ops that went to the chip before a waiting host op because GC was urgent.
    urgent_passes: u64,
    /// Interleaved GC: the source page of each queued GC copyback, by its destination page
    /// (a host read of a page whose move has not run yet reads the source:
    /// [`OpQueues::moved_from`]).
    moves_pending: HashMap<Ppa, Ppa>,
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
            next_decided: 0,
            popped_decided: 0,
            gc_pending_by_block: if interleaved {
                vec![0; blocks]
            } else {
                Vec::new()
            },
            host_pending_by_block: if interleaved {
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
            urgent_passes: 0,
            moves_pending: HashMap::new(),
        }
    }

    /// GC ops that went to the chip before a waiting host op because a plane of their die was
    /// short of free blocks (`gc_urgent_free_blocks`), since the device was made.
    pub fn urgent_passes(&self) -> u64 {
        self.urgent_passes
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

    /// Queues `op` for `die`; returns its decision number (unique among queued ops).
    #[inline]
    pub fn push(&mut self, die: DieId, op: PendingOp) -> u64 {
        let decided = self.next_decided;
        self.next_decided += 1;
        let queued = Queued { op, decided };
        if self.counts_as_gc(&op) {
            self.gc[die.index()].push_back(queued);
        } else {
            self.count_host(&op, 1);
            self.host[die.index()].push_back(queued);
        }
        decided
    }

    /// The decision number of the op [`OpQueues::pop`] (or `pop_host_independent`) last
    /// returned.
    #[inline]
    pub fn popped_number(&self) -> u64 {
        self.popped_decided
    }

    /// Puts `op`, just returned by [`OpQueues::pop`] for `die`, back at the head of its queue
    /// (with its decision number).
    pub fn push_front(&mut self, die: DieId, op: PendingOp) {
        let queued = Queued {
            op,
            decided: self.popped_decided,
        };
        if self.counts_as_gc(&op) {
            self.gc[die.index()].push_front(queued);
        } else {
            self.count_host(&op, 1);
            self.host[die.index()].push_front(queued);
        }
    }

    /// Interleaved GC: counts host-queue op `op` in (`delta` 1) or out (`delta` -1) of the
    /// blocks it touches.
    #[inline]
    fn count_host(&mut self, op: &PendingOp, delta: i32) {
        if !self.interleaved() {
            return;
        }
        for p in [op.source, op.target] {
            if !p.is_none() {
                let b = self.block(p).index();
                self.host_pending_by_block[b] =
                    self.host_pending_by_block[b].wrapping_add_signed(delta);
            }
        }
    }

    /// Takes the head of `die`'s host queue.
    #[inline]
    fn pop_host(&mut self, die: DieId) -> Option<PendingOp> {
        let queued = self.host[die.index()].pop_front()?;
        self.count_host(&queued.op, -1);
        self.popped_decided = queued.decided;
        Some(queued.op)
    }

    /// Takes the head of `die`'s GC queue.
    fn pop_gc(&mut self, die: DieId) -> Option<PendingOp> {
        let queued = self.gc[die.index()].pop_front()?;
        self.uncount_gc(&queued.op);
        self.popped_decided = queued.decided;
        Some(queued.op)
    }

    /// Whether `op` goes to the GC queue (interleaved GC, a GC op); if so, counts it as pending
    /// on the block it writes and, for an erase, on its plane.
    #[inline]
    fn counts_as_gc(&mut self, op: &PendingOp) -> bool {
        if !(self.interleaved() && matches!(op.tag, Tag::Gc(_))) {
            return false;
        }
        if op.kind == OpKind::Copyback {
            self.moves_pending.insert(op.target, op.source);
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
        if !self.interleaved() {
            return None;
        }
        let host = *self.host[d].front()?;
        if self.host_waits_for_gc(die, &host) {
            return None;
        }
        self.pop_host(die)
    }

    /// Whether host-queue op `host`, at the head of `die`'s host queue, must let GC work go
    /// first: a GC op decided before it is queued and programs or erases a block it touches.
    /// The per-block counts say cheaply when no queued GC op touches its blocks; when one
    /// does, the GC ops older than `host` are looked at, as a GC op decided after it is no
    /// reason to wait: that wait pointed from an older op to a newer one and, with an erase
    /// held at its gate ahead of the newer one, could close a cycle across dies (issue 31
    /// item 4). Every wait then points to an older op: erase gates to programs decided before
    /// the erase, host ops to older GC work, and the older head of the two queues never waits.
    #[inline]
    fn host_waits_for_gc(&self, die: DieId, host: &Queued) -> bool {
        match self.gc[die.index()].front() {
            Some(gc) => {
                gc.decided < host.decided
                    && self.depends_on_gc(&host.op)
                    && self.depends_on_older_gc(die, host)
            }
            None => false,
        }
    }

    /// Whether a GC op queued for `die` and decided before `host` programs or erases a block
    /// `host` touches.
    #[cold]
    #[inline(never)]
    fn depends_on_older_gc(&self, die: DieId, host: &Queued) -> bool {
        if host.op.kind == OpKind::Read {
            return self.read_waits_for_older_gc(die, host);
        }
        let touched =
            [host.op.source, host.op.target].map(|p| (!p.is_none()).then(|| self.block(p)));
        self.gc[die.index()]
            .iter()
            .take_while(|gc| gc.decided < host.decided)
            .filter_map(|gc| self.written_block(&gc.op))
            .any(|b| touched.contains(&Some(b)))
    }

    /// [`OpQueues::depends_on_older_gc`] for a host read: it waits only for older GC work that
    /// programs its own page (a move whose copy it reads). The other pages GC programs into the
    /// same block meanwhile (the GC write frontier takes a victim's valid pages one after
    /// another) do not hold it: waiting for them had put a host read, and every host op
    /// behind it on the die, behind whole victims' moves (seconds of die time when GC decided
    /// several victims at once) whenever it read a page moved earlier into a block GC was
    /// still filling. An older erase of its block needs no check of its own: a page read
    /// after such an erase was programmed after it, and that program is older than the read.
    fn read_waits_for_older_gc(&self, die: DieId, host: &Queued) -> bool {
        let page = host.op.source;
        self.gc[die.index()]
            .iter()
            .take_while(|gc| gc.decided < host.decided)
            .any(|gc| match gc.op.kind {
                OpKind::Program => gc.op.source == page,
                OpKind::Copyback => gc.op.target == page,
                _ => false,
            })
    }

    /// Interleaved GC: the page a queued GC copyback moves to `page`, if its move has not gone
    /// to the chip yet. That source page still holds the data: the victim's erase was decided
    /// after the move and waits behind it in the die's GC queue.
    #[inline]
    pub fn moved_from(&self, page: Ppa) -> Option<Ppa> {
        if self.moves_pending.is_empty() {
            return None;
        }
        self.moves_pending.get(&page).copied()
    }

    /// The next op for `die` under the policy; `free_blocks(plane)` is the FTL's free-block
    /// count of a plane.
    #[inline]
    pub fn pop(&mut self, die: DieId, free_blocks: impl Fn(PlaneId) -> u32) -> Option<PendingOp> {
        let d = die.index();
        if self.gc[d].is_empty() {
            return self.pop_host(die);
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
        // (whether GC goes first, and whether because it is urgent)
        let (gc_first, urgent) = match self.host[d].front() {
            None => (true, false),
            Some(host) => {
                let gc = self.gc[d].front().expect("GC work waits");
                if gc.decided < host.decided {
                    // the GC head is older than every queued host op: it may always go
                    if self.host_waits_for_gc(die, host) {
                        (true, false)
                    } else {
                        let urgent = self.urgent(die, free_blocks);
                        (urgent, urgent)
                    }
                } else {
                    // the host head is older than every queued GC op: urgent GC goes first
                    // unless its head touches a block a queued (older) host op touches, or
                    // is an erase (an older host program may hold the newest copy of a page
                    // it erases: same-die programs are not awaited by `Flash::erase`)
                    let urgent = gc.op.kind != OpKind::Erase
                        && !self.depends_on_host(&gc.op)
                        && self.urgent(die, free_blocks);
                    (urgent, urgent)
                }
            }
        };
        self.urgent_passes += u64::from(urgent);
        if !gc_first {
            return self.pop_host(die);
        }
        self.pop_gc(die)
    }

    /// A GC op leaves its queue: no longer pending on the block it writes (nor, an erase, on
    /// its plane; nor, a copyback, a move a host read may be served from).
    fn uncount_gc(&mut self, op: &PendingOp) {
        if op.kind == OpKind::Copyback {
            self.moves_pending.remove(&op.target);
        }
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

    /// Whether GC op `op` touches a block that queued host-queue ops touch (reads included: a
    /// host read of a victim's page must not see its erase).
    fn depends_on_host(&self, op: &PendingOp) -> bool {
        [op.source, op.target]
            .iter()
            .filter(|p| !p.is_none())
            .any(|&p| self.host_pending_by_block[self.block(p).index()] > 0)
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

    /// Whether queued host-queue ops still touch the block of `ppa` (interleaved GC).
    pub fn host_pending(&self, ppa: Ppa) -> bool {
        !ppa.is_none()
            && self.interleaved()
            && self.host_pending_by_block[self.block(ppa).index()] > 0
    }

    /// The `index`-th op of `die`'s host queue (under blocking GC: of its only queue), for
    /// merging queued ops into a multiplane op.
    #[inline]
    pub fn host_op(&self, die: DieId, index: usize) -> Option<PendingOp> {
        self.host[die.index()].get(index).map(|q| q.op)
    }

    /// The `index`-th op of `die`'s GC queue (interleaved GC).
    #[inline]
    pub fn gc_op(&self, die: DieId, index: usize) -> Option<PendingOp> {
        self.gc[die.index()].get(index).map(|q| q.op)
    }

    /// Takes the `index`-th op out of `die`'s GC queue (it joined a multiplane op).
    pub fn take_gc_op(&mut self, die: DieId, index: usize) -> PendingOp {
        let op = self.gc[die.index()]
            .remove(index)
            .expect("a queued op's index")
            .op;
        self.uncount_gc(&op);
        op
    }

    /// Takes the `index`-th op out of `die`'s host queue (it joined a multiplane op).
    #[inline]
    pub fn take_host_op(&mut self, die: DieId, index: usize) -> PendingOp {
        let op = self.host[die.index()]
            .remove(index)
            .expect("a queued op's index")
            .op;
        self.count_host(&op, -1);
        op
    }
}
