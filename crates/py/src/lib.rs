//! PyO3 bindings: thin wrappers over `nandlab_lab::api`. No simulation logic lives here; every
//! function takes and returns plain strings (JSON) so the Python package owns the data model.
//!
//! Long runs release the GIL and take an optional `progress(done, total_or_None)` callable.
//! About every 100 ms the run re-attaches to the interpreter, checks for signals and calls
//! `progress`. A KeyboardInterrupt (Ctrl-C, or raised by `progress`) stops the run, which
//! still returns its partial result: the KeyboardInterrupt is raised with that result's JSON
//! in its `partial_json` attribute. Any other exception raised by `progress` stops the run and
//! is raised as is.

mod cli;
mod nvme;
mod sql;

use nandlab_lab::control::{Control, ProgressSink};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn to_py(e: nandlab_lab::LabError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// What the progress ticks of one run share with the caller: the callback and the first error
/// raised by the signal check or the callback.
struct Ticks {
    callback: Option<Py<PyAny>>,
    error: Mutex<Option<PyErr>>,
}

/// The run's progress sink: a handle on its [`Ticks`].
struct PySink(Arc<Ticks>);

impl ProgressSink for PySink {
    fn tick(&self, done: u64, total: Option<u64>) -> ControlFlow<()> {
        Python::attach(|py| {
            let outcome = py.check_signals().and_then(|()| match &self.0.callback {
                Some(callback) => callback.call1(py, (done, total)).map(drop),
                None => Ok(()),
            });
            match outcome {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    let mut error = self.0.error.lock().unwrap_or_else(|p| p.into_inner());
                    error.get_or_insert(e);
                    ControlFlow::Break(())
                }
            }
        })
    }
}

/// Runs `run` without the GIL under a [`Control`] whose ticks check signals and call
/// `progress`; see the module docs for what an interrupt raises.
fn controlled<F>(py: Python<'_>, progress: Option<Py<PyAny>>, run: F) -> PyResult<String>
where
    F: FnOnce(&Control) -> nandlab_lab::LabResult<String> + Send,
{
    let ticks = Arc::new(Ticks {
        callback: progress,
        error: Mutex::new(None),
    });
    let control = Control::with_sink(PySink(Arc::clone(&ticks)));
    // a panic is a nandlab bug; it reaches Python as a RuntimeError (an `Exception`, unlike
    // pyo3's PanicException) naming it as one
    let result =
        py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&control))));
    let result = match result {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            return Err(PyRuntimeError::new_err(format!(
                "nandlab internal error (a bug, please report it): {message}"
            )));
        }
    };
    let error = ticks.error.lock().unwrap_or_else(|p| p.into_inner()).take();
    match (result, error) {
        (Ok(json), None) => Ok(json),
        (Ok(json), Some(error)) => {
            if error.is_instance_of::<PyKeyboardInterrupt>(py) {
                error.value(py).setattr("partial_json", json)?;
            }
            Err(error)
        }
        (Err(_), Some(error)) => Err(error),
        (Err(e), None) => Err(to_py(e)),
    }
}

/// The nandlab version (same as `nandlab --version`).
#[pyfunction]
fn version() -> &'static str {
    nandlab_lab::version()
}

/// Runs a chip-level workload from a JSON spec; returns the JSON result. Releases the GIL;
/// Ctrl-C stops it (KeyboardInterrupt with the partial result's JSON in `partial_json`).
#[pyfunction]
fn run_chip(py: Python<'_>, spec_json: String) -> PyResult<String> {
    controlled(py, None, |control| {
        nandlab_lab::api::run_chip_json(&spec_json, control)
    })
}

/// Runs experiment `id` into `out`; returns the text of `summary.json`. Releases the GIL;
/// `progress(points_done, points_total_or_None)`.
#[pyfunction]
#[pyo3(signature = (id, out, scale, seed, progress=None, cache_dir=None))]
fn reproduce(
    py: Python<'_>,
    id: String,
    out: PathBuf,
    scale: String,
    seed: u64,
    progress: Option<Py<PyAny>>,
    cache_dir: Option<PathBuf>,
) -> PyResult<String> {
    controlled(py, progress, |control| {
        nandlab_lab::api::reproduce_json(&id, &out, &scale, seed, cache_dir.as_deref(), control)
    })
}

