//! Static wear-leveling's step and migration on the page mapping (SPEC F4): when a plane's
//! erase-count gap calls for it ([`super::static_wl_candidate`]), the coldest block's valid
//! pages move into the most-worn free block and the cold block is erased.

use super::WearLeveler;
use crate::address::{BlockId, PlaneId};
use crate::error::FtlResult;
use crate::flash::Flash;
use crate::mapping::page::PageMap;

impl WearLeveler {
    /// One static wear-leveling step on `plane` if its erase-count gap calls for it.
    pub(crate) fn level(
        &self,
        map: &mut PageMap,
        flash: &mut Flash,
        plane: PlaneId,
    ) -> FtlResult<()> {
        if let Some(gap) = self.config.static_gap
            && flash.blocks.free_count(plane) >= 2
            && let Some(coldest) = super::static_wl_candidate(&flash.blocks, plane, gap)
        {
            flash.counters.wl_migrations += 1;
            migrate_cold_block(map, flash, coldest);
        }
        Ok(())
    }
}

/// Moves the valid pages of the least-worn block into the most-worn free block of the plane
/// (which then rests under cold data) and erases the cold block.
fn migrate_cold_block(map: &mut PageMap, flash: &mut Flash, cold: BlockId) {
    let plane = flash.blocks.plane_of_block(cold);
    let Some(worn) = flash.blocks.take_most_worn_free(plane) else {
        return;
    };
    let id = flash.placement.of_block(cold);
    flash.placement.open(worn, id);
    let tag = flash.open_job();
    for ppa in flash.blocks.written_pages(cold) {
        if !map.table.is_valid(ppa) {
            continue;
        }
        let target = flash
            .blocks
            .next_ppa(worn)
            .expect("a block holds any block's data");
        map.table.relocate(ppa, target);
        flash.blocks.invalidate(ppa);
        flash.blocks.add_valid(target);
        flash.move_page(ppa, target, tag);
    }
    if flash.blocks.is_open(worn) {
        flash.blocks.close(worn);
    }
    let table = &map.table;
    flash.erase(cold, tag, |lpa| table.ppa_of(lpa));
    if flash.pads() {
        map.drop_closed_frontiers(flash);
    }
}
