//! GC victim policies (SPEC F3). A victim is a closed block of the GC domain (one plane, or the
//! whole device) that has at least one invalid page. A policy is a [`VictimPolicy`]: its pick
//! is a pure function of the block table (plus, for `random`, a number drawn *ahead*), so
//! [`VictimPolicy::peek`] tells the co-design hint exactly which block the next GC erases.
//!
//! Adding a policy: a file beside these with a type implementing [`VictimPolicy`], plus one
//! line in [`build`] (and, to name it in a config, a `GcPolicy` variant). A test can plug a
//! policy of its own into a device with `Ssd::with_victim_policy`.

mod cost_benefit;
mod fifo;
mod greedy;
mod random;

use crate::address::{BlockId, PlaneId};
use crate::config::GcPolicy;
use crate::flash::blocks::{BlockManager, BlockUse};

/// Where a GC looks for its victim: one plane, or the whole device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Domain {
    Plane(PlaneId),
    Device,
}

impl Domain {
    /// A slot per domain: planes first, then the device.
    pub fn index(self, blocks: &BlockManager) -> usize {
        match self {
            Domain::Plane(plane) => plane.index(),
            Domain::Device => blocks.planes() as usize,
        }
    }
}

/// Chooses the block a GC of a domain erases.
pub(crate) trait VictimPolicy: std::fmt::Debug + Send {
    /// The block the next GC of `domain` would pick, without changing anything.
    fn peek(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId>;

    /// Promises the current pick of `domain` as its next victim while it stays a candidate
    /// (for the co-design hint; a no-op for policies whose pick is a function of the table).
    fn commit(&mut self, _blocks: &BlockManager, _domain: Domain) {}

    /// Called when GC took `peek`'s pick of `domain` as its victim.
    fn taken(&mut self, _blocks: &BlockManager, _domain: Domain) {}
}

/// The policy a config names (the registry: one line per policy).
pub(crate) fn build(policy: GcPolicy, seed: u64) -> Box<dyn VictimPolicy> {
    match policy {
        GcPolicy::Greedy => Box::new(greedy::Greedy),
        GcPolicy::Fifo => Box::new(fifo::Fifo),
        GcPolicy::CostBenefit => Box::new(cost_benefit::CostBenefit),
        GcPolicy::Random => Box::new(random::Random::new(seed)),
    }
}

/// The candidates of `domain`, in block order: closed blocks with at least one invalid page.
pub(crate) fn candidates(
    blocks: &BlockManager,
    domain: Domain,
) -> impl Iterator<Item = BlockId> + Clone + '_ {
    let ppb = blocks.pages_per_block();
    let range = match domain {
        Domain::Plane(plane) => blocks.block_range(plane),
        Domain::Device => 0..blocks.planes() * blocks.blocks_per_plane(),
    };
    range
        .map(BlockId)
        .filter(move |&b| is_candidate(blocks, b, ppb))
}

/// Whether `block` can be a victim (closed, with at least one invalid page).
pub(crate) fn is_candidate(blocks: &BlockManager, block: BlockId, ppb: u32) -> bool {
    blocks.state(block) == BlockUse::Closed && blocks.valid(block) < ppb
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

    fn peek(policy: GcPolicy, m: &BlockManager, domain: Domain) -> Option<u32> {
        build(policy, 1).peek(m, domain).map(|b| b.0)
    }

    #[test]
    fn greedy_fifo_and_cost_benefit_by_hand() {
        let m = plane([3, 1, 4, 1]);
        let p0 = Domain::Plane(PlaneId(0));
        assert_eq!(peek(GcPolicy::Greedy, &m, p0), Some(1)); // fewest valid, lowest index on ties
        assert_eq!(peek(GcPolicy::Fifo, &m, p0), Some(0)); // oldest closed
        // clock = 16; ages: b0 13, b1 9, b3 1 → scores 0.25·13/1.5 = 2.17, 0.75·9/0.5 = 13.5, 1.5
        assert_eq!(peek(GcPolicy::CostBenefit, &m, p0), Some(1));
        let r = peek(GcPolicy::Random, &m, p0).unwrap();
        assert!([0, 1, 3].contains(&r), "block 2 is all valid: {r}");
        assert_eq!(peek(GcPolicy::Greedy, &plane([4; 4]), p0), None);
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
        let p0 = Domain::Plane(PlaneId(0));
        assert_eq!(peek(GcPolicy::Greedy, &m, p0), Some(1));
        assert_eq!(
            peek(GcPolicy::Greedy, &m, Domain::Device),
            Some(2),
            "the fewest valid pages of the device"
        );
        // FIFO: block 0 closed first
        assert_eq!(peek(GcPolicy::Fifo, &m, Domain::Device), Some(0));
        let mut random = build(GcPolicy::Random, 3);
        random.commit(&m, Domain::Device);
        let promised = random.peek(&m, Domain::Device);
        random.commit(&m, Domain::Plane(PlaneId(1))); // a plane's promise leaves the device's
        assert_eq!(random.peek(&m, Domain::Device), promised);
    }

    #[test]
    fn random_peek_predicts_take() {
        let m = plane([1, 2, 3, 0]);
        let mut picker = build(GcPolicy::Random, 9);
        let p0 = Domain::Plane(PlaneId(0));
        let mut picks = Vec::new();
        for _ in 0..20 {
            let predicted = picker.peek(&m, p0);
            assert!(predicted.is_some());
            picker.taken(&m, p0);
            picks.push(predicted);
        }
        picks.dedup();
        assert!(picks.len() > 1, "taking a victim draws the next pick anew");
    }
}

#[cfg(test)]
mod plug_tests;
