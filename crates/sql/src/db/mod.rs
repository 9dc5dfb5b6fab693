//! [`SqlDb`]: a SQLite connection whose files live on a simulated SSD.

use crate::disk::{DeviceSnapshot, SimDisk};
use crate::error::{SqlError, SqlResult};
use crate::metrics::{SqlMetrics, TxTracker};
use crate::vfs::{Registration, SharedDisk, SimVfs};
use nandlab_ftl::{Ssd, SsdReport};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Batch, Connection, OpenFlags, Statement, ToSql};
use serde::Serialize;
use std::fmt;
use std::ops::ControlFlow;
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard};

/// SQLite's journal modes that the simulated SSD supports (MEMORY is not: nothing of it
/// reaches the device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    #[default]
    Delete,
    Truncate,
    Persist,
    /// Write-ahead log, in exclusive locking mode (the VFS has no shared memory).
    Wal,
    Off,
    /// Batch atomic writes on the transactional FTL (X-FTL): SQLite runs in `delete` mode and
    /// commits each transaction's pages as one device transaction, writing no journal.
    Atomic,
}

/// Shadow pages of the transactional FTL: one per this many logical pages (a batch larger than
/// that is committed through SQLite's journal instead).
pub const ATOMIC_SHADOW_FRACTION: u64 = 16;

impl JournalMode {
    pub const ALL: [JournalMode; 6] = [
        JournalMode::Delete,
        JournalMode::Truncate,
        JournalMode::Persist,
        JournalMode::Wal,
        JournalMode::Off,
        JournalMode::Atomic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JournalMode::Delete => "delete",
            JournalMode::Truncate => "truncate",
            JournalMode::Persist => "persist",
            JournalMode::Wal => "wal",
            JournalMode::Off => "off",
            JournalMode::Atomic => "atomic",
        }
    }

    /// The `PRAGMA journal_mode` SQLite runs in.
    pub fn sqlite_mode(self) -> &'static str {
        match self {
            JournalMode::Atomic => "delete",
            m => m.as_str(),
        }
    }
}

impl fmt::Display for JournalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for JournalMode {
    type Err = SqlError;
    fn from_str(s: &str) -> SqlResult<JournalMode> {
        JournalMode::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                SqlError::Usage(format!(
                    "journal_mode `{s}`: expected one of delete, truncate, persist, wal, off, atomic"
                ))
            })
    }
}

/// How the database is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlOptions {
    /// Name of the database file on the simulated disk.
    pub db_name: String,
    pub journal_mode: JournalMode,
    /// `PRAGMA page_size` (SQLite's default when `None`: 4096).
    pub page_size_bytes: Option<u32>,
    /// `PRAGMA cache_size` (pages if positive, KiB if negative; SQLite's default: -2000).
    pub cache_size: Option<i64>,
    /// `PRAGMA synchronous` (off, normal, full, extra; SQLite's default: full).
    pub synchronous: Option<String>,
}

impl Default for SqlOptions {
    fn default() -> Self {
        SqlOptions {
            db_name: "main.db".into(),
            journal_mode: JournalMode::Delete,
            page_size_bytes: None,
            cache_size: None,
            synchronous: None,
        }
    }
}

/// One SQL value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SqlValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl SqlValue {
    fn from_ref(v: ValueRef<'_>) -> SqlValue {
        match v {
            ValueRef::Null => SqlValue::Null,
            ValueRef::Integer(i) => SqlValue::Integer(i),
            ValueRef::Real(r) => SqlValue::Real(r),
            ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
        }
    }
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Integer(v)
    }
}

impl From<f64> for SqlValue {
    fn from(v: f64) -> Self {
        SqlValue::Real(v)
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::Text(v.to_string())
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::Text(v)
    }
}

impl SqlValue {
    /// The integer, or `None` (NULL, text, blob; a real is truncated).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            SqlValue::Integer(i) => Some(*i),
            SqlValue::Real(r) => Some(*r as i64),
            _ => None,
        }
    }

    /// The number as a real, or `None`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            SqlValue::Integer(i) => Some(*i as f64),
            SqlValue::Real(r) => Some(*r),
            _ => None,
        }
    }
}

impl fmt::Display for SqlValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlValue::Null => f.write_str("NULL"),
            SqlValue::Integer(i) => write!(f, "{i}"),
            SqlValue::Real(r) => write!(f, "{r}"),
            SqlValue::Text(t) => f.write_str(t),
            SqlValue::Blob(b) => {
                f.write_str("x'")?;
                for byte in b {
                    write!(f, "{byte:02x}")?;
                }
                f.write_str("'")
            }
        }
    }
}

