//! The `nandlab` command line inside the Python package: what the `nandlab` console script
//! (`nandlab._cli:main`, installed by `pip install .`) runs.

use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;

/// Runs the `nandlab` command with `args` (without the program's name) and returns its exit
/// status. Its workers run `worker_exe sweep-worker` (the console script itself: this
/// process is the Python interpreter). The command owns the process from here: it installs
/// its own Ctrl-C handler, and the caller is to exit with the returned status.
#[pyfunction]
#[pyo3(signature = (args, worker_exe=None))]
pub fn cli_main(py: Python<'_>, args: Vec<OsString>, worker_exe: Option<PathBuf>) -> u8 {
    let argv = std::iter::once(OsString::from("nandlab"))
        .chain(args)
        .collect();
    py.detach(|| nandlab_cli::run_cli(argv, worker_exe))
}
