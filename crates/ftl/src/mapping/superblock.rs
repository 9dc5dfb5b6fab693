//! Superblock write frontiers of the page mapping (issue 12 item 1, `ftl.superpage_planes` =
//! w > 1): the planes of each die form groups of w (planes 0..w, w..2w, …). A group's host
//! frontier, and its GC frontier, per placement id, is a superblock: one open block on each
//! plane of the group, all opened together and written in lockstep, member after member (page
//! offset k on every plane, then k + 1). Consecutive pages of a group therefore sit at the same
//! page offset on different planes of one die, which is what the plane addressing rule asks of
//! a multiplane op (SPEC N5), and the scheduler merges them (`ssd/flash_io.rs`).
//!
//! - Opening a host superblock first collects garbage on every plane of the group (superblock
//!   GC, below), then needs the usual host reserve on every plane; otherwise the group takes no
//!   host page now (the write goes to the next group, as a full plane does today).
//! - GC victims are still chosen per block, on the plane of the group with the fewest free
//!   blocks: a closed superblock is no unit for GC. Its blocks age independently, and a
//!   partially invalid superblock simply gives its emptiest block up first; the rest stay until
//!   they are worth collecting. The price: a victim's valid pages go to the group's GC
//!   superblock, member after member, so half of them (w = 2) cross to another plane of the die
//!   and no copyback is used (`ftl.copyback` must be off). The moves are emitted w at a time,
//!   reads first, so each w programs follow one another and form one multiplane program.
//! - A member closed early (paired-page padding fills it) is skipped; the group's members reopen
//!   when all are closed. A plane without a free block for the GC superblock is left out of it
//!   (the others still open), so lockstep degrades rather than GC failing.

use super::page::{PageMap, next_in_frontier};
use crate::address::{PlaneId, Ppa};
use crate::error::{FtlError, FtlResult};
use crate::flash::Flash;
use nandlab_nand::OpKind;

/// The stripe `stripe` with the planes of each superpage group of `w` made adjacent, in
/// member order, each group where its first plane came (plane-first within the group, the
/// configured order across groups). `w = 1` leaves it as it is.
pub(crate) fn group_stripe(stripe: &[crate::address::PlaneId], w: u32) -> Vec<PlaneId> {
    if w <= 1 {
        return stripe.to_vec();
    }
    let mut out = Vec::with_capacity(stripe.len());
    let mut seen = vec![false; stripe.len() / w as usize + 1];
    for plane in stripe {
        let group = (plane.0 / w) as usize;
        if !seen[group] {
            seen[group] = true;
            out.extend((group as u32 * w..(group as u32 + 1) * w).map(PlaneId));
        }
    }
    out
}

impl PageMap {
    /// The first plane of `plane`'s superpage group.
    #[inline]
    pub(crate) fn group_first(&self, plane: PlaneId) -> u32 {
        plane.0 / self.superpage * self.superpage
    }

    /// Index of the (group, id) member cursor.
    #[inline]
    fn group_index(&self, plane: PlaneId, id: u16) -> usize {
        let groups = self.stripe.len() / self.superpage as usize;
        usize::from(id) * groups + (plane.0 / self.superpage) as usize
    }

    /// Whether `plane`'s group has an open host superblock for placement id `id`.
    pub(crate) fn super_frontier_open(&self, plane: PlaneId, id: u16) -> bool {
        let first = self.group_first(plane);
        (first..first + self.superpage)
            .any(|p| self.host_frontier[self.frontier_index(PlaneId(p), id)].is_some())
    }

    /// Opens a host superblock in `plane`'s group (placement id `id`, a free block on each
    /// member) and returns its first page; `None` when a member cannot spare a block.
    pub(crate) fn open_host_super(
        &mut self,
        flash: &mut Flash,
        plane: PlaneId,
        id: u16,
    ) -> Option<Ppa> {
        let first = self.group_first(plane);
        let planes = first..first + self.superpage;
        let reserve = 1 + u32::from(self.placement_ids);
        if planes
            .clone()
            .any(|p| flash.blocks.free_count(PlaneId(p)) < reserve)
        {
            return None;
        }
        for p in planes {
            let block = flash
                .blocks
                .take_free(PlaneId(p))
                .expect("free count checked");
            flash.placement.open(block, id);
            let at = self.frontier_index(PlaneId(p), id);
            self.host_frontier[at] = Some(block);
        }
        let g = self.group_index(plane, id);
        self.host_next[g] = 0;
        Some(self.next_member(flash, plane, id, false))
    }

    /// A page for a GC move of data of placement id `id` from `plane`: the next member of the
    /// GC superblock of its group (opened when all its members are closed).
    pub(crate) fn alloc_gc_super(
        &mut self,
        flash: &mut Flash,
        plane: PlaneId,
        id: u16,
    ) -> FtlResult<Ppa> {
        let first = self.group_first(plane);
        let planes = first..first + self.superpage;
        let closed = planes
            .clone()
            .all(|p| self.gc_frontier[self.frontier_index(PlaneId(p), id)].is_none());
        if closed {
            let mut opened = false;
            for p in planes {
                if let Some(block) = flash.blocks.take_free(PlaneId(p)) {
                    flash.placement.open(block, id);
                    let at = self.frontier_index(PlaneId(p), id);
                    self.gc_frontier[at] = Some(block);
                    opened = true;
                }
            }
            if !opened {
                return Err(FtlError::DeviceFull {
                    message: format!(
                        "planes {first}..{}: no free block left for GC moves",
                        first + self.superpage
                    ),
                });
            }
            let g = self.group_index(plane, id);
            self.gc_next[g] = 0;
        }
        Ok(self.next_member(flash, plane, id, true))
    }

