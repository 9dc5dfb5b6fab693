//! In-memory bookkeeping of a table: which slots hold which rows, row versions, free slots.
//!
//! Memory is bounded by the table's slot count `S` (fixed at creation): one occupancy bit per
//! slot, a free-slot count per page, and for each row id ever handed out (at most `S`, ids of
//! deleted rows are reused last-in first-out) its slot and version: about `8 * S` bytes.
//! Nothing grows with the number of queries.

use crate::device::Lpa;
use crate::error::EngineError;
use crate::layout::RowLayout;
use serde::{Deserialize, Serialize};
use std::fmt;

const NO_SLOT: u32 = u32::MAX;

/// A row's identity, stable for the row's life even when Update-to-Delete+Insert moves it.
/// Ids of deleted rows are reused (most recently freed first).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct RowId(pub u64);

impl fmt::Display for RowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Slot occupancy and row locations of one table.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    layout: RowLayout,
    occupied: Vec<u64>,
    free_in_page: Vec<u32>,
    slot_of_row: Vec<u32>,
    version_of_row: Vec<u32>,
    free_row_ids: Vec<u32>,
    live_rows: u64,
    /// Slots taken without a row (the crash-consistent engine's quarantine: a row's old copy
    /// that must stay on the device until the next flush); one bit per slot.
    reserved: Vec<u64>,
}

impl Table {
    pub(crate) fn new(layout: RowLayout) -> Self {
        let slots = layout.slot_count() as usize;
        Table {
            occupied: vec![0; slots.div_ceil(64)],
            free_in_page: vec![layout.rows_per_page(); layout.page_count() as usize],
            slot_of_row: Vec::new(),
            version_of_row: Vec::new(),
            free_row_ids: Vec::new(),
            live_rows: 0,
            reserved: vec![0; slots.div_ceil(64)],
            layout,
        }
    }

    /// A table holding `rows` (row id, version, slot; each id and slot at most once), as a
    /// reopen rebuilds it from the device. Ids below the largest one that are not live are
    /// free, the lowest reused first; their versions restart at 1 (no copy of them is left).
    pub(crate) fn rebuild(layout: RowLayout, rows: &[(RowId, u32, u32)]) -> Self {
        let mut table = Table::new(layout);
        let bound = rows.iter().map(|r| r.0.0 + 1).max().unwrap_or(0) as usize;
        table.slot_of_row = vec![NO_SLOT; bound];
        table.version_of_row = vec![0; bound];
        for &(row, version, slot) in rows {
            debug_assert_eq!(
                table.slot_of_row[row.0 as usize], NO_SLOT,
                "row {row} twice"
            );
            table.version_of_row[row.0 as usize] = version;
            table.occupy(row, slot);
            table.live_rows += 1;
        }
        table.free_row_ids = (0..bound as u32)
            .rev()
            .filter(|&id| table.slot_of_row[id as usize] == NO_SLOT)
            .collect();
        table
    }

    pub(crate) fn layout(&self) -> &RowLayout {
        &self.layout
    }

    pub(crate) fn live_rows(&self) -> u64 {
        self.live_rows
    }

    /// Row ids handed out so far are `0..row_id_bound()`.
    pub(crate) fn row_id_bound(&self) -> u64 {
        self.slot_of_row.len() as u64
    }

    pub(crate) fn slot_of(&self, row: RowId) -> Option<u32> {
        let slot = *self.slot_of_row.get(usize::try_from(row.0).ok()?)?;
        (slot != NO_SLOT).then_some(slot)
    }

    /// Current version of a live row.
    pub(crate) fn version_of(&self, row: RowId) -> Option<u32> {
        self.slot_of(row)?;
        Some(self.version_of_row[row.0 as usize])
    }

    pub(crate) fn is_free(&self, slot: u32) -> bool {
        self.occupied[slot as usize / 64] & (1 << (slot % 64)) == 0
    }

    pub(crate) fn free_in_page(&self, lpa: Lpa) -> u32 {
        self.free_in_page[lpa.0 as usize]
    }

    /// Whether page `lpa` holds no live row (its old contents need not be read).
    pub(crate) fn page_is_empty(&self, lpa: Lpa) -> bool {
        self.free_in_page(lpa) == self.layout.rows_per_page()
    }

