//! The chip model's one error enum. Every message names the offending key, address or command.

use crate::geometry::PageAddress;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum NandError {
    /// A configuration value is missing, out of range or inconsistent with another.
    #[error("invalid config key `{key}`: {message}")]
    Config { key: String, message: String },

    #[error("unknown preset `{name}` (known: {known})")]
    UnknownPreset { name: String, known: String },

    #[error("cannot parse chip config `{name}`: {message}")]
    PresetParse { name: String, message: String },

    /// An address component is beyond the geometry.
    #[error("address out of range: {field} = {value} but the device has {limit} ({address})")]
    AddressOutOfRange {
        field: &'static str,
        value: u64,
        limit: u64,
        address: String,
    },

    /// The multiplane plane-addressing rule (same die, same page offset, distinct planes).
    #[error("plane addressing rule violated: {message}")]
    PlaneRule { message: String },

    /// An operation that the mode does not support (e.g. cache erase).
    #[error("unsupported operation: {message}")]
    Unsupported { message: String },

    /// NOP limit: a page was programmed more times than the device allows before an erase.
    #[error("NOP limit exceeded at {address}: program #{count} but the limit is {limit}")]
    NopExceeded {
        address: PageAddress,
        count: u32,
        limit: u32,
    },

    /// In-order programming within a block.
    #[error(
        "out-of-order program at {address}: page {page} is below the last programmed page {last_page} of the block"
    )]
    OutOfOrderProgram {
        address: PageAddress,
        page: u32,
        last_page: u32,
    },

    /// Endurance: erasing the block would exceed its guaranteed program/erase cycles.
    #[error("endurance limit reached at {address}: erase #{count} exceeds the limit of {limit}")]
    EnduranceExceeded {
        address: PageAddress,
        count: u32,
        limit: u32,
    },

    /// A read of a page that holds no data since the last erase (not a device error on real
    /// chips, but in a simulation it is almost always a bug in the layer above).
    #[error("read of an erased page at {address}")]
    ReadErased { address: PageAddress },

    /// The low-level ONFI command interface received a cycle the die state machine did not expect.
    #[error("die {die}: bad command sequence: expected {expected}, got {got}")]
    CommandSequence {
        die: u32,
        expected: String,
        got: String,
    },

    /// Simulated time would pass its end (2^64 ps, about 213 days): a timing parameter or an
    /// arrival time is too large for the run.
    #[error("simulated time would exceed {limit} {context}")]
    EndOfTime {
        limit: &'static str,
        context: String,
    },

    /// A Search-in-Memory rule (block mode, latches, command arguments; paper 004 §III-C, §IV-B).
    #[error("search-in-memory rule violated: {message}")]
    SearchRule { message: String },

    /// A bounded table or queue is full.
    #[error("capacity exceeded: {what} (limit {limit})")]
    Capacity { what: &'static str, limit: u64 },
}

pub type NandResult<T> = Result<T, NandError>;

pub(crate) fn config_error(key: impl Into<String>, message: impl Into<String>) -> NandError {
    NandError::Config {
        key: key.into(),
        message: message.into(),
    }
}
