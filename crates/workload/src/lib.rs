//! Workload generators and trace readers/writers (SPEC W1, W4).
//!
//! Everything here produces [`BlockRequest`]s: a byte range, an operation and an optional
//! arrival time (`None` = closed loop, issue when the host queue has room).
//!
//! - [`synthetic`]: seeded generators from a [`SyntheticSpec`] (sequential/random, mix, Zipf,
//!   hot/cold, arrival processes).
//! - [`fio`]: a stated subset of fio job files, turned into synthetic streams.
//! - [`ssb`]: Star Schema Benchmark tables (seeded, any scale factor, streamed).
//! - [`trace`]: streaming readers for MSR Cambridge, blkparse, DiskSim and nandlab's native CSV,
//!   and [`NativeCsvWriter`] to capture any request stream for replay.
//!
//! Every error is a [`WorkloadError`] whose message names the file and line, or the key.

pub mod content;
pub mod error;
pub mod fio;
mod lines;
pub mod request;
pub mod ssb;
pub mod synthetic;
pub mod trace;
mod units;
pub mod ycsb;

pub use error::WorkloadError;
pub use lines::MAX_LINE_BYTES;
pub use request::{BlockRequest, IoOp, RequestSource};
pub use synthetic::{
    AddressDistribution, ArrivalProcess, Pattern, SyntheticGenerator, SyntheticSpec,
    UniformRandomWrites,
};
pub use trace::{
    ArrivalMode, BlkparseAction, NativeCsvWriter, TraceFormat, TraceOptions, open_trace, read_trace,
};
pub use units::SECTOR_BYTES;
