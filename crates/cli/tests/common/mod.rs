//! Helpers shared by the CLI tests: run the `nandlab` binary from the repository root.
#![allow(dead_code)] // each test crate uses a subset of the helpers

use std::path::PathBuf;
use std::process::Command;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `nandlab ARGS` in the repository root; returns (exit code, stdout, stderr).
pub fn nandlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("run nandlab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
