//! Where an inserted row goes: Insert Address Assist (paper 000 Figs. 9–11).
//!
//! The engine keeps the FTL's list of LPAs still valid in the next erase block (the *targets*)
//! and places inserts into free row slots of those pages, so each insert rewrites, and thereby
//! invalidates, one page of the block the FTL erases next. Policy:
//! 1. Fig. 11: a hole just made by Delete (or by the Delete half of U2DI) in a target page gets
//!    priority for the next insert. Only holes in target pages count: taking any fresh hole
//!    would turn U2DI back into an in-place update and defeat it.
//! 2. Otherwise rotate over the targets (LPA0 → LPA1 → LPA2 …, paper 002), one insert per
//!    target, skipping full pages, to spread rows evenly and avoid filling pages up (Fig. 19).
//! 3. A target page written by any query has left the victim block, so it stops being a target
//!    until the list is refreshed from the FTL (every `hint_refresh_queries` queries).
//! 4. No target with a free slot: the caller falls back to appending.

use crate::device::Lpa;
use crate::table::Table;

/// Insert Address Assist state: the target pages and the rotation cursor.
///
/// Bounded by the table: at most one target per table page.
#[derive(Clone, Debug)]
pub(crate) struct InsertAddressAssist {
    targets: Vec<Lpa>,
    is_target: Vec<bool>,
    active_target_count: usize,
    cursor: usize,
    pending_hole: Option<u32>,
}

impl InsertAddressAssist {
    pub(crate) fn new(page_count: u64) -> Self {
        InsertAddressAssist {
            targets: Vec::new(),
            is_target: vec![false; page_count as usize],
            active_target_count: 0,
            cursor: 0,
            pending_hole: None,
        }
    }

    /// Replaces the targets by the FTL's latest list (LPAs outside the table and duplicates
    /// are ignored).
    pub(crate) fn refresh(&mut self, hinted: &[Lpa]) {
        for lpa in self.targets.drain(..) {
            self.is_target[lpa.0 as usize] = false;
        }
        for &lpa in hinted {
            let Some(flag) = usize::try_from(lpa.0)
                .ok()
                .and_then(|i| self.is_target.get_mut(i))
            else {
                continue;
            };
            if !*flag {
                *flag = true;
                self.targets.push(lpa);
            }
        }
        self.active_target_count = self.targets.len();
        self.cursor = 0;
    }

    /// The current target list (as refreshed; some may have been written since).
    pub(crate) fn targets(&self) -> &[Lpa] {
        &self.targets
    }

    /// Whether `lpa` is still believed to sit in the next erase block.
    pub(crate) fn is_target(&self, lpa: Lpa) -> bool {
        self.is_target.get(lpa.0 as usize).copied().unwrap_or(false)
    }

    /// No target left that is still in the victim block.
    pub(crate) fn is_exhausted(&self) -> bool {
        self.active_target_count == 0
    }

    /// Page `lpa` was written: it now lives outside the victim block.
    pub(crate) fn note_written(&mut self, lpa: Lpa) {
        if let Some(flag) = self.is_target.get_mut(lpa.0 as usize)
            && *flag
        {
            *flag = false;
            self.active_target_count -= 1;
        }
    }

    /// A row slot in page `lpa` was freed by Delete or by the Delete half of U2DI.
    pub(crate) fn note_vacated(&mut self, slot: u32, lpa: Lpa) {
        if self.is_target(lpa) {
            self.pending_hole = Some(slot);
        }
    }

    /// A free slot in a target page, or `None` to fall back to appending.
    pub(crate) fn choose_slot(&mut self, table: &Table) -> Option<u32> {
        if let Some(hole) = self.pending_hole.take()
            && table.is_free(hole)
            && self.is_target(table.layout().lpa_of_slot(hole))
        {
            return Some(hole);
        }
        if self.is_exhausted() {
            return None;
        }
        let count = self.targets.len();
        for step in 0..count {
            let index = (self.cursor + step) % count;
            let lpa = self.targets[index];
            if !self.is_target(lpa) {
                continue;
            }
            if let Some(slot) = table.first_free_slot_in_page(lpa) {
                self.cursor = (index + 1) % count;
                return Some(slot);
            }
        }
        None
    }
}