    /// Slots of page `lpa`.
    pub(crate) fn slots_of_page(&self, lpa: Lpa) -> std::ops::Range<u32> {
        let first = self.layout.first_slot_of(lpa);
        first..first + self.layout.rows_per_page()
    }

    /// The lowest free slot of page `lpa`.
    pub(crate) fn first_free_slot_in_page(&self, lpa: Lpa) -> Option<u32> {
        if self.free_in_page(lpa) == 0 {
            return None;
        }
        self.slots_of_page(lpa).find(|&slot| self.is_free(slot))
    }

    /// The first free slot at or after `start` in address order, wrapping around once.
    pub(crate) fn next_free_slot_from(&self, start: u64) -> Option<u32> {
        let slot_count = self.layout.slot_count();
        let start = (start % slot_count) as u32;
        let page_count = self.layout.page_count();
        let start_page = u64::from(self.layout.lpa_of_slot(start).0);
        for step in 0..=page_count {
            let lpa = Lpa(((start_page + step) % page_count) as u32);
            if self.free_in_page(lpa) == 0 {
                continue;
            }
            let mut slots = self.slots_of_page(lpa);
            if step == 0 {
                slots.start = start;
            }
            if let Some(slot) = slots.into_iter().find(|&slot| self.is_free(slot)) {
                return Some(slot);
            }
        }
        None
    }

    /// The id the next new row will get, or `TableFull`.
    pub(crate) fn peek_row_id(&self) -> Result<RowId, EngineError> {
        if let Some(&id) = self.free_row_ids.last() {
            return Ok(RowId(u64::from(id)));
        }
        let bound = self.row_id_bound();
        if bound >= self.layout.slot_count() || self.live_rows >= self.layout.slot_count() {
            return Err(EngineError::TableFull {
                slot_count: self.layout.slot_count(),
            });
        }
        Ok(RowId(bound))
    }

    /// The version a row gets on its next insert or update.
    pub(crate) fn next_version(&self, row: RowId) -> u32 {
        self.version_of_row
            .get(row.0 as usize)
            .map_or(1, |v| v.wrapping_add(1))
    }

    /// Records a new row (id from [`Table::peek_row_id`]) in a free slot.
    pub(crate) fn insert_row(&mut self, row: RowId, slot: u32, version: u32) {
        debug_assert_eq!(self.peek_row_id().ok(), Some(row));
        if self.free_row_ids.last() == Some(&(row.0 as u32)) {
            self.free_row_ids.pop();
        } else {
            self.slot_of_row.push(NO_SLOT);
            self.version_of_row.push(0);
        }
        self.version_of_row[row.0 as usize] = version;
        self.occupy(row, slot);
        self.live_rows += 1;
    }

    /// Moves a live (possibly detached) row to a free slot, or keeps it in its own slot, and
    /// sets its version.
    pub(crate) fn move_row(&mut self, row: RowId, slot: u32, version: u32) {
        if let Some(old) = self.slot_of(row) {
            self.vacate_slot(old);
        }
        self.version_of_row[row.0 as usize] = version;
        self.occupy(row, slot);
    }

    /// Frees a live row's slot but keeps the row live and its id taken (the Delete half of
    /// U2DI); [`Table::move_row`] places it again.
    pub(crate) fn detach_row(&mut self, row: RowId) {
        if let Some(slot) = self.slot_of(row) {
            self.vacate_slot(slot);
            self.slot_of_row[row.0 as usize] = NO_SLOT;
        }
    }

    /// Removes a live row; its slot becomes free and its id reusable. Returns the slot.
    pub(crate) fn delete_row(&mut self, row: RowId) -> Option<u32> {
        let slot = self.slot_of(row)?;
        self.vacate_slot(slot);
        self.slot_of_row[row.0 as usize] = NO_SLOT;
        self.free_row_ids.push(row.0 as u32);
        self.live_rows -= 1;
        Some(slot)
    }

    /// Takes free `slot` without a row (it is not free, holds no live row).
    pub(crate) fn reserve_slot(&mut self, slot: u32) {
        assert!(self.is_free(slot), "slot {slot} to reserve is taken");
        self.occupied[slot as usize / 64] |= 1 << (slot % 64);
        self.reserved[slot as usize / 64] |= 1 << (slot % 64);
        self.free_in_page[self.layout.lpa_of_slot(slot).0 as usize] -= 1;
    }

