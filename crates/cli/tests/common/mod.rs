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

/// Starts `nandlab ARGS` as the leader of its own process group (as a shell starts a job),
/// sends SIGINT to the whole group after `after` (as Ctrl-C on a terminal does), and waits up
/// to `limit` for it to exit; returns its exit code, stdout and stderr (panics if it does not
/// stop in time).
pub fn interrupt_group_after(
    args: &[&str],
    after: std::time::Duration,
    limit: std::time::Duration,
) -> (Option<i32>, String, String) {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .args(args)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nandlab");
    // read the pipes while it runs (a full pipe would block it)
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || std::io::read_to_string(&mut stdout).unwrap_or_default());
    let err = std::thread::spawn(move || std::io::read_to_string(&mut stderr).unwrap_or_default());
    std::thread::sleep(after);
    let kill = Command::new("/bin/kill")
        .args(["-INT", "--", &format!("-{}", child.id())])
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
    (
        status.code(),
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    )
}
