//! Helpers of the `nandlab serve` tests (serve.rs, serve_faults.rs): scratch folders, the
//! server under test, shell commands.
#![allow(dead_code)] // each test crate uses a subset of the helpers

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A scratch folder of this test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-serve-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn tool(name: &str) -> String {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{name} is not installed: run scripts/install-test-deps (make test does)"
    );
    name.to_string()
}

/// A running `nandlab serve` on a Unix socket.
pub struct Served {
    child: Option<Child>,
    pub socket: PathBuf,
    out: PathBuf,
}

impl Served {
    pub fn start(device: &str, dir: &Path, pace: &str) -> Served {
        tool("nbdkit");
        let socket = dir.join("nbd.sock");
        let out = dir.join("out");
        let child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
            .args(["serve", device, "--pace", pace, "--socket"])
            .arg(&socket)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nandlab serve");
        let served = Served {
            child: Some(child),
            socket,
            out,
        };
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(&served.socket).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "nandlab serve did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        served
    }

    pub fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.socket.display())
    }

    /// SIGTERM, wait; the server's stderr and the report it wrote.
    pub fn stop(mut self) -> (String, serde_json::Value, serde_json::Value) {
        let child = self.child.take().unwrap();
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "nandlab serve failed: {stderr}");
        let read = |name: &str| -> serde_json::Value {
            let text = std::fs::read_to_string(self.out.join(name))
                .unwrap_or_else(|e| panic!("{name}: {e}; stderr: {stderr}"));
            serde_json::from_str(&text).unwrap()
        };
        (stderr.clone(), read("report.json"), read("serve.json"))
    }
}

impl Served {
    /// For a failure message: how the server ended (or that it was still running, then it
    /// is stopped) and everything it printed.
    pub fn ended(&mut self) -> (String, String) {
        let mut child = self.child.take().unwrap();
        let status = match child.try_wait() {
            Ok(Some(s)) => format!("exited by itself: {s}"),
            Ok(None) => {
                let _ = child.kill();
                "still running".to_string()
            }
            Err(e) => format!("unknown: {e}"),
        };
        let out = child.wait_with_output().unwrap();
        (status, String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `cmd`, asserting success; its stdout.
pub fn sh(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
