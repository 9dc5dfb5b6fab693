//! Static wear-leveling's step (SPEC F4): when a plane's erase-count gap calls for it
//! ([`super::static_wl_candidate`]), the coldest block is migrated by the mapping that owns
//! its pages ([`ColdMigration`]): its valid pages move into the most-worn free block and the
//! cold block is erased.

use super::WearLeveler;
use crate::address::{BlockId, PlaneId};
use crate::error::FtlResult;
use crate::flash::Flash;

/// What wear-leveling needs of a mapping: moving a cold block's data away.
pub(crate) trait ColdMigration {
    /// Moves the valid pages of `cold` into the most-worn free block of its plane (which then
    /// rests under cold data) and erases `cold`.
    fn migrate_cold_block(&mut self, flash: &mut Flash, cold: BlockId);
}

impl WearLeveler {
    /// One static wear-leveling step on `plane` if its erase-count gap calls for it.
    pub(crate) fn level(
        &self,
        map: &mut impl ColdMigration,
        flash: &mut Flash,
        plane: PlaneId,
    ) -> FtlResult<()> {
        if let Some(gap) = self.config.static_gap
            && flash.blocks.free_count(plane) >= 2
            && let Some(coldest) = super::static_wl_candidate(&flash.blocks, plane, gap)
        {
            flash.counters.wl_migrations += 1;
            map.migrate_cold_block(flash, coldest);
        }
        Ok(())
    }
}
