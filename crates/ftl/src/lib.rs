#![warn(missing_docs)]
//! SSD controller and flash translation layer (SPEC F1–F8) on top of the chip model
//! [`nandlab_nand::NandSim`].
//!
//! What a user calls, top first:
//! - [`Ssd`]: build from an [`SsdConfig`] and a seed; [`Ssd::run`] a stream of
//!   [`HostRequest`]s and get an [`SsdReport`]; [`Ssd::execute`] one request synchronously;
//!   [`Ssd::precondition`]; the co-design hints [`Ssd::page_size_bytes`] and
//!   [`Ssd::next_erase_block_valid_lpas`].
//!
//! Mechanics below: [`host`] (requests, queue), [`mapping`] (page / block / hybrid),
//! `gc` (victim policies), `wear` (wear-leveling), `buffer` (DRAM write buffer),
//! `flash` (block accounting, op emission, payloads), [`stats`].

pub mod address;
mod buffer;
pub mod config;
pub mod error;
mod flash;
mod gc;
pub mod host;
pub mod mapping;
pub mod memory;
mod ssd;
pub mod stats;
mod wear;

pub use address::{Lpa, Ppa};
pub use config::{
    BufferPolicy, DeviceConfig, FtlConfig, GcPolicy, GcScope, MappingKind, PayloadMode, SsdConfig,
    WearLeveling,
};
pub use error::{FtlError, FtlResult};
pub use flash::oob::{OOB_BYTES, PageOob, oob_crc};
pub use host::{HostOp, HostRequest};
pub use memory::MemoryEstimate;
pub use ssd::{
    Executed, PRECONDITION_PROGRESS_WRITES, Precondition, Ssd, WriteState, WriteStateCounts,
    logical_pages, simulate,
};
pub use stats::{FtlCounters, SsdReport};
