//! The SQLite VFS of the simulated SSD, in two parts:
//! - this module, safe Rust: what each VFS and file method does, on a shared [`SimDisk`],
//!   answering with SQLite result codes;
//! - [`ffi`], the only unsafe code of the crate: the C tables SQLite calls (`sqlite3_vfs`,
//!   `sqlite3_io_methods`), which turn raw pointers into the references used here.
//!
//! What the VFS claims (docs/sql.md): `xDeviceCharacteristics` is 0 (no ATOMIC write sizes, no
//! SAFE_APPEND, no SEQUENTIAL, no POWERSAFE_OVERWRITE: a partial-page write is a
//! read-modify-write of the whole flash page in the controller, and nothing guarantees what a
//! power cut leaves), except `SQLITE_IOCAP_BATCH_ATOMIC` on a transactional FTL (X-FTL), whose
//! batch controls are implemented by `file_control`; `xSectorSize` is the SSD page size, the smallest unit the device writes.
//! No shared-memory methods: WAL needs `PRAGMA locking_mode = EXCLUSIVE` (set by
//! [`crate::SqlDb`]).

pub mod ffi;

use crate::disk::{FileId, LockLevel, SimDisk};
use crate::error::SqlError;
use libsqlite3_sys as sys;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub use ffi::Registration;

/// A disk shared by the VFS and its owner (the VFS may be called from any thread that holds
/// the connection).
pub type SharedDisk = Arc<Mutex<SimDisk>>;

/// Julian day number of the simulated clock's zero (2026-01-01 00:00 UTC): `date('now')`
/// is this plus simulated time, so runs are deterministic.
const EPOCH_JULIAN_DAY: f64 = 2_461_041.5;

/// The largest path SQLite may hand the VFS.
pub const PATHNAME_BYTES_MAX: i32 = 512;

static NEXT_HOLDER: AtomicU64 = AtomicU64::new(1);

/// The VFS state behind `pAppData`.
#[derive(Debug)]
pub struct SimVfs {
    disk: SharedDisk,
}

/// An open file behind one `sqlite3_file`.
#[derive(Debug)]
pub struct SimHandle {
    disk: SharedDisk,
    file: FileId,
    /// This handle's id in the file's lock table.
    holder: u64,
    lock: LockLevel,
    delete_on_close: Option<String>,
}

/// A SQLite result code.
pub type Code = i32;

impl SimVfs {
    pub fn new(disk: SharedDisk) -> Self {
        SimVfs { disk }
    }

    fn disk(&self) -> Result<MutexGuard<'_, SimDisk>, Code> {
        lock_disk(&self.disk)
    }

    /// xOpen: `name` is `None` for a temporary file.
    pub fn open(&self, name: Option<&str>, flags: i32) -> Result<(SimHandle, i32), Code> {
        let mut disk = self.disk()?;
        let name = match name {
            Some(n) => n.to_string(),
            None => disk.temp_name(),
        };
        let create = flags & sys::SQLITE_OPEN_CREATE != 0;
        if flags & sys::SQLITE_OPEN_EXCLUSIVE != 0 && disk.exists(&name) {
            return Err(sys::SQLITE_CANTOPEN);
        }
        let file = match disk.open(&name, create) {
            Ok(f) => f,
            Err(SqlError::NotFound { .. }) => return Err(sys::SQLITE_CANTOPEN),
            Err(e) => return Err(disk.note(e, sys::SQLITE_CANTOPEN)),
        };
        let delete_on_close = (flags & sys::SQLITE_OPEN_DELETEONCLOSE != 0).then_some(name);
        let handle = SimHandle {
            disk: Arc::clone(&self.disk),
            file,
            holder: NEXT_HOLDER.fetch_add(1, Ordering::Relaxed),
            lock: LockLevel::None,
            delete_on_close,
        };
        let out_flags = flags & (sys::SQLITE_OPEN_READWRITE | sys::SQLITE_OPEN_READONLY);
        Ok((handle, out_flags))
    }

    /// xDelete: trims and frees the file; `sync_dir` (the directory entry made durable) is a
    /// Flush.
    pub fn delete(&self, name: &str, sync_dir: bool) -> Code {
        let Ok(mut disk) = self.disk() else {
            return sys::SQLITE_IOERR_DELETE;
        };
        match disk.delete(name) {
            Ok(()) => {}
            Err(SqlError::NotFound { .. }) => return sys::SQLITE_IOERR_DELETE_NOENT,
            Err(e) => return disk.note(e, sys::SQLITE_IOERR_DELETE),
        }
        if sync_dir && let Err(e) = disk.sync() {
            return disk.note(e, sys::SQLITE_IOERR_DIR_FSYNC);
        }
        sys::SQLITE_OK
    }

    /// xAccess: whether `name` exists (every file is readable and writable).
    pub fn access(&self, name: &str) -> Result<bool, Code> {
        Ok(self.disk()?.exists(name))
    }

    /// xRandomness: deterministic bytes from the disk's seed.
    pub fn randomness(&self, buf: &mut [u8]) {
        if let Ok(mut disk) = self.disk() {
            disk.fill_random(buf);
        }
    }

    /// xCurrentTimeInt64: milliseconds since the Julian epoch, on the simulated clock.
    pub fn current_time_ms(&self) -> i64 {
        let ms = self.disk().map(|d| d.now().as_ms_f64()).unwrap_or(0.0);
        (EPOCH_JULIAN_DAY * 86_400_000.0 + ms) as i64
    }
}

