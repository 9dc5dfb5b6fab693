//! PyO3 bindings: thin wrappers over `nandlab-lab`. No simulation logic lives here.

use pyo3::prelude::*;

/// The nandlab version (same as `nandlab --version`).
#[pyfunction]
fn version() -> &'static str {
    nandlab_lab::version()
}

#[pymodule]
fn _nandlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
