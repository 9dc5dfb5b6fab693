//! `NvmeDevice`: the NVMe host interface of a stack config's SSD (zoned namespaces, FDP), for
//! `python/nandlab/nvme.py`. A thin wrapper over `nandlab_lab::nvme_api::NvmeDevice`: commands
//! go in and completions, zone reports and FDP logs come out as JSON text. Commands run
//! without the GIL.

use nandlab_lab::nvme_api;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Mutex;

fn to_py(e: nandlab_lab::LabError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An SSD with its NVMe host interface.
#[pyclass(module = "nandlab._nandlab")]
#[derive(Debug)]
pub struct NvmeDevice {
    device: Mutex<nvme_api::NvmeDevice>,
}

impl NvmeDevice {
    fn with<T>(&self, f: impl FnOnce(&mut nvme_api::NvmeDevice) -> T) -> PyResult<T> {
        let mut guard = self
            .device
            .lock()
            .map_err(|_| PyValueError::new_err("device: an earlier call failed inside"))?;
        Ok(f(&mut guard))
    }
}

#[pymethods]
impl NvmeDevice {
    /// Opens the device of stack config `config_toml` (named `origin` in errors; relative
    /// paths from `base_dir`); its `[precondition]` is applied, its `[workload]` not run.
    #[new]
    #[pyo3(signature = (origin, config_toml, base_dir=PathBuf::from(".")))]
    fn new(
        py: Python<'_>,
        origin: String,
        config_toml: String,
        base_dir: PathBuf,
    ) -> PyResult<Self> {
        let device = py
            .detach(|| nvme_api::NvmeDevice::open(&origin, &config_toml, &base_dir))
            .map_err(to_py)?;
        Ok(NvmeDevice {
            device: Mutex::new(device),
        })
    }

    /// The namespaces, LBA size and queue pairs (JSON).
    fn namespaces_json(&self) -> PyResult<String> {
        self.with(|d| d.namespaces_json())
    }

    /// Runs a JSON list of commands on namespace `ns` from queue `queue` to completion;
    /// returns their completions (JSON list, in submission order).
    #[pyo3(signature = (ns, commands_json, queue=0))]
    fn submit_json(
        &self,
        py: Python<'_>,
        ns: u32,
        commands_json: String,
        queue: u16,
    ) -> PyResult<String> {
        py.detach(|| self.with(|d| d.submit_json(ns, queue, &commands_json)))?
            .map_err(to_py)
    }

    /// Report Zones of namespace `ns` (`state`: one state's zones; empty: all), JSON.
    #[pyo3(signature = (ns, state=String::new()))]
    fn report_zones_json(&self, ns: u32, state: String) -> PyResult<String> {
        self.with(|d| d.report_zones_json(ns, &state))?
            .map_err(to_py)
    }

    /// FDP statistics, events and handle status of namespace `ns` (JSON).
    fn fdp_json(&self, ns: u32) -> PyResult<String> {
        self.with(|d| d.fdp_json(ns))?.map_err(to_py)
    }

    /// Reclaim Unit Handle Update of placement identifier `pid` on namespace `ns`; its status.
    fn update_handle(&self, ns: u32, pid: u16) -> PyResult<String> {
        self.with(|d| d.update_handle(ns, pid))?.map_err(to_py)
    }

    /// The host interface's and the SSD's reports and the simulated time (JSON).
    fn report_json(&self) -> PyResult<String> {
        self.with(|d| d.report_json())
    }
}
