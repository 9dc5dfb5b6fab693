//! Greedy: the candidate with the fewest valid pages (the cheapest to collect now).

use super::{Domain, VictimPolicy, candidates};
use crate::address::BlockId;
use crate::flash::blocks::BlockManager;

#[derive(Debug)]
pub(crate) struct Greedy;

impl VictimPolicy for Greedy {
    fn peek(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        // min_by_key keeps the first of equal keys: ties go to the lowest block index
        candidates(blocks, domain).min_by_key(|&b| blocks.valid(b))
    }
}
