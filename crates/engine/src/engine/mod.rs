//! The storage engine: a table of fixed-size rows over a block device, with the conventional
//! (paper 000 Fig. 8) and co-designed (Figs. 9–11) query handling behind two switches.
//!
//! | query  | conventional                       | co-designed                                  |
//! |--------|------------------------------------|----------------------------------------------|
//! | Insert | append after the last row          | IAA: free slot in a page of the next erase block, else the next page in rotation |
//! | Delete | mark the row free, no device I/O   | same; the hole gets priority for the next insert (Fig. 11)    |
//! | Update | rewrite in place (read-modify-write of the page) | U2DI: Delete + Insert (the row moves)          |
//!
//! Without IAA, where an insert goes is [`ConventionalInsert`]: by default the first free slot in
//! address order (paper 000 §3: rows are appended "to avoid data fragmentation in logical address
//! space", and Fig. 8(b)'s insert after "Delete in LPA12" fills that empty row, below the last
//! row in LPA43), or the hole the most recent Delete left, else a circular append (the policy
//! before issue 13). With IAA the fallback is [`CoDesignFallback`]: by default the first free
//! slot of the page after the one the last fallback insert went to (paper 002's LPA rotation; a
//! fill spreads rows over every page, paper 000 §4.1), or the circular append: the next free
//! slot after the last appended row, wrapping to the start of the table. Under either conventional policy U2DI alone puts an updated row back into
//! the slot it just left (or a lower hole) — an in-place-like rewrite — which is why it gives
//! no gain without IAA (Fig. 14).
//!
//! Each row write is a read-modify-write of its page: the engine reads the page (skipped when
//! the page holds no live row), puts the row in, and writes the whole page (paper 000 Fig. 5;
//! the merge happens in the engine because the device interface is page-granular).

mod digest;
mod durability;
#[cfg(test)]
mod durability_tests;
mod page_io;
mod placement;
#[cfg(test)]
mod tests;

use crate::device::{BlockDevice, CoDesignHints, Lpa};
use crate::error::EngineError;
use crate::layout::RowLayout;
use crate::metrics::{EngineMetrics, QueryKind};
use crate::table::{RowId, Table};
use digest::PageDigest;
use nandlab_core::SimTime;
use placement::InsertAddressAssist;
use serde::{Deserialize, Serialize};

/// Engine configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Row size in bytes (paper 000 §4.1: 119 B); between 16 B and the page size.
    pub row_size_bytes: usize,
    /// Insert Address Assist (IAA).
    pub insert_address_assist: bool,
    /// Update-to-Delete+Insert (U2DI).
    pub update_to_delete_insert: bool,
    /// Refresh the next-erase-block LPA list every this many queries (paper 000: 16).
    pub hint_refresh_queries: u32,
    /// Also refresh as soon as every listed LPA has been rewritten (not in the paper).
    pub refresh_hints_when_exhausted: bool,
    /// Check on every page read that each live row in it equals the last value written.
    pub verify: bool,
    /// Logical pages the table spans, from LPA 0 (default: the whole device).
    pub table_page_count: Option<u64>,
    /// Where an insert goes without IAA (default: first fit).
    pub conventional_insert: ConventionalInsert,
    /// Keep the durability contract of [`Engine::flush`] across power loss (docs/engine.md
    /// "Durability"): deletes are made durable by the next flush, and a slot a moved row (U2DI)
    /// left is not reused before it. Off by default (the paper's engine has no durability
    /// point; results without flushes are unchanged either way, except U2DI placement).
    pub crash_consistent: bool,
    /// Where an insert goes with IAA when no target page has a free slot (default: the next
    /// page in rotation, paper 002).
    pub codesign_fallback: CoDesignFallback,
}