    /// Frees a slot [`Table::reserve_slot`] took.
    pub(crate) fn release_slot(&mut self, slot: u32) {
        assert!(self.is_reserved(slot), "slot {slot} is not reserved");
        self.reserved[slot as usize / 64] &= !(1 << (slot % 64));
        self.vacate_slot(slot);
    }

    /// Whether `slot` is taken without a row.
    pub(crate) fn is_reserved(&self, slot: u32) -> bool {
        self.reserved[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    fn occupy(&mut self, row: RowId, slot: u32) {
        assert!(self.is_free(slot), "slot {slot} for row {row} is taken");
        self.occupied[slot as usize / 64] |= 1 << (slot % 64);
        self.free_in_page[self.layout.lpa_of_slot(slot).0 as usize] -= 1;
        self.slot_of_row[row.0 as usize] = slot;
    }

    fn vacate_slot(&mut self, slot: u32) {
        assert!(!self.is_free(slot), "slot {slot} is already free");
        self.occupied[slot as usize / 64] &= !(1 << (slot % 64));
        self.free_in_page[self.layout.lpa_of_slot(slot).0 as usize] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table::new(RowLayout::new(16, 64, 3).unwrap())
    }

    #[test]
    fn ids_are_reused_and_versions_keep_growing() {
        let mut t = table();
        let a = t.peek_row_id().unwrap();
        t.insert_row(a, 0, t.next_version(a));
        let b = t.peek_row_id().unwrap();
        t.insert_row(b, 1, t.next_version(b));
        assert_eq!((a, b), (RowId(0), RowId(1)));
        assert_eq!(t.delete_row(a), Some(0));
        assert_eq!(t.version_of(a), None);
        let c = t.peek_row_id().unwrap();
        assert_eq!(c, a);
        t.insert_row(c, 5, t.next_version(c));
        assert_eq!(t.version_of(c), Some(2));
        assert_eq!(t.live_rows(), 2);
    }

    #[test]
    fn free_slot_search_wraps_and_reports_full() {
        let mut t = table();
        for slot in 0..12 {
            let row = t.peek_row_id().unwrap();
            t.insert_row(row, slot, 1);
        }
        assert_eq!(t.next_free_slot_from(0), None);
        assert!(matches!(
            t.peek_row_id(),
            Err(EngineError::TableFull { .. })
        ));
        t.delete_row(RowId(2));
        assert_eq!(t.next_free_slot_from(7), Some(2));
        assert_eq!(t.first_free_slot_in_page(Lpa(0)), Some(2));
        assert_eq!(t.first_free_slot_in_page(Lpa(1)), None);
        t.move_row(RowId(9), 2, 3);
        assert_eq!(t.slot_of(RowId(9)), Some(2));
        assert_eq!(t.free_in_page(Lpa(2)), 1);
    }

    #[test]
    fn reserved_slots_are_neither_free_nor_rows() {
        let mut t = table();
        t.reserve_slot(0);
        assert!(!t.is_free(0) && t.is_reserved(0));
        assert_eq!(t.next_free_slot_from(0), Some(1));
        assert_eq!(t.live_rows(), 0);
        assert!(!t.page_is_empty(Lpa(0)));
        t.release_slot(0);
        assert!(t.is_free(0) && !t.is_reserved(0) && t.page_is_empty(Lpa(0)));
    }

    #[test]
    fn a_rebuilt_table_reuses_the_lowest_free_id_first() {
        let t = Table::rebuild(
            RowLayout::new(16, 64, 3).unwrap(),
            &[(RowId(3), 7, 5), (RowId(1), 2, 0)],
        );
        assert_eq!(t.live_rows(), 2);
        assert_eq!(t.slot_of(RowId(3)), Some(5));
        assert_eq!(t.version_of(RowId(1)), Some(2));
        assert_eq!(t.row_id_bound(), 4);
        assert_eq!(t.peek_row_id().unwrap(), RowId(0));
        assert_eq!(t.next_version(RowId(0)), 1);
        assert!(!t.is_free(5) && t.is_free(4));
    }
}
