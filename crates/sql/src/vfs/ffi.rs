//! The C side of the VFS: the one module of the crate with unsafe code.
//!
//! SQLite calls the functions of two C tables: the VFS (`sqlite3_vfs`, registered under a
//! unique name) and the methods of an open file (`sqlite3_io_methods`). Each function here only
//! turns SQLite's raw pointers into references and calls the safe code in [`super`]; panics
//! are caught at the boundary (a SQLite error code instead of unwinding into C).
//!
//! Ownership: the `sqlite3_vfs` and its [`SimVfs`] (`pAppData`) are boxed and owned by a
//! [`Registration`], which unregisters and frees them when dropped; connections using the VFS
//! must be closed first ([`crate::SqlDb`] drops its connection before its registration).
//! Each open file's [`SimHandle`] is boxed into the `sqlite3_file` SQLite allocates
//! (`szOsFile` bytes) and freed by `xClose`.
#![allow(unsafe_code)]

use super::{Code, PATHNAME_BYTES_MAX, SimHandle, SimVfs};
use libsqlite3_sys as sys;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_VFS: AtomicU64 = AtomicU64::new(1);

/// What SQLite allocates for each open file: the base struct first (SQLite's layout), then
/// our handle.
#[repr(C)]
struct FileSlot {
    base: sys::sqlite3_file,
    handle: *mut SimHandle,
}

/// A registered VFS; unregistered and freed on drop.
#[derive(Debug)]
pub struct Registration {
    vfs: *mut sys::sqlite3_vfs,
    name: String,
}

// SAFETY: the pointer is only dereferenced by SQLite (its VFS list is guarded by SQLite's own
// mutex in the threadsafe build rusqlite bundles) and by `drop`, which owns it; `SimVfs` is
// `Send + Sync` (it holds an `Arc<Mutex<_>>`).
unsafe impl Send for Registration {}