/// The points of experiment `id` not yet in `cache_dir` (JSON list of `{measure, point, key}`).
#[pyfunction]
fn experiment_plan(
    py: Python<'_>,
    id: String,
    scale: String,
    seed: u64,
    cache_dir: PathBuf,
) -> PyResult<String> {
    controlled(py, None, |_| {
        nandlab_lab::api::plan_json(&id, &scale, seed, &cache_dir)
    })
}

/// One planned point measured: its output as JSON text.
#[pyfunction]
#[pyo3(signature = (measure, point, progress=None))]
fn measure_point(
    py: Python<'_>,
    measure: String,
    point: String,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    controlled(py, progress, |control| {
        nandlab_lab::api::measure_point_json(&measure, &point, control)?
            .ok_or(nandlab_lab::LabError::Interrupted)
    })
}

/// Runs a stack config with a block workload (TOML text, the `nandlab run` format); returns the report JSON and,
/// with `out`, writes the files of `nandlab run --out`. Releases the GIL;
/// `progress(requests_done, requests_total)`.
#[pyfunction]
#[pyo3(signature = (origin, config_toml, out=None, progress=None))]
fn run_ssd(
    py: Python<'_>,
    origin: String,
    config_toml: String,
    out: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    controlled(py, progress, |control| {
        nandlab_lab::api::run_ssd_toml(&origin, &config_toml, out.as_deref(), control)
    })
}

/// Checks a stack config (TOML text) as `nandlab run` does before running; returns it as JSON
/// with every default filled in. Bad keys raise ValueError with the CLI's message.
#[pyfunction]
#[pyo3(signature = (origin, config_toml, overrides_json=String::new()))]
fn check_run_config(
    origin: String,
    config_toml: String,
    overrides_json: String,
) -> PyResult<String> {
    nandlab_lab::api::check_run_config_toml(&origin, &config_toml, &overrides_json).map_err(to_py)
}

/// Replays a trace file on an SSD; returns `{"report": …, "folded_requests": N}` as JSON and,
/// with `out`, writes the files of `nandlab replay --out`. Releases the GIL;
/// `progress(requests_done, None)`.
#[pyfunction]
#[pyo3(signature = (trace, format, device_toml, closed_loop, seed, out=None, progress=None, precondition_reads=true, fit_device=false))]
#[allow(clippy::too_many_arguments)]
fn replay(
    py: Python<'_>,
    trace: PathBuf,
    format: String,
    device_toml: String,
    closed_loop: bool,
    seed: u64,
    out: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    precondition_reads: bool,
    fit_device: bool,
) -> PyResult<String> {
    let options = nandlab_lab::api::ReplayOptions {
        closed_loop,
        seed,
        precondition_reads,
        fit_device,
    };
    controlled(py, progress, |control| {
        nandlab_lab::api::replay_json(
            &trace,
            &format,
            &device_toml,
            options,
            out.as_deref(),
            control,
        )
    })
}

/// Runs a storage engine on the scaled miyaji2014 SSD or a given device (JSON spec in,
/// metrics JSON out).
/// Releases the GIL; `progress(inserts_and_queries_done, None)`.
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None))]
fn run_engine(py: Python<'_>, spec_json: String, progress: Option<Py<PyAny>>) -> PyResult<String> {
    controlled(py, progress, |control| {
        nandlab_lab::api::run_engine_json(&spec_json, control)
    })
}

