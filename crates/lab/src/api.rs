//! A JSON-in, JSON-out facade over the runner for the Python bindings (`crates/py`), so that the
//! bindings hold no logic and both fronts produce byte-identical results for the same inputs.

use crate::chip::ChipRunSpec;
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

/// Runs experiment `id` into `out` and returns the text of its `summary.json`.
pub fn reproduce_json(id: &str, out: &Path, scale: &str, seed: u64) -> LabResult<String> {
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
    experiments::reproduce(id, &RunOptions { scale, seed }, out)?;
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
/// JSON (the same bytes `nandlab run --out` writes to report.json, without the final newline).
pub fn run_ssd_toml(origin: &str, text: &str) -> LabResult<String> {
    let config = crate::ssd::RunConfig::from_toml(origin, text)?;
    let report = crate::ssd::run_config(&config)?;
    Ok(serde_json::to_string_pretty(&report).expect("reports serialize"))
}

/// Replays a trace file on an SSD (`device_toml`: the `[device]`/`[ftl]` TOML of a device
/// file, or empty for the default device); returns
/// `{"report": …, "folded_requests": N}`.
pub fn replay_json(
    trace: &Path,
    format: &str,
    device_toml: &str,
    closed_loop: bool,
    seed: u64,
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
    let (report, folded) = crate::ssd::run_source(config, seed, source, None)?;
    let value = serde_json::json!({ "report": report, "folded_requests": folded });
    Ok(serde_json::to_string(&value).expect("reports serialize"))
}