/// The co-designed engine's insert placement when IAA has no target with a free slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoDesignFallback {
    /// A free slot in the page after the one the last fallback insert went to (wrapping): the
    /// target LPA changes on every insert, "LPA0 → LPA1 → LPA2 … to evenly distribute data
    /// over all the available pages" (paper 002). A fill spreads the rows over every page, so
    /// at 20 % free every page is valid and 80 % full (paper 000 §4.1).
    #[default]
    RotatePages,
    /// The next free slot after the last appended row (wrapping): rows packed page by page
    /// (nandlab before issue 30).
    Append,
}

/// The conventional engine's insert placement (without IAA).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConventionalInsert {
    /// The lowest free slot of the table: rows stay packed at the front of the logical space
    /// (paper 000 §3 and Fig. 8(b); docs/engine.md).
    #[default]
    FirstFit,
    /// The hole the most recent Delete left, else a circular append (nandlab before issue 13;
    /// the append cursor sweeps the whole logical space over time).
    RecentHole,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig::conventional()
    }
}

impl EngineConfig {
    /// The conventional engine of paper 000 Fig. 8.
    pub fn conventional() -> Self {
        EngineConfig {
            row_size_bytes: 119,
            insert_address_assist: false,
            update_to_delete_insert: false,
            hint_refresh_queries: 16,
            refresh_hints_when_exhausted: false,
            verify: true,
            table_page_count: None,
            conventional_insert: ConventionalInsert::FirstFit,
            crash_consistent: false,
            codesign_fallback: CoDesignFallback::RotatePages,
        }
    }

    /// The co-designed engine of paper 000 Fig. 9 (IAA and U2DI both on).
    pub fn co_designed() -> Self {
        EngineConfig {
            insert_address_assist: true,
            update_to_delete_insert: true,
            ..EngineConfig::conventional()
        }
    }

    /// A variant with the two co-design switches set (for the Fig. 14 ablation).
    pub fn with_switches(self, iaa: bool, u2di: bool) -> Self {
        EngineConfig {
            insert_address_assist: iaa,
            update_to_delete_insert: u2di,
            ..self
        }
    }
}

/// One query of paper 000's workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Query {
    /// Add a new row; the engine picks its id and place.
    Insert,
    /// Remove a live row.
    Delete(RowId),
    /// Change a live row (its version goes up by one).
    Update(RowId),
}

impl Query {
    /// The query's type.
    pub fn kind(&self) -> QueryKind {
        match self {
            Query::Insert => QueryKind::Insert,
            Query::Delete(_) => QueryKind::Delete,
            Query::Update(_) => QueryKind::Update,
        }
    }
}

/// A row store on a block device.
#[derive(Debug)]
pub struct Engine<D> {
    config: EngineConfig,
    device: D,
    table: Table,
    iaa: InsertAddressAssist,
    /// Slot after the last appended row (circular append position).
    append_cursor: u64,
    /// Without IAA: the hole the most recent Delete left, taken by the next insert
    /// (`ConventionalInsert::RecentHole`).
    recent_hole: Option<u32>,
    /// Without IAA: no slot below this one is free (`ConventionalInsert::FirstFit`).
    first_free_floor: u32,
    queries_until_refresh: u32,
    page_buf: Vec<u8>,
    /// The page whose last write by this engine succeeded with exactly the bytes now in
    /// `page_buf` (`None`: the buffer holds anything else).
    buf_page: Option<Lpa>,
    /// With `verify`: per table page, the digest of the bytes last written there (`None`:
    /// never written by this engine, or its last write failed); see [`digest`].
    page_digests: Vec<Option<PageDigest>>,
    hint_buf: Vec<Lpa>,
    metrics: EngineMetrics,
    reads_issued: u64,
    writes_issued: u64,
    /// With `crash_consistent`: per slot, one bit set while the slot holds no live row but its
    /// bytes on the device may still be a row (a delete, a row moved away, a stale copy found
    /// by a reopen); the next flush zeroes them. Empty otherwise.
    stale_bytes: Vec<u64>,
    /// With `crash_consistent`: slots reserved until the next flush (a moved row's old copy,
    /// kept on the device until its new copy is durable).
    quarantined: Vec<u32>,
    /// Flushes completed.
    flushes: u64,
    /// A deliberately broken durability mode (tests of the crash oracle).
    mutation: crate::durability::EngineMutation,
}

