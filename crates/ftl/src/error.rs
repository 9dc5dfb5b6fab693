//! The controller layer's one error enum. Messages name the offending key, address or request.

use nandlab_nand::NandError;
use thiserror::Error;

/// Everything that can go wrong in the SSD controller and FTL.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
#[allow(missing_docs)] // variant fields are named by their messages
pub enum FtlError {
    /// A configuration value is missing, out of range or inconsistent with another.
    #[error("invalid config key `{key}`: {message}")]
    Config { key: String, message: String },

    /// The chip model refused an operation (a NAND constraint violation is an FTL bug).
    #[error("flash: {0}")]
    Nand(#[from] NandError),

    /// No free block can be produced: every block of the plane set is full of valid data.
    #[error("device full: {message}")]
    DeviceFull { message: String },

    /// A host request addresses bytes beyond the logical capacity.
    #[error(
        "request out of range: bytes {offset_bytes}..{end_bytes} but the logical capacity is {capacity_bytes} bytes"
    )]
    OutOfRange {
        offset_bytes: u64,
        end_bytes: u64,
        capacity_bytes: u64,
    },

    /// A host request is malformed (zero length, data of the wrong size, …).
    #[error("bad request: {message}")]
    BadRequest { message: String },

    /// The request source (a trace reader or generator) failed; its message names the file
    /// and line.
    #[error("workload: {message}")]
    Workload { message: String },

    /// Simulated time would pass its end (2^64 ps, about 213 days) while request `request`
    /// (1-based, in admission order) or the work before it was simulated: an arrival time or a
    /// timing parameter too large for the run.
    #[error(
        "simulated time would exceed {} at request {request} (arrival times or flash timings too large for this run)",
        nandlab_core::time::END_OF_TIME_TEXT
    )]
    EndOfTime { request: u64 },

    /// The caller asked to stop (a progress callback returned `Break`, e.g. on Ctrl-C).
    #[error("interrupted: {message}")]
    Interrupted { message: String },

    /// A read of the request failed ECC after every read-retry (`[nand.reliability]`): the
    /// request completed with this error status and no data (never as good data).
    #[error("uncorrectable read: {message}")]
    Uncorrectable { message: String },

    /// The simulation cannot make progress (requests in flight but no event pending): a bug.
    #[error("simulation stalled: {message}")]
    Stalled { message: String },
}

/// Result alias of this crate.
pub type FtlResult<T> = Result<T, FtlError>;

pub(crate) fn config_error(key: impl Into<String>, message: impl Into<String>) -> FtlError {
    FtlError::Config {
        key: key.into(),
        message: message.into(),
    }
}
