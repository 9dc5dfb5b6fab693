//! Garbage-collection victim selection (SPEC F3). A victim is a closed block of the plane that
//! has at least one invalid page. Selection is a pure function of the block table (plus, for
//! `random`, a number drawn *ahead*), so [`VictimPicker::peek`] tells the co-design hint exactly
//! which block the next GC of a plane will erase.
//!
//! The GC mechanism (when to collect, moves and erase) is in [`collect`]; its time emerges from
//! the chip model.

mod collect;

use crate::address::{BlockId, PlaneId};
use crate::config::GcPolicy;
use crate::flash::blocks::{BlockManager, BlockUse};
use nandlab_core::SimRng;

/// Picks GC victims with one policy.
#[derive(Debug)]
pub(crate) struct VictimPicker {
    policy: GcPolicy,
    rng: SimRng,
    /// The random number the next `random` pick uses (drawn ahead for the hint).
    draw: u64,
    /// Per plane, the `random` victim promised by the last hint (kept while it stays a
    /// candidate), so the hint stays true while the host rewrites the hinted pages.
    committed: Vec<Option<BlockId>>,
}

impl VictimPicker {
    pub fn new(policy: GcPolicy, seed: u64) -> Self {
        let mut rng = SimRng::stream(seed, "ftl.gc.random");
        let draw = rng.below(u64::MAX);
        VictimPicker {
            policy,
            rng,
            draw,
            committed: Vec::new(),
        }
    }

    /// Promises the current `random` pick of `plane` as its next victim (a no-op for the
    /// deterministic policies, whose pick is a function of the block table).
    pub fn commit(&mut self, blocks: &BlockManager, plane: PlaneId) {
        self.commit_in(blocks, Domain::Plane(plane));
    }

    /// [`VictimPicker::commit`] for device-wide GC.
    pub fn commit_device(&mut self, blocks: &BlockManager) {
        self.commit_in(blocks, Domain::Device);
    }

    /// The block the next GC of `plane` would pick, without changing anything.
    pub fn peek(&self, blocks: &BlockManager, plane: PlaneId) -> Option<BlockId> {
        self.peek_in(blocks, Domain::Plane(plane))
    }

    /// The block the next device-wide GC would pick (candidates: every block of the device).
    pub fn peek_device(&self, blocks: &BlockManager) -> Option<BlockId> {
        self.peek_in(blocks, Domain::Device)
    }

    /// Picks the victim of `plane` and advances the random draw.
    pub fn take(&mut self, blocks: &BlockManager, plane: PlaneId) -> Option<BlockId> {
        self.take_in(blocks, Domain::Plane(plane))
    }

    /// Picks the device-wide victim and advances the random draw.
    pub fn take_device(&mut self, blocks: &BlockManager) -> Option<BlockId> {
        self.take_in(blocks, Domain::Device)
    }

    fn commit_in(&mut self, blocks: &BlockManager, domain: Domain) {
        if self.policy != GcPolicy::Random {
            return;
        }
        if self.committed.len() <= blocks.planes() as usize {
            self.committed = vec![None; blocks.planes() as usize + 1];
        }
        let pick = self.peek_in(blocks, domain);
        self.committed[domain.index(blocks)] = pick;
    }

    fn peek_in(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        let ppb = blocks.pages_per_block();
        let range = match domain {
            Domain::Plane(plane) => blocks.block_range(plane),
            Domain::Device => 0..blocks.planes() * blocks.blocks_per_plane(),
        };
        let candidates = range
            .map(BlockId)
            .filter(|&b| blocks.state(b) == BlockUse::Closed && blocks.valid(b) < ppb);
        match self.policy {
            // min_by_key keeps the first of equal keys: ties go to the lowest block index
            GcPolicy::Greedy => candidates.min_by_key(|&b| blocks.valid(b)),
            GcPolicy::Fifo => candidates.min_by_key(|&b| blocks.closed_at(b)),
            GcPolicy::CostBenefit => {
                let mut best: Option<(BlockId, f64)> = None;
                for b in candidates {
                    let score = cost_benefit(blocks, b);
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((b, score));
                    }
                }
                best.map(|(b, _)| b)
            }
            GcPolicy::Random => {
                if let Some(&Some(c)) = self.committed.get(domain.index(blocks))
                    && blocks.state(c) == BlockUse::Closed
                    && blocks.valid(c) < ppb
                {
                    return Some(c);
                }
                let count = candidates.clone().count() as u64;
                if count == 0 {
                    return None;
                }
                candidates.clone().nth((self.draw % count) as usize)
            }
        }
    }

    fn take_in(&mut self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        let victim = self.peek_in(blocks, domain);
        if victim.is_some() && self.policy == GcPolicy::Random {
            self.draw = self.rng.below(u64::MAX);
            let index = domain.index(blocks);
            if let Some(c) = self.committed.get_mut(index) {
                *c = None;
            }
        }
        victim
    }
}