impl ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(*i),
            SqlValue::Real(r) => ValueRef::Real(*r),
            SqlValue::Text(t) => ValueRef::Text(t.as_bytes()),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// What one statement returned: its columns and rows (none for a statement without result
/// columns) and the rows it changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatementOutput {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<SqlValue>>,
    /// Rows inserted, updated or deleted (statements without result columns; else 0).
    pub changes: u64,
}

/// After a statement: `tracker` counts it (with a full snapshot of `disk` if it ended a
/// transaction); `autocommit` is the connection's state now.
fn statement_ended(tracker: &mut TxTracker, disk: &SharedDisk, autocommit: bool) -> SqlResult<()> {
    let now = if tracker.ends_transaction(autocommit) {
        Some(lock(disk)?.snapshot())
    } else {
        None
    };
    tracker.statement_ends(now, autocommit);
    Ok(())
}

/// Runs one prepared statement with `params` (positional, from 1).
pub fn run_statement(
    stmt: &mut Statement<'_>,
    params: &[SqlValue],
) -> rusqlite::Result<StatementOutput> {
    let expected = stmt.parameter_count();
    if params.len() != expected {
        return Err(rusqlite::Error::InvalidParameterCount(
            params.len(),
            expected,
        ));
    }
    for (i, p) in params.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, p)?;
    }
    let columns: Vec<String> = stmt.column_names().map(|c| c.to_string()).collect();
    if columns.is_empty() {
        let changes = stmt.raw_execute()? as u64;
        return Ok(StatementOutput {
            columns,
            rows: Vec::new(),
            changes,
        });
    }
    let n = columns.len();
    let mut rows = Vec::new();
    let mut cursor = stmt.raw_query();
    while let Some(row) = cursor.next()? {
        rows.push(
            (0..n)
                .map(|i| row.get_ref(i).map(SqlValue::from_ref))
                .collect::<rusqlite::Result<_>>()?,
        );
    }
    Ok(StatementOutput {
        columns,
        rows,
        changes: 0,
    })
}