    /// The next page of the group's host (or GC) superblock: the next open member from the
    /// group's cursor on.
    pub(crate) fn next_member(
        &mut self,
        flash: &mut Flash,
        plane: PlaneId,
        id: u16,
        gc: bool,
    ) -> Ppa {
        let w = self.superpage;
        let first = self.group_first(plane);
        let g = self.group_index(plane, id);
        let start = if gc {
            self.gc_next[g]
        } else {
            self.host_next[g]
        };
        for k in 0..w {
            let member = (start + k) % w;
            let at = self.frontier_index(PlaneId(first + member), id);
            let frontiers = if gc {
                &mut self.gc_frontier
            } else {
                &mut self.host_frontier
            };
            if let Some(block) = frontiers[at] {
                let next = (member + 1) % w;
                if gc {
                    self.gc_next[g] = next;
                } else {
                    self.host_next[g] = next;
                }
                let frontiers = if gc {
                    &mut self.gc_frontier
                } else {
                    &mut self.host_frontier
                };
                return next_in_frontier(flash, &mut frontiers[at], block);
            }
        }
        unreachable!("a superblock with no open member is reopened before use")
    }
}

impl PageMap {
    /// [`PageMap::relocate_block`] with superblocks: every valid page of `victim` goes to the
    /// next member of its group's GC superblock; the ops of the moves into one superpage (w
    /// moves, the last into the group's last plane) are reordered reads first, so their
    /// programs follow one another and merge. Then the victim is erased.
    #[inline(never)]
    pub(crate) fn relocate_into_superblock(
        &mut self,
        flash: &mut Flash,
        victim: crate::address::BlockId,
    ) -> FtlResult<()> {
        let w = self.superpage;
        let plane = flash.blocks.plane_of_block(victim);
        let id = flash.placement.of_block(victim);
        let tag = flash.open_job();
        let first = flash.blocks.page(victim, 0).0;
        let end = first + flash.blocks.next_page(victim);
        let mut superpage_start = flash.emit.ops.len();
        for ppa in (first..end).map(Ppa) {
            if !self.table.is_valid(ppa) {
                continue;
            }
            let target = self.alloc_gc_super(flash, plane, id)?;
            self.table.relocate(ppa, target);
            flash.blocks.invalidate(ppa);
            flash.blocks.add_valid(target);
            flash.move_page(ppa, target, tag);
            if flash.blocks.plane_of_ppa(target).0 % w == w - 1 {
                reads_first(&mut flash.emit.ops[superpage_start..]);
                superpage_start = flash.emit.ops.len();
            }
        }
        reads_first(&mut flash.emit.ops[superpage_start..]);
        let table = &self.table;
        flash.erase(victim, tag, |lpa| table.ppa_of(lpa));
        if flash.pads() {
            self.drop_closed_frontiers(flash);
        }
        Ok(())
    }
}

/// Reorders the ops of w GC moves (each a read then a program) so that the reads come first,
/// then the programs, then anything else (stable within each kind): the programs, at one page
/// offset on the planes of the GC superblock, follow one another and merge into one multiplane
/// program, each after the read of its data.
pub(crate) fn reads_first(ops: &mut [crate::flash::emit::PendingOp]) {
    let rank = |kind: OpKind| match kind {
        OpKind::Read => 0u8,
        OpKind::Program => 1,
        _ => 2,
    };
    // insertion sort: a group is 2w ops, already sorted by rank within each move
    for i in 1..ops.len() {
        let mut j = i;
        while j > 0 && rank(ops[j - 1].kind) > rank(ops[j].kind) {
            ops.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_stripe_makes_groups_adjacent_in_first_seen_order() {
        // die-first order on 2 dies × 4 planes: 0 4 1 5 2 6 3 7
        let stripe: Vec<PlaneId> = [0, 4, 1, 5, 2, 6, 3, 7].map(PlaneId).to_vec();
        let ids = |w| {
            group_stripe(&stripe, w)
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(1), vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(ids(2), vec![0, 1, 4, 5, 2, 3, 6, 7]);
        assert_eq!(ids(4), vec![0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn reads_first_is_stable_per_kind() {
        use crate::flash::emit::{PendingOp, Tag};
        let op = |kind, n| PendingOp {
            kind,
            source: Ppa(n),
            target: Ppa::NONE,
            tag: Tag::Gc(0),
            transfer_bytes: 0,
        };
        let mut ops = [
            op(OpKind::Read, 1),
            op(OpKind::Program, 2),
            op(OpKind::Erase, 9),
            op(OpKind::Read, 3),
            op(OpKind::Program, 4),
        ];
        reads_first(&mut ops);
        let order: Vec<u32> = ops.iter().map(|o| o.source.0).collect();
        assert_eq!(order, vec![1, 3, 2, 4, 9]);
    }
}
