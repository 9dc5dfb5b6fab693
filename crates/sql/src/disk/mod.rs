//! [`SimDisk`]: files on the simulated SSD, below SQL.
//!
//! Every file is a list of extents of the SSD's logical pages ([`crate::extent`]) and a size
//! in bytes. Reads and writes become host requests on the controller ([`Ssd::execute`]), one
//! per contiguous logical range, so they take simulated time and go through the write buffer,
//! the mapping and GC like any host I/O. A sync is a Flush. Truncation and deletion TRIM the
//! whole pages the file gives back, and those pages return to the allocator.
//!
//! The file table (names, extents, sizes) is kept in host memory and written to the device
//! ([`table`]: two slots at the start of the logical space) whenever it changed and a file is
//! synced, before the Flush; in a batch atomic write it is written inside the device
//! transaction. [`SimDisk::mount`] reads it back after a power cut. Pages a file gives back
//! (truncation, deletion) are trimmed and reused only after a table without them is durable
//! (the next sync), so a table that survives a cut never names pages another file has since
//! written. Temporary files (no name from SQLite) are not in the table.
//!
//! Invariant: every allocated page wholly past a file's last byte reads as zeros (fresh or
//! trimmed); the bytes after the end inside the last page may be stale and are zeroed by a
//! write when the file grows over them. On a device that already holds data when the disk is
//! made (a preconditioned SSD), every extent is trimmed as it is allocated, so the invariant
//! holds there too (and the preconditioned pages outside the files stay valid for GC to move).

mod lock;
pub mod table;
#[cfg(test)]
pub(crate) mod tests;

pub use lock::{FileLocks, LockLevel};

use crate::error::{SqlError, SqlResult};
use crate::extent::{Extent, ExtentAllocator, grow_pages};
use nandlab_core::{Lpa, SimTime};
use nandlab_ftl::{CutOutcome, Executed, HostOp, HostRequest, RequestHook, Ssd, hook_as};
use nandlab_nand::OpKind;
use serde::Serialize;
use std::collections::BTreeMap;
use table::{FileTable, TABLE_SLOT_BYTES, TableFile};

/// Dense id of an open file (an index into the disk's file slots).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId(u32);

/// Host-side I/O counters of the disk (requests it sent the controller).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoCounters {
    pub read_requests: u64,
    pub write_requests: u64,
    /// Logical pages touched by reads / writes (a partial page counts as one).
    pub pages_read: u64,
    pub pages_written: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Flush requests (xSync).
    pub syncs: u64,
    /// Logical pages trimmed (truncate, delete).
    pub pages_trimmed: u64,
    /// Files created (a rollback journal per transaction in DELETE mode; none in the atomic
    /// mode once the database exists).
    pub files_created: u64,
    /// Batch atomic writes committed / rolled back (the transactional FTL, docs/sql.md).
    pub atomic_commits: u64,
    pub atomic_rollbacks: u64,
    /// File table writes (each one request of whole pages, counted in the writes above).
    pub table_writes: u64,
}

/// Cumulative device state at one moment: simulated time, host I/O, flash work, energy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DeviceSnapshot {
    pub now_ps: u64,
    pub io: IoCounters,
    pub nand_pages_read: u64,
    /// Pages programmed: host programs plus copybacks (GC moves inside a plane).
    pub nand_pages_programmed: u64,
    pub nand_blocks_erased: u64,
    /// Chip energy of every op plus idle, plus a PCM stage's device and hashing energy, in
    /// picojoules.
    pub energy_pj: f64,
    /// The PCM stage's share of `energy_pj` (reads, writes, SHA-1), picojoules (0 without one).
    pub pcm_energy_pj: f64,
}

#[derive(Debug)]
struct FileEntry {
    name: String,
    extents: Vec<Extent>,
    size_bytes: u64,
    open_handles: u32,
    /// Deleted while open: freed at the last close.
    unlinked: bool,
    /// In the on-device file table (every file SQLite names; not temporary files).
    persistent: bool,
    locks: FileLocks,
}

impl FileEntry {
    fn pages_allocated(&self) -> u64 {
        self.extents.iter().map(|e| e.pages).sum()
    }
}