/// Runs every statement of `sql` on `conn` (any connection: the differential tests' in-memory
/// reference uses it), stopping at the first error.
pub fn run_script_on(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<StatementOutput>> {
    let mut out = Vec::new();
    let text = nul_terminated(sql);
    let mut batch = Batch::new(conn, &text);
    while let Some(mut stmt) = batch.next()? {
        out.push(run_statement(&mut stmt, &[])?);
    }
    Ok(out)
}

/// `sql` with a NUL byte appended, for rusqlite's [`Batch`]: SQLite copies the text it is
/// given when its last byte is not NUL, so without it each statement's prepare copies the rest
/// of the script (quadratic in the script's length); with it, each prepare reads only its
/// statement.
fn nul_terminated(sql: &str) -> String {
    let mut text = String::with_capacity(sql.len() + 1);
    text.push_str(sql);
    text.push('\0');
    text
}

/// Refuses SQL text holding a NUL byte (SQLite would stop reading there, silently dropping the
/// rest), naming its line.
pub fn check_no_nul(sql: &str) -> SqlResult<()> {
    match sql.find('\0') {
        None => Ok(()),
        Some(at) => {
            let line = sql[..at].matches('\n').count() + 1;
            Err(SqlError::Usage(format!(
                "sql: a NUL byte at line {line} (byte {at}): SQL text cannot hold one"
            )))
        }
    }
}

/// A SQLite database on a simulated SSD.
#[derive(Debug)]
pub struct SqlDb {
    // Field order is drop order: the connection closes before its VFS is unregistered.
    conn: Connection,
    registration: Registration,
    disk: SharedDisk,
    tracker: TxTracker,
    options: SqlOptions,
    /// Asked between statements and, through SQLite's progress handler, while one runs:
    /// `true` stops the work ([`SqlError::Interrupted`]).
    interrupt: InterruptSlot,
}

#[derive(Default)]
struct InterruptSlot(Option<Interrupt>);

impl fmt::Debug for InterruptSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

/// A check that asks a running database to stop (the CLI's Ctrl-C flag, Python's signal
/// check); `true`: stop.
pub type Interrupt = Arc<dyn Fn() -> bool + Send + Sync>;

/// SQLite virtual-machine instructions between two calls of the interrupt check (about tens of
/// microseconds of work: a long statement stops promptly, a short one pays nothing).
const INTERRUPT_OPS: i32 = 10_000;

impl SqlDb {
    /// Opens (creating) `options.db_name` on `ssd` (full payload mode); `seed` seeds the VFS's
    /// randomness.
    pub fn open(ssd: Ssd, seed: u64, options: SqlOptions) -> SqlResult<SqlDb> {
        let ssd = prepare_ssd(ssd, &options)?;
        SqlDb::open_disk(SimDisk::new(ssd, seed)?, options)
    }

    /// Opens the database on `ssd` as its file table on the device left it (a device
    /// recovered after a power cut; [`SimDisk::mount`]). SQLite then recovers by itself (a
    /// hot journal is rolled back, a WAL is replayed).
    pub fn open_mounted(ssd: Ssd, seed: u64, options: SqlOptions) -> SqlResult<SqlDb> {
        let ssd = prepare_ssd(ssd, &options)?;
        SqlDb::open_disk(SimDisk::mount(ssd, seed)?, options)
    }

    /// Opens the database on `disk`.
    pub fn open_disk(mut disk: SimDisk, options: SqlOptions) -> SqlResult<SqlDb> {
        crate::vfs::ffi::seed_sqlite_prng(disk.sqlite_prng_seed());
        let disk = Arc::new(Mutex::new(disk));
        let registration =
            Registration::register(SimVfs::new(Arc::clone(&disk))).map_err(SqlError::Usage)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags_and_vfs(&options.db_name, flags, registration.name())?;
        let now = lock(&disk)?.snapshot();
        let mut db = SqlDb {
            conn,
            registration,
            disk,
            tracker: TxTracker::new(now),
            options,
            interrupt: InterruptSlot::default(),
        };
        db.configure()?;
        db.reset_metrics()?;
        Ok(db)
    }

    /// [`SqlDb::open`] on a new SSD of `device` (see [`crate::SsdSource::new_ssd`]).
    pub fn open_device(
        device: &dyn crate::SsdSource,
        seed: Option<u64>,
        options: SqlOptions,
    ) -> SqlResult<SqlDb> {
        let (ssd, seed) = device.new_ssd(seed)?;
        SqlDb::open(ssd, seed, options)
    }

    fn configure(&mut self) -> SqlResult<()> {
        let o = self.options.clone();
        // first: pragmas below read the schema, which opens an existing WAL (a mounted
        // database), and without shared memory SQLite opens a WAL only in exclusive mode
        if o.journal_mode == JournalMode::Wal {
            self.conn
                .execute_batch("PRAGMA locking_mode = EXCLUSIVE;")?;
        }
        if let Some(size) = o.page_size_bytes {
            if !(512..=65_536).contains(&size) || !size.is_power_of_two() {
                return Err(SqlError::Usage(format!(
                    "page_size_bytes {size}: a power of two from 512 to 65536"
                )));
            }
            self.conn
                .execute_batch(&format!("PRAGMA page_size = {size};"))?;
        }
        if let Some(cache) = o.cache_size {
            self.conn
                .execute_batch(&format!("PRAGMA cache_size = {cache};"))?;
        }
        if let Some(sync) = &o.synchronous {
            let level = sync.trim().to_ascii_lowercase();
            if !["off", "normal", "full", "extra"].contains(&level.as_str()) {
                return Err(SqlError::Usage(format!(
                    "synchronous `{sync}`: expected off, normal, full or extra"
                )));
            }
            self.conn
                .execute_batch(&format!("PRAGMA synchronous = {level};"))?;
        }
        let mode: String = self.conn.query_row(
            &format!("PRAGMA journal_mode = {}", o.journal_mode.sqlite_mode()),
            [],
            |r| r.get(0),
        )?;
        if !mode.eq_ignore_ascii_case(o.journal_mode.sqlite_mode()) {
            return Err(SqlError::Usage(format!(
                "journal_mode `{}`: SQLite kept `{mode}`",
                o.journal_mode
            )));
        }
        Ok(())
    }

    pub fn options(&self) -> &SqlOptions {
        &self.options
    }

    /// The journal mode SQLite reports now (a script may have changed it).
    pub fn journal_mode(&self) -> SqlResult<String> {
        Ok(self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))?)
    }

    /// Runs every statement of `sql` in order, stopping at the first error (the statements
    /// before it have run).
    pub fn run_script(&mut self, sql: &str) -> SqlResult<Vec<StatementOutput>> {
        let mut out = Vec::new();
        self.run_script_into(sql, &mut out)?;
        Ok(out)
    }

    /// [`SqlDb::run_script`] pushing each statement's output onto `out` as it completes, so
    /// that a caller stopped by an error or an interrupt keeps the outputs before it.
    pub fn run_script_into(&mut self, sql: &str, out: &mut Vec<StatementOutput>) -> SqlResult<()> {
        self.run_script_observed(sql, out, &mut |_| ControlFlow::Continue(()))
    }

    /// [`SqlDb::run_script_into`] calling `observe(statements done)` after each statement;
    /// `Break` stops the script there ([`SqlError::Interrupted`]).
    pub fn run_script_observed(
        &mut self,
        sql: &str,
        out: &mut Vec<StatementOutput>,
        observe: &mut dyn FnMut(usize) -> ControlFlow<()>,
    ) -> SqlResult<()> {
        check_no_nul(sql)?;
        let text = nul_terminated(sql);
        let mut batch = Batch::new(&self.conn, &text);
        loop {
            if self.interrupted() {
                return Err(SqlError::Interrupted);
            }
            // preparing may read the schema: that I/O belongs to the statement
            let before = self.statement_snapshot()?;
            let mut stmt = match batch.next() {
                Ok(Some(stmt)) => stmt,
                Ok(None) => return Ok(()),
                Err(e) => return Err(self.error(e)),
            };
            self.tracker.statement_begins(before.0, before.1);
            let result = run_statement(&mut stmt, &[]);
            drop(stmt);
            statement_ended(&mut self.tracker, &self.disk, self.conn.is_autocommit())?;
            let output = result.map_err(|e| self.error(e))?;
            self.refuse_memory_journal(&output)?;
            out.push(output);
            if observe(out.len()).is_break() {
                return Err(SqlError::Interrupted);
            }
        }
    }

    /// Installs `check` (`None`: removes it): asked before each statement of a script and
    /// every [`INTERRUPT_OPS`] SQLite instructions while one runs; once it returns `true` the
    /// running statement stops (SQLite rolls it back, and an open transaction with it) and the
    /// call returns [`SqlError::Interrupted`]. It never changes what a completed run does.
    pub fn set_interrupt(&mut self, check: Option<Interrupt>) -> SqlResult<()> {
        match &check {
            Some(check) => {
                let check = Arc::clone(check);
                self.conn
                    .progress_handler(INTERRUPT_OPS, Some(move || check()))?;
            }
            None => self.conn.progress_handler(0, None::<fn() -> bool>)?,
        }
        self.interrupt = InterruptSlot(check);
        Ok(())
    }

    /// Refuses a switch to `PRAGMA journal_mode = memory` made by SQL (as `--journal-mode`
    /// refuses it): the journal would live in host memory, so nothing of it reaches the
    /// simulated SSD. The configured mode is restored first.
    fn refuse_memory_journal(&self, output: &StatementOutput) -> SqlResult<()> {
        let switched = output.columns.len() == 1
            && output.columns[0].eq_ignore_ascii_case("journal_mode")
            && matches!(&output.rows[..], [row] if matches!(&row[..], [SqlValue::Text(m)] if m.eq_ignore_ascii_case("memory")));
        if !switched {
            return Ok(());
        }
        let mode = self.options.journal_mode.sqlite_mode();
        let _: String = self
            .conn
            .query_row(&format!("PRAGMA journal_mode = {mode}"), [], |r| r.get(0))?;
        Err(SqlError::Usage(format!(
            "PRAGMA journal_mode = memory: refused (the journal would stay in host memory, off \
             the simulated SSD); journal_mode is back to {mode}"
        )))
    }

    /// Whether the interrupt check asks to stop.
    pub fn interrupted(&self) -> bool {
        self.interrupt.0.as_ref().is_some_and(|check| check())
    }

    /// A SQLite error as the layer's: an interrupt the check asked for is
    /// [`SqlError::Interrupted`].
    fn error(&self, e: rusqlite::Error) -> SqlError {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::OperationInterrupted)
            && self.interrupt.0.is_some()
        {
            return SqlError::Interrupted;
        }
        sql_error(&self.disk, e)
    }

    /// Runs the one statement in `sql` with positional parameters `params` (`?`, `?N`).
    pub fn execute(&mut self, sql: &str, params: &[SqlValue]) -> SqlResult<StatementOutput> {
        check_no_nul(sql)?;
        let text = nul_terminated(sql);
        let mut batch = Batch::new(&self.conn, &text);
        if self.interrupted() {
            return Err(SqlError::Interrupted);
        }
        let before = self.statement_snapshot()?;
        let mut stmt = match batch.next() {
            Ok(Some(stmt)) => stmt,
            Ok(None) => return Err(SqlError::Usage("sql: no statement".into())),
            Err(e) => return Err(self.error(e)),
        };
        self.tracker.statement_begins(before.0, before.1);
        let result = run_statement(&mut stmt, params);
        drop(stmt);
        statement_ended(&mut self.tracker, &self.disk, self.conn.is_autocommit())?;
        let output = result.map_err(|e| self.error(e))?;
        self.refuse_memory_journal(&output)?;
        // anything after the statement is refused (it ran: like sqlite3's "one statement")
        if let Ok(Some(_)) | Err(_) = batch.next() {
            return Err(SqlError::Usage(
                "sql: one statement expected (the first ran; use a script for several)".into(),
            ));
        }
        Ok(output)
    }

    /// Before a statement: the simulated time (ps) and, when the statement starts a
    /// transaction, the device's full snapshot (its energy sum is not taken per statement).
    fn statement_snapshot(&self) -> SqlResult<(u64, Option<DeviceSnapshot>)> {
        let disk = lock(&self.disk)?;
        let full = self.tracker.starts_transaction().then(|| disk.snapshot());
        Ok((disk.now().as_ps(), full))
    }

    /// True inside `BEGIN … COMMIT`.
    pub fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit()
    }

    pub fn last_insert_rowid(&self) -> i64 {
        self.conn.last_insert_rowid()
    }

    /// Starts a new measurement: the metrics cover what happens from now on.
    pub fn reset_metrics(&mut self) -> SqlResult<()> {
        let now = lock(&self.disk)?.snapshot();
        self.tracker = TxTracker::new(now);
        Ok(())
    }

    /// The metrics of the current measurement.
    pub fn metrics(&self) -> SqlResult<SqlMetrics> {
        let now = lock(&self.disk)?.snapshot();
        let mut mode = self
            .journal_mode()
            .unwrap_or_else(|_| self.options.journal_mode.to_string());
        if lock(&self.disk)?.transactional() && mode == "delete" {
            mode = JournalMode::Atomic.to_string();
        }
        Ok(self.tracker.metrics(&now, &mode))
    }

    /// The SSD's own report since it was built (latencies, GC, wear, energy).
    pub fn device_report(&self) -> SqlResult<SsdReport> {
        Ok(lock(&self.disk)?.ssd().report())
    }

    /// The disk below the VFS (file table, counters); hold the guard briefly.
    pub fn disk(&self) -> SqlResult<MutexGuard<'_, SimDisk>> {
        lock(&self.disk)
    }

    /// The underlying connection (for callers that need rusqlite directly; metrics then only
    /// see the device counters, not the transactions).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Closes the connection and returns the disk (to mount its SSD again).
    pub fn into_disk(self) -> SqlResult<SimDisk> {
        let SqlDb {
            conn,
            registration,
            disk,
            ..
        } = self;
        drop(conn);
        drop(registration);
        Arc::try_unwrap(disk)
            .map_err(|_| SqlError::Usage("simulated disk: still shared".into()))?
            .into_inner()
            .map_err(|_| SqlError::Usage("simulated disk: a VFS call panicked earlier".into()))
    }

    /// The VFS name the connection was opened with.
    pub fn vfs_name(&self) -> &str {
        self.registration.name()
    }
}

