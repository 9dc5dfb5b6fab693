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

/// Starts `nandlab ARGS`, sends it SIGINT (Ctrl-C) after `after`, and waits up to `limit` for it
/// to exit; returns its exit code and stderr (panics if it does not stop in time).
pub fn interrupt_after(
    args: &[&str],
    after: std::time::Duration,
    limit: std::time::Duration,
) -> (Option<i32>, String) {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nandlab");
    std::thread::sleep(after);
    let kill = Command::new("/bin/kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for nandlab") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().ok();
            panic!("nandlab {args:?} did not stop on SIGINT within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stderr = std::io::read_to_string(child.stderr.take().expect("piped")).unwrap_or_default();
    (status.code(), stderr)
}