/// Runs a stack config (TOML text) with `overrides_json` (`{"key.path": value}`) applied;
/// returns `{"metrics": {…}, "interrupted": bool, "outcome": …}` as JSON and, with `out`,
/// writes the files of `nandlab run --out`. Releases the GIL; `progress(done, total)`.
#[pyfunction]
#[pyo3(signature = (origin, config_toml, overrides_json, out=None, progress=None))]
fn run_stack(
    py: Python<'_>,
    origin: String,
    config_toml: String,
    overrides_json: String,
    out: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    controlled(py, progress, |control| {
        nandlab_lab::api::run_stack_json(
            &origin,
            &config_toml,
            &overrides_json,
            out.as_deref(),
            control,
        )
    })
}

/// The points of a sweep: `grid_json` maps key paths to lists; every combination (`zip`
/// false, the last key in sorted order fastest) or the i-th values together. Returns a JSON
/// list of `[[key, value], …]` per point.
#[pyfunction]
fn sweep_points(grid_json: String, zip: bool) -> PyResult<String> {
    nandlab_lab::api::sweep_points_json(&grid_json, zip).map_err(to_py)
}

/// The sweep CSV (the bytes `nandlab sweep` writes) of rows
/// `[{"point": i, "settings": [[k, v]…], "metrics": [[name, value]…]}…]`.
#[pyfunction]
fn sweep_csv(keys_json: String, rows_json: String) -> PyResult<String> {
    nandlab_lab::api::sweep_csv_json(&keys_json, &rows_json).map_err(to_py)
}

/// The declared metric rows of stack runs: `{"ssd": [{name, unit, description}…], "engine": …}`.
#[pyfunction]
fn metric_defs() -> String {
    nandlab_lab::api::metric_defs_json()
}

/// JSON list of `[name, description, source]` of every SSD preset.
#[pyfunction]
fn ssd_presets() -> PyResult<String> {
    nandlab_lab::api::ssd_presets_json().map_err(to_py)
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

/// One point of the SiM evaluation harness (paper 004 §VI) from a JSON spec; returns the JSON
/// result. Releases the GIL.
#[pyfunction]
fn sim_eval(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.detach(|| nandlab_lab::sim_api::sim_eval_json(&spec_json))
        .map_err(to_py)
}

/// Deadline-batched SiM readers (paper 004 §IV-E) from a JSON spec; returns the JSON result.
/// Releases the GIL.
#[pyfunction]
fn sim_batch(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.detach(|| nandlab_lab::sim_api::sim_batch_json(&spec_json))
        .map_err(to_py)
}

/// Paper 004's Table I recomputed from its bus rates and currents, as JSON.
#[pyfunction]
fn sim_table1() -> String {
    nandlab_lab::sim_api::sim_table1_json()
}

/// A SiM secondary index of bit-packed rows built on a fresh chip, and the queries run on it
/// (paper 004 §V-B, §V-C), from a JSON spec; returns the JSON results. Releases the GIL.
#[pyfunction]
fn sim_index(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.detach(|| nandlab_lab::sim_api::sim_index_json(&spec_json))
        .map_err(to_py)
}

#[pymodule]
fn _nandlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    m.add_class::<sql::SqlConnection>()?;
    m.add_class::<nvme::NvmeDevice>()?;
    m.add_function(wrap_pyfunction!(sql::run_tpcc, m)?)?;
    m.add_function(wrap_pyfunction!(run_chip, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_plan, m)?)?;
    m.add_function(wrap_pyfunction!(measure_point, m)?)?;
    m.add_function(wrap_pyfunction!(run_ssd, m)?)?;
    m.add_function(wrap_pyfunction!(check_run_config, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(run_engine, m)?)?;
    m.add_function(wrap_pyfunction!(run_stack, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_csv, m)?)?;
    m.add_function(wrap_pyfunction!(ssd_presets, m)?)?;
    m.add_function(wrap_pyfunction!(metric_defs, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(sim_eval, m)?)?;
    m.add_function(wrap_pyfunction!(sim_batch, m)?)?;
    m.add_function(wrap_pyfunction!(sim_table1, m)?)?;
    m.add_function(wrap_pyfunction!(sim_index, m)?)?;
    Ok(())
}