/// The SSD `options` need: the atomic mode turns the transactional FTL on.
fn prepare_ssd(mut ssd: Ssd, options: &SqlOptions) -> SqlResult<Ssd> {
    if options.journal_mode == JournalMode::Atomic && !ssd.transactional() {
        let shadow = (ssd.logical_pages() / ATOMIC_SHADOW_FRACTION).max(1);
        ssd.enable_transactions(u32::try_from(shadow).unwrap_or(u32::MAX))
            .map_err(|e| SqlError::Usage(format!("journal_mode `atomic`: {e}")))?;
    }
    Ok(ssd)
}

/// A SQLite error, with the simulated SSD's error when the VFS noted one.
fn sql_error(disk: &SharedDisk, e: rusqlite::Error) -> SqlError {
    match disk.lock().ok().and_then(|mut d| d.take_last_error()) {
        Some(device) => SqlError::Usage(format!("sqlite: {e} (simulated SSD: {device})")),
        None => SqlError::Sqlite(e),
    }
}

fn lock(disk: &SharedDisk) -> SqlResult<MutexGuard<'_, SimDisk>> {
    disk.lock()
        .map_err(|_| SqlError::Usage("simulated disk: a VFS call panicked earlier".into()))
}

#[cfg(test)]
mod journal_tests;
#[cfg(test)]
mod tests;
