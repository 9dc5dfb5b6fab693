//! The nandlab runner: the one place that wires the layers together. Configs, chip-level
//! runs, paper reproductions ([`experiments`]), output files, benchmarks.

pub mod api;
pub mod bench;
pub mod chip;
pub mod codesign;
pub mod console;
pub mod control;
pub mod error;
pub mod experiments;
pub mod info;
pub mod nvme_api;
pub mod output;
pub mod power;
pub mod progress;
pub mod sim_api;
pub mod sim_eval;
pub mod sql;
pub mod ssd;
pub mod stack;
pub mod sweep;
pub mod sweep_run;

pub use error::{LabError, LabResult};

/// The version string shared by the CLI and the Python package.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
