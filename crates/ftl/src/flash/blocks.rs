//! Block accounting: per-block state, valid-page counts, erase counts, write pointers, and
//! per-plane free lists. Free blocks are reused in the order they were erased (a FIFO per
//! plane), which is the round-robin allocation of paper 000.

use crate::address::{BlockId, PlaneId, Ppa};
use std::collections::VecDeque;

/// Life cycle of a block: free (erased) → open (being written) → closed (full) → erased; or
/// reserved for good (In-Page Logging's log ring, `log_area.rs`: never collected, migrated or
/// counted in wear-leveling's erase gap; it erases its blocks itself); or bad (a factory or
/// grown bad block, `bad_blocks.rs`: never allocated again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockUse {
    Free,
    Open,
    Closed,
    Reserved,
    Bad,
}

/// Every block of the device, indexed by the chip model's dense [`BlockId`].
#[derive(Debug)]
pub(crate) struct BlockManager {
    pages_per_block: u32,
    blocks_per_plane: u32,
    planes: u32,
    valid: Vec<u32>,
    erase_count: Vec<u32>,
    state: Vec<BlockUse>,
    /// Next page offset to program (the write pointer).
    next_page: Vec<u32>,
    /// Page-write clock when the block was closed (for FIFO and cost-benefit).
    closed_at: Vec<u64>,
    /// Monotone counter of page programs (the clock of `closed_at`).
    clock: u64,
    /// Per block, whether its erase is decided but still queued in the controller
    /// (interleaved GC only; empty otherwise).
    erase_queued: Vec<bool>,
    free: Vec<VecDeque<BlockId>>,
}