/// Where a GC looks for its victim: one plane, or the whole device.
#[derive(Clone, Copy, Debug)]
enum Domain {
    Plane(PlaneId),
    Device,
}

impl Domain {
    /// Slot of the domain's committed `random` pick: planes first, then the device.
    fn index(self, blocks: &BlockManager) -> usize {
        match self {
            Domain::Plane(plane) => plane.index(),
            Domain::Device => blocks.planes() as usize,
        }
    }
}

/// Benefit / cost = (1 − u) · age / 2u (u = valid fraction; an empty block scores infinity).
fn cost_benefit(blocks: &BlockManager, block: BlockId) -> f64 {
    let valid = f64::from(blocks.valid(block));
    let u = valid / f64::from(blocks.pages_per_block());
    if valid == 0.0 {
        return f64::INFINITY;
    }
    let age = (blocks.clock() - blocks.closed_at(block) + 1) as f64;
    (1.0 - u) * age / (2.0 * u)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One plane of 4 blocks × 4 pages, all closed, with the given valid counts, closed in
    /// block order.
    fn plane(valid: [u32; 4]) -> BlockManager {
        let mut m = BlockManager::new(1, 4, 4);
        for (i, v) in valid.iter().enumerate() {
            let b = m.take_free(PlaneId(0)).unwrap();
            assert_eq!(b, BlockId(i as u32));
            for _ in 0..4 {
                m.next_ppa(b).unwrap();
            }
            m.set_valid(b, *v);
        }
        m
    }

    #[test]
    fn greedy_fifo_and_cost_benefit_by_hand() {
        let m = plane([3, 1, 4, 1]);
        let pick = |p| VictimPicker::new(p, 1).peek(&m, PlaneId(0)).map(|b| b.0);
        assert_eq!(pick(GcPolicy::Greedy), Some(1)); // fewest valid, lowest index on ties
        assert_eq!(pick(GcPolicy::Fifo), Some(0)); // oldest closed
        // clock = 16; ages: b0 13, b1 9, b3 1 → scores 0.25·13/1.5 = 2.17, 0.75·9/0.5 = 13.5, 1.5
        assert_eq!(pick(GcPolicy::CostBenefit), Some(1));
        let r = pick(GcPolicy::Random).unwrap();
        assert!([0, 1, 3].contains(&r), "block 2 is all valid: {r}");
        assert_eq!(
            VictimPicker::new(GcPolicy::Greedy, 1).peek(&plane([4; 4]), PlaneId(0)),
            None
        );
    }

    #[test]
    fn device_wide_picks_look_at_every_plane() {
        // two planes of 2 blocks x 4 pages: plane 0 holds valid counts 3, 2; plane 1 holds 1, 3
        let mut m = BlockManager::new(2, 2, 4);
        for (plane, valid) in [(0, [3, 2]), (1, [1, 3])] {
            for v in valid {
                let b = m.take_free(PlaneId(plane)).unwrap();
                for _ in 0..4 {
                    m.next_ppa(b).unwrap();
                }
                m.set_valid(b, v);
            }
        }
        let greedy = VictimPicker::new(GcPolicy::Greedy, 1);
        assert_eq!(greedy.peek(&m, PlaneId(0)), Some(BlockId(1)));
        assert_eq!(
            greedy.peek_device(&m),
            Some(BlockId(2)),
            "the fewest valid pages of the device"
        );
        // FIFO: block 0 closed first
        assert_eq!(
            VictimPicker::new(GcPolicy::Fifo, 1).peek_device(&m),
            Some(BlockId(0))
        );
        let mut random = VictimPicker::new(GcPolicy::Random, 3);
        random.commit_device(&m);
        let promised = random.peek_device(&m);
        random.commit(&m, PlaneId(1)); // a plane's promise does not disturb the device's
        assert_eq!(random.take_device(&m), promised);
    }

    #[test]
    fn random_peek_predicts_take() {
        let m = plane([1, 2, 3, 0]);
        let mut picker = VictimPicker::new(GcPolicy::Random, 9);
        for _ in 0..20 {
            let predicted = picker.peek(&m, PlaneId(0));
            assert_eq!(picker.take(&m, PlaneId(0)), predicted);
        }
    }
}
