//! Observers of the flash ops: features that watch what the FTL decides and what the flash
//! scheduler gives the chip (the power-loss trace, [`crate::power`]) plug in here at run time
//! instead of the flash layer knowing them. With no observer the emitter pays one length check
//! per op.

use super::Flash;
use super::oob::oob_crc;
use crate::address::{Lpa, Ppa};
use nandlab_nand::OpKind;
use std::any::Any;

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

/// Watches the flash ops. Every call comes off the hot path (only when an observer is plugged
/// in); `as_any` lets the feature that plugged it in find it again. `Send`: a device (with its
/// observers) moves to the thread that serves it (`crates/nbd`).
pub(crate) trait FlashObserver: std::fmt::Debug + Send {
    /// An op was decided (in decision order).
    fn decided(&mut self, kind: OpKind, source: Ppa, target: Ppa);
    /// The op just decided programs `ppa` with `content`.
    fn programmed(&mut self, ppa: Ppa, content: &PageContent);
    /// The flash scheduler gave `(kind, source, target)` to the chip on `die`.
    fn submitted(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa);
    /// A chip op that stands for no decision of its own went to `die` right after the op just
    /// submitted there (a search command's page-open and page-close, a fallback read).
    fn extra(&mut self, die: usize, kind: OpKind);
    /// The host read of `from` decided for `die` (not yet submitted) reads `to` instead: the
    /// page `from` was moved from by a GC copyback that has not run yet.
    fn read_redirected(&mut self, _die: usize, _from: Ppa, _to: Ppa) {}
    /// The host path decided a trim of `lpa` at write sequence `sequence`.
    fn trimmed(&mut self, _lpa: Lpa, _sequence: u64) {}
    /// The host path decided the Flush (or FUA write) `flush`; returns how many more steps
    /// the request waits for before it may complete.
    fn flushed(&mut self, _flush: &FlushDecided) -> u32 {
        0
    }
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A Flush (or FUA write) the host path decided, as its observers see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlushDecided {
    /// The request slot of the flush.
    pub slot: u32,
    /// Simulated time of the decision (ps).
    pub now_ps: u64,
    /// Whether other requests are in flight.
    pub others_in_flight: bool,
}

impl Flash {
    /// Plugs in `observer` (it sees the ops decided and submitted from now on).
    pub(crate) fn add_observer(&mut self, observer: Box<dyn FlashObserver>) {
        self.emit.observers.push(observer);
    }

    /// The first observer of type `T`.
    pub(crate) fn observer<T: 'static>(&self) -> Option<&T> {
        self.emit
            .observers
            .iter()
            .find_map(|o| o.as_any().downcast_ref::<T>())
    }

    /// The first observer of type `T`, mutably.
    pub(crate) fn observer_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.emit
            .observers
            .iter_mut()
            .find_map(|o| o.as_any_mut().downcast_mut::<T>())
    }

    /// Whether any observer is plugged in.
    #[inline]
    pub(crate) fn observed(&self) -> bool {
        !self.emit.observers.is_empty()
    }

    /// The host path decided a trim of `lpa` (observers only; the sequence is the last write's).
    #[inline]
    pub(crate) fn trace_trim(&mut self, lpa: Lpa) {
        let sequence = self.write_sequence;
        for o in &mut self.emit.observers {
            o.trimmed(lpa, sequence);
        }
    }

    /// The host path decided `flush`: the further steps its observers hold it for.
    pub(crate) fn trace_flush(&mut self, flush: &FlushDecided) -> u32 {
        self.emit
            .observers
            .iter_mut()
            .map(|o| o.flushed(flush))
            .sum()
    }

    /// A chip op that stands for no decision of its own went to `die` right after the op just
    /// submitted there (observers only).
    pub(crate) fn trace_extra(&mut self, die: usize, kind: OpKind) {
        for o in &mut self.emit.observers {
            o.extra(die, kind);
        }
    }

    /// Records what was just decided to be programmed at `ppa` (observers only).
    #[inline]
    pub(crate) fn trace_content(&mut self, ppa: Ppa) {
        if self.observed() {
            self.trace_content_slow(ppa);
        }
    }

    /// The host read of `from` on `die` reads `to` instead, the source of the GC copyback that
    /// has not written `from` yet (observers only).
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_read_redirected(&mut self, die: usize, from: Ppa, to: Ppa) {
        for o in &mut self.emit.observers {
            o.read_redirected(die, from, to);
        }
    }

    /// The flash scheduler gave `(kind, source, target)` to the chip on `die` (observers only).
    #[inline]
    pub(crate) fn trace_submitted(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa) {
        if self.observed() {
            self.trace_submitted_slow(die, kind, source, target);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_submitted_slow(&mut self, die: usize, kind: OpKind, source: Ppa, target: Ppa) {
        for o in &mut self.emit.observers {
            o.submitted(die, kind, source, target);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_content_slow(&mut self, ppa: Ppa) {
        if let Some(content) = self.page_content(ppa) {
            for o in &mut self.emit.observers {
                o.programmed(ppa, &content);
            }
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