impl BlockManager {
    /// Pages per block.
    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }
    /// Blocks per plane.
    #[inline]
    pub fn blocks_per_plane(&self) -> u32 {
        self.blocks_per_plane
    }
    /// Planes of the device.
    #[inline]
    pub fn planes(&self) -> u32 {
        self.planes
    }
    /// Valid pages of `block`.
    #[inline]
    pub fn valid(&self, block: BlockId) -> u32 {
        self.valid[block.index()]
    }
    /// Valid pages per block (indexed by [`BlockId`]).
    pub fn valid_counts(&self) -> &[u32] {
        &self.valid
    }
    /// Erases per block (indexed by [`BlockId`]).
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    /// `block`'s life-cycle state.
    #[inline]
    pub fn state(&self, block: BlockId) -> BlockUse {
        self.state[block.index()]
    }
    /// Life-cycle state per block (indexed by [`BlockId`]).
    pub fn states(&self) -> &[BlockUse] {
        &self.state
    }
    /// `block`'s write pointer: the next page offset to program.
    #[inline]
    pub fn next_page(&self, block: BlockId) -> u32 {
        self.next_page[block.index()]
    }
    /// Write pointers per block (indexed by [`BlockId`]).
    pub fn write_pointers(&self) -> &[u32] {
        &self.next_page
    }
    /// Moves `block`'s write pointer (In-Page Logging's log ring writes its blocks itself).
    pub fn set_next_page(&mut self, block: BlockId, page: u32) {
        debug_assert!(page <= self.pages_per_block);
        self.next_page[block.index()] = page;
    }
    /// Erases of `block` so far (counted when decided).
    #[inline]
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_count[block.index()]
    }
    /// Counts an erase of `block` done outside [`BlockManager::release`] (the log ring's).
    pub fn count_erase(&mut self, block: BlockId) {
        self.erase_count[block.index()] += 1;
    }
    /// Page-write clock when `block` was closed.
    #[inline]
    pub fn closed_at(&self, block: BlockId) -> u64 {
        self.closed_at[block.index()]
    }
    /// Page programs so far (the clock of [`BlockManager::closed_at`]).
    #[inline]
    pub fn clock(&self) -> u64 {
        self.clock
    }
    /// Tracks which free blocks still wait for their erase in the controller's queue
    /// (interleaved GC: allocation prefers the others).
    pub fn enable_erase_queue(&mut self) {
        self.erase_queued = vec![false; self.state.len()];
    }
    /// Whether erases queued in the controller are tracked ([`BlockManager::enable_erase_queue`]).
    #[inline]
    pub fn erase_queue_on(&self) -> bool {
        !self.erase_queued.is_empty()
    }
    /// Notes that `block`'s decided erase is (`true`) or no longer is (`false`) queued.
    #[inline]
    pub fn set_erase_queued(&mut self, block: BlockId, queued: bool) {
        self.erase_queued[block.index()] = queued;
    }
    /// Test setup: `block` holds `valid` valid pages.
    #[cfg(test)]
    pub fn set_valid(&mut self, block: BlockId, valid: u32) {
        self.valid[block.index()] = valid;
    }
    /// Test setup: `block` was erased `count` times.
    #[cfg(test)]
    pub fn set_erase_count(&mut self, block: BlockId, count: u32) {
        self.erase_count[block.index()] = count;
    }

    pub fn new(planes: u32, blocks_per_plane: u32, pages_per_block: u32) -> Self {
        let total = (planes * blocks_per_plane) as usize;
        BlockManager {
            pages_per_block,
            blocks_per_plane,
            planes,
            valid: vec![0; total],
            erase_count: vec![0; total],
            state: vec![BlockUse::Free; total],
            next_page: vec![0; total],
            closed_at: vec![0; total],
            clock: 0,
            erase_queued: Vec::new(),
            free: (0..planes)
                .map(|p| {
                    (p * blocks_per_plane..(p + 1) * blocks_per_plane)
                        .map(BlockId)
                        .collect()
                })
                .collect(),
        }
    }

    pub fn block_of(&self, ppa: Ppa) -> BlockId {
        BlockId(ppa.0 / self.pages_per_block)
    }
    /// Page `offset` of `block`.
    pub fn page(&self, block: BlockId, offset: u32) -> Ppa {
        debug_assert!(offset < self.pages_per_block);
        Ppa(block.0 * self.pages_per_block + offset)
    }
    /// Pages `offsets` of `block`.
    pub fn pages(
        &self,
        block: BlockId,
        offsets: std::ops::Range<u32>,
    ) -> impl Iterator<Item = Ppa> + use<> {
        let first = block.0 * self.pages_per_block;
        (first + offsets.start..first + offsets.end).map(Ppa)
    }
    /// The programmed pages of `block` (below its write pointer).
    pub fn written_pages(&self, block: BlockId) -> impl Iterator<Item = Ppa> + use<> {
        self.pages(block, 0..self.next_page[block.index()])
    }
    pub fn plane_of_block(&self, block: BlockId) -> PlaneId {
        PlaneId(block.0 / self.blocks_per_plane)
    }
    pub fn plane_of_ppa(&self, ppa: Ppa) -> PlaneId {
        self.plane_of_block(self.block_of(ppa))
    }
    pub fn blocks_of_plane(&self, plane: PlaneId) -> impl Iterator<Item = BlockId> + Clone + use<> {
        self.block_range(plane).map(BlockId)
    }
    /// The raw ids of the blocks of `plane`.
    pub fn block_range(&self, plane: PlaneId) -> std::ops::Range<u32> {
        plane.0 * self.blocks_per_plane..(plane.0 + 1) * self.blocks_per_plane
    }
    /// Every plane of the device.
    pub fn all_planes(&self) -> impl Iterator<Item = PlaneId> + Clone + use<> {
        (0..self.planes).map(PlaneId)
    }
    pub fn free_count(&self, plane: PlaneId) -> u32 {
        self.free[plane.index()].len() as u32
    }
    /// Free blocks of the whole device.
    pub fn free_total(&self) -> u32 {
        self.free.iter().map(|f| f.len() as u32).sum()
    }
    pub fn is_open(&self, block: BlockId) -> bool {
        self.state[block.index()] == BlockUse::Open
    }

    /// Takes the least recently erased free block of `plane` and opens it. With interleaved GC
    /// a block whose erase is still queued is taken only if every free block of the plane is
    /// (its writes would have to wait for that GC work).
    pub fn take_free(&mut self, plane: PlaneId) -> Option<BlockId> {
        let free = &mut self.free[plane.index()];
        let at = if self.erase_queued.is_empty() {
            0
        } else {
            free.iter()
                .position(|b| !self.erase_queued[b.index()])
                .unwrap_or(0)
        };
        let block = free.remove(at)?;
        debug_assert_eq!(self.state[block.index()], BlockUse::Free);
        debug_assert_eq!(self.valid[block.index()], 0);
        self.state[block.index()] = BlockUse::Open;
        self.next_page[block.index()] = 0;
        Some(block)
    }

    /// Takes the free block `block` itself and opens it (the zoned mapping, whose zones own
    /// fixed blocks); whether it was free.
    pub fn take_block(&mut self, block: BlockId) -> bool {
        let plane = self.plane_of_block(block).index();
        let Some(at) = self.free[plane].iter().position(|&b| b == block) else {
            return false;
        };
        self.free[plane].remove(at);
        self.state[block.index()] = BlockUse::Open;
        self.next_page[block.index()] = 0;
        true
    }

    /// Takes the free block of `plane` with the most erases (ties: least recently erased) and
    /// opens it (static wear-leveling parks cold data there).
    pub fn take_most_worn_free(&mut self, plane: PlaneId) -> Option<BlockId> {
        let free = &mut self.free[plane.index()];
        let mut best: Option<(usize, u32)> = None;
        for (i, &b) in free.iter().enumerate() {
            let ec = self.erase_count[b.index()];
            if best.is_none_or(|(_, e)| ec > e) {
                best = Some((i, ec));
            }
        }
        let block = free.remove(best?.0).expect("index from the scan");
        self.state[block.index()] = BlockUse::Open;
        self.next_page[block.index()] = 0;
        Some(block)
    }

    /// The next page of open `block`, or `None` when it is full (then it is closed).
    pub fn next_ppa(&mut self, block: BlockId) -> Option<Ppa> {
        let b = block.index();
        debug_assert_eq!(
            self.state[b],
            BlockUse::Open,
            "writing block {block} that is not open"
        );
        let page = self.next_page[b];
        if page >= self.pages_per_block {
            return None;
        }
        self.next_page[b] = page + 1;
        self.clock += 1;
        if page + 1 == self.pages_per_block {
            self.close(block);
        }
        Some(Ppa(block.0 * self.pages_per_block + page))
    }

    /// Allocates page `page` of open `block`, skipping the pages before it (allowed by the
    /// in-order rule: programs only move forward within a block).
    pub fn next_ppa_at(&mut self, block: BlockId, page: u32) -> Ppa {
        let b = block.index();
        debug_assert_eq!(
            self.state[b],
            BlockUse::Open,
            "writing block {block} that is not open"
        );
        assert!(
            page >= self.next_page[b] && page < self.pages_per_block,
            "page {page} of block {block} is behind its write pointer {}",
            self.next_page[b]
        );
        self.next_page[b] = page + 1;
        self.clock += 1;
        if page + 1 == self.pages_per_block {
            self.close(block);
        }
        Ppa(block.0 * self.pages_per_block + page)
    }

    /// Takes a free block of `plane` out of use for good (a reserved log block).
    pub fn reserve_free(&mut self, plane: PlaneId) -> Option<BlockId> {
        let block = self.take_free(plane)?;
        self.state[block.index()] = BlockUse::Reserved;
        Some(block)
    }

    /// Takes the free block `block` out of use for good (a bad block); whether it was free.
    pub fn retire_free(&mut self, block: BlockId) -> bool {
        let plane = self.plane_of_block(block).index();
        let Some(at) = self.free[plane].iter().position(|&b| b == block) else {
            return false;
        };
        self.free[plane].remove(at);
        self.state[block.index()] = BlockUse::Bad;
        true
    }

    /// Closes an open block (full, or abandoned by a merge).
    pub fn close(&mut self, block: BlockId) {
        self.state[block.index()] = BlockUse::Closed;
        self.closed_at[block.index()] = self.clock;
    }

    pub fn add_valid(&mut self, ppa: Ppa) {
        let b = self.block_of(ppa).index();
        self.valid[b] += 1;
        debug_assert!(self.valid[b] <= self.pages_per_block);
    }
    /// `pages` valid pages of `block` less at once (a zone reset's trim).
    pub fn invalidate_many(&mut self, block: BlockId, pages: u32) {
        let b = block.index();
        debug_assert!(
            self.valid[b] >= pages,
            "invalidating {pages} pages of block {b}"
        );
        self.valid[b] -= pages;
    }
    pub fn invalidate(&mut self, ppa: Ppa) {
        let b = self.block_of(ppa).index();
        debug_assert!(
            self.valid[b] > 0,
            "invalidating in block {b} with no valid page"
        );
        self.valid[b] -= 1;
    }

    /// Returns an erased block to the back of its plane's free list.
    pub fn release(&mut self, block: BlockId) {
        let b = block.index();
        assert_eq!(self.valid[b], 0, "erasing block {block} with valid pages");
        assert_ne!(self.state[b], BlockUse::Free, "erasing free block {block}");
        self.state[b] = BlockUse::Free;
        self.next_page[b] = 0;
        self.erase_count[b] += 1;
        let plane = self.plane_of_block(block).index();
        self.free[plane].push_back(block);
    }

    /// Erase counts of `plane`: (its least-worn closed block, that block's erase count,
    /// maximum over all its blocks).
    pub fn erase_gap(&self, plane: PlaneId) -> Option<(BlockId, u32, u32)> {
        let mut coldest: Option<(BlockId, u32)> = None;
        let mut max = 0;
        for block in self.blocks_of_plane(plane) {
            if matches!(
                self.state[block.index()],
                BlockUse::Reserved | BlockUse::Bad
            ) {
                continue;
            }
            let ec = self.erase_count[block.index()];
            max = max.max(ec);
            if self.state[block.index()] == BlockUse::Closed && coldest.is_none_or(|(_, c)| ec < c)
            {
                coldest = Some((block, ec));
            }
        }
        coldest.map(|(block, min)| (block, min, max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_blocks_are_reused_round_robin() {
        let mut m = BlockManager::new(2, 4, 2);
        let a = m.take_free(PlaneId(1)).unwrap();
        assert_eq!(a, BlockId(4));
        assert_eq!(m.next_ppa(a), Some(Ppa(8)));
        assert_eq!(m.state[a.index()], BlockUse::Open);
        assert_eq!(m.next_ppa(a), Some(Ppa(9)));
        assert_eq!(m.state[a.index()], BlockUse::Closed);
        m.release(a);
        assert_eq!(m.erase_count[a.index()], 1);
        // the erased block goes to the back: the others are used first
        let order: Vec<u32> = (0..4).map(|_| m.take_free(PlaneId(1)).unwrap().0).collect();
        assert_eq!(order, vec![5, 6, 7, 4]);
        assert_eq!(m.take_free(PlaneId(1)), None);
    }

    #[test]
    #[should_panic(expected = "valid pages")]
    fn erasing_valid_data_is_refused() {
        let mut m = BlockManager::new(1, 4, 2);
        let b = m.take_free(PlaneId(0)).unwrap();
        let p = m.next_ppa(b).unwrap();
        m.add_valid(p);
        m.release(b);
    }

    use proptest::prelude::*;

    proptest! {
        /// Under any sequence of takes, programs, invalidations and erases: free blocks are
        /// exactly the `Free` ones and hold nothing, write pointers never pass the block end,
        /// valid counts never exceed the programmed pages, and a plane's blocks are always
        /// either free or in use (none lost, none duplicated).
        #[test]
        fn allocator_invariants(steps in proptest::collection::vec((0u32..2, 0u8..4), 0..300)) {
            let mut m = BlockManager::new(2, 4, 3);
            let mut open: Vec<BlockId> = Vec::new();
            let mut valid_ppas: Vec<Ppa> = Vec::new();
            for (plane, action) in steps {
                let plane = PlaneId(plane);
                match action {
                    0 => if let Some(b) = m.take_free(plane) { open.push(b) },
                    1 => if let Some(&b) = open.last() {
                        let p = m.next_ppa(b).unwrap();
                        m.add_valid(p);
                        valid_ppas.push(p);
                        if m.state[b.index()] == BlockUse::Closed { open.pop(); }
                    },
                    2 => if let Some(p) = valid_ppas.pop() { m.invalidate(p) },
                    _ => {
                        // erase the first non-free block of the plane with no valid page
                        let victim = m.blocks_of_plane(plane).find(|&b| {
                            m.state[b.index()] != BlockUse::Free && m.valid[b.index()] == 0
                        });
                        if let Some(b) = victim {
                            open.retain(|&o| o != b);
                            m.release(b);
                        }
                    }
                }
                for plane in m.all_planes() {
                    let free: Vec<BlockId> = m.free[plane.index()].iter().copied().collect();
                    for b in m.blocks_of_plane(plane) {
                        let is_free = m.state[b.index()] == BlockUse::Free;
                        prop_assert_eq!(is_free, free.contains(&b));
                        prop_assert!(m.next_page[b.index()] <= m.pages_per_block);
                        prop_assert!(m.valid[b.index()] <= m.next_page[b.index()]);
                        if is_free {
                            prop_assert_eq!(m.valid[b.index()], 0);
                            prop_assert_eq!(m.next_page[b.index()], 0);
                        }
                    }
                    let mut sorted = free.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    prop_assert_eq!(sorted.len(), free.len());
                }
            }
        }
    }
}