struct QueryStart {
    time: SimTime,
    reads: u64,
    writes: u64,
}

impl<D: BlockDevice + CoDesignHints> Engine<D> {
    /// An empty table over `device`.
    pub fn new(device: D, config: EngineConfig) -> Result<Self, EngineError> {
        if config.hint_refresh_queries == 0 {
            return Err(EngineError::config(
                "hint_refresh_queries",
                0,
                "must be at least 1",
            ));
        }
        let device_pages = device.logical_page_count();
        let page_count = config.table_page_count.unwrap_or(device_pages);
        if page_count > device_pages {
            return Err(EngineError::config(
                "table_page_count",
                page_count,
                format!("the device has only {device_pages} logical pages"),
            ));
        }
        let layout = RowLayout::new(config.row_size_bytes, device.page_size_bytes(), page_count)?;
        Ok(Engine {
            table: Table::new(layout),
            iaa: InsertAddressAssist::new(page_count),
            append_cursor: 0,
            recent_hole: None,
            first_free_floor: 0,
            queries_until_refresh: 0,
            page_buf: vec![0; layout.page_size_bytes()],
            buf_page: None,
            page_digests: if config.verify {
                vec![None; page_count as usize]
            } else {
                Vec::new()
            },
            hint_buf: Vec::new(),
            metrics: EngineMetrics::default(),
            reads_issued: 0,
            writes_issued: 0,
            stale_bytes: if config.crash_consistent {
                vec![0; (layout.slot_count() as usize).div_ceil(64)]
            } else {
                Vec::new()
            },
            quarantined: Vec::new(),
            flushes: 0,
            mutation: crate::durability::EngineMutation::None,
            config,
            device,
        })
    }

    /// Runs one query; returns the row inserted, deleted or updated.
    pub fn execute(&mut self, query: Query) -> Result<RowId, EngineError> {
        match query {
            Query::Insert => self.insert(),
            Query::Delete(row) => self.delete(row).map(|()| row),
            Query::Update(row) => self.update(row).map(|()| row),
        }
    }

    /// Inserts a new row and returns its id.
    pub fn insert(&mut self) -> Result<RowId, EngineError> {
        let start = self.begin_query();
        let result = self.insert_row();
        self.end_query(QueryKind::Insert, start, &result);
        result
    }

    /// Deletes a live row (engine bookkeeping only, no device I/O).
    pub fn delete(&mut self, row: RowId) -> Result<(), EngineError> {
        let start = self.begin_query();
        let result = match self.table.delete_row(row) {
            Some(slot) => {
                self.mark_stale(slot);
                self.note_vacated(slot);
                Ok(())
            }
            None => Err(EngineError::RowNotFound { row }),
        };
        self.end_query(QueryKind::Delete, start, &result);
        result
    }

    /// Updates a live row: in place, or as Delete + Insert with U2DI.
    pub fn update(&mut self, row: RowId) -> Result<(), EngineError> {
        let start = self.begin_query();
        let result = self.update_row(row);
        self.end_query(QueryKind::Update, start, &result);
        result
    }

    /// Reads a live row from the device, checks it against the last value written and returns
    /// its version. Not a query of the paper's workload; not counted in the query metrics.
    pub fn read_row(&mut self, row: RowId) -> Result<u32, EngineError> {
        let slot = self
            .table
            .slot_of(row)
            .ok_or(EngineError::RowNotFound { row })?;
        let lpa = self.table.layout().lpa_of_slot(slot);
        self.read_page(lpa)?;
        self.check_row_in_buffer(slot)?;
        if self.config.verify {
            self.verify_page_in_buffer(lpa)?;
        }
        Ok(self.table.version_of(row).unwrap_or_default())
    }

