//! A JSON-in, JSON-out facade over the runner for the Python bindings (`crates/py`), so that the
//! bindings hold no logic and both fronts produce byte-identical results for the same inputs.

use crate::chip::ChipRunSpec;
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::experiments::{self, RunOptions, Scale};
use std::path::Path;

/// Runs a chip-level workload described by a JSON [`ChipRunSpec`]; returns
/// `{"spec": …, "report": …, "read_cdf": […], "write_cdf": […]}`.
pub fn run_chip_json(spec_json: &str) -> LabResult<String> {
    let spec: ChipRunSpec =
        serde_json::from_str(spec_json).map_err(|e| LabError::Usage(format!("chip spec: {e}")))?;
    let report = spec.run()?;
    let value = serde_json::json!({
        "spec": spec,
        "report": report,
        "read_cdf": report.read_cdf,
        "write_cdf": report.write_cdf,
    });
    Ok(serde_json::to_string(&value).expect("reports serialize"))
}

/// Runs experiment `id` into `out` and returns the text of its `summary.json` (with
/// `"interrupted": true` when `control` was cancelled before it finished).
pub fn reproduce_json(
    id: &str,
    out: &Path,
    scale: &str,
    seed: u64,
    control: &Control,
) -> LabResult<String> {
    let scale = match scale {
        "quick" => Scale::Quick,
        "standard" => Scale::Standard,
        "full" => Scale::Full,
        other => {
            return Err(LabError::Usage(format!(
                "scale `{other}`: expected quick, standard or full"
            )));
        }
    };
    let options = RunOptions {
        scale,
        seed,
        control: control.clone(),
    };
    experiments::reproduce(id, &options, out)?;
    std::fs::read_to_string(out.join("summary.json")).map_err(|source| LabError::Read {
        path: out.join("summary.json").display().to_string(),
        source,
    })
}

/// `[[id, reference, title], …]` of every experiment.
pub fn experiments_json() -> String {
    let list: Vec<[&str; 3]> = experiments::registry()
        .map(|e| [e.id, e.reference, e.title])
        .collect();
    serde_json::to_string(&list).expect("strings serialize")
}

/// The TOML text of a NAND preset.
pub fn preset_toml(name: &str) -> LabResult<String> {
    Ok(nandlab_nand::preset::preset_toml(name)?.to_string())
}

pub fn preset_names() -> Vec<String> {
    nandlab_nand::preset_names()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Runs an SSD run config given as TOML text (the `nandlab run` format); returns the report
/// JSON (the same bytes `nandlab run --out` writes to report.json, without the final newline)
/// and, with `out`, writes the same files as `nandlab run --out`. A cancelled `control` stops
/// the run early: the report then covers the requests admitted and has `"interrupted": true`.
pub fn run_ssd_toml(
    origin: &str,
    text: &str,
    out: Option<&Path>,
    control: &Control,
) -> LabResult<String> {
    let config = crate::ssd::RunConfig::from_toml(origin, text)?;
    let run = crate::ssd::run_config_captured(&config, None, control)?;
    if let Some(dir) = out {
        crate::ssd::write_ssd_results(&run, dir)?;
    }
    Ok(run.to_json_pretty())
}

/// Checks a run config given as TOML text as `nandlab run` does before running (see
/// [`crate::ssd::RunConfig::check`]); returns the config as JSON with every default filled in.
pub fn check_run_config_toml(origin: &str, text: &str) -> LabResult<String> {
    let config = crate::ssd::RunConfig::from_toml(origin, text)?;
    config.check()?;
    Ok(serde_json::to_string(&config).expect("configs serialize"))
}

/// Replays a trace file on an SSD (`device_toml`: the `[device]`/`[ftl]` TOML of a device
/// file, or empty for the default device); returns `{"report": …, "folded_requests": N}` and,
/// with `out`, writes the files of `nandlab replay --out`. `control` as in [`run_ssd_toml`].
pub fn replay_json(
    trace: &Path,
    format: &str,
    device_toml: &str,
    (closed_loop, seed): (bool, u64),
    out: Option<&Path>,
    control: &Control,
) -> LabResult<String> {
    use nandlab_workload::{ArrivalMode, TraceFormat, TraceOptions};
    let format: TraceFormat = format
        .parse()
        .map_err(|e: nandlab_workload::WorkloadError| LabError::Usage(e.to_string()))?;
    let options = TraceOptions {
        arrival: if closed_loop {
            ArrivalMode::ClosedLoop
        } else {
            ArrivalMode::AsRecorded
        },
        ..TraceOptions::default()
    };
    let config = if device_toml.trim().is_empty() {
        crate::ssd::default_device()
    } else {
        nandlab_ftl::SsdConfig::from_toml(device_toml)?
    };
    let source = nandlab_workload::open_trace(trace, format, &options)?;
    let (run, folded) = crate::ssd::run_source(config, seed, source, None, control)?;
    if let Some(dir) = out {
        crate::ssd::write_ssd_results(&run, dir)?;
    }
    let value = serde_json::json!({ "report": run, "folded_requests": folded });
    Ok(serde_json::to_string(&value).expect("reports serialize"))
}

/// Inserts and queries of an engine run between two updates of its control.
const ENGINE_POLL_EVERY: u64 = 64;

/// An engine run on the `miyaji2014` SSD (scaled), as the Python `nandlab.engine()` sends it.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineRunSpec {
    /// Insert Address Assist on/off.
    pub iaa: bool,
    /// Update-to-Delete+Insert on/off.
    pub u2di: bool,
    #[serde(default = "default_row_size")]
    pub row_size_bytes: usize,
    #[serde(default = "default_channels")]
    pub channels: u32,
    #[serde(default = "default_blocks")]
    pub blocks_per_plane: u32,
    #[serde(default = "default_pages")]
    pub pages_per_block: u32,
    /// `{"constant": {…}}` (paper 000 Fig. 12) or `{"drifting": {…}}` (Table I).
    pub protocol: EngineProtocol,
    #[serde(default)]
    pub seed: u64,
}

