//! Block accounting: per-block state, valid-page counts, erase counts, write pointers, and
//! per-plane free lists. Free blocks are reused in the order they were erased (a FIFO per
//! plane), which is the round-robin allocation of paper 000.

use std::collections::VecDeque;

/// "No page / no block / no LPA" in the flat `u32` tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Life cycle of a block: free (erased) → open (being written) → closed (full) → erased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockUse {
    Free,
    Open,
    Closed,
}

/// Every block of the device, indexed by the chip model's dense `BlockId`.
#[derive(Debug)]
pub(crate) struct BlockManager {
    pub pages_per_block: u32,
    pub blocks_per_plane: u32,
    pub planes: u32,
    pub valid: Vec<u32>,
    pub erase_count: Vec<u32>,
    pub state: Vec<BlockUse>,
    /// Next page offset to program (the write pointer).
    pub next_page: Vec<u32>,
    /// Page-write clock when the block was closed (for FIFO and cost-benefit).
    pub closed_at: Vec<u64>,
    /// Monotone counter of page programs (the clock of `closed_at`).
    pub clock: u64,
    free: Vec<VecDeque<u32>>,
}

impl BlockManager {
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
            free: (0..planes)
                .map(|p| (p * blocks_per_plane..(p + 1) * blocks_per_plane).collect())
                .collect(),
        }
    }

    pub fn block_of(&self, ppa: u32) -> u32 {
        ppa / self.pages_per_block
    }
    pub fn plane_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }
    pub fn plane_of_ppa(&self, ppa: u32) -> u32 {
        self.plane_of_block(self.block_of(ppa))
    }
    pub fn blocks_of_plane(&self, plane: u32) -> std::ops::Range<u32> {
        plane * self.blocks_per_plane..(plane + 1) * self.blocks_per_plane
    }
    pub fn free_count(&self, plane: u32) -> u32 {
        self.free[plane as usize].len() as u32
    }

    /// Takes the least recently erased free block of `plane` and opens it.
    pub fn take_free(&mut self, plane: u32) -> Option<u32> {
        let block = self.free[plane as usize].pop_front()?;
        debug_assert_eq!(self.state[block as usize], BlockUse::Free);
        debug_assert_eq!(self.valid[block as usize], 0);
        self.state[block as usize] = BlockUse::Open;
        self.next_page[block as usize] = 0;
        Some(block)
    }

    /// Takes the free block of `plane` with the most erases (ties: least recently erased) and
    /// opens it (static wear-leveling parks cold data there).
    pub fn take_most_worn_free(&mut self, plane: u32) -> Option<u32> {
        let free = &mut self.free[plane as usize];
        let mut best: Option<(usize, u32)> = None;
        for (i, &b) in free.iter().enumerate() {
            let ec = self.erase_count[b as usize];
            if best.is_none_or(|(_, e)| ec > e) {
                best = Some((i, ec));
            }
        }
        let block = free.remove(best?.0).expect("index from the scan");
        self.state[block as usize] = BlockUse::Open;
        self.next_page[block as usize] = 0;
        Some(block)
    }

    /// The next page of open `block`, or `None` when it is full (then it is closed).
    pub fn next_ppa(&mut self, block: u32) -> Option<u32> {
        let b = block as usize;
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
        Some(block * self.pages_per_block + page)
    }

    /// Allocates page `page` of open `block`, skipping the pages before it (allowed by the
    /// in-order rule: programs only move forward within a block).
    pub fn next_ppa_at(&mut self, block: u32, page: u32) -> u32 {
        let b = block as usize;
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
        block * self.pages_per_block + page
    }

    /// Closes an open block (full, or abandoned by a merge).
    pub fn close(&mut self, block: u32) {
        self.state[block as usize] = BlockUse::Closed;
        self.closed_at[block as usize] = self.clock;
    }

    pub fn add_valid(&mut self, ppa: u32) {
        let b = self.block_of(ppa) as usize;
        self.valid[b] += 1;
        debug_assert!(self.valid[b] <= self.pages_per_block);
    }
    pub fn invalidate(&mut self, ppa: u32) {
        let b = self.block_of(ppa) as usize;
        debug_assert!(
            self.valid[b] > 0,
            "invalidating in block {b} with no valid page"
        );
        self.valid[b] -= 1;
    }

    /// Returns an erased block to the back of its plane's free list.
    pub fn release(&mut self, block: u32) {
        let b = block as usize;
        assert_eq!(self.valid[b], 0, "erasing block {block} with valid pages");
        assert_ne!(self.state[b], BlockUse::Free, "erasing free block {block}");
        self.state[b] = BlockUse::Free;
        self.next_page[b] = 0;
        self.erase_count[b] += 1;
        let plane = self.plane_of_block(block) as usize;
        self.free[plane].push_back(block);
    }

    /// Erase counts of `plane`: (minimum over closed blocks, maximum over all blocks).
    pub fn erase_gap(&self, plane: u32) -> Option<(u32, u32, u32)> {
        let mut coldest: Option<(u32, u32)> = None;
        let mut max = 0;
        for block in self.blocks_of_plane(plane) {
            let ec = self.erase_count[block as usize];
            max = max.max(ec);
            if self.state[block as usize] == BlockUse::Closed && coldest.is_none_or(|(_, c)| ec < c)
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
        let a = m.take_free(1).unwrap();
        assert_eq!(a, 4);
        assert_eq!(m.next_ppa(a), Some(8));
        assert_eq!(m.state[a as usize], BlockUse::Open);
        assert_eq!(m.next_ppa(a), Some(9));
        assert_eq!(m.state[a as usize], BlockUse::Closed);
        m.release(a);
        assert_eq!(m.erase_count[a as usize], 1);
        // the erased block goes to the back: the others are used first
        let order: Vec<u32> = (0..4).map(|_| m.take_free(1).unwrap()).collect();
        assert_eq!(order, vec![5, 6, 7, 4]);
        assert_eq!(m.take_free(1), None);
    }

    #[test]
    #[should_panic(expected = "valid pages")]
    fn erasing_valid_data_is_refused() {
        let mut m = BlockManager::new(1, 4, 2);
        let b = m.take_free(0).unwrap();
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
            let mut open: Vec<u32> = Vec::new();
            let mut valid_ppas: Vec<u32> = Vec::new();
            for (plane, action) in steps {
                match action {
                    0 => if let Some(b) = m.take_free(plane) { open.push(b) },
                    1 => if let Some(&b) = open.last() {
                        let p = m.next_ppa(b).unwrap();
                        m.add_valid(p);
                        valid_ppas.push(p);
                        if m.state[b as usize] == BlockUse::Closed { open.pop(); }
                    },
                    2 => if let Some(p) = valid_ppas.pop() { m.invalidate(p) },
                    _ => {
                        // erase the first non-free block of the plane with no valid page
                        let victim = m.blocks_of_plane(plane).find(|&b| {
                            m.state[b as usize] != BlockUse::Free && m.valid[b as usize] == 0
                        });
                        if let Some(b) = victim {
                            open.retain(|&o| o != b);
                            m.release(b);
                        }
                    }
                }
                for plane in 0..2 {
                    let free: Vec<u32> = m.free[plane as usize].iter().copied().collect();
                    for b in m.blocks_of_plane(plane) {
                        let is_free = m.state[b as usize] == BlockUse::Free;
                        prop_assert_eq!(is_free, free.contains(&b));
                        prop_assert!(m.next_page[b as usize] <= m.pages_per_block);
                        prop_assert!(m.valid[b as usize] <= m.next_page[b as usize]);
                        if is_free {
                            prop_assert_eq!(m.valid[b as usize], 0);
                            prop_assert_eq!(m.next_page[b as usize], 0);
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