    /// Reads every page holding live rows and checks each row (row by row, whatever the page
    /// digests say); returns the rows checked.
    pub fn verify_all(&mut self) -> Result<u64, EngineError> {
        let mut rows_checked = 0;
        for page in 0..self.table.layout().page_count() {
            // the layout addresses rows by `u32` slots, so its pages fit a `u32`
            let lpa = Lpa(page as u32);
            if self.table.page_is_empty(lpa) {
                continue;
            }
            self.read_page(lpa)?;
            rows_checked += self.check_page_in_buffer(lpa)?;
        }
        Ok(rows_checked)
    }

    fn begin_query(&mut self) -> QueryStart {
        if self.config.insert_address_assist {
            let due = self.queries_until_refresh == 0
                || (self.config.refresh_hints_when_exhausted && self.iaa.is_exhausted());
            if due {
                self.device.next_erase_block_valid_lpas(&mut self.hint_buf);
                self.iaa.refresh(&self.hint_buf);
                self.metrics.hint_refreshes += 1;
                self.queries_until_refresh = self.config.hint_refresh_queries;
            }
            self.queries_until_refresh -= 1;
        }
        QueryStart {
            time: self.device.now(),
            reads: self.reads_issued,
            writes: self.writes_issued,
        }
    }

    /// Records a query in the metrics; failed queries are not counted.
    fn end_query<T>(
        &mut self,
        kind: QueryKind,
        start: QueryStart,
        result: &Result<T, EngineError>,
    ) {
        if result.is_err() {
            return;
        }
        let time = self.device.now().saturating_sub(start.time);
        let reads = self.reads_issued - start.reads;
        let writes = self.writes_issued - start.writes;
        self.metrics.of_mut(kind).record(time, reads, writes);
    }

    fn insert_row(&mut self) -> Result<RowId, EngineError> {
        let row = self.table.peek_row_id()?;
        let slot = self.choose_insert_slot()?;
        let version = self.table.next_version(row);
        self.write_row(row, version, slot)?;
        self.table.insert_row(row, slot, version);
        Ok(row)
    }

    fn update_row(&mut self, row: RowId) -> Result<(), EngineError> {
        let old_slot = self
            .table
            .slot_of(row)
            .ok_or(EngineError::RowNotFound { row })?;
        let version = self.table.next_version(row);
        if !self.config.update_to_delete_insert {
            self.write_row(row, version, old_slot)?;
            self.table.move_row(row, old_slot, version);
            return Ok(());
        }
        // U2DI: the Delete half frees the old slot (no I/O), the Insert half places the row.
        let old_version = self.table.version_of(row).unwrap_or_default();
        self.table.detach_row(row);
        self.mark_stale(old_slot);
        self.note_vacated(old_slot);
        let placed = self
            .choose_insert_slot()
            .and_then(|slot| self.write_row(row, version, slot).map(|()| slot));
        match placed {
            Ok(slot) => {
                self.table.move_row(row, slot, version);
                self.quarantine_if_moved(old_slot, slot);
                Ok(())
            }
            Err(error) => {
                self.table.move_row(row, old_slot, old_version);
                self.clear_stale(old_slot);
                Err(error)
            }
        }
    }

    fn note_vacated(&mut self, slot: u32) {
        if self.config.insert_address_assist {
            let lpa = self.table.layout().lpa_of_slot(slot);
            self.iaa.note_vacated(slot, lpa);
        } else {
            self.recent_hole = Some(slot);
            self.first_free_floor = self.first_free_floor.min(slot);
        }
    }

