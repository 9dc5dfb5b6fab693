//! The die-local op number ("ticket") of each page's program, kept only for the blocks that
//! have a program not yet completed (issue 32 item 2: no per-page column for it).
//!
//! A page's ticket matters only until its program completes: after that, the page is durable
//! whatever the number was. A die runs its ops in submission order, so once every program a
//! block received has completed (no program decided but not submitted, and the last ticket
//! handed over at most the die's completion count: [`BlockTickets::summary`]), every page of
//! the block is durable until the next program decided into it. Such a block needs no
//! per-page numbers. So each block with a program in flight borrows a slot of `pages_per_block`
//! tickets from a pool, and gives it back (lazily, when a slot is needed) once it is done:
//! the pool holds as many slots as blocks had programs in flight at once (tens on the bench
//! device, against thousands of blocks).
//!
//! A fresh slot starts with every page [`DONE`]: the pages of a done block are durable, which
//! is what [`DONE`] means; a stale number from an earlier cycle of the block said the same.

/// Ticket of a page programmed functionally (no op timed), or of a page whose block has no
/// program in flight: complete.
pub(crate) const DONE: u64 = 0;
/// Ticket of a page whose program op has not reached the chip model yet.
pub(crate) const NOT_SUBMITTED: u64 = u64::MAX;

/// "No slot" in [`BlockTickets::slot_of`].
const NO_SLOT: u32 = u32::MAX;

/// Per-block program summaries, and the per-page tickets of the blocks that need them.
#[derive(Debug)]
pub(crate) struct BlockTickets {
    pages_per_block: u32,
    /// Per block, programs into it decided but not yet handed to the chip model.
    unsubmitted: Vec<u32>,
    /// Per block, the largest ticket of its programs handed to the chip model.
    last_ticket: Vec<u64>,
    /// Per block, the index in `pool` of its slot's first ticket ([`NO_SLOT`]: no slot; then
    /// every page of the block is durable).
    slot_of: Vec<u32>,
    /// Per slot, the block holding it ([`NO_SLOT`]: free).
    holder: Vec<u32>,
    /// Free slots.
    free: Vec<u32>,
    /// `pages_per_block` tickets per slot.
    pool: Vec<u64>,
}

impl BlockTickets {
    pub fn new(blocks: usize, pages_per_block: u32) -> Self {
        BlockTickets {
            pages_per_block,
            unsubmitted: vec![0; blocks],
            last_ticket: vec![0; blocks],
            slot_of: vec![NO_SLOT; blocks],
            holder: Vec::new(),
            free: Vec::new(),
            pool: Vec::new(),
        }
    }

    /// `(programs decided but not submitted, last ticket submitted)` of `block`.
    #[inline(always)]
    pub fn summary(&self, block: usize) -> (u32, u64) {
        (self.unsubmitted[block], self.last_ticket[block])
    }

    /// The ticket of page `offset` of `block`.
    #[inline]
    pub fn get(&self, block: usize, offset: u32) -> u64 {
        match self.slot_of[block] {
            NO_SLOT => DONE,
            base => self.pool[base as usize + offset as usize],
        }
    }

    /// A program of page `offset` of `block` was decided; `done`: no op will be timed.
    /// `is_done(block, unsubmitted, last_ticket)` says from a block's summary whether its
    /// programs have all completed (to reclaim slots).
    #[inline]
    pub fn decided(
        &mut self,
        block: usize,
        offset: u32,
        done: bool,
        is_done: impl Fn(usize, u32, u64) -> bool,
    ) {
        if done {
            if let Some(i) = self.page_index(block, offset) {
                self.pool[i] = DONE;
            }
            return;
        }
        let base = match self.slot_of[block] {
            NO_SLOT => self.take_slot(block, is_done),
            base => base,
        };
        self.pool[base as usize + offset as usize] = NOT_SUBMITTED;
        self.unsubmitted[block] += 1;
    }

    /// The program of page `offset` of `block` was handed to the chip model as op `ticket`.
    #[inline]
    pub fn submitted(&mut self, block: usize, offset: u32, ticket: u64) {
        debug_assert!(self.unsubmitted[block] > 0);
        self.unsubmitted[block] -= 1;
        self.last_ticket[block] = ticket;
        let i = self
            .page_index(block, offset)
            .expect("a block with a program not submitted has a slot");
        self.pool[i] = ticket;
    }

    #[inline(always)]
    fn page_index(&self, block: usize, offset: u32) -> Option<usize> {
        match self.slot_of[block] {
            NO_SLOT => None,
            base => Some(base as usize + offset as usize),
        }
    }

    /// A slot for `block`, every page [`DONE`]: a free one, else one given back by a block
    /// that is done, else a new one (the pool doubles, so reclaiming scans are rare). Returns
    /// the index of its first ticket.
    #[cold]
    fn take_slot(&mut self, block: usize, is_done: impl Fn(usize, u32, u64) -> bool) -> u32 {
        if self.free.is_empty() {
            for slot in 0..self.holder.len() as u32 {
                let held = self.holder[slot as usize];
                let b = held as usize;
                if held != NO_SLOT && is_done(b, self.unsubmitted[b], self.last_ticket[b]) {
                    self.slot_of[held as usize] = NO_SLOT;
                    self.holder[slot as usize] = NO_SLOT;
                    self.free.push(slot);
                }
            }
        }
        if self.free.is_empty() {
            let old = self.holder.len() as u32;
            let grown = (old * 2).max(4);
            self.holder.resize(grown as usize, NO_SLOT);
            self.pool
                .resize(grown as usize * self.pages_per_block as usize, DONE);
            self.free.extend((old..grown).rev());
        }
        let slot = self.free.pop().expect("a free slot");
        self.holder[slot as usize] = block as u32;
        let base = u32::try_from(slot as usize * self.pages_per_block as usize)
            .ok()
            .filter(|b| *b != NO_SLOT)
            .expect("fewer than 2^32 tickets in the pool");
        self.slot_of[block] = base;
        let start = base as usize;
        self.pool[start..start + self.pages_per_block as usize].fill(DONE);
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_lent_to_blocks_in_flight_and_reclaimed_when_done() {
        let mut t = BlockTickets::new(16, 4);
        let done = |_: usize, _: u32, _: u64| false;
        for block in 0..4 {
            t.decided(block, 0, false, done);
        }
        assert_eq!(t.holder.len(), 4);
        assert_eq!(t.get(0, 0), NOT_SUBMITTED);
        assert_eq!(t.get(0, 1), DONE);
        t.submitted(0, 0, 7);
        assert_eq!((t.get(0, 0), t.summary(0)), (7, (0, 7)));
        // a fifth block in flight while none is done: the pool grows
        t.decided(4, 2, false, done);
        assert_eq!(t.holder.len(), 8);
        // a block with no slot answers DONE, and a functional program needs none
        t.decided(6, 1, true, done);
        assert_eq!((t.get(6, 1), t.slot_of[6]), (DONE, NO_SLOT));
        // once the pool is used up, done blocks give their slots back
        for block in [5, 6, 7] {
            t.decided(block, 0, false, done);
        }
        t.decided(7, 1, false, done);
        assert!(t.free.is_empty());
        t.submitted(4, 2, 9);
        t.decided(9, 3, false, |b, _, _| b == 0);
        assert_eq!(t.slot_of[0], NO_SLOT);
        assert_eq!(t.get(0, 0), DONE);
        assert_eq!(t.holder.len(), 8);
        assert_eq!((t.get(9, 3), t.get(9, 0)), (NOT_SUBMITTED, DONE));
        assert_eq!(t.get(3, 0), NOT_SUBMITTED);
    }
}
