//! The power-loss trace: every flash op the FTL decides, with the content a program writes,
//! so that the flash array as it stands at any instant can be rebuilt — including the pages
//! of blocks whose erase is decided but has not run yet (the FTL forgets those at decision).
//!
//! Per die, ops are kept in two lists: **staged** (decided, still in the controller's die
//! queue; in decision order) and **submitted** (given to the chip, in submission order, which
//! is the order the die runs and completes them). The world loop reports each submission
//! ([`Flash::trace_submitted`]), which moves the op from one list to the other: under blocking
//! GC that is always the oldest staged op; under interleaved GC host ops pass queued GC ops,
//! so the submission order differs from the decision order, and the image folds completions
//! in submission order. Each op also carries its decision index, so "every op decided before
//! X has completed" (a checkpoint's commit, a flush barrier) is exact in both cases.
//!
//! Off by default: [`crate::flash::emit::Emitter`] holds `None` and pays one branch per op.
//! While on, memory grows with the ops decided and not yet folded into the image; the driver
//! folds completed ops after every step ([`super::image::FlashImage::fold`]). The number of
//! unfolded ops is bounded by [`TRACE_OPS_MAX`].

use crate::address::{Lpa, Ppa};
use crate::flash::Flash;
use crate::flash::oob::oob_crc;
use nandlab_nand::OpKind;
use std::collections::VecDeque;

/// Most ops decided and not yet completed that the trace keeps (beyond it the power-loss run
/// stops with an error naming the bound).
pub const TRACE_OPS_MAX: usize = 1 << 22;

/// What a program writes into a page: its OOB record and, in full payload mode, its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageContent {
    /// The logical page (`None`: a metadata page, or content unknown).
    pub lpa: Option<Lpa>,
    /// Sequence number of the host write.
    pub sequence: u64,
    /// CRC-32 stored in the spare area.
    pub crc: u32,
    /// The page's bytes (full payload mode).
    pub data: Option<Box<[u8]>>,
}

impl PageContent {
    /// Whether the stored CRC matches the LPA, sequence number and bytes.
    pub fn crc_ok(&self) -> bool {
        oob_crc(self.lpa, self.sequence, self.data.as_deref()) == self.crc
    }
}

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
}

impl Trace {
    pub(crate) fn new(dies: u32, pages_per_die: u32) -> Self {
        Trace {
            pages_per_die,
            dies: (0..dies).map(|_| VecDeque::new()).collect(),
            staged: (0..dies).map(|_| VecDeque::new()).collect(),
            decided: 0,
            unfolded: 0,
            image: None,
            pending_checkpoint: None,
            checkpoint_sequence: 0,
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
    fn attach(&mut self, ppa: Ppa, content: PageContent) {
        let die = self.die_of(ppa);
        let last = match self.staged[die].back_mut() {
            Some(op) => Some(op),
            None => self.dies[die].back_mut(),
        };
        if let Some(op) = last
            && op.programmed() == Some(ppa)
        {
            op.content = Some(content);
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

impl Flash {
    /// A chip op that stands for no decision of its own went to `die` right after the op just
    /// submitted there (a SiM command's page-open and page-close, a fallback read): it joins
    /// the die's submitted ops as a programming-free op, so the fold takes one completion for
    /// it (power-loss trace on only).
    pub(crate) fn trace_extra(&mut self, die: usize, kind: OpKind) {
        if let Some(trace) = self.emit.trace.as_mut() {
            let decided = trace.dies[die]
                .back()
                .map_or(trace.decided, |op| op.decided);
            trace.dies[die].push_back(TracedOp {
                kind,
                source: Ppa::NONE,
                target: Ppa::NONE,
                content: None,
                decided,
            });
            trace.unfolded += 1;
        }
    }

    /// Records what was just decided to be programmed at `ppa` (power-loss trace on only).
    #[inline]
    pub(crate) fn trace_content(&mut self, ppa: Ppa) {
        if self.emit.trace.is_some() {
            self.trace_content_slow(ppa);
        }
    }

    /// The world loop gave `(kind, source, target)` to the chip on `die` (power-loss trace on
    /// only).
    #[inline]
    pub(crate) fn trace_submitted(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa) {
        if self.emit.trace.is_some() {
            self.trace_submitted_slow(die, kind, source, target);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_submitted_slow(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa) {
        if let Some(trace) = self.emit.trace.as_mut() {
            trace.submitted(die, kind, source, target);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_content_slow(&mut self, ppa: Ppa) {
        if let Some(content) = self.page_content(ppa)
            && let Some(trace) = self.emit.trace.as_mut()
        {
            trace.attach(ppa, content);
        }
    }

    /// The content programmed at `ppa` now (`None`: erased).
    pub(crate) fn page_content(&self, ppa: Ppa) -> Option<PageContent> {
        let (lpa, sequence) = self.oob.get(ppa)?;
        let data = self.payload.read(ppa).map(Box::<[u8]>::from);
        let crc = match self.payload.oob(ppa) {
            Some(oob) => oob.crc,
            None => oob_crc(lpa, sequence, None),
        };
        Some(PageContent {
            lpa,
            sequence,
            crc,
            data,
        })
    }
}

/// A CRC that fails for a page of unknown content.
pub(crate) fn unknown_crc() -> u32 {
    !oob_crc(None, 0, None)
}
