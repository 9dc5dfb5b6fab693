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
