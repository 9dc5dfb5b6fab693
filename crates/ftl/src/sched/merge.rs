//! How the scheduler turns queued page ops into flash transactions: multiplane merging under the
//! plane addressing rule, the register mode of an op (cache mode), and which dies may take an op
//! (interleaved dies, ops in flight per die). Used by the SSD (`ssd/flash_io.rs`) and by
//! the chip-level driver ([`super::chip`]) alike.
//!
//! The plane addressing rule (paper 003 §3.3, SPEC N5): the page ops of one multiplane op have
//! the same kind, one per plane of a die, and the same page offset within their blocks (an erase:
//! any block; a copyback: the same source offset and the same destination offset). Transfer
//! sizes may differ. The chip model checks the rule again on every op it receives.

use nandlab_nand::{OpKind, RegisterMode};

/// What a page op looks like to the merging rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneSlot {
    /// The op's kind.
    pub kind: OpKind,
    /// Plane within its die.
    pub plane: u32,
    /// Page offset within its block (the source page of a copyback).
    pub page: u32,
    /// Destination page offset of a copyback (0 for the other kinds).
    pub target_page: u32,
}

/// Which queued ops a merge may pass over (take later ops while leaving earlier ones queued).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passing {
    /// No op passes an earlier op of its plane; ops of other planes may be passed (the SSD:
    /// every decided op of a plane stays in decision order on that plane).
    KeepPlaneOrder,
    /// Reads may be passed; a program or erase that cannot join stops the merge when the first
    /// op is not a read (the chip-level driver: its log's programs and erases stay in order on
    /// the die).
    KeepWriteOrder,
}

/// The verdict on one candidate op offered to a [`Merge`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// It joins the multiplane op (remove it from the queue).
    Join,
    /// It stays queued; later candidates may still join.
    Pass,
    /// It stays queued, and so does everything after it.
    Stop,
}

/// One multiplane op being formed: started from the first op, then offered the later queued
/// ops of the same die in queue order.
#[derive(Clone, Copy, Debug)]
pub struct Merge {
    first: PlaneSlot,
    passing: Passing,
    /// Planes holding a member.
    planes_taken: u64,
    /// Planes no later op may join from (an earlier op of the plane stays queued).
    planes_blocked: u64,
    members: usize,
    max_members: usize,
}

impl Merge {
    /// Starts a merge from `first`, allowing `max_members` planes at most (1: no merging).
    #[inline]
    pub fn new(first: PlaneSlot, max_members: usize, passing: Passing) -> Self {
        debug_assert!(first.plane < 64 && max_members >= 1);
        let own = 1u64 << first.plane;
        Merge {
            first,
            passing,
            planes_taken: own,
            planes_blocked: own,
            members: 1,
            max_members,
        }
    }

    /// Members so far (1 = the first op alone).
    #[inline]
    pub fn members(&self) -> usize {
        self.members
    }

    /// Whether no further op can join.
    #[inline]
    pub fn full(&self) -> bool {
        self.members >= self.max_members
    }

    /// Whether no later op of a die with `planes` planes can join any more: the merge is full,
    /// or (keeping each plane's order) every plane of the die is taken or has an earlier op
    /// passed over. A caller may stop offering ops then (the verdicts would all be `Pass`).
    #[inline]
    pub fn settled(&self, planes: u32) -> bool {
        let all = if planes >= 64 {
            u64::MAX
        } else {
            (1u64 << planes) - 1
        };
        self.full() || (self.passing == Passing::KeepPlaneOrder && self.planes_blocked & all == all)
    }

    /// Whether `op` may share one multiplane op with the first op under the plane addressing rule.
    #[inline]
    pub fn plane_rule(&self, op: &PlaneSlot) -> bool {
        let first = &self.first;
        op.kind == first.kind
            && self.planes_taken & (1u64 << op.plane) == 0
            && match first.kind {
                OpKind::Erase => true,
                OpKind::Copyback => op.page == first.page && op.target_page == first.target_page,
                _ => op.page == first.page,
            }
    }

    /// Offers the next queued op of the die; `eligible` is the caller's own condition (false:
    /// the op may not join, e.g. GC work kept in its own queue). Join means the caller takes it.
    #[inline]
    pub fn offer(&mut self, op: &PlaneSlot, eligible: bool) -> Offer {
        debug_assert!(op.plane < 64);
        let plane = 1u64 << op.plane;
        let joins = !self.full()
            && eligible
            && self.plane_rule(op)
            && (self.passing == Passing::KeepWriteOrder || self.planes_blocked & plane == 0);
        if joins {
            self.planes_taken |= plane;
            self.planes_blocked |= plane;
            self.members += 1;
            return Offer::Join;
        }
        match self.passing {
            Passing::KeepPlaneOrder => {
                self.planes_blocked |= plane;
                Offer::Pass
            }
            Passing::KeepWriteOrder => {
                if op.kind != OpKind::Read && self.first.kind != OpKind::Read {
                    Offer::Stop
                } else {
                    Offer::Pass
                }
            }
        }
    }
}

/// The register mode of an op of `kind`: cache mode for reads and programs when the scheduler
/// uses it (single-plane or multiplane), legacy otherwise (erases and copybacks always).
#[inline]
pub fn register_mode(kind: OpKind, cache: bool) -> RegisterMode {
    if cache && matches!(kind, OpKind::Read | OpKind::Program) {
        RegisterMode::Cache
    } else {
        RegisterMode::Legacy
    }
}

/// Which dies may take one more op: at most `ops_per_die` in flight on a die and, without
/// interleaving, one op at a time on a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DieSlots {
    /// Ops in flight on one die at most.
    pub ops_per_die: u32,
    /// Whether several dies of a channel may have ops in flight at once.
    pub interleave: bool,
}