impl SimHandle {
    fn disk(&self) -> Result<MutexGuard<'_, SimDisk>, Code> {
        lock_disk(&self.disk)
    }

    /// xClose (a file opened delete-on-close is deleted).
    pub fn close(self) -> Code {
        let Ok(mut disk) = lock_disk(&self.disk) else {
            return sys::SQLITE_IOERR_CLOSE;
        };
        if self.lock > LockLevel::None {
            let _ = disk.unlock(self.file, self.holder, self.lock, LockLevel::None);
        }
        if let Some(name) = &self.delete_on_close
            && let Err(e) = disk.delete(name)
        {
            return disk.note(e, sys::SQLITE_IOERR_CLOSE);
        }
        match disk.close(self.file) {
            Ok(()) => sys::SQLITE_OK,
            Err(e) => disk.note(e, sys::SQLITE_IOERR_CLOSE),
        }
    }

    /// xRead: a short read fills the rest with zeros and says so.
    pub fn read(&self, buf: &mut [u8], offset: i64) -> Code {
        let Ok(mut disk) = self.disk() else {
            return sys::SQLITE_IOERR_READ;
        };
        let Ok(offset) = u64::try_from(offset) else {
            return sys::SQLITE_IOERR_READ;
        };
        match disk.read(self.file, offset, buf) {
            Ok(n) if n == buf.len() => sys::SQLITE_OK,
            Ok(_) => sys::SQLITE_IOERR_SHORT_READ,
            Err(e) => disk.note(e, sys::SQLITE_IOERR_READ),
        }
    }

    pub fn write(&self, data: &[u8], offset: i64) -> Code {
        let Ok(mut disk) = self.disk() else {
            return sys::SQLITE_IOERR_WRITE;
        };
        let Ok(offset) = u64::try_from(offset) else {
            return sys::SQLITE_IOERR_WRITE;
        };
        // a batch larger than the FTL's shadow pages fails before writing anything of this
        // write: SQLite rolls the batch back and commits it through its journal instead
        match disk.atomic_fits(self.file, offset, data.len() as u64) {
            Ok(true) => {}
            Ok(false) => {
                let e = SqlError::Usage(
                    "batch atomic write: larger than the transactional FTL's shadow pages".into(),
                );
                return disk.note(e, sys::SQLITE_IOERR_WRITE);
            }
            Err(e) => return disk.note(e, sys::SQLITE_IOERR_WRITE),
        }
        match disk.write(self.file, offset, data) {
            Ok(()) => sys::SQLITE_OK,
            Err(e @ SqlError::NoSpace { .. }) => disk.note(e, sys::SQLITE_FULL),
            Err(e) => disk.note(e, sys::SQLITE_IOERR_WRITE),
        }
    }

    pub fn truncate(&self, size: i64) -> Code {
        let Ok(mut disk) = self.disk() else {
            return sys::SQLITE_IOERR_TRUNCATE;
        };
        let Ok(size) = u64::try_from(size) else {
            return sys::SQLITE_IOERR_TRUNCATE;
        };
        match disk.truncate(self.file, size) {
            Ok(()) => sys::SQLITE_OK,
            Err(e @ SqlError::NoSpace { .. }) => disk.note(e, sys::SQLITE_FULL),
            Err(e) => disk.note(e, sys::SQLITE_IOERR_TRUNCATE),
        }
    }

    /// xSync: a Flush of the controller (whatever the flags: the device has one way to sync).
    pub fn sync(&self) -> Code {
        let Ok(mut disk) = self.disk() else {
            return sys::SQLITE_IOERR_FSYNC;
        };
        match disk.sync() {
            Ok(()) => sys::SQLITE_OK,
            Err(e) => disk.note(e, sys::SQLITE_IOERR_FSYNC),
        }
    }

    pub fn file_size(&self) -> Result<i64, Code> {
        let disk = self.disk().map_err(|_| sys::SQLITE_IOERR_FSTAT)?;
        let size = disk
            .size_bytes(self.file)
            .map_err(|_| sys::SQLITE_IOERR_FSTAT)?;
        i64::try_from(size).map_err(|_| sys::SQLITE_IOERR_FSTAT)
    }

    pub fn lock(&mut self, level: i32) -> Code {
        let Some(want) = LockLevel::from_code(level) else {
            return sys::SQLITE_IOERR_LOCK;
        };
        let Ok(mut disk) = lock_disk(&self.disk) else {
            return sys::SQLITE_IOERR_LOCK;
        };
        match disk.lock(self.file, self.holder, self.lock, want) {
            Ok(Ok(level)) => {
                self.lock = level;
                sys::SQLITE_OK
            }
            Ok(Err(level)) => {
                self.lock = level;
                sys::SQLITE_BUSY
            }
            Err(e) => disk.note(e, sys::SQLITE_IOERR_LOCK),
        }
    }

    pub fn unlock(&mut self, level: i32) -> Code {
        let Some(want) = LockLevel::from_code(level) else {
            return sys::SQLITE_IOERR_UNLOCK;
        };
        let Ok(mut disk) = lock_disk(&self.disk) else {
            return sys::SQLITE_IOERR_UNLOCK;
        };
        match disk.unlock(self.file, self.holder, self.lock, want) {
            Ok(level) => {
                self.lock = level;
                sys::SQLITE_OK
            }
            Err(e) => disk.note(e, sys::SQLITE_IOERR_UNLOCK),
        }
    }

    pub fn check_reserved(&self) -> Result<bool, Code> {
        let disk = self
            .disk()
            .map_err(|_| sys::SQLITE_IOERR_CHECKRESERVEDLOCK)?;
        disk.reserved(self.file)
            .map_err(|_| sys::SQLITE_IOERR_CHECKRESERVEDLOCK)
    }

    /// xSectorSize: the SSD page (writes below it are read-modify-write in the controller).
    pub fn sector_size(&self) -> i32 {
        self.disk()
            .map(|d| i32::try_from(d.page_size_bytes()).unwrap_or(65_536))
            .unwrap_or(4096)
    }

    /// xDeviceCharacteristics: `SQLITE_IOCAP_BATCH_ATOMIC` on a transactional FTL, else no
    /// guarantee (module docs).
    pub fn device_characteristics(&self) -> i32 {
        match self.disk() {
            Ok(d) if d.transactional() => sys::SQLITE_IOCAP_BATCH_ATOMIC,
            _ => 0,
        }
    }

    /// xFileControl: the batch atomic write controls on a transactional FTL; every other
    /// control is left to SQLite's defaults (`SQLITE_NOTFOUND`).
    pub fn file_control(&self, op: i32) -> Code {
        let (call, code): (fn(&mut SimDisk) -> crate::error::SqlResult<()>, Code) = match op {
            sys::SQLITE_FCNTL_BEGIN_ATOMIC_WRITE => {
                (SimDisk::atomic_begin, sys::SQLITE_IOERR_BEGIN_ATOMIC)
            }
            sys::SQLITE_FCNTL_COMMIT_ATOMIC_WRITE => {
                (SimDisk::atomic_commit, sys::SQLITE_IOERR_COMMIT_ATOMIC)
            }
            sys::SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE => {
                (SimDisk::atomic_rollback, sys::SQLITE_IOERR_ROLLBACK_ATOMIC)
            }
            _ => return sys::SQLITE_NOTFOUND,
        };
        let Ok(mut disk) = self.disk() else {
            return code;
        };
        if !disk.transactional() {
            return sys::SQLITE_NOTFOUND;
        }
        match call(&mut disk) {
            Ok(()) => sys::SQLITE_OK,
            Err(e) => disk.note(e, code),
        }
    }
}

fn lock_disk(disk: &SharedDisk) -> Result<MutexGuard<'_, SimDisk>, Code> {
    disk.lock().map_err(|_| sys::SQLITE_IOERR)
}