    /// IAA's choice if enabled and possible (else the fallback: the next page in rotation, or
    /// the circular append position); without IAA
    /// the conventional policy's slot.
    fn choose_insert_slot(&mut self) -> Result<u32, EngineError> {
        let full = || EngineError::TableFull {
            slot_count: self.table.layout().slot_count(),
        };
        if self.config.insert_address_assist {
            if let Some(slot) = self.iaa.choose_slot(&self.table) {
                self.metrics.iaa_placements += 1;
                return Ok(slot);
            }
        } else if self.config.conventional_insert == ConventionalInsert::FirstFit {
            // every slot below the floor is taken, so the first free slot from it is the
            // table's first free slot
            let slot = self
                .table
                .next_free_slot_from(u64::from(self.first_free_floor))
                .ok_or_else(full)?;
            debug_assert!(slot >= self.first_free_floor, "first fit wrapped");
            self.first_free_floor = slot + 1;
            self.metrics.append_placements += 1;
            return Ok(slot);
        }
        if let Some(hole) = self.recent_hole.take()
            && self.table.is_free(hole)
        {
            self.metrics.append_placements += 1;
            return Ok(hole);
        }
        let slot = self
            .table
            .next_free_slot_from(self.append_cursor)
            .ok_or_else(full)?;
        self.append_cursor = if self.config.insert_address_assist
            && self.config.codesign_fallback == CoDesignFallback::RotatePages
        {
            // the next fallback insert starts at the next page
            let layout = self.table.layout();
            let next_page = (u64::from(layout.lpa_of_slot(slot).0) + 1) % layout.page_count();
            u64::from(layout.first_slot_of(Lpa(next_page as u32)))
        } else {
            u64::from(slot) + 1
        };
        self.metrics.append_placements += 1;
        Ok(slot)
    }
}

/// Read-only views.
impl<D> Engine<D> {
    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
    /// The row layout (row size, rows per page, slot count).
    pub fn layout(&self) -> &RowLayout {
        self.table.layout()
    }
    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }
    /// The device, mutable (for its own controls, e.g. a crash test's armed power cut; the
    /// engine assumes its pages change only through its own writes).
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }
    /// Gives the device back.
    pub fn into_device(self) -> D {
        self.device
    }
    /// Query metrics since the engine was created.
    pub fn metrics(&self) -> &EngineMetrics {
        &self.metrics
    }
    /// Live rows.
    pub fn live_row_count(&self) -> u64 {
        self.table.live_rows()
    }
    /// Row slots in the table.
    pub fn slot_count(&self) -> u64 {
        self.table.layout().slot_count()
    }
    /// SSD free space as paper 000 §4.1 uses it: the fraction of row slots not holding a live
    /// row (see `docs/engine.md`).
    pub fn free_space_fraction(&self) -> f64 {
        1.0 - self.live_row_count() as f64 / self.slot_count() as f64
    }
    /// Every row id handed out so far is below this bound (live or not).
    pub fn row_id_bound(&self) -> u64 {
        self.table.row_id_bound()
    }
    /// Whether `row` is live.
    pub fn is_live(&self, row: RowId) -> bool {
        self.table.slot_of(row).is_some()
    }
    /// Version of a live row (1 on first insert, +1 per update; never reused for an id).
    pub fn row_version(&self, row: RowId) -> Option<u32> {
        self.table.version_of(row)
    }
    /// Logical page currently holding a live row.
    pub fn row_lpa(&self, row: RowId) -> Option<Lpa> {
        let slot = self.table.slot_of(row)?;
        Some(self.table.layout().lpa_of_slot(slot))
    }
    /// Logical byte address of a live row (paper 000 Fig. 4).
    pub fn row_logical_address_bytes(&self, row: RowId) -> Option<u64> {
        let slot = self.table.slot_of(row)?;
        Some(self.table.layout().logical_address_bytes(slot))
    }
    /// The id the next insert will get (`None`: the table is full).
    pub fn next_row_id(&self) -> Option<RowId> {
        self.table.peek_row_id().ok()
    }
    /// The version `row` gets on its next insert or update.
    pub fn next_version(&self, row: RowId) -> u32 {
        self.table.next_version(row)
    }
    /// Flushes completed ([`Engine::flush`]).
    pub fn flushes(&self) -> u64 {
        self.flushes
    }
    /// Slots reserved until the next flush (crash-consistent mode).
    pub fn quarantined_slots(&self) -> usize {
        self.quarantined.len()
    }
    /// The IAA target list as last refreshed from the device.
    pub fn iaa_target_lpas(&self) -> &[Lpa] {
        self.iaa.targets()
    }
}
