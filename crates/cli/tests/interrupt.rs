//! `nandlab` on Ctrl-C writes the results so far to `--out` and exits with status 130.

mod common;
use common::repo;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nandlab-cli-int-{name}-{}", std::process::id()))
}

#[test]
fn ctrl_c_keeps_the_results_so_far_and_exits_130() {
    let dir = temp("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("long.toml");
    let text = std::fs::read_to_string(repo().join("examples/ssd-random-write.toml")).unwrap();
    std::fs::write(
        &config,
        text.replace("request_count = 20000", "request_count = 1000000000"),
    )
    .unwrap();
    let out = dir.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args([
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let kill = Command::new("/bin/kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            panic!("nandlab did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted: kept results of"), "{stderr}");
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(json["interrupted"], true);
    assert_eq!(json["submitted"], json["completed"]);
    assert!(json["completed"].as_u64().unwrap() < 1_000_000_000);
    assert!(out.join("latency_cdf.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}
