//! FIFO: the candidate closed longest ago.

use super::{Domain, VictimPolicy, candidates};
use crate::address::BlockId;
use crate::flash::blocks::BlockManager;

#[derive(Debug)]
pub(crate) struct Fifo;

impl VictimPolicy for Fifo {
    fn peek(&self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        candidates(blocks, domain).min_by_key(|&b| blocks.closed_at(b))
    }
}