/// Files on a simulated SSD (full payload mode).
#[derive(Debug)]
pub struct SimDisk {
    ssd: Ssd,
    page_size_bytes: u64,
    allocator: ExtentAllocator,
    slots: Vec<Option<FileEntry>>,
    names: BTreeMap<String, FileId>,
    io: IoCounters,
    random_state: u64,
    temp_files: u64,
    /// The last error the VFS turned into a SQLite code (reported with SQLite's message).
    last_error: Option<String>,
    /// Trim extents as they are allocated (the device held data when the disk was made).
    trim_on_allocate: bool,
    /// Pages of one file-table slot.
    table_slot_pages: u64,
    /// Generation of the last table written (or mounted).
    table_generation: u64,
    /// The table changed since it was last written.
    table_dirty: bool,
    /// Extents given back by persistent files, freed once a table without them is durable.
    freed_pending: Vec<Extent>,
    /// Names handed out for temporary files.
    temp_names: std::collections::BTreeSet<String>,
    /// A hook on the requests (a crash test's armed power cut), none on the product path.
    hook: Option<Box<dyn RequestHook>>,
}

impl SimDisk {
    /// A disk on `ssd`, which must keep page bytes (`ssd.payload = "full"`); `seed` seeds the
    /// randomness SQLite asks the VFS for.
    ///
    /// Without a power trace on `ssd` (no crash test will scan its flash), the SSD releases
    /// the bytes of every page the mapping invalidates (`Ssd::set_release_stale_payloads`):
    /// memory follows the disk's live pages, not every page programmed. With the trace on
    /// they are kept until their block's erase, for the recovery scan.
    pub fn new(mut ssd: Ssd, seed: u64) -> SqlResult<SimDisk> {
        if !ssd.keeps_payloads() {
            return Err(SqlError::Usage(
                "ssd.payload: SQLite needs the page bytes; set [ssd] payload = \"full\"".into(),
            ));
        }
        if !ssd.power_trace_on() {
            ssd.set_release_stale_payloads(true)?;
        }
        let page_size_bytes = u64::from(ssd.page_size_bytes());
        let mut allocator = ExtentAllocator::new(ssd.logical_pages());
        let table_slot_pages = TABLE_SLOT_BYTES.div_ceil(page_size_bytes);
        allocator
            .take_exact(Extent {
                start_page: 0,
                pages: 2 * table_slot_pages,
            })
            .map_err(|_| {
                SqlError::Usage(format!(
                    "device: {} logical pages leave no room after the file table's {} pages",
                    ssd.logical_pages(),
                    2 * table_slot_pages
                ))
            })?;
        let logical_pages = u32::try_from(ssd.logical_pages()).unwrap_or(u32::MAX);
        let trim_on_allocate = (0..logical_pages).any(|l| ssd.locate(Lpa(l)).is_some());
        Ok(SimDisk {
            ssd,
            page_size_bytes,
            allocator,
            slots: Vec::new(),
            names: BTreeMap::new(),
            io: IoCounters::default(),
            random_state: seed ^ 0x9E37_79B9_7F4A_7C15,
            temp_files: 0,
            last_error: None,
            trim_on_allocate,
            table_slot_pages,
            table_generation: 0,
            table_dirty: false,
            freed_pending: Vec::new(),
            temp_names: std::collections::BTreeSet::new(),
            hook: None,
        })
    }

    /// Mounts the disk on `ssd` (a device the files were written to, e.g. recovered after a
    /// power cut): reads both file-table slots (timed reads) and takes the intact one of the
    /// highest generation; no table gives an empty disk.
    pub fn mount(ssd: Ssd, seed: u64) -> SqlResult<SimDisk> {
        let mut disk = SimDisk::new(ssd, seed)?;
        let slot_bytes = disk.table_slot_pages * disk.page_size_bytes;
        let mut best: Option<FileTable> = None;
        for slot in 0..2 {
            let request = HostRequest::new(HostOp::Read, slot * slot_bytes, slot_bytes);
            let bytes = disk.exec(&request, None)?.data;
            disk.io.read_requests += 1;
            disk.io.pages_read += disk.table_slot_pages;
            disk.io.bytes_read += slot_bytes;
            if let Some(t) = FileTable::decode(&bytes)
                && best.as_ref().is_none_or(|b| t.generation > b.generation)
            {
                best = Some(t);
            }
        }
        let Some(table) = best else {
            return Ok(disk);
        };
        disk.table_generation = table.generation;
        for f in table.files {
            for e in &f.extents {
                disk.allocator.take_exact(*e).map_err(|m| {
                    SqlError::Usage(format!("file table: file `{}`: extent {m}", f.name))
                })?;
            }
            let id = disk.open(&f.name, true)?;
            disk.close(id)?;
            let entry = disk.entry_mut(id)?;
            entry.extents = f.extents;
            entry.size_bytes = f.size_bytes;
        }
        disk.table_dirty = false;
        Ok(disk)
    }

