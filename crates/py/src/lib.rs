//! PyO3 bindings: thin wrappers over `nandlab_lab::api`. No simulation logic lives here; every
//! function takes and returns plain strings (JSON) so the Python package owns the data model.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

fn to_py(e: nandlab_lab::LabError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The nandlab version (same as `nandlab --version`).
#[pyfunction]
fn version() -> &'static str {
    nandlab_lab::version()
}

/// Runs a chip-level workload from a JSON spec; returns the JSON result. Releases the GIL.
#[pyfunction]
fn run_chip(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.detach(|| nandlab_lab::api::run_chip_json(&spec_json))
        .map_err(to_py)
}

/// Runs experiment `id` into `out`; returns the text of `summary.json`. Releases the GIL.
#[pyfunction]
fn reproduce(
    py: Python<'_>,
    id: String,
    out: PathBuf,
    scale: String,
    seed: u64,
) -> PyResult<String> {
    py.detach(|| nandlab_lab::api::reproduce_json(&id, &out, &scale, seed))
        .map_err(to_py)
}

/// Runs an SSD run config (TOML text, the `nandlab run` format); returns the report JSON.
/// Releases the GIL.
#[pyfunction]
fn run_ssd(py: Python<'_>, origin: String, config_toml: String) -> PyResult<String> {
    py.detach(|| nandlab_lab::api::run_ssd_toml(&origin, &config_toml))
        .map_err(to_py)
}

/// Replays a trace file on an SSD; returns `{"report": …, "folded_requests": N}` as JSON.
/// Releases the GIL.
#[pyfunction]
fn replay(
    py: Python<'_>,
    trace: PathBuf,
    format: String,
    device_toml: String,
    closed_loop: bool,
    seed: u64,
) -> PyResult<String> {
    py.detach(|| nandlab_lab::api::replay_json(&trace, &format, &device_toml, closed_loop, seed))
        .map_err(to_py)
}

/// Runs a storage engine on the scaled miyaji2014 SSD (JSON spec in, metrics JSON out).
/// Releases the GIL.
#[pyfunction]
fn run_engine(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.detach(|| nandlab_lab::api::run_engine_json(&spec_json))
        .map_err(to_py)
}

/// JSON list of `[id, reference, title]` for every experiment.
#[pyfunction]
fn experiments() -> String {
    nandlab_lab::api::experiments_json()
}

/// Names of the built-in NAND presets.
#[pyfunction]
fn preset_names() -> Vec<String> {
    nandlab_lab::api::preset_names()
}

/// TOML text of a built-in NAND preset.
#[pyfunction]
fn preset_toml(name: String) -> PyResult<String> {
    nandlab_lab::api::preset_toml(&name).map_err(to_py)
}

#[pymodule]
fn _nandlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(run_chip, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(run_ssd, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(run_engine, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    Ok(())
}
