//! Power-loss testing on the runner's devices. The harnesses (cut sweeps, cut–recover–continue
//! cycles, the random crash draw) and the crash oracle live in `nandlab-power`, re-exported
//! here; this module hands them the stack builder ([`build_ssd`]) through wrappers of the
//! same names, and keeps the two power experiments that need the runner: [`engine`] (the
//! paper-000 engine on lab's co-design device) and [`scaling`] (mount time against capacity).

pub mod engine;
pub mod scaling;

pub use nandlab_power::*;

use crate::error::{LabError, LabResult};
use crate::stack::DeviceFile;
use nandlab_ftl::SsdConfig;
use nandlab_power::crash::{CrashSummary, Draw, DrawnCase, Mutation};
use nandlab_power::cycles::CyclesOutcome;
use nandlab_power::sweep::{SweepMode, SweepSummary};
use std::ops::ControlFlow;

/// The stack builder as the power harnesses take it ([`BuildSsd`]).
pub fn build_ssd(origin: &str, table: toml::Table) -> Result<SsdConfig, String> {
    DeviceFile::from_table(origin, table).map_err(|e| e.to_string())
}

/// `device`'s SSD config, resolved and checked by the stack builder.
pub fn device_config(device: &CrashDevice) -> Result<SsdConfig, String> {
    device.config(build_ssd)
}

/// Runs one case ([`nandlab_power::run_case`]).
pub fn run_case(case: &CrashCase) -> Result<CrashOutcome, String> {
    nandlab_power::run_case(case, build_ssd)
}

/// A cut sweep with progress ([`nandlab_power::sweep::sweep_progress`]).
pub fn sweep_progress(
    base: &CrashCase,
    mode: SweepMode,
    stride: u64,
    cuts_max: u64,
    progress: &mut dyn FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<SweepSummary, String> {
    nandlab_power::sweep::sweep_progress(base, mode, stride, cuts_max, build_ssd, progress)
}

/// Case `index` of `seed` ([`nandlab_power::crash::draw_case_by`]).
pub fn draw_case_by(seed: u64, index: u64, mutation: Mutation, draw: Draw) -> DrawnCase {
    nandlab_power::crash::draw_case_by(seed, index, mutation, draw, build_ssd)
}

/// Runs one drawn case ([`nandlab_power::crash::run_drawn`]).
pub fn run_drawn(drawn: &DrawnCase) -> Result<CyclesOutcome, String> {
    nandlab_power::crash::run_drawn(drawn, build_ssd)
}

/// The random crash harness ([`nandlab_power::crash::crash_by`]).
pub fn crash_by(
    seed: u64,
    cuts: u64,
    mutation: Mutation,
    draw: Draw,
    progress: impl FnMut(u64) -> ControlFlow<()>,
) -> Result<CrashSummary, String> {
    nandlab_power::crash::crash_by(seed, cuts, mutation, draw, build_ssd, progress)
}

/// `text` parsed as the stack config parses its value (the same names as in a TOML file, e.g.
/// `cost-benefit` for `[ssd.gc] policy`); the error names `flag`.
pub fn parse_config_name<T: serde::de::DeserializeOwned>(flag: &str, text: &str) -> LabResult<T> {
    use serde::de::value::{Error, StrDeserializer};
    T::deserialize(StrDeserializer::<Error>::new(text))
        .map_err(|e| LabError::Usage(format!("{flag} {text:?}: {e}")))
}
