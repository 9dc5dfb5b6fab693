//! Map checkpoints (issue 14, item 3): a periodic copy of the L2P map in a metadata area, so
//! that a mount reads the checkpoint plus the pages written after it instead of every page.
//!
//! A checkpoint is a snapshot taken when the FTL has decided `ftl.map_checkpoint_interval_pages`
//! more pages since the last one: per LPA the page the map points to and its sequence number,
//! per block the write pointer (pages decided) and the number of erases decided. It is written
//! to the metadata area (its pages' program and transfer time, not contending with the data
//! dies: like the erase counts, the area is modelled outside the data blocks) and becomes the
//! mount's starting point only once it is **committed**: its pages are written *and* every op
//! decided before the snapshot has completed on flash (so every page it maps holds its data,
//! and every page below a block's recorded write pointer is programmed). Committing before the
//! data is the `checkpoint-before-data` mutation ([`CheckpointOrder::BeforeData`]).
//!
//! A cut while a checkpoint is being written (or waits for its data) loses it: the mount uses
//! the previous committed one, or scans everything when there is none.
//!
//! What the mount reads from a block ([`MapCheckpoint::scan_from`]): nothing below the recorded
//! write pointer when the block has seen no completed or interrupted erase since (every page
//! there is as the checkpoint knew it), except the lower pages whose paired upper pages are at
//! or above it (a torn upper-page program after the checkpoint can damage them); the whole
//! block when it was erased since.

use crate::address::{Lpa, Ppa};
use nandlab_nand::PageLayout;
use nandlab_nand::sim::paired_lower_pages;

/// Bytes of one map entry in the metadata area (physical page 4, sequence number 8) and of one
/// block record (write pointer 4, erase count 4).
pub const ENTRY_BYTES: u64 = 12;
/// Bytes of one block record.
pub const BLOCK_RECORD_BYTES: u64 = 8;

/// When a checkpoint counts as committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CheckpointOrder {
    /// Once its pages are written and the data it maps is on flash (correct).
    #[default]
    AfterData,
    /// Broken (a mutation): once its pages are written, whether or not the data it maps is.
    BeforeData,
}

/// A committed (or pending) map checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapCheckpoint {
    /// Per LPA: the page the map pointed to and that page's sequence number.
    pub map: Vec<Option<(Ppa, u64)>>,
    /// Per LPA trimmed since its last write (the trim table; trims after the snapshot are in the trim log, [`super::trim_log`]): the sequence
    /// number current at the trim; a page of that LPA with a sequence number at most this is
    /// older than the trim and must not come back.
    pub trimmed_at: Vec<u64>,
    /// Trims decided (since the trace started) at the snapshot: the trim-log records with no
    /// newer trim are covered by this checkpoint ([`super::trim_log`]).
    pub trims_through: u64,
    /// Per block: pages decided (programmed or to be) at the snapshot.
    pub write_pointer: Vec<u32>,
    /// Per block: erases decided at the snapshot (since the trace started).
    pub erases: Vec<u32>,
    /// The write sequence at the snapshot.
    pub sequence: u64,
    /// Simulated time of the snapshot (ps).
    pub taken_ps: u64,
    /// Simulated time of the commit (ps).
    pub committed_ps: u64,
    /// Metadata pages the checkpoint occupies.
    pub pages: u64,
}

impl MapCheckpoint {
    /// Metadata pages a checkpoint of `logical_pages` LPAs and `blocks` blocks fills.
    pub fn pages_for(logical_pages: u64, blocks: u64, page_size_bytes: u32) -> u64 {
        let bytes = logical_pages * (ENTRY_BYTES + 8) + blocks * BLOCK_RECORD_BYTES;
        bytes.div_ceil(u64::from(page_size_bytes)).max(1)
    }

    /// The first page offset of `block` the mount must read, given the erases completed on it
    /// since the trace started (`erases_now`) and whether its last erase was interrupted.
    pub fn scan_from(
        &self,
        block: u32,
        erases_now: u32,
        unreliable: bool,
        layout: PageLayout,
        pages_per_block: u32,
    ) -> u32 {
        let b = block as usize;
        if unreliable || erases_now != self.erases[b] {
            return 0;
        }
        let wp = self.write_pointer[b];
        // lower pages an upper-page program at or above the write pointer can damage
        let mut from = wp;
        for upper in wp..pages_per_block {
            for lower in paired_lower_pages(layout, upper, pages_per_block) {
                from = from.min(lower);
            }
        }
        from
    }

    /// Whether the map entry `(ppa, _)` may be trusted: its block has not been erased since
    /// the snapshot (then its page is as the checkpoint knew it, or was rescanned).
    pub fn entry_valid(
        &self,
        ppa: Ppa,
        pages_per_block: u32,
        erases_now: impl Fn(u32) -> u32,
        unreliable: impl Fn(u32) -> bool,
    ) -> bool {
        let block = ppa.0 / pages_per_block;
        !unreliable(block) && erases_now(block) == self.erases[block as usize]
    }

    /// The LPA count.
    pub fn logical_pages(&self) -> u32 {
        self.map.len() as u32
    }

    /// Whether `lpa`'s page with `sequence` is older than a trim the checkpoint recorded.
    pub fn trimmed_after(&self, lpa: Lpa, sequence: u64) -> bool {
        self.trimmed_at
            .get(lpa.index())
            .is_some_and(|&t| t > 0 && sequence <= t)
    }
}

/// A checkpoint being written: committed when its pages are written (`write_done_ps`) and,
/// under [`CheckpointOrder::AfterData`], every die has completed the ops decided before it.
#[derive(Clone, Debug)]
pub(crate) struct PendingCheckpoint {
    pub checkpoint: MapCheckpoint,
    pub write_done_ps: u64,
    /// The decision index of the first op decided after the snapshot: the checkpoint's data
    /// is on flash once every op before it has completed.
    pub decided_through: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint() -> MapCheckpoint {
        MapCheckpoint {
            map: vec![Some((Ppa(1), 3)), None],
            trimmed_at: vec![0, 5],
            trims_through: 1,
            write_pointer: vec![4, 0],
            erases: vec![1, 0],
            sequence: 5,
            taken_ps: 0,
            committed_ps: 1,
            pages: 1,
        }
    }

    #[test]
    fn blocks_erased_since_are_read_whole_and_the_rest_from_the_write_pointer() {
        let c = checkpoint();
        assert_eq!(c.scan_from(0, 1, false, PageLayout::Slc, 8), 4);
        assert_eq!(c.scan_from(0, 2, false, PageLayout::Slc, 8), 0);
        assert_eq!(c.scan_from(0, 1, true, PageLayout::Slc, 8), 0);
        assert!(c.entry_valid(Ppa(1), 8, |_| 1, |_| false));
        assert!(!c.entry_valid(Ppa(1), 8, |_| 2, |_| false));
    }

    #[test]
    fn paired_lower_pages_below_the_write_pointer_are_reread() {
        let c = checkpoint();
        let tlc = PageLayout::TlcSequential;
        // TLC sequential: a word line's pages in a row; page 4 (its word line 3..6) is open
        let from = c.scan_from(0, 1, false, tlc, 9);
        assert!(from < 4, "{from}");
        assert!(c.trimmed_after(Lpa(1), 5) && !c.trimmed_after(Lpa(1), 6));
        assert!(!c.trimmed_after(Lpa(0), 1));
    }

    #[test]
    fn the_size_counts_entries_and_blocks() {
        assert_eq!(MapCheckpoint::pages_for(10, 4, 512), 1);
        assert_eq!(MapCheckpoint::pages_for(1000, 0, 512), 40);
    }
}
