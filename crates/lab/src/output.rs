//! Writing results: JSON and CSV files in an output folder.

use crate::error::{LabError, LabResult};
use std::path::Path;

pub fn write_file(path: &Path, text: &str) -> LabResult<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| LabError::Write {
            path: parent.display().to_string(),
            source,
        })?;
    }
    std::fs::write(path, text).map_err(|source| LabError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Makes sure results can be written into `dir` before a run starts (creates it and writes and
/// removes a probe file), so a long run never ends with its results unwritable.
pub fn check_writable_dir(dir: &Path) -> LabResult<()> {
    let probe = dir.join(".nandlab-write-probe");
    write_file(&probe, "")?;
    std::fs::remove_file(&probe).map_err(|source| LabError::Write {
        path: probe.display().to_string(),
        source,
    })
}