impl Registration {
    /// Registers `vfs` under a fresh name (`nandlab-N`), not as the default VFS.
    pub fn register(vfs: SimVfs) -> Result<Registration, String> {
        let name = format!("nandlab-{}", NEXT_VFS.fetch_add(1, Ordering::Relaxed));
        let c_name = CString::new(name.clone()).map_err(|e| e.to_string())?;
        let app = Box::into_raw(Box::new(vfs));
        let table = Box::new(sys::sqlite3_vfs {
            iVersion: 2,
            szOsFile: std::mem::size_of::<FileSlot>() as c_int,
            mxPathname: PATHNAME_BYTES_MAX,
            pNext: std::ptr::null_mut(),
            zName: c_name.into_raw(),
            pAppData: app.cast(),
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: Some(x_dl_open),
            xDlError: Some(x_dl_error),
            xDlSym: Some(x_dl_sym),
            xDlClose: Some(x_dl_close),
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: Some(x_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        });
        let raw = Box::into_raw(table);
        // SAFETY: `raw` is a valid, fully initialised sqlite3_vfs that stays alive until
        // `drop` unregisters it.
        let rc = unsafe { sys::sqlite3_vfs_register(raw, 0) };
        if rc != sys::SQLITE_OK {
            // SAFETY: SQLite refused it, so nothing else points at these allocations.
            unsafe { free_vfs(raw) };
            return Err(format!(
                "sqlite3_vfs_register({name}) failed with code {rc}"
            ));
        }
        Ok(Registration { vfs: raw, name })
    }

    /// The name to open connections with.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Seeds SQLite's pseudo-random generator with `seed` (not 0) and resets it, so what SQLite
/// draws next (`random()`, `randomblob()`, rollback-journal nonces, WAL salts) follows from
/// the seed instead of the default VFS's entropy. The generator is process-wide: connections
/// opened on other threads at the same time draw from the same stream.
pub fn seed_sqlite_prng(seed: u32) {
    debug_assert!(seed != 0, "SQLite reads a zero seed as no seed");
    // SAFETY: SQLITE_TESTCTRL_PRNG_SEED takes (int seed, sqlite3 *db); a null db uses the
    // seed as given. The call only stores the seed and resets the generator under SQLite's
    // PRNG mutex.
    unsafe {
        sys::sqlite3_test_control(
            sys::SQLITE_TESTCTRL_PRNG_SEED,
            seed as c_int,
            std::ptr::null_mut::<sys::sqlite3>(),
        );
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; after unregistering, SQLite keeps no pointer to it
        // (its connections were closed before, see the module docs).
        unsafe {
            sys::sqlite3_vfs_unregister(self.vfs);
            free_vfs(self.vfs);
        }
    }
}

/// Frees a table built by [`Registration::register`].
///
/// # Safety
/// `raw` comes from `register`'s `Box::into_raw` and is no longer used by SQLite.
unsafe fn free_vfs(raw: *mut sys::sqlite3_vfs) {
    // SAFETY: per the contract, each pointer was made by into_raw of the matching type.
    unsafe {
        let table = Box::from_raw(raw);
        drop(CString::from_raw(table.zName as *mut c_char));
        drop(Box::from_raw(table.pAppData.cast::<SimVfs>()));
    }
}

/// Runs `f`, turning a panic into `on_panic`.
fn guard<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

/// # Safety
/// `vfs` is a table made by [`Registration::register`].
unsafe fn app<'a>(vfs: *mut sys::sqlite3_vfs) -> &'a SimVfs {
    // SAFETY: pAppData is the boxed SimVfs, alive while the VFS is registered.
    unsafe { &*(*vfs).pAppData.cast::<SimVfs>() }
}

/// # Safety
/// `file` was opened by [`x_open`] and not yet closed.
unsafe fn handle<'a>(file: *mut sys::sqlite3_file) -> Option<&'a mut SimHandle> {
    // SAFETY: SQLite passes back the FileSlot it allocated for us; `handle` is our box (or
    // null after a failed open or a close). SQLite calls one method of a file at a time.
    unsafe { (*file.cast::<FileSlot>()).handle.as_mut() }
}

/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn name_of<'a>(name: *const c_char) -> Option<&'a str> {
    if name.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    unsafe { CStr::from_ptr(name) }.to_str().ok()
}

unsafe extern "C" fn x_open(
    vfs: *mut sys::sqlite3_vfs,
    name: sys::sqlite3_filename,
    file: *mut sys::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    guard(sys::SQLITE_CANTOPEN, || {
        // SAFETY: SQLite gives our VFS, a filename or null, and szOsFile bytes at `file`.
        let (vfs, name) = unsafe { (app(vfs), name_of(name)) };
        let slot = file.cast::<FileSlot>();
        // SAFETY: `slot` points at szOsFile writable bytes; pMethods null means "not open" to
        // SQLite (no xClose) until we succeed.
        unsafe {
            (*slot).base.pMethods = std::ptr::null();
            (*slot).handle = std::ptr::null_mut();
        }
        match vfs.open(name, flags) {
            Ok((h, out)) => {
                // SAFETY: as above; out_flags is null or writable.
                unsafe {
                    (*slot).handle = Box::into_raw(Box::new(h));
                    (*slot).base.pMethods = &IO_METHODS;
                    if !out_flags.is_null() {
                        *out_flags = out;
                    }
                }
                sys::SQLITE_OK
            }
            Err(code) => code,
        }
    })
}

unsafe extern "C" fn x_delete(
    vfs: *mut sys::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    guard(sys::SQLITE_IOERR_DELETE, || {
        // SAFETY: our VFS and a NUL-terminated name.
        let (vfs, name) = unsafe { (app(vfs), name_of(name)) };
        match name {
            Some(n) => vfs.delete(n, sync_dir != 0),
            None => sys::SQLITE_IOERR_DELETE,
        }
    })
}

unsafe extern "C" fn x_access(
    vfs: *mut sys::sqlite3_vfs,
    name: *const c_char,
    _flags: c_int,
    out: *mut c_int,
) -> c_int {
    guard(sys::SQLITE_IOERR_ACCESS, || {
        // SAFETY: our VFS and a NUL-terminated name.
        let (vfs, name) = unsafe { (app(vfs), name_of(name)) };
        let exists = match name.map(|n| vfs.access(n)) {
            Some(Ok(e)) => e,
            Some(Err(code)) => return code,
            None => false,
        };
        // SAFETY: SQLite passes a writable int.
        unsafe { *out = c_int::from(exists) };
        sys::SQLITE_OK
    })
}

unsafe extern "C" fn x_full_pathname(
    _vfs: *mut sys::sqlite3_vfs,
    name: *const c_char,
    out_bytes: c_int,
    out: *mut c_char,
) -> c_int {
    guard(sys::SQLITE_CANTOPEN, || {
        // SAFETY: NUL-terminated name; `out` has `out_bytes` writable bytes.
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes_with_nul();
        if bytes.len() > usize::try_from(out_bytes).unwrap_or(0) {
            return sys::SQLITE_CANTOPEN;
        }
        // SAFETY: checked to fit; the regions do not overlap (SQLite's own buffer).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), out, bytes.len()) };
        sys::SQLITE_OK
    })
}

unsafe extern "C" fn x_dl_open(_vfs: *mut sys::sqlite3_vfs, _name: *const c_char) -> *mut c_void {
    std::ptr::null_mut()
}

unsafe extern "C" fn x_dl_error(_vfs: *mut sys::sqlite3_vfs, out_bytes: c_int, out: *mut c_char) {
    let message = b"the simulated SSD's VFS loads no extensions\0";
    let n = message.len().min(usize::try_from(out_bytes).unwrap_or(0));
    if n > 0 {
        // SAFETY: `out` has `out_bytes` writable bytes; the last one written is a NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(message.as_ptr().cast::<c_char>(), out, n);
            *out.add(n - 1) = 0;
        }
    }
}

type DlSym = unsafe extern "C" fn(*mut sys::sqlite3_vfs, *mut c_void, *const c_char);

unsafe extern "C" fn x_dl_sym(
    _vfs: *mut sys::sqlite3_vfs,
    _lib: *mut c_void,
    _symbol: *const c_char,
) -> Option<DlSym> {
    None
}

unsafe extern "C" fn x_dl_close(_vfs: *mut sys::sqlite3_vfs, _lib: *mut c_void) {}

unsafe extern "C" fn x_randomness(
    vfs: *mut sys::sqlite3_vfs,
    bytes: c_int,
    out: *mut c_char,
) -> c_int {
    guard(0, || {
        let n = usize::try_from(bytes).unwrap_or(0);
        // SAFETY: our VFS; `out` has `bytes` writable bytes.
        let (vfs, buf) = unsafe {
            (
                app(vfs),
                std::slice::from_raw_parts_mut(out.cast::<u8>(), n),
            )
        };
        vfs.randomness(buf);
        bytes
    })
}

unsafe extern "C" fn x_sleep(_vfs: *mut sys::sqlite3_vfs, microseconds: c_int) -> c_int {
    microseconds
}

unsafe extern "C" fn x_current_time(vfs: *mut sys::sqlite3_vfs, out: *mut f64) -> c_int {
    guard(sys::SQLITE_ERROR, || {
        // SAFETY: our VFS and a writable double.
        unsafe { *out = app(vfs).current_time_ms() as f64 / 86_400_000.0 };
        sys::SQLITE_OK
    })
}

unsafe extern "C" fn x_current_time_int64(
    vfs: *mut sys::sqlite3_vfs,
    out: *mut sys::sqlite3_int64,
) -> c_int {
    guard(sys::SQLITE_ERROR, || {
        // SAFETY: our VFS and a writable int64.
        unsafe { *out = app(vfs).current_time_ms() };
        sys::SQLITE_OK
    })
}

unsafe extern "C" fn x_get_last_error(
    _vfs: *mut sys::sqlite3_vfs,
    _bytes: c_int,
    _out: *mut c_char,
) -> c_int {
    0
}

static IO_METHODS: sys::sqlite3_io_methods = sys::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn x_close(file: *mut sys::sqlite3_file) -> c_int {
    guard(sys::SQLITE_IOERR_CLOSE, || {
        let slot = file.cast::<FileSlot>();
        // SAFETY: an open file of ours; the box is taken out once and the slot cleared.
        let raw = unsafe { std::mem::replace(&mut (*slot).handle, std::ptr::null_mut()) };
        if raw.is_null() {
            return sys::SQLITE_OK;
        }
        // SAFETY: made by Box::into_raw in x_open, not freed before (cleared above).
        let h = unsafe { Box::from_raw(raw) };
        h.close()
    })
}

/// Runs `f` on the handle of `file`, or answers `missing` (a closed or never opened file).
fn with_handle<T>(
    file: *mut sys::sqlite3_file,
    missing: T,
    f: impl FnOnce(&mut SimHandle) -> T,
) -> T
where
    T: Copy,
{
    guard(missing, || {
        // SAFETY: SQLite only calls methods of files opened by x_open.
        match unsafe { handle(file) } {
            Some(h) => f(h),
            None => missing,
        }
    })
}

unsafe extern "C" fn x_read(
    file: *mut sys::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: sys::sqlite3_int64,
) -> c_int {
    let n = usize::try_from(amount).unwrap_or(0);
    // SAFETY: SQLite gives `amount` writable bytes at `buf`.
    let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
    with_handle(file, sys::SQLITE_IOERR_READ, |h| h.read(buf, offset))
}

unsafe extern "C" fn x_write(
    file: *mut sys::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: sys::sqlite3_int64,
) -> c_int {
    let n = usize::try_from(amount).unwrap_or(0);
    // SAFETY: SQLite gives `amount` readable bytes at `data`.
    let data = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), n) };
    with_handle(file, sys::SQLITE_IOERR_WRITE, |h| h.write(data, offset))
}

