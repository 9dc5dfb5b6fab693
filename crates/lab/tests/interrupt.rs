//! Cancelled runs stop early and keep what they finished: the SSD report of the requests
//! admitted, the experiment points measured, the engine's queries so far, each marked
//! interrupted; and `nandlab` on Ctrl-C writes them to `--out` and exits with status 130.

use nandlab_lab::control::{Control, ProgressSink};
use nandlab_lab::experiments::{self, RunOptions, Scale};
use nandlab_lab::stack::{Stack, WorkloadSection};
use std::ops::ControlFlow;
use std::path::PathBuf;

/// A sink that asks to stop at its first tick.
struct StopAtOnce;

impl ProgressSink for StopAtOnce {
    fn tick(&self, _done: u64, _total: Option<u64>) -> ControlFlow<()> {
        ControlFlow::Break(())
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_config() -> Stack {
    Stack::load(&repo().join("examples/ssd-random-write.toml")).unwrap()
}

fn ssd_run(stack: &Stack, control: &Control) -> nandlab_lab::ssd::SsdRun {
    match stack.run(None, control).unwrap().outcome {
        nandlab_lab::stack::StackOutcome::Ssd { run, .. } => *run,
        other => panic!("not an SSD run: {other:?}"),
    }
}

/// Ctrl-C during the preconditioning: the run stops there, measured nothing, and says so.
#[test]
fn a_cancelled_precondition_measures_nothing() {
    let stack = example_config();
    let run = ssd_run(&stack, &Control::with_sink(StopAtOnce));
    assert!(run.interrupted);
    assert_eq!(run.report.completed, 0);
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nandlab-int-{name}-{}", std::process::id()))
}

#[test]
fn a_cancelled_ssd_run_reports_the_requests_it_admitted() {
    let mut stack = example_config();
    // the sink stops at its first tick: here that is in the workload, not the preconditioning
    // (a_cancelled_precondition_measures_nothing covers that)
    stack.config.precondition = None;
    let WorkloadSection::Synthetic(spec) = &stack.config.workload else {
        panic!("the example is synthetic")
    };
    let requested = spec.request_count.unwrap();
    let control = Control::with_sink(StopAtOnce);
    let run = ssd_run(&stack, &control);
    let report = &run.report;
    assert!(run.interrupted);
    assert_eq!(report.submitted, report.completed);
    assert!(0 < report.completed && report.completed < requested);
    assert!(report.sim_time_us > 0.0 && report.waf >= 1.0);
    let json: serde_json::Value = serde_json::from_str(&run.to_json_pretty()).unwrap();
    assert_eq!(json["interrupted"], true);
    assert_eq!(json["completed"], report.completed);

    let full = ssd_run(&stack, &Control::new());
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
        cache_dir: None,
        plan: None,
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
        cache_dir: None,
        plan: None,
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

/// Every registered experiment, cancelled before it starts, returns cleanly with
/// `"interrupted": true` in its summary (none runs on to the end or fails).
#[test]
fn every_experiment_stops_cleanly_when_cancelled() {
    for experiment in experiments::registry() {
        let dir = temp(&format!("every-{}", experiment.id));
        let options = RunOptions {
            scale: Scale::Quick,
            seed: 0,
            control: Control::new(),
            cache_dir: None,
            plan: None,
        };
        options.control.cancel();
        let result = experiments::reproduce(experiment.id, &options, &dir)
            .unwrap_or_else(|e| panic!("{}: {e}", experiment.id));
        assert!(result.interrupted, "{}", experiment.id);
        let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
        assert!(
            summary.contains("\"interrupted\": true"),
            "{}",
            experiment.id
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// A rerun into the same cache takes the finished points from it and gives the same result.
#[test]
fn a_rerun_reads_finished_points_from_the_cache() {
    let dir = temp("cache");
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        control: Control::new(),
        cache_dir: Some(dir.join("cache")),
        plan: None,
    };
    let first = experiments::reproduce("miyaji-ablation", &options, &dir).unwrap();
    let cached = std::fs::read_dir(dir.join("cache")).unwrap().count();
    assert_eq!(cached, 8, "one cached row per point (4 variants x 2 FTLs)");
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    // a cancelled control would stop any point that had to run: every point comes from the cache
    let again = RunOptions {
        control: Control::new(),
        ..options
    };
    again.control.cancel();
    let second = experiments::reproduce("miyaji-ablation", &again, &dir).unwrap();
    assert!(!second.interrupted);
    assert_eq!(first.metrics, second.metrics);
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.json")).unwrap(),
        summary
    );
    std::fs::remove_dir_all(&dir).ok();
}
