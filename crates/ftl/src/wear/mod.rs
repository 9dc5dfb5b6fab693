//! Wear-leveling (SPEC F4). Dynamic: free blocks are reused in the order they were erased
//! (round robin per plane, [`crate::flash::blocks`]). Static: when the erase-count gap of a
//! plane (max over its blocks − min over its closed blocks) exceeds the threshold, the coldest
//! closed block is migrated (its valid pages moved, the block erased and returned to the free
//! list) so that its little-worn cells take new writes. [`WearLeveler`] is the component (its
//! config and its one step, [`migrate`]); the mapping that owns the pages moves them
//! ([`ColdMigration`], the page mapping's `PageMap`).

mod migrate;

pub(crate) use migrate::ColdMigration;

use crate::address::{BlockId, PlaneId};
use crate::config::{FtlConfig, WearLeveling};
use crate::flash::blocks::BlockManager;

/// Wear-leveling settings (`[ssd.wear]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WearConfig {
    /// Erase-count gap beyond which static wear-leveling migrates a plane's coldest block
    /// (`None`: round-robin allocation only).
    pub static_gap: Option<u32>,
}

impl WearConfig {
    pub fn of(f: &FtlConfig) -> Self {
        WearConfig {
            static_gap: (f.wear.leveling == WearLeveling::Static)
                .then_some(f.wear.erase_gap_threshold),
        }
    }
}

/// Static wear-leveling: after GC erased blocks of a plane, one migration step if the plane's
/// erase-count gap calls for it.
#[derive(Clone, Debug)]
pub(crate) struct WearLeveler {
    config: WearConfig,
}

impl WearLeveler {
    pub fn new(config: WearConfig) -> Self {
        WearLeveler { config }
    }
}

/// The block static wear-leveling should migrate in `plane`, if the gap exceeds `gap_max`.
pub(crate) fn static_wl_candidate(
    blocks: &BlockManager,
    plane: PlaneId,
    gap_max: u32,
) -> Option<BlockId> {
    let (coldest, min, max) = blocks.erase_gap(plane)?;
    (max - min > gap_max).then_some(coldest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_only_beyond_the_gap() {
        let mut m = BlockManager::new(1, 3, 1);
        for _ in 0..3 {
            let b = m.take_free(PlaneId(0)).unwrap();
            m.next_ppa(b).unwrap();
        }
        // blocks 0, 1, 2 closed with erase counts 0; wear block 2 five times
        m.set_erase_count(crate::address::BlockId(2), 5);
        assert_eq!(static_wl_candidate(&m, PlaneId(0), 5), None);
        assert_eq!(static_wl_candidate(&m, PlaneId(0), 4), Some(BlockId(0)));
    }
}
