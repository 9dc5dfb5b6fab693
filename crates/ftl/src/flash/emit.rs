//! Flash operations decided by the FTL and waiting to be submitted, with the tag that routes
//! their completion back to a host request, a deferred step or a GC job.

use crate::address::{DieId, Ppa};
use nandlab_nand::OpKind;

/// What an op's completion is for. Encoded into the chip model's `u64` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    /// Part of host request slot `n`.
    Host(u32),
    /// The read of a read-modify-write, slot `n` of the deferred table.
    Deferred(u32),
    /// Part of GC job `n`.
    Gc(u32),
    /// Tracked by nobody (functional-only runs).
    Internal,
    /// A multiplane op the scheduler formed from several decided ops: entry `n` of the
    /// controller's table of merged ops, which holds each one's own tag.
    Multi(u32),
}

const CLASS_SHIFT: u32 = 62;
/// Marks a merged multiplane op inside the last class (bits 32..61 hold the die).
const MULTI_BIT: u64 = 1 << 61;

impl Tag {
    pub fn encode(self) -> u64 {
        match self {
            Tag::Host(n) => u64::from(n),
            Tag::Deferred(n) => (1 << CLASS_SHIFT) | u64::from(n),
            Tag::Gc(n) => (2 << CLASS_SHIFT) | u64::from(n),
            Tag::Internal => 3 << CLASS_SHIFT,
            Tag::Multi(n) => (3 << CLASS_SHIFT) | MULTI_BIT | u64::from(n),
        }
    }
    /// The encoded tag with the die of the op in bits 32..62 (for the controller's die queue).
    pub fn encode_with_die(self, die: DieId) -> u64 {
        debug_assert!(die.0 < 1 << 29);
        self.encode() | (u64::from(die.0) << 32)
    }
    pub fn die_of(tag: u64) -> DieId {
        DieId(((tag >> 32) as u32) & ((1 << 29) - 1))
    }
    pub fn decode(tag: u64) -> Tag {
        let n = tag as u32;
        match tag >> CLASS_SHIFT {
            0 => Tag::Host(n),
            1 => Tag::Deferred(n),
            2 => Tag::Gc(n),
            _ if tag & MULTI_BIT != 0 => Tag::Multi(n),
            _ => Tag::Internal,
        }
    }
}

/// One decided op: `source` is the page (or page 0 of the erased block), `target` the copyback
/// destination (`Ppa::NONE` for the other kinds). `transfer_bytes` is 0 for whole-page
/// transfers; a partial-page program (an In-Page Logging log sector) transfers only its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PendingOp {
    pub kind: OpKind,
    pub source: Ppa,
    pub target: Ppa,
    pub tag: Tag,
    pub transfer_bytes: u32,
}

impl PendingOp {
    /// The op standing for merged group `id` (a multiplane op of `kind` whose first member
    /// addresses `source`).
    pub fn multi(kind: OpKind, source: Ppa, id: u32) -> PendingOp {
        PendingOp {
            kind,
            source,
            target: Ppa::NONE,
            tag: Tag::Multi(id),
            transfer_bytes: 0,
        }
    }
}

/// The decided ops, in decision order (which is submission order, so per-die order holds).
#[derive(Debug)]
pub(crate) struct Emitter {
    pub ops: Vec<PendingOp>,
    /// False while preconditioning: functional effects only, no ops.
    pub enabled: bool,
    /// Observers of the decided ops ([`super::observer`]; the power-loss trace while a
    /// power-cut experiment runs), empty otherwise.
    pub observers: Vec<Box<dyn super::observer::FlashObserver>>,
}

impl Default for Emitter {
    fn default() -> Self {
        Emitter {
            ops: Vec::with_capacity(1024),
            enabled: true,
            observers: Vec::new(),
        }
    }
}

impl Emitter {
    #[inline]
    pub fn push(&mut self, kind: OpKind, source: Ppa, target: Ppa, tag: Tag) {
        if self.enabled {
            self.ops.push(PendingOp {
                kind,
                source,
                target,
                tag,
                transfer_bytes: 0,
            });
            if !self.observers.is_empty() {
                self.observe(kind, source, target);
            }
        }
    }

    /// A partial-page program of `bytes` into `page` (one more program of an already
    /// programmed page; the chip model checks the NOP limit and the in-order rule).
    pub fn push_partial_program(&mut self, page: Ppa, bytes: u32, tag: Tag) {
        debug_assert!(bytes > 0);
        if self.enabled {
            self.ops.push(PendingOp {
                kind: OpKind::Program,
                source: page,
                target: Ppa::NONE,
                tag,
                transfer_bytes: bytes,
            });
            if !self.observers.is_empty() {
                self.observe(OpKind::Program, page, Ppa::NONE);
            }
        }
    }

    /// Tells the observers about the op (off the hot path).
    #[cold]
    #[inline(never)]
    fn observe(&mut self, kind: OpKind, source: Ppa, target: Ppa) {
        for o in &mut self.observers {
            o.decided(kind, source, target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        for tag in [
            Tag::Host(0),
            Tag::Host(u32::MAX - 1),
            Tag::Deferred(7),
            Tag::Gc(12),
            Tag::Internal,
            Tag::Multi(3),
        ] {
            assert_eq!(Tag::decode(tag.encode()), tag);
            assert_eq!(Tag::decode(tag.encode_with_die(DieId(12345))), tag);
            assert_eq!(Tag::die_of(tag.encode_with_die(DieId(12345))), DieId(12345));
        }
    }
}