    /// Runs one request on the controller, or through the request hook when one is installed
    /// ([`SimDisk::set_request_hook`]); a request the hook refuses (the power is off) fails
    /// with [`SqlError::PowerLost`].
    fn exec(&mut self, request: &HostRequest, data: Option<&[u8]>) -> SqlResult<Executed> {
        let Some(hook) = self.hook.as_mut() else {
            return Ok(self.ssd.execute(request, data)?);
        };
        // `step_after`: one more event after each request before the armed one; under the
        // trace `execute` already folds each completion into the power trace, but this step
        // stays, since the crash cases' cut points and timing were measured with it
        match hook.execute(&mut self.ssd, request, data, true)? {
            CutOutcome::Executed(executed) => Ok(executed),
            CutOutcome::PowerLost => Err(SqlError::PowerLost),
        }
    }

    /// Installs `hook` on the disk's requests (a crash harness's armed power cut); every
    /// request goes through it from now on.
    pub fn set_request_hook(&mut self, hook: Box<dyn RequestHook>) {
        self.hook = Some(hook);
    }

    /// The installed request hook as a `T`, with the SSD under it (for the harness that
    /// installed it); `None` without one, or when it is not a `T`.
    pub fn request_hook<T: RequestHook>(&mut self) -> Option<(&mut T, &mut Ssd)> {
        let hook = hook_as::<T>(self.hook.as_deref_mut()?)?;
        Some((hook, &mut self.ssd))
    }

    /// The SSD (to rebuild a device after a cut).
    pub fn into_ssd(self) -> Ssd {
        self.ssd
    }

    /// Writes the file table to the slot after the last one (a request of whole pages; made
    /// durable by the Flush that follows).
    fn write_table(&mut self) -> SqlResult<()> {
        let files = self
            .names
            .values()
            .filter_map(|id| self.entry(*id).ok())
            .filter(|e| e.persistent)
            .map(|e| TableFile {
                name: e.name.clone(),
                size_bytes: e.size_bytes,
                extents: e.extents.clone(),
            })
            .collect();
        let table = FileTable {
            generation: self.table_generation + 1,
            files,
        };
        let page = self.page_size_bytes;
        let mut bytes = table.encode(self.table_slot_pages * page)?;
        bytes.resize(bytes.len().div_ceil(page as usize) * page as usize, 0);
        let offset = (table.generation % 2) * self.table_slot_pages * page;
        let request = HostRequest::new(HostOp::Write, offset, bytes.len() as u64);
        self.exec(&request, Some(&bytes))?;
        self.io.write_requests += 1;
        self.io.pages_written += bytes.len() as u64 / page;
        self.io.bytes_written += bytes.len() as u64;
        self.io.table_writes += 1;
        self.table_generation = table.generation;
        self.table_dirty = false;
        Ok(())
    }

    /// Marks the table changed if `id` is in it.
    fn touch(&mut self, id: FileId) {
        if self.entry(id).is_ok_and(|e| e.persistent) {
            self.table_dirty = true;
        }
    }

    /// Gives `extent` of file `id` back: at once for a temporary file, after the next durable
    /// table for a persistent one.
    fn give_back(&mut self, persistent: bool, extent: Extent) -> SqlResult<()> {
        if persistent {
            self.freed_pending.push(extent);
            self.table_dirty = true;
            return Ok(());
        }
        self.trim_extent(extent)?;
        self.allocator.free(extent);
        Ok(())
    }

    pub fn ssd(&self) -> &Ssd {
        &self.ssd
    }

    pub fn page_size_bytes(&self) -> u64 {
        self.page_size_bytes
    }

    pub fn io(&self) -> IoCounters {
        self.io
    }

    pub fn pages_free(&self) -> u64 {
        self.allocator.pages_free()
    }

    /// Simulated time now.
    pub fn now(&self) -> SimTime {
        self.ssd.now()
    }

