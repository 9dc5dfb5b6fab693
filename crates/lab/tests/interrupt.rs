//! Cancelled runs stop early and keep what they finished: the SSD report of the requests
//! admitted, the experiment points measured, the engine's queries so far, each marked
//! interrupted; and `nandlab` on Ctrl-C writes them to `--out` and exits with status 130.

mod common;
use common::repo;

use nandlab_lab::control::{Control, ProgressSink};
use nandlab_lab::experiments::{self, RunOptions, Scale};
use nandlab_lab::ssd::{RunConfig, run_config_captured};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A sink that asks to stop at its first tick.
struct StopAtOnce;

impl ProgressSink for StopAtOnce {
    fn tick(&self, _done: u64, _total: Option<u64>) -> ControlFlow<()> {
        ControlFlow::Break(())
    }
}

fn example_config() -> RunConfig {
    let path = repo().join("examples/ssd-random-write.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    RunConfig::from_toml("example", &text).unwrap()
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nandlab-int-{name}-{}", std::process::id()))
}

#[test]
fn a_cancelled_ssd_run_reports_the_requests_it_admitted() {
    let config = example_config();
    let requested = config.workload.request_count.unwrap();
    let control = Control::with_sink(StopAtOnce);
    let run = run_config_captured(&config, None, &control).unwrap();
    let report = &run.report;
    assert!(run.interrupted);
    assert_eq!(report.submitted, report.completed);
    assert!(0 < report.completed && report.completed < requested);
    assert!(report.sim_time_us > 0.0 && report.waf >= 1.0);
    let json: serde_json::Value = serde_json::from_str(&run.to_json_pretty()).unwrap();
    assert_eq!(json["interrupted"], true);
    assert_eq!(json["completed"], report.completed);

    let full = run_config_captured(&config, None, &Control::new()).unwrap();
    assert!(!full.interrupted);
    assert_eq!(full.report.completed, requested);
    let json: serde_json::Value = serde_json::from_str(&full.to_json_pretty()).unwrap();
    assert!(json.get("interrupted").is_none());
}

#[test]
fn a_cancelled_reproduction_writes_the_points_it_finished() {
    let dir = temp("reproduce");
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        control: Control::new(),
    };
    options.control.cancel();
    let result = experiments::reproduce("miyaji-freespace", &options, &dir).unwrap();
    assert!(result.interrupted);
    assert_eq!(result.rows(), 0);
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(json["experiment"], "miyaji-freespace");
    assert_eq!(json["interrupted"], true);
    let csv = std::fs::read_to_string(dir.join("freespace.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1, "only the header: {csv}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A sink that asks to stop once `n` units of work are done.
struct StopAfter(u64);

impl ProgressSink for StopAfter {
    fn tick(&self, done: u64, _total: Option<u64>) -> ControlFlow<()> {
        if done >= self.0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

#[test]
fn the_gc_policy_sweep_stops_between_points() {
    let dir = temp("gc-policies");
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        control: Control::with_sink(StopAfter(2)),
    };
    let result = experiments::reproduce("ftl-gc-policies", &options, &dir).unwrap();
    assert!(result.interrupted);
    let points = nandlab_lab::experiments::gc_policies::GC_POLICIES_POINTS;
    assert!(
        (2..points).contains(&result.rows()),
        "{} of {points} points",
        result.rows()
    );
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(json["interrupted"], true);
    assert_eq!(json["waf_fifo_op7"].as_f64().map(|w| w > 1.0), Some(true));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_cancelled_engine_run_is_marked_interrupted() {
    let spec = r#"{"iaa": true, "u2di": true, "protocol": {"constant": {
        "free_space_fraction": 0.2, "update_fraction": 0.4,
        "warmup_query_count": 0, "query_count": 100000, "seed": 0}}}"#;
    let json = nandlab_lab::api::run_engine_json(spec, &Control::with_sink(StopAtOnce)).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["interrupted"], true);
    assert_eq!(value["metrics"]["queries"]["insert"]["count"], 0);
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
