//! Real SQLite on the simulated SSD (SPEC B1).
//!
//! SQLite (bundled: compiled from the amalgamation rusqlite ships, so no system SQLite) runs
//! unchanged on a VFS whose files live on the logical space of a simulated SSD in full payload
//! mode. Top down:
//! - [`SqlDb`]: a connection on a device, journal mode chosen at open ([`JournalMode`]),
//!   scripts and single statements, per-transaction metrics ([`SqlMetrics`]);
//! - [`vfs`]: the VFS (safe code in `vfs`, the C tables in `vfs::ffi`);
//! - [`disk::SimDisk`]: files as extents on the SSD ([`extent`]), reads and writes through
//!   the controller, syncs as Flush, truncation and deletion as TRIM;
//! - [`device`]: where new SSDs come from ([`SsdSource`]; the stack builder names them).
//!
//! Unsafe code: the workspace denies it; `vfs::ffi` alone allows it, to fill SQLite's C VFS
//! tables (no maintained VFS crate builds without bindgen/libclang and lets the VFS report
//! its own device characteristics). Every unsafe block there has a SAFETY note.
//!
//! docs/sql.md describes the layout, what the VFS claims, and the metrics.

pub mod bench;
pub mod db;
pub mod device;
pub mod disk;
pub mod error;
pub mod extent;
pub mod metrics;
pub mod tpcc;
pub mod vfs;

pub use db::{Interrupt, JournalMode, SqlDb, SqlOptions, SqlValue, StatementOutput, run_script_on};
pub use device::SsdSource;
pub use error::{SqlError, SqlResult};
pub use metrics::{SqlMetrics, TxTotals};