    /// The device's cumulative counters now.
    pub fn snapshot(&self) -> DeviceSnapshot {
        let stats = self.ssd.nand().stats();
        let units = |k: OpKind| stats.kind(k).units;
        let pcm_energy_pj = self
            .ssd
            .front_end::<nandlab_ftl::PcmStage>()
            .map_or(0.0, nandlab_ftl::PcmStage::energy_pj);
        let energy_pj = OpKind::ALL
            .iter()
            .map(|k| stats.energy_uj(*k) * 1e6)
            .sum::<f64>()
            + self.ssd.nand().idle_energy_pj()
            + pcm_energy_pj;
        DeviceSnapshot {
            now_ps: self.ssd.now().as_ps(),
            io: self.io,
            nand_pages_read: units(OpKind::Read),
            nand_pages_programmed: units(OpKind::Program) + units(OpKind::Copyback),
            nand_blocks_erased: units(OpKind::Erase),
            energy_pj,
            pcm_energy_pj,
        }
    }

    /// Keeps `error` as the last error and returns `code` (the VFS's SQLite result code).
    pub fn note(&mut self, error: SqlError, code: i32) -> i32 {
        self.last_error = Some(error.to_string());
        code
    }

    /// The last error noted, cleared.
    pub fn take_last_error(&mut self) -> Option<String> {
        self.last_error.take()
    }

    /// Names of the files, sorted.
    pub fn file_names(&self) -> Vec<String> {
        self.names.keys().cloned().collect()
    }

    /// `(name, size in bytes)` of every file, sorted by name.
    pub fn file_sizes(&self) -> Vec<(String, u64)> {
        self.names
            .iter()
            .filter_map(|(n, id)| Some((n.clone(), self.entry(*id).ok()?.size_bytes)))
            .collect()
    }

