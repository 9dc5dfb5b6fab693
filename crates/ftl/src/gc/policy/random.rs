//! Random: a uniformly drawn candidate. The draw is made *ahead* (and a hinted pick is kept
//! while it stays a candidate), so the co-design hint is exact for this policy too.

use super::{Domain, VictimPolicy, candidates, is_candidate};
use crate::address::BlockId;
use crate::flash::blocks::BlockManager;
use nandlab_core::SimRng;

#[derive(Debug)]
pub(crate) struct Random {
    rng: SimRng,
    /// The random number the next pick uses (drawn ahead for the hint).
    draw: u64,
    /// Per domain ([`Domain::index`]), the victim promised by the last hint (kept while it stays
    /// a candidate), so the hint stays true while the host rewrites the hinted pages.
    committed: Vec<Option<BlockId>>,
}

impl Random {
    pub fn new(seed: u64) -> Self {
        let mut rng = SimRng::stream(seed, "ftl.gc.random");
        let draw = rng.below(u64::MAX);
        Random {
            rng,
            draw,
            committed: Vec::new(),
        }
    }
}

impl VictimPolicy for Random {
    fn peek(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        if let Some(&Some(c)) = self.committed.get(domain.index(blocks))
            && is_candidate(blocks, c, blocks.pages_per_block())
        {
            return Some(c);
        }
        let candidates = candidates(blocks, domain);
        let count = candidates.clone().count() as u64;
        if count == 0 {
            return None;
        }
        candidates.clone().nth((self.draw % count) as usize)
    }

    fn commit(&mut self, blocks: &BlockManager, domain: Domain) {
        if self.committed.len() <= blocks.planes() as usize {
            self.committed = vec![None; blocks.planes() as usize + 1];
        }
        let pick = self.peek(blocks, domain);
        self.committed[domain.index(blocks)] = pick;
    }

    fn taken(&mut self, blocks: &BlockManager, domain: Domain) {
        self.draw = self.rng.below(u64::MAX);
        if let Some(c) = self.committed.get_mut(domain.index(blocks)) {
            *c = None;
        }
    }
}