unsafe extern "C" fn x_truncate(file: *mut sys::sqlite3_file, size: sys::sqlite3_int64) -> c_int {
    with_handle(file, sys::SQLITE_IOERR_TRUNCATE, |h| h.truncate(size))
}

unsafe extern "C" fn x_sync(file: *mut sys::sqlite3_file, _flags: c_int) -> c_int {
    with_handle(file, sys::SQLITE_IOERR_FSYNC, |h| h.sync())
}

unsafe extern "C" fn x_file_size(
    file: *mut sys::sqlite3_file,
    out: *mut sys::sqlite3_int64,
) -> c_int {
    let result: Result<i64, Code> =
        with_handle(file, Err(sys::SQLITE_IOERR_FSTAT), |h| h.file_size());
    match result {
        Ok(size) => {
            // SAFETY: SQLite passes a writable int64.
            unsafe { *out = size };
            sys::SQLITE_OK
        }
        Err(code) => code,
    }
}

unsafe extern "C" fn x_lock(file: *mut sys::sqlite3_file, level: c_int) -> c_int {
    with_handle(file, sys::SQLITE_IOERR_LOCK, |h| h.lock(level))
}

unsafe extern "C" fn x_unlock(file: *mut sys::sqlite3_file, level: c_int) -> c_int {
    with_handle(file, sys::SQLITE_IOERR_UNLOCK, |h| h.unlock(level))
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut sys::sqlite3_file, out: *mut c_int) -> c_int {
    let result = with_handle(file, Err(sys::SQLITE_IOERR_CHECKRESERVEDLOCK), |h| {
        h.check_reserved()
    });
    match result {
        Ok(reserved) => {
            // SAFETY: SQLite passes a writable int.
            unsafe { *out = c_int::from(reserved) };
            sys::SQLITE_OK
        }
        Err(code) => code,
    }
}

/// The batch atomic write controls (on a transactional FTL); every other control is left to
/// SQLite's defaults (`SQLITE_NOTFOUND`). None of them uses `arg`.
unsafe extern "C" fn x_file_control(
    file: *mut sys::sqlite3_file,
    op: c_int,
    _arg: *mut c_void,
) -> c_int {
    with_handle(file, sys::SQLITE_NOTFOUND, |h| h.file_control(op))
}

unsafe extern "C" fn x_sector_size(file: *mut sys::sqlite3_file) -> c_int {
    with_handle(file, 4096, |h| h.sector_size())
}

unsafe extern "C" fn x_device_characteristics(file: *mut sys::sqlite3_file) -> c_int {
    with_handle(file, 0, |h| h.device_characteristics())
}