    pub fn exists(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// A fresh name for a temporary file.
    pub fn temp_name(&mut self) -> String {
        self.temp_files += 1;
        let name = format!("temp-{}", self.temp_files);
        self.temp_names.insert(name.clone());
        name
    }

    /// Opens `name` (creating it, empty, when `create`).
    pub fn open(&mut self, name: &str, create: bool) -> SqlResult<FileId> {
        if let Some(&id) = self.names.get(name) {
            self.entry_mut(id)?.open_handles += 1;
            return Ok(id);
        }
        if !create {
            return Err(SqlError::NotFound { name: name.into() });
        }
        if name.is_empty() {
            return Err(SqlError::Usage("file name: empty".into()));
        }
        let persistent = !self.temp_names.contains(name);
        let entry = FileEntry {
            name: name.to_string(),
            extents: Vec::new(),
            size_bytes: 0,
            open_handles: 1,
            unlinked: false,
            persistent,
            locks: FileLocks::default(),
        };
        self.table_dirty |= persistent;
        self.io.files_created += 1;
        let slot = self.slots.iter().position(Option::is_none);
        let index = match slot {
            Some(i) => {
                self.slots[i] = Some(entry);
                i
            }
            None => {
                self.slots.push(Some(entry));
                self.slots.len() - 1
            }
        };
        let id =
            FileId(u32::try_from(index).map_err(|_| SqlError::Usage("too many files".into()))?);
        self.names.insert(name.to_string(), id);
        Ok(id)
    }

    /// Closes one handle of `id`; a file deleted while open is released at its last close.
    pub fn close(&mut self, id: FileId) -> SqlResult<()> {
        let entry = self.entry_mut(id)?;
        entry.open_handles = entry.open_handles.saturating_sub(1);
        if entry.open_handles == 0 && entry.unlinked {
            self.release(id)?;
        }
        Ok(())
    }

    /// Deletes `name`: its pages are trimmed and freed (at the last close if it is open).
    pub fn delete(&mut self, name: &str) -> SqlResult<()> {
        let id = self
            .names
            .remove(name)
            .ok_or_else(|| SqlError::NotFound { name: name.into() })?;
        self.touch(id);
        self.temp_names.remove(name);
        let entry = self.entry_mut(id)?;
        if entry.open_handles > 0 {
            entry.unlinked = true;
            return Ok(());
        }
        self.release(id)
    }

    fn release(&mut self, id: FileId) -> SqlResult<()> {
        let persistent = self.entry(id)?.persistent;
        let extents = std::mem::take(&mut self.entry_mut(id)?.extents);
        for extent in extents {
            self.give_back(persistent, extent)?;
        }
        self.slots[id.0 as usize] = None;
        Ok(())
    }

    pub fn size_bytes(&self, id: FileId) -> SqlResult<u64> {
        Ok(self.entry(id)?.size_bytes)
    }

    pub fn name(&self, id: FileId) -> SqlResult<&str> {
        Ok(&self.entry(id)?.name)
    }

    /// Reads `buf.len()` bytes at `offset_bytes`; bytes past the end of the file are zeros.
    /// Returns how many bytes came from the file.
    pub fn read(&mut self, id: FileId, offset_bytes: u64, buf: &mut [u8]) -> SqlResult<usize> {
        let size = self.entry(id)?.size_bytes;
        let end = offset_bytes.saturating_add(buf.len() as u64).min(size);
        let in_file = end.saturating_sub(offset_bytes) as usize;
        buf[in_file..].fill(0);
        if in_file == 0 {
            return Ok(0);
        }
        let mut done = 0usize;
        for (logical, len) in self.segments(id, offset_bytes, in_file as u64)? {
            let request = HostRequest::new(HostOp::Read, logical, len);
            let executed = self.exec(&request, None)?;
            let len = len as usize;
            assert_eq!(
                executed.data.len(),
                len,
                "the controller returns the bytes asked for"
            );
            buf[done..done + len].copy_from_slice(&executed.data);
            done += len;
            self.io.read_requests += 1;
            self.io.pages_read += self.pages_touched(logical, len as u64);
            self.io.bytes_read += len as u64;
        }
        assert_eq!(done, in_file);
        Ok(in_file)
    }

    /// Writes `data` at `offset_bytes`, growing the file (a gap reads as zeros).
    pub fn write(&mut self, id: FileId, offset_bytes: u64, data: &[u8]) -> SqlResult<()> {
        if data.is_empty() {
            return Ok(());
        }
        let end = offset_bytes
            .checked_add(data.len() as u64)
            .ok_or_else(|| SqlError::Usage(format!("write offset {offset_bytes}: too large")))?;
        self.reserve(id, end)?;
        let size = self.entry(id)?.size_bytes;
        if offset_bytes > size {
            self.zero_tail(id, size, offset_bytes)?;
        }
        let mut done = 0usize;
        for (logical, len) in self.segments(id, offset_bytes, data.len() as u64)? {
            let len = len as usize;
            let request = HostRequest::new(HostOp::Write, logical, len as u64);
            self.exec(&request, Some(&data[done..done + len]))?;
            done += len;
            self.io.write_requests += 1;
            self.io.pages_written += self.pages_touched(logical, len as u64);
            self.io.bytes_written += len as u64;
        }
        let entry = self.entry_mut(id)?;
        if end > entry.size_bytes {
            entry.size_bytes = end;
            self.touch(id);
        }
        Ok(())
    }

    /// Sets the size of `id`: shrinking trims and frees the whole pages past the new end;
    /// growing reads as zeros.
    pub fn truncate(&mut self, id: FileId, size_bytes: u64) -> SqlResult<()> {
        let size = self.entry(id)?.size_bytes;
        if size_bytes != size {
            self.touch(id);
        }
        let persistent = self.entry(id)?.persistent;
        if size_bytes > size {
            self.reserve(id, size_bytes)?;
            self.zero_tail(id, size, size_bytes)?;
            self.entry_mut(id)?.size_bytes = size_bytes;
            return Ok(());
        }
        let keep_pages = size_bytes.div_ceil(self.page_size_bytes);
        let extents = std::mem::take(&mut self.entry_mut(id)?.extents);
        let mut kept = Vec::new();
        let mut pages_before = 0u64;
        for extent in extents {
            let keep = keep_pages.saturating_sub(pages_before).min(extent.pages);
            pages_before += extent.pages;
            if keep > 0 {
                kept.push(Extent {
                    start_page: extent.start_page,
                    pages: keep,
                });
            }
            if keep < extent.pages {
                let freed = Extent {
                    start_page: extent.start_page + keep,
                    pages: extent.pages - keep,
                };
                self.give_back(persistent, freed)?;
            }
        }
        let entry = self.entry_mut(id)?;
        entry.extents = kept;
        entry.size_bytes = size_bytes;
        Ok(())
    }

    /// Makes every write so far durable: a Flush of the controller's write buffer.
    /// Writes the file table first when it changed; extents given back before are freed
    /// (trimmed) after the Flush.
    pub fn sync(&mut self) -> SqlResult<()> {
        if self.table_dirty {
            self.write_table()?;
        }
        self.exec(&HostRequest::new(HostOp::Flush, 0, 0), None)?;
        self.io.syncs += 1;
        for extent in std::mem::take(&mut self.freed_pending) {
            self.trim_extent(extent)?;
            self.allocator.free(extent);
        }
        Ok(())
    }

    /// Extents waiting for a durable table before they are reused (pages).
    pub fn pages_pending_free(&self) -> u64 {
        self.freed_pending.iter().map(|e| e.pages).sum()
    }

    /// Whether the SSD is in its transactional mode (batch atomic writes offered to SQLite).
    pub fn transactional(&self) -> bool {
        self.ssd.transactional()
    }

    /// Opens a batch atomic write: the device writes from now on commit together.
    pub fn atomic_begin(&mut self) -> SqlResult<()> {
        Ok(self.ssd.tx_begin()?)
    }

    /// Commits the open batch: a Flush, the FTL's commit record (FUA), the mapping switch.
    /// Counts as one sync.
    pub fn atomic_commit(&mut self) -> SqlResult<()> {
        if self.table_dirty {
            // inside the device transaction: the table commits with the pages it describes
            self.write_table()?;
        }
        // the FTL's three steps as separate requests, so that a power cut can fall inside
        self.exec(&HostRequest::new(HostOp::Flush, 0, 0), None)?;
        let (record, data) = self.ssd.tx_record_request()?;
        self.exec(&record, data.as_deref())?;
        self.ssd.tx_finish_commit()?;
        self.io.syncs += 1;
        self.io.atomic_commits += 1;
        Ok(())
    }

    /// Rolls the open batch back (the FTL drops its pages).
    pub fn atomic_rollback(&mut self) -> SqlResult<()> {
        if self.ssd.tx_open() && self.hook.is_none() {
            self.ssd.tx_abort()?;
            self.io.atomic_rollbacks += 1;
        }
        Ok(())
    }

    /// Whether a write of `len` bytes at `offset_bytes` of `id` still fits in the open batch
    /// (the FTL's shadow pages); true outside a batch.
    pub fn atomic_fits(&self, id: FileId, offset_bytes: u64, len: u64) -> SqlResult<bool> {
        if !self.ssd.tx_open() || len == 0 {
            return Ok(true);
        }
        let page = self.page_size_bytes;
        let entry = self.entry(id)?;
        let allocated = entry.pages_allocated() * page;
        let mut new_pages = 0u64;
        let first = offset_bytes / page;
        let last = (offset_bytes + len - 1) / page;
        for file_page in first..=last {
            // pages past the allocation are fresh: not in the batch yet
            let lpa = if file_page * page < allocated {
                self.segments(id, file_page * page, 1)?[0].0 / page
            } else {
                new_pages += 1;
                continue;
            };
            if !self.ssd.tx_has(nandlab_core::Lpa(lpa as u32)) {
                new_pages += 1;
            }
        }
        Ok(new_pages <= self.ssd.tx_room())
    }

    /// Raises `holder`'s lock on `id` (see [`FileLocks::lock`]).
    pub fn lock(
        &mut self,
        id: FileId,
        holder: u64,
        held: LockLevel,
        want: LockLevel,
    ) -> SqlResult<Result<LockLevel, LockLevel>> {
        Ok(self.entry_mut(id)?.locks.lock(holder, held, want))
    }

    pub fn unlock(
        &mut self,
        id: FileId,
        holder: u64,
        held: LockLevel,
        want: LockLevel,
    ) -> SqlResult<LockLevel> {
        Ok(self.entry_mut(id)?.locks.unlock(holder, held, want))
    }

    pub fn reserved(&self, id: FileId) -> SqlResult<bool> {
        Ok(self.entry(id)?.locks.reserved())
    }

    /// A seed for SQLite's process-wide PRNG (`random()`, journal nonces, WAL salts), drawn
    /// from this disk's seeded stream mixed with the simulated time, so a database reopened
    /// later on the same device (a mount after a power cut) does not repeat its salts. Never 0
    /// (SQLite reads 0 as "no fixed seed").
    pub fn sqlite_prng_seed(&mut self) -> u32 {
        let mut bytes = [0u8; 8];
        self.fill_random(&mut bytes);
        let mixed = u64::from_le_bytes(bytes) ^ self.now().as_ps().rotate_left(17);
        let seed = (mixed ^ (mixed >> 32)) as u32;
        seed.max(1)
    }

    /// Deterministic pseudo-random bytes (SQLite's xRandomness; splitmix64).
    pub fn fill_random(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.random_state = self.random_state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.random_state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
    }

    /// Extents of `id` cover at least `end_bytes` (allocating in growing steps).
    fn reserve(&mut self, id: FileId, end_bytes: u64) -> SqlResult<()> {
        let needed = end_bytes.div_ceil(self.page_size_bytes);
        let have = self.entry(id)?.pages_allocated();
        if needed <= have {
            return Ok(());
        }
        let want = grow_pages(have, needed);
        if self.allocator.pages_free() < needed - have
            && !self.freed_pending.is_empty()
            && !self.ssd.tx_open()
        {
            // the pages given back wait for a durable table: make it so now
            self.sync()?;
        }
        let extents = match self.allocator.allocate(want) {
            Some(e) => e,
            // the growth step does not fit: ask for just what is needed
            None => self
                .allocator
                .allocate(needed - have)
                .ok_or_else(|| SqlError::NoSpace {
                    name: self.entry(id).map(|e| e.name.clone()).unwrap_or_default(),
                    bytes: end_bytes,
                    free_bytes: self.allocator.pages_free() * self.page_size_bytes,
                })?,
        };
        if self.trim_on_allocate {
            for extent in &extents {
                self.trim_extent(*extent)?;
            }
        }
        let entry = self.entry_mut(id)?;
        for e in extents {
            // a run that continues the file's last one extends it (fewer extents to record)
            match entry.extents.last_mut() {
                Some(last) if last.end_page() == e.start_page => last.pages += e.pages,
                _ => entry.extents.push(e),
            }
        }
        self.touch(id);
        Ok(())
    }

    /// Zeros the bytes `[from, min(to, end of from's page))` (stale bytes past an old end).
    fn zero_tail(&mut self, id: FileId, from: u64, to: u64) -> SqlResult<()> {
        let page_end = from.div_ceil(self.page_size_bytes) * self.page_size_bytes;
        let end = to.min(page_end);
        if end <= from {
            return Ok(());
        }
        let zeros = vec![0u8; (end - from) as usize];
        for (logical, len) in self.segments(id, from, end - from)? {
            let request = HostRequest::new(HostOp::Write, logical, len);
            self.exec(&request, Some(&zeros[..len as usize]))?;
            self.io.write_requests += 1;
            self.io.pages_written += self.pages_touched(logical, len);
            self.io.bytes_written += len;
        }
        Ok(())
    }

    /// The logical byte ranges (offset, length) of the file's bytes `[offset, offset + len)`,
    /// in file order; the extents must cover them.
    fn segments(&self, id: FileId, offset_bytes: u64, len: u64) -> SqlResult<Vec<(u64, u64)>> {
        let page = self.page_size_bytes;
        let mut out = Vec::with_capacity(1);
        let mut at = offset_bytes;
        let end = offset_bytes + len;
        let mut extent_start = 0u64; // first file byte of the extent
        for extent in &self.entry(id)?.extents {
            let extent_end = extent_start + extent.pages * page;
            if at < extent_end && at < end {
                let take = extent_end.min(end) - at;
                out.push((extent.start_page * page + (at - extent_start), take));
                at += take;
            }
            if at >= end {
                break;
            }
            extent_start = extent_end;
        }
        assert_eq!(at, end, "extents cover bytes {offset_bytes}..{end}");
        Ok(out)
    }

    fn trim_extent(&mut self, extent: Extent) -> SqlResult<()> {
        let page = self.page_size_bytes;
        let request = HostRequest::new(HostOp::Trim, extent.start_page * page, extent.pages * page);
        self.exec(&request, None)?;
        self.io.pages_trimmed += extent.pages;
        Ok(())
    }

    fn pages_touched(&self, logical: u64, len: u64) -> u64 {
        let page = self.page_size_bytes;
        (logical + len).div_ceil(page) - logical / page
    }

    fn entry(&self, id: FileId) -> SqlResult<&FileEntry> {
        self.slots
            .get(id.0 as usize)
            .and_then(Option::as_ref)
            .ok_or(SqlError::BadFile { id: id.0 })
    }

    fn entry_mut(&mut self, id: FileId) -> SqlResult<&mut FileEntry> {
        self.slots
            .get_mut(id.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(SqlError::BadFile { id: id.0 })
    }
}
