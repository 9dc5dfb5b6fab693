//! Cost-benefit (Kawaguchi et al.): the candidate with the highest (1 − u) · age / 2u, where u is
//! its valid fraction and age the block-table clock since it closed.

use super::{Domain, VictimPolicy, candidates};
use crate::address::BlockId;
use crate::flash::blocks::BlockManager;

#[derive(Debug)]
pub(crate) struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn peek(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        let mut best: Option<(BlockId, f64)> = None;
        for b in candidates(blocks, domain) {
            let score = score(blocks, b);
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((b, score));
            }
        }
        best.map(|(b, _)| b)
    }
}

/// Benefit / cost = (1 − u) · age / 2u (u = valid fraction; an empty block scores infinity).
fn score(blocks: &BlockManager, block: BlockId) -> f64 {
    let valid = f64::from(blocks.valid(block));
    let u = valid / f64::from(blocks.pages_per_block());
    if valid == 0.0 {
        return f64::INFINITY;
    }
    let age = (blocks.clock() - blocks.closed_at(block) + 1) as f64;
    (1.0 - u) * age / (2.0 * u)
}
