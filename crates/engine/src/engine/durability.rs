//! The engine's durability point ([`Engine::flush`]) and its reopen from the device after a
//! power loss ([`Engine::open`]); docs/engine.md "Durability".
//!
//! The engine keeps no log: a row lives only in its page, and every row write is one whole
//! page write, which the device keeps or loses as a whole (`BlockDevice`'s power-loss clause).
//! What it adds, with `crash_consistent`:
//! - a Delete writes nothing, so the row's bytes stay in its page; the slot is marked
//!   *stale* and the next flush zeroes it (a delete is durable once a flush returned);
//! - a row U2DI moves to another page leaves its old copy where it was, reserved until the
//!   next flush (*quarantined*): reusing that slot would let the write that overwrites the old
//!   copy survive a cut while the write of the new copy is lost, and the row would vanish;
//! - a flush first makes every row write durable (device Flush), then zeroes the stale slots
//!   (their rows' deletes, or the old copies of moved rows, whose new copies are durable now),
//!   then flushes again, and releases the quarantine.
//!
//! A reopen reads every table page: a slot of zeros is free, any other must be a whole row
//! image (header and bytes of some row at some version; anything else is
//! [`EngineError::Corruption`]); of several copies of one row the highest version wins (versions
//! only grow), the others are stale and quarantined until the next flush.

use super::digest::PageDigest;
use super::{Engine, EngineConfig};
use crate::device::{BlockDevice, CoDesignHints, Lpa};
use crate::durability::EngineMutation;
use crate::error::EngineError;
use crate::layout::{RowLayout, read_row_header, row_payload_matches};
use crate::table::{RowId, Table};

impl<D: BlockDevice + CoDesignHints> Engine<D> {
    /// The durability point: when it returns, every query that completed before the call is
    /// durable (inserted and updated rows with their exact bytes, deleted rows gone); a power
    /// loss later brings back that state or a later one, row by row. Queries after the last
    /// completed flush may each be lost or kept (a row then reads as its value at the flush or
    /// a later value, never anything else). Needs `crash_consistent`.
    ///
    /// Cost: two device Flushes, plus one page write per page holding stale slots.
    pub fn flush(&mut self) -> Result<(), EngineError> {
        if !self.config.crash_consistent {
            return Err(EngineError::config(
                "crash_consistent",
                false,
                "Engine::flush keeps its contract only in the crash-consistent mode; set it to true",
            ));
        }
        if self.mutation != EngineMutation::NoDeviceFlush {
            self.device.flush()?;
        }
        for word_index in 0..self.stale_bytes.len() {
            while self.stale_bytes[word_index] != 0 {
                let bit = self.stale_bytes[word_index].trailing_zeros();
                let slot = (word_index * 64) as u32 + bit;
                let lpa = self.table.layout().lpa_of_slot(slot);
                self.zero_stale_slots_of(lpa)?;
            }
        }
        if self.mutation != EngineMutation::NoDeviceFlush {
            self.device.flush()?;
        }
        for slot in std::mem::take(&mut self.quarantined) {
            self.table.release_slot(slot);
        }
        self.flushes += 1;
        Ok(())
    }

    /// Rewrites page `lpa` with its stale slots zeroed (its live rows and other bytes kept).
    fn zero_stale_slots_of(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        let layout = *self.table.layout();
        // the buffer is about to hold this page's new bytes, not the last written page's
        self.buf_page = None;
        if self.table.page_is_empty(lpa) && self.mutation != EngineMutation::KeepDeletedRows {
            self.page_buf.fill(0);
        } else {
            self.read_page(lpa)?;
            if self.config.verify {
                self.verify_page_in_buffer(lpa)?;
            }
            for slot in self.table.slots_of_page(lpa) {
                if self.is_stale(slot) && self.mutation != EngineMutation::KeepDeletedRows {
                    self.page_buf[layout.byte_range_in_page(slot)].fill(0);
                }
            }
        }
        self.device.write_page(lpa, &self.page_buf)?;
        self.writes_issued += 1;
        if self.config.verify {
            self.page_digests[lpa.0 as usize] = Some(PageDigest::of(&self.page_buf));
        }
        self.clear_stale_page(lpa);
        Ok(())
    }

