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

/// SIGINT to the process group of `nandlab ARGS` after `after_ms`: exits 130 within 30 s and
/// says what it kept; returns (stdout, stderr).
fn ctrl_c(args: &[&str], after_ms: u64) -> (String, String) {
    let (code, stdout, stderr) = common::interrupt_group_after(
        args,
        Duration::from_millis(after_ms),
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(130), "{args:?}: {stderr}");
    assert!(stderr.contains("interrupted:"), "{args:?}: {stderr}");
    (stdout, stderr)
}

#[test]
fn ctrl_c_stops_a_sql_statement_and_keeps_the_earlier_outputs() {
    // before: SIGINT was ignored inside a statement (only SIGKILL stopped an endless query)
    let dir = temp("sql");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("endless.sql");
    std::fs::write(
        &script,
        "CREATE TABLE t(x);\nINSERT INTO t VALUES (42);\nSELECT x FROM t;\n\
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c;\n",
    )
    .unwrap();
    let (stdout, stderr) = ctrl_c(&["sql", script.to_str().unwrap()], 1500);
    assert!(stderr.contains("ran 3 statements"), "{stderr}");
    assert!(stdout.contains("x\n42\n"), "{stdout}");
    assert!(stdout.contains("-- device bench-ssd"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ctrl_c_stops_tpcc_with_the_transactions_so_far() {
    let (stdout, stderr) = ctrl_c(
        &["tpcc", "--small", "--transactions", "100000000", "--json"],
        4000,
    );
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(json["interrupted"], true, "{stderr}");
    let done: u64 = json["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair[1].as_u64().unwrap())
        .sum();
    assert!(done < 100_000_000, "{done}");
    assert!(
        stderr.contains(&format!("kept results of {done} of")),
        "{stderr}"
    );
    assert_eq!(json["consistency_violations"], serde_json::json!([]));
}

#[test]
fn ctrl_c_stops_sql_crash_with_the_cuts_so_far() {
    let (stdout, stderr) = ctrl_c(
        &["sql-crash", "--journal-mode", "wal", "--cuts", "1000000"],
        2500,
    );
    assert!(stdout.starts_with("wal "), "{stdout}");
    assert!(stderr.contains("cuts of journal mode wal"), "{stderr}");
}

#[test]
fn ctrl_c_stops_a_powercut_sweep_with_the_cuts_so_far() {
    let (stdout, stderr) = ctrl_c(
        &[
            "powercut",
            "--sweep",
            "events",
            "--cuts",
            "10000000",
            "--requests",
            "20000",
        ],
        2500,
    );
    assert!(stdout.contains(" cuts over "), "{stdout}");
    assert!(stderr.contains("interrupted: kept results of"), "{stderr}");
}

#[test]
fn ctrl_c_stops_one_powercut_case_and_the_benches() {
    ctrl_c(&["powercut", "--requests", "100000000"], 1500);
    ctrl_c(&["bench", "sql", "--requests", "100000000"], 1500);
    let (_, stderr) = ctrl_c(&["bench", "ssd", "--requests", "100000000"], 1500);
    assert!(stderr.contains("nothing kept"), "{stderr}");
}
