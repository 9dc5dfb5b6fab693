//! The power-loss trace: every flash op the FTL decides, with the content a program writes,
//! so that the flash array as it stands at any instant can be rebuilt — including the pages
//! of blocks whose erase is decided but has not run yet (the FTL forgets those at decision).
//!
//! Per die, ops are kept in two lists: **staged** (decided, still in the controller's die
//! queue; in decision order) and **submitted** (given to the chip, in submission order, which
//! is the order the die runs and completes them). The world loop reports each submission
//! ([`FlashObserver::submitted`]), which moves the op from one list to the other: under blocking
//! GC that is always the oldest staged op; under interleaved GC host ops pass queued GC ops,
//! so the submission order differs from the decision order, and the image folds completions
//! in submission order. Each op also carries its decision index, so "every op decided before
//! X has completed" (a checkpoint's commit, a flush barrier) is exact in both cases.
//!
//! Off by default; on, it is a [`FlashObserver`] of the flash layer ([`Flash::power_trace`]).
//! While on, memory grows with the ops decided and not yet folded into the image; the driver
//! folds completed ops after every step ([`super::image::FlashImage::fold`]). The number of
//! unfolded ops is bounded by [`TRACE_OPS_MAX`].

use crate::address::{Lpa, Ppa};
use crate::flash::Flash;
pub use crate::flash::observer::PageContent;
use crate::flash::observer::{FlashObserver, FlushDecided};
use nandlab_nand::OpKind;
use std::any::Any;
use std::collections::VecDeque;

/// Most ops decided and not yet completed that the trace keeps (beyond it the power-loss run
/// stops with an error naming the bound).
pub const TRACE_OPS_MAX: usize = 1 << 22;

/// One decided flash op.
#[derive(Clone, Debug)]
pub(crate) struct TracedOp {
    pub kind: OpKind,
    /// The page read or programmed (program), read (copyback), or the block's first page
    /// (erase).
    pub source: Ppa,
    /// The page a copyback programs.
    pub target: Ppa,
    pub content: Option<PageContent>,
    /// Its index in decision order (since the trace started).
    pub decided: u64,
}

impl TracedOp {
    /// The page this op programs, if it programs one.
    pub fn programmed(&self) -> Option<Ppa> {
        match self.kind {
            OpKind::Program => Some(self.source),
            OpKind::Copyback => Some(self.target),
            _ => None,
        }
    }
}

/// Per die, the decided ops not yet folded into the image.
#[derive(Debug)]
pub struct Trace {
    pub(crate) pages_per_die: u32,
    /// Per die, ops given to the chip and not folded yet, in submission order.
    pub(crate) dies: Vec<VecDeque<TracedOp>>,
    /// Per die, ops decided and not given to the chip yet, in decision order.
    pub(crate) staged: Vec<VecDeque<TracedOp>>,
    /// Ops decided since the trace started (the next op's decision index).
    pub(crate) decided: u64,
    pub(crate) unfolded: usize,
    /// The array with every folded op applied.
    pub(crate) image: Option<super::image::FlashImage>,
    /// A map checkpoint written and not committed yet ([`super::checkpoint`]).
    pub(crate) pending_checkpoint: Option<super::checkpoint::PendingCheckpoint>,
    /// The write sequence at the last checkpoint taken.
    pub(crate) checkpoint_sequence: u64,
    /// Decided pages between map checkpoints (`ftl.map_checkpoint_interval_pages`; 0: none),
    /// given when the trace starts.
    pub(crate) checkpoint_interval_pages: u32,
    /// When a checkpoint commits (the `checkpoint-before-data` mutation breaks it).
    pub(crate) checkpoint_order: super::checkpoint::CheckpointOrder,
    /// Checkpoints committed since the trace started.
    pub(crate) checkpoints_committed: u64,
    /// Per LPA, the write sequence at its last trim (0: none): the trim log a checkpoint
    /// carries.
    pub(crate) trimmed_at: Vec<u64>,
    /// The trim log: trims not yet logged, records being written ([`super::trim_log`]).
    pub(crate) trim_log: super::trim_log::TrimLog,
    /// Flushes decided while other requests were in flight, each held until every op decided
    /// before it has completed: (request slot, the decision index to reach).
    pub(crate) flush_barriers: Vec<(u32, u64)>,
    /// Time to write one page of the metadata area (ps), given when the trace starts.
    pub(crate) metadata_page_ps: u64,
    /// The page size in bytes (a trim-log record's size), given when the trace starts.
    pub(crate) page_size_bytes: u32,
}

impl Trace {
    pub(crate) fn new(
        dies: u32,
        pages_per_die: u32,
        checkpoint_interval_pages: u32,
        metadata_page_ps: u64,
        page_size_bytes: u32,
    ) -> Self {
        Trace {
            metadata_page_ps,
            page_size_bytes,
            pages_per_die,
            dies: (0..dies).map(|_| VecDeque::new()).collect(),
            staged: (0..dies).map(|_| VecDeque::new()).collect(),
            decided: 0,
            unfolded: 0,
            image: None,
            pending_checkpoint: None,
            checkpoint_sequence: 0,
            checkpoint_interval_pages,
            checkpoint_order: super::checkpoint::CheckpointOrder::AfterData,
            checkpoints_committed: 0,
            trimmed_at: Vec::new(),
            trim_log: super::trim_log::TrimLog::default(),
            flush_barriers: Vec::new(),
        }
    }