impl DieSlots {
    /// The chip-level driver's rule: one op per die, two in cache mode (the next op's data
    /// moves while the previous op's cell stage runs).
    pub fn for_mode(cache: bool, interleave: bool) -> Self {
        DieSlots {
            ops_per_die: if cache { 2 } else { 1 },
            interleave,
        }
    }

    /// Whether a die with `die_in_flight` ops, on a channel with `channel_in_flight`, may take
    /// one more.
    #[inline(always)]
    pub fn can_take(&self, die_in_flight: u32, channel_in_flight: u32) -> bool {
        die_in_flight < self.ops_per_die && (self.interleave || channel_in_flight == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(kind: OpKind, plane: u32, page: u32) -> PlaneSlot {
        PlaneSlot {
            kind,
            plane,
            page,
            target_page: 0,
        }
    }

    #[test]
    fn the_plane_rule_needs_same_kind_same_offset_other_plane() {
        let mut m = Merge::new(slot(OpKind::Program, 0, 5), 4, Passing::KeepPlaneOrder);
        assert_eq!(m.offer(&slot(OpKind::Read, 1, 5), true), Offer::Pass);
        assert_eq!(m.offer(&slot(OpKind::Program, 2, 6), true), Offer::Pass);
        assert_eq!(m.offer(&slot(OpKind::Program, 0, 5), true), Offer::Pass);
        assert_eq!(m.offer(&slot(OpKind::Program, 3, 5), true), Offer::Join);
        assert_eq!(m.members(), 2);
        // plane 1 and 2 are blocked by the ops passed over
        assert_eq!(m.offer(&slot(OpKind::Program, 1, 5), true), Offer::Pass);
        assert_eq!(m.offer(&slot(OpKind::Program, 2, 5), true), Offer::Pass);
    }

    #[test]
    fn a_merge_is_settled_once_every_plane_is_taken_or_blocked() {
        let mut m = Merge::new(slot(OpKind::Program, 0, 5), 4, Passing::KeepPlaneOrder);
        assert!(!m.settled(4));
        assert_eq!(m.offer(&slot(OpKind::Program, 1, 6), true), Offer::Pass);
        assert_eq!(m.offer(&slot(OpKind::Program, 2, 5), true), Offer::Join);
        assert!(!m.settled(4));
        assert_eq!(m.offer(&slot(OpKind::Read, 3, 5), true), Offer::Pass);
        assert!(m.settled(4));
        // a 2-plane die: settled as soon as plane 1 is blocked
        let mut m = Merge::new(slot(OpKind::Read, 0, 5), 4, Passing::KeepPlaneOrder);
        assert_eq!(m.offer(&slot(OpKind::Erase, 1, 0), true), Offer::Pass);
        assert!(m.settled(2));
        let m = Merge::new(slot(OpKind::Read, 0, 5), 4, Passing::KeepWriteOrder);
        assert!(!m.settled(1) || m.full());
    }

    #[test]
    fn erases_merge_across_blocks_and_copybacks_need_both_offsets() {
        let mut m = Merge::new(slot(OpKind::Erase, 0, 0), 2, Passing::KeepPlaneOrder);
        assert_eq!(m.offer(&slot(OpKind::Erase, 1, 0), true), Offer::Join);
        assert!(m.full());
        let cb = |plane, page, target_page| PlaneSlot {
            kind: OpKind::Copyback,
            plane,
            page,
            target_page,
        };
        let mut m = Merge::new(cb(0, 3, 7), 4, Passing::KeepPlaneOrder);
        assert_eq!(m.offer(&cb(1, 3, 8), true), Offer::Pass);
        assert_eq!(m.offer(&cb(2, 3, 7), true), Offer::Join);
    }

    #[test]
    fn keep_write_order_stops_at_a_program_that_cannot_join() {
        let mut m = Merge::new(slot(OpKind::Erase, 0, 0), 2, Passing::KeepWriteOrder);
        assert_eq!(m.offer(&slot(OpKind::Program, 0, 0), true), Offer::Stop);
        let mut m = Merge::new(slot(OpKind::Read, 0, 4), 2, Passing::KeepWriteOrder);
        assert_eq!(m.offer(&slot(OpKind::Read, 1, 5), true), Offer::Pass);
        // reads are not ordered by plane here: a later read of a passed plane may still join
        assert_eq!(m.offer(&slot(OpKind::Read, 1, 4), true), Offer::Join);
    }

    #[test]
    fn an_ineligible_op_never_joins() {
        let mut m = Merge::new(slot(OpKind::Program, 0, 1), 2, Passing::KeepPlaneOrder);
        assert_eq!(m.offer(&slot(OpKind::Program, 1, 1), false), Offer::Pass);
        assert_eq!(m.members(), 1);
    }

    #[test]
    fn cache_mode_applies_to_reads_and_programs_only() {
        assert_eq!(register_mode(OpKind::Read, true), RegisterMode::Cache);
        assert_eq!(register_mode(OpKind::Program, true), RegisterMode::Cache);
        assert_eq!(register_mode(OpKind::Erase, true), RegisterMode::Legacy);
        assert_eq!(register_mode(OpKind::Copyback, true), RegisterMode::Legacy);
        assert_eq!(register_mode(OpKind::Program, false), RegisterMode::Legacy);
    }

    #[test]
    fn die_slots_limit_dies_and_channels() {
        let s = DieSlots::for_mode(false, false);
        assert!(s.can_take(0, 0));
        assert!(!s.can_take(0, 1));
        assert!(!s.can_take(1, 0));
        let s = DieSlots::for_mode(true, true);
        assert!(s.can_take(1, 3));
        assert!(!s.can_take(2, 0));
    }
}
