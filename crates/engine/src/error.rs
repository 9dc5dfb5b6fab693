//! The engine layer's one error type.

use crate::device::Lpa;
use crate::table::RowId;

/// Everything that can go wrong in the engine or in a device it talks to.
///
/// Messages name the offending row, LPA, slot or config field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A configuration value is out of its valid range.
    #[error("invalid config `{field}` = {value}: {reason}")]
    Config {
        field: &'static str,
        value: String,
        reason: String,
    },
    /// A device call named a logical page beyond the device's logical space.
    #[error("LPA {lpa} is out of range: the device has {page_count} logical pages")]
    LpaOutOfRange { lpa: Lpa, page_count: u64 },
    /// A page buffer passed to a device had the wrong length.
    #[error("buffer for LPA {lpa} is {len_bytes} B but the page size is {page_size_bytes} B")]
    BufferSize {
        lpa: Lpa,
        len_bytes: usize,
        page_size_bytes: usize,
    },
    /// The device failed an operation (e.g. no reclaimable block left).
    #[error("device {op} of LPA {lpa} failed: {reason}")]
    Device {
        op: &'static str,
        lpa: Lpa,
        reason: String,
    },
    /// A query named a row that is not live.
    #[error("row {row} not found (never inserted or deleted)")]
    RowNotFound { row: RowId },
    /// An insert found no free row slot in the whole table.
    #[error("table full: all {slot_count} row slots hold live rows")]
    TableFull { slot_count: u64 },
    /// Verification found a row whose bytes differ from the last value written.
    #[error("corrupt row at LPA {lpa} slot {slot_in_page}: {detail}")]
    Corruption {
        lpa: Lpa,
        slot_in_page: u32,
        detail: String,
    },
}

impl EngineError {
    /// Shorthand for a [`EngineError::Config`] error.
    pub fn config(field: &'static str, value: impl ToString, reason: impl ToString) -> Self {
        EngineError::Config {
            field,
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}