fn default_row_size() -> usize {
    119
}
fn default_channels() -> u32 {
    1
}
fn default_blocks() -> u32 {
    32
}
fn default_pages() -> u32 {
    32
}

/// The two measurement protocols of paper 000 §4.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum EngineProtocol {
    Constant(nandlab_engine::workload::ConstantFreeSpace),
    Drifting(nandlab_engine::workload::DriftingFreeSpace),
}

/// Runs an engine on the scaled `miyaji2014` SSD; returns the run's metrics as JSON
/// (per-query-type counts and times, device counters, energy, erases per block) plus the
/// derived `queries_per_s`, `mj_per_query` and `we_cycles_per_block`. `control` counts the
/// inserts and queries run; when it is cancelled the run stops, the metrics cover the queries
/// measured so far and the JSON has `"interrupted": true`.
pub fn run_engine_json(spec_json: &str, control: &Control) -> LabResult<String> {
    use crate::codesign::stack::{engine_on_ssd, miyaji_nand, miyaji_ssd_config};
    use nandlab_engine::EngineConfig;
    let spec: EngineRunSpec = serde_json::from_str(spec_json)
        .map_err(|e| LabError::Usage(format!("engine spec: {e}")))?;
    let ssd = miyaji_ssd_config(miyaji_nand(
        spec.channels,
        spec.blocks_per_plane,
        spec.pages_per_block,
    )?);
    let config = EngineConfig {
        row_size_bytes: spec.row_size_bytes,
        ..EngineConfig::conventional().with_switches(spec.iaa, spec.u2di)
    };
    let mut engine = engine_on_ssd(ssd, config, spec.seed)?;
    control.start(None);
    let mut calls = 0u64;
    let mut stopped = false;
    let mut keep_going = || {
        calls += 1;
        if calls.is_multiple_of(ENGINE_POLL_EVERY) {
            stopped |= !control.advance(ENGINE_POLL_EVERY);
        }
        !stopped
    };
    let metrics = match &spec.protocol {
        EngineProtocol::Constant(p) => p.run_while(&mut engine, &mut keep_going)?,
        EngineProtocol::Drifting(p) => p.run_while(&mut engine, &mut keep_going)?,
    };
    control.finish();
    let mut value = serde_json::json!({
        "metrics": metrics,
        "queries_per_s": metrics.queries_per_s(),
        "mj_per_query": metrics.energy_mj_per_query(),
        "we_cycles_per_block": metrics.erases_per_block_mean(),
    });
    if stopped {
        value["interrupted"] = serde_json::Value::Bool(true);
    }
    Ok(serde_json::to_string(&value).expect("metrics serialize"))
}
