//! `nandlab` on Ctrl-C writes the results so far to `--out` and exits with status 130.

mod common;
use common::{interrupt_after, repo};

use std::path::PathBuf;
use std::time::Duration;

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
    let (code, stderr) = interrupt_after(
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_millis(500),
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted: kept results of"), "{stderr}");
    let report = std::fs::read_to_string(out.join("report.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(json["interrupted"], true);
    assert_eq!(json["submitted"], json["completed"]);
    assert!(json["completed"].as_u64().unwrap() < 1_000_000_000);
    assert!(out.join("latency_cdf.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}
