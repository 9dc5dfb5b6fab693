//! `nandlab sweep`: every example sweep runs; the CSV is the same with one or two worker
//! processes; a rerun takes finished points from the cache and computes only the missing ones;
//! engine stack configs run through `nandlab run`.

mod common;
use common::{interrupt_after, nandlab, repo};

use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nandlab-sweep-{name}-{}", std::process::id()))
}

#[test]
fn every_example_sweep_runs_and_jobs_do_not_change_the_csv() {
    let mut ran = 0;
    for entry in std::fs::read_dir(repo().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains("sweep") {
            continue;
        }
        let (one, two) = (temp(&format!("{name}-1")), temp(&format!("{name}-2")));
        for (dir, jobs) in [(&one, "1"), (&two, "2")] {
            let (code, out, err) = nandlab(&[
                "sweep",
                path.to_str().unwrap(),
                "--jobs",
                jobs,
                "--out",
                dir.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{name}: {err}");
            assert!(out.contains("points (0 from the cache)"), "{name}: {out}");
        }
        let csv = std::fs::read_to_string(one.join("sweep.csv")).unwrap();
        assert_eq!(
            csv,
            std::fs::read_to_string(two.join("sweep.csv")).unwrap(),
            "{name}"
        );
        assert!(csv.lines().count() >= 5, "{name}: {csv}");
        std::fs::remove_dir_all(&one).ok();
        std::fs::remove_dir_all(&two).ok();
        ran += 1;
    }
    assert!(ran >= 2, "only {ran} example sweeps");
}

#[test]
fn a_rerun_computes_only_the_missing_points() {
    let dir = temp("resume");
    let sweep = repo().join("examples/ssd-gc-sweep.toml");
    let args = [
        "sweep",
        sweep.to_str().unwrap(),
        "--jobs",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ];
    let (code, _, err) = nandlab(&args);
    assert_eq!(code, 0, "{err}");
    let first = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    // as if the sweep had been interrupted before its last point finished
    let cache: Vec<PathBuf> = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cache.len(), 4);
    std::fs::remove_file(&cache[0]).unwrap();
    let (code, out, err) = nandlab(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("4 points (3 from the cache)"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.join("sweep.csv")).unwrap(),
        first
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_sweeps_are_one_line_errors_naming_the_point_or_key() {
    let dir = temp("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let base = repo().join("examples/ssd-random-write.toml");
    let cases = [
        (
            "[grid]\n\"ssd.gc.policy\" = [\"fifo\", \"lru\"]\n",
            "sweep point 1",
        ),
        ("[grid]\n\"ssd.gc.nope\" = [1]\n", "ssd.gc.nope"),
        (
            "[zip]\n\"ssd.gc.policy\" = [\"fifo\"]\n\"ssd.op_fraction\" = [0.1, 0.2]\n",
            "equal length",
        ),
        ("[grid]\n\"ssd.op_fraction\" = 0.1\n", "non-empty list"),
        ("", "exactly one of [grid] or [zip]"),
    ];
    for (i, (body, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("s{i}.toml"));
        std::fs::write(
            &path,
            format!("base = {:?}\n{body}", base.to_str().unwrap()),
        )
        .unwrap();
        let (code, _, err) = nandlab(&[
            "sweep",
            path.to_str().unwrap(),
            "--out",
            dir.join("o").to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{body}: {err}");
        assert!(err.contains(needle), "{body}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{body}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_engine_stack_config_runs() {
    let dir = temp("engine");
    let (code, out, err) = nandlab(&[
        "run",
        "examples/engine-codesign.toml",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("queries_per_s"), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(report["queries_per_s"].as_f64().unwrap() > 0.0);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    assert_eq!(config["config"]["engine"]["iaa"], true);
    assert_eq!(config["config"]["nand"]["geometry"]["channels"], 1);
    std::fs::remove_dir_all(&dir).ok();
}

/// Ctrl-C stops a sweep between points (exit 130) keeping the finished ones; the rerun takes
/// exactly those from the cache and computes the rest.
#[test]
fn ctrl_c_stops_a_sweep_and_the_rerun_resumes_it() {
    use std::time::Duration;
    let dir = temp("ctrl-c");
    std::fs::create_dir_all(&dir).unwrap();
    let sweep = dir.join("s.toml");
    let seeds: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    std::fs::write(
        &sweep,
        format!(
            "base = {:?}\n[grid]\n\"workload.seed\" = [{}]\n\"workload.request_count\" = [100000]\n",
            repo().join("examples/ssd-random-write.toml").to_str().unwrap(),
            seeds.join(", ")
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let args = [
        "sweep",
        sweep.to_str().unwrap(),
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, stderr) =
        interrupt_after(&args, Duration::from_millis(1500), Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stderr}");
    let kept = std::fs::read_dir(out.join("cache")).unwrap().count();
    assert!(kept < 40, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv"))
            .unwrap()
            .lines()
            .count(),
        kept + 1
    );
    let (code, stdout, err) = nandlab(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains(&format!("40 points ({kept} from the cache)")),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `reproduce --jobs 2` measures the experiment's points in worker processes: the outputs are
/// the bytes of a run in one process, and every point is in the cache for a rerun.
#[test]
fn reproduce_on_worker_processes_gives_the_same_outputs() {
    let (one, two) = (temp("reproduce-1"), temp("reproduce-2"));
    for (dir, jobs) in [(&one, None), (&two, Some("2"))] {
        let mut args = vec![
            "reproduce",
            "sim-batch",
            "--quick",
            "--out",
            dir.to_str().unwrap(),
        ];
        args.extend(jobs.iter().flat_map(|j| ["--jobs", j]));
        let (code, _, err) = nandlab(&args);
        assert_eq!(code, 0, "{err}");
    }
    for name in ["summary.json", "batch.csv", "paper.csv"] {
        let read = |dir: &PathBuf| std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(read(&one), read(&two), "{name}");
    }
    // 5 distributions x (FCFS, batched)
    assert_eq!(std::fs::read_dir(two.join("cache")).unwrap().count(), 10);
    let (code, _, err) = nandlab(&["reproduce", "sim-batch", "--quick", "--jobs", "0"]);
    assert_ne!(code, 0);
    assert!(err.contains("takes 1 to 1024"), "{err}");
    std::fs::remove_dir_all(&one).ok();
    std::fs::remove_dir_all(&two).ok();
}