    /// Reopens a table on `device` (after a power loss, or any time): reads every table page
    /// and rebuilds the engine's state from the rows found (module docs). The IAA targets are
    /// fetched again before the first query; placement restarts from the table's start.
    pub fn open(device: D, config: EngineConfig) -> Result<Self, EngineError> {
        let mut engine = Engine::new(device, config)?;
        let layout = *engine.table.layout();
        // (row, version, slot) of every row image found
        let mut found: Vec<(RowId, u32, u32)> = Vec::new();
        for page in 0..layout.page_count() {
            let lpa = Lpa(page as u32);
            engine.read_page(lpa)?;
            if engine.config.verify && engine.page_buf.iter().any(|&b| b != 0) {
                engine.page_digests[lpa.0 as usize] = Some(PageDigest::of(&engine.page_buf));
            }
            for slot in engine.table.slots_of_page(lpa) {
                let bytes = &engine.page_buf[layout.byte_range_in_page(slot)];
                if bytes.iter().all(|&b| b == 0) {
                    continue;
                }
                let (row, version) = read_row_header(bytes);
                if row.0 >= layout.slot_count() || !row_payload_matches(row, version, bytes) {
                    return Err(EngineError::Corruption {
                        lpa,
                        slot_in_page: layout.slot_in_page(slot),
                        detail: format!(
                            "reopen: holds bytes that are no row image (header claims row {row} version {version})"
                        ),
                    });
                }
                found.push((row, version, slot));
            }
        }
        // per row the highest version (then the lowest slot) first
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut live = Vec::new();
        let mut stale = Vec::new();
        for (i, &entry) in found.iter().enumerate() {
            if i > 0 && found[i - 1].0 == entry.0 {
                stale.push(entry.2);
            } else {
                live.push(entry);
            }
        }
        engine.table = Table::rebuild(layout, &live);
        for slot in stale {
            if engine.config.crash_consistent {
                engine.mark_stale(slot);
                engine.table.reserve_slot(slot);
                engine.quarantined.push(slot);
            }
        }
        Ok(engine)
    }
}

/// Stale-slot and quarantine bookkeeping (no-ops unless `crash_consistent`).
impl<D> Engine<D> {
    /// Breaks the durability contract on purpose (`EngineMutation`; tests of the oracle).
    pub fn set_mutation(&mut self, mutation: EngineMutation) {
        self.mutation = mutation;
    }

    pub(super) fn is_stale(&self, slot: u32) -> bool {
        self.stale_bytes
            .get(slot as usize / 64)
            .is_some_and(|w| w & (1 << (slot % 64)) != 0)
    }

    /// `slot` holds no live row, but its bytes on the device may still be a row.
    pub(super) fn mark_stale(&mut self, slot: u32) {
        if let Some(w) = self.stale_bytes.get_mut(slot as usize / 64) {
            *w |= 1 << (slot % 64);
        }
    }

    /// `slot` was written (a row, or zeros).
    pub(super) fn clear_stale(&mut self, slot: u32) {
        if let Some(w) = self.stale_bytes.get_mut(slot as usize / 64) {
            *w &= !(1 << (slot % 64));
        }
    }

    /// Every slot of page `lpa` was written.
    pub(super) fn clear_stale_page(&mut self, lpa: Lpa) {
        if self.stale_bytes.is_empty() {
            return;
        }
        for slot in self.table.slots_of_page(lpa) {
            self.clear_stale(slot);
        }
    }

    /// After U2DI placed a row in `new_slot`: if it left `old_slot`'s page, the old copy stays
    /// reserved until the next flush.
    pub(super) fn quarantine_if_moved(&mut self, old_slot: u32, new_slot: u32) {
        let layout: &RowLayout = self.table.layout();
        if !self.config.crash_consistent
            || self.mutation == EngineMutation::ReuseMovedSlots
            || layout.lpa_of_slot(old_slot) == layout.lpa_of_slot(new_slot)
            || !self.is_stale(old_slot)
        {
            return;
        }
        self.table.reserve_slot(old_slot);
        self.quarantined.push(old_slot);
    }
}