    pub(crate) fn die_of(&self, ppa: Ppa) -> usize {
        (ppa.0 / self.pages_per_die) as usize
    }

    /// An op was decided (called by the emitter, in decision order).
    pub(crate) fn push(&mut self, kind: OpKind, source: Ppa, target: Ppa) {
        let die = self.die_of(source);
        self.staged[die].push_back(TracedOp {
            kind,
            source,
            target,
            content: None,
            decided: self.decided,
        });
        self.decided += 1;
        self.unfolded += 1;
    }

    /// The content of the page the die's last decided op programs.
    fn attach(&mut self, ppa: Ppa, content: &PageContent) {
        let die = self.die_of(ppa);
        let last = match self.staged[die].back_mut() {
            Some(op) => Some(op),
            None => self.dies[die].back_mut(),
        };
        if let Some(op) = last
            && op.programmed() == Some(ppa)
        {
            op.content = Some(content.clone());
        }
    }

    /// The op `(kind, source, target)` of `die` went to the chip: it moves from the staged
    /// ops to the submitted ones (the oldest staged op that matches).
    pub(crate) fn submitted(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa) {
        let staged = &mut self.staged[die];
        let found = staged.iter().position(|op| {
            op.kind == kind
                && op.source == source
                && (kind != OpKind::Copyback || op.target == target)
        });
        debug_assert!(
            found.is_some(),
            "submitted {kind:?} at {source} was not decided"
        );
        if let Some(i) = found
            && let Some(op) = staged.remove(i)
        {
            self.dies[die].push_back(op);
        }
    }

    /// Whether every op decided before decision index `through` has completed (been folded):
    /// no unfolded op, submitted or staged, is older.
    pub(crate) fn done_through(&self, through: u64) -> bool {
        self.dies
            .iter()
            .chain(&self.staged)
            .flatten()
            .all(|op| op.decided >= through)
    }
}

impl FlashObserver for Trace {
    fn decided(&mut self, kind: OpKind, source: Ppa, target: Ppa) {
        self.push(kind, source, target);
    }

    fn programmed(&mut self, ppa: Ppa, content: &PageContent) {
        self.attach(ppa, content);
    }

    fn submitted(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa) {
        Trace::submitted(self, die, kind, source, target);
    }

    /// The staged read of `from` reads `to` (a read changes no page: only its match with the
    /// submission changes).
    fn read_redirected(&mut self, die: usize, from: Ppa, to: Ppa) {
        if let Some(op) = self.staged[die]
            .iter_mut()
            .find(|op| op.kind == OpKind::Read && op.source == from)
        {
            op.source = to;
        }
    }

    /// Joins the die's submitted ops as a programming-free op, so the fold takes one
    /// completion for it.
    fn extra(&mut self, die: usize, kind: OpKind) {
        let decided = self.dies[die].back().map_or(self.decided, |op| op.decided);
        self.dies[die].push_back(TracedOp {
            kind,
            source: Ppa::NONE,
            target: Ppa::NONE,
            content: None,
            decided,
        });
        self.unfolded += 1;
    }

    /// Notes the trim in the checkpoint's trim table and the trim log.
    fn trimmed(&mut self, lpa: Lpa, sequence: u64) {
        let trims = &mut self.trimmed_at;
        if trims.len() <= lpa.index() {
            trims.resize(lpa.index() + 1, 0);
        }
        trims[lpa.index()] = sequence;
        self.trim_log.note(lpa, sequence);
    }

    /// A Flush logs the trims not yet logged and waits for the record
    /// ([`crate::power::trim_log`]); with other requests in flight it also waits for every op
    /// decided before it (a write that completed into the write buffer may have been evicted
    /// by a later write still in flight, whose program the flush would not otherwise wait
    /// for: the queue-depth crash runs found it).
    fn flushed(&mut self, flush: &FlushDecided) -> u32 {
        let mut waits = 0;
        if self.trim_log.on_flush(
            flush.slot,
            flush.now_ps,
            self.metadata_page_ps,
            self.page_size_bytes,
        ) {
            waits += 1;
        }
        if flush.others_in_flight && !self.done_through(self.decided) {
            self.flush_barriers.push((flush.slot, self.decided));
            waits += 1;
        }
        waits
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Flash {
    /// The power-loss trace, when it is on.
    pub(crate) fn power_trace(&self) -> Option<&Trace> {
        if !self.observed() {
            return None;
        }
        self.observer::<Trace>()
    }

    /// The power-loss trace, mutably, when it is on.
    pub(crate) fn power_trace_mut(&mut self) -> Option<&mut Trace> {
        if !self.observed() {
            return None;
        }
        self.observer_mut::<Trace>()
    }

    /// The power-loss trace, mutably, with the OOB store (which counts the completed ops).
    pub(crate) fn power_trace_with_oob(
        &mut self,
    ) -> Option<(&mut Trace, &crate::flash::oob::OobStore)> {
        let oob = &self.oob;
        let trace = self
            .emit
            .observers
            .iter_mut()
            .find_map(|o| o.as_any_mut().downcast_mut::<Trace>())?;
        Some((trace, oob))
    }
}

/// A CRC that fails for a page of unknown content.
pub(crate) fn unknown_crc() -> u32 {
    !crate::flash::oob::oob_crc(None, 0, None)
}
