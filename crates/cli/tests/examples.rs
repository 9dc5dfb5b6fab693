//! Every file in examples/ runs through the command it documents, and bad SSD input gets a
//! one-line error naming the key, line or file.

mod common;
use common::{nandlab, repo};

use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_run_config_in_examples_runs() {
    let mut ran = 0;
    for entry in std::fs::read_dir(repo().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("ssd-") || name.contains("sweep") {
            continue;
        }
        let dir = std::env::temp_dir().join(format!("nandlab-ex-{name}-{}", std::process::id()));
        let (code, out, err) = nandlab(&[
            "run",
            path.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        if name.contains("sim-lookup") {
            // SiM commands, not block requests: the lookups' summary and metric row
            assert!(out.contains("sim-lookup:"), "{name}: {out}");
            let metrics = std::fs::read_to_string(dir.join("metrics.json")).unwrap();
            let metrics: serde_json::Value = serde_json::from_str(&metrics).unwrap();
            assert_eq!(metrics["verification_failures"], 0.0, "{name}: {metrics}");
            assert!(metrics["lookups"].as_f64().unwrap() > 0.0, "{name}");
            let report = std::fs::read_to_string(dir.join("report.json")).unwrap();
            assert!(report.contains("\"sim_lookup\"") && report.contains("\"ssd\""));
        } else {
            assert!(out.contains("WAF") && out.contains("p99"), "{name}: {out}");
            for file in [
                "report.json",
                "latency_cdf.csv",
                "erase_histogram.csv",
                "valid_page_map.csv",
            ] {
                assert!(dir.join(file).exists(), "{name}: {file}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
        ran += 1;
    }
    assert!(ran >= 3, "only {ran} examples");
}

#[test]
fn fio_replay_and_custom_chip_examples_run() {
    let (code, out, err) = nandlab(&[
        "fio",
        "examples/randrw.fio",
        "--device",
        "examples/device-mlc.toml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("read") && out.contains("write"), "{out}");
    for (file, format) in [
        ("crates/workload/tests/data/msr_sample.csv", "msr"),
        ("crates/workload/tests/data/blkparse_sample.txt", "blkparse"),
        ("crates/workload/tests/data/disksim_sample.trace", "disksim"),
        ("crates/workload/tests/data/native_sample.csv", "native"),
    ] {
        let (code, out, err) = nandlab(&["replay", file, "--format", format]);
        assert_eq!(code, 0, "{format}: {err}");
        assert!(out.contains("requests"), "{format}: {out}");
    }
    let (code, _, err) = nandlab(&[
        "chip",
        "--config",
        "examples/chip-tlc.toml",
        "--requests",
        "100",
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn same_run_config_and_seed_give_identical_reports() {
    let a = std::env::temp_dir().join(format!("nandlab-det-a-{}", std::process::id()));
    let b = std::env::temp_dir().join(format!("nandlab-det-b-{}", std::process::id()));
    for dir in [&a, &b] {
        let (code, _, err) = nandlab(&[
            "run",
            "examples/ssd-zipf-mixed.toml",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let read = |d: &PathBuf| std::fs::read(d.join("report.json")).unwrap();
    assert_eq!(read(&a), read(&b));
    std::fs::remove_dir_all(&a).ok();
    std::fs::remove_dir_all(&b).ok();
}

#[test]
fn bad_ssd_input_is_a_one_line_error() {
    let dir = std::env::temp_dir().join(format!("nandlab-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read_to_string(repo().join("examples/ssd-random-write.toml")).unwrap();
    let cases = [
        (
            "unknown-key.toml",
            good.replace("policy = \"greedy\"", "polcy = \"greedy\""),
            "ssd.gc.polcy",
        ),
        (
            "bad-policy.toml",
            good.replace("\"greedy\"", "\"lru\""),
            "lru",
        ),
        (
            "bad-op.toml",
            good.replace("op_fraction = 0.25", "op_fraction = -1.0"),
            "line 15: key `ssd.op_fraction`",
        ),
        (
            "bad-read.toml",
            good.replace("read_fraction = 0.0", "read_fraction = 1.5"),
            "read_fraction",
        ),
    ];
    for (name, text, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let (code, _, err) = nandlab(&["run", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
    }
    let bad_trace = dir.join("bad.csv");
    std::fs::write(
        &bad_trace,
        "128166372003061629,hm,0,Read,4096,4096,100\nnot,a,valid,line\n",
    )
    .unwrap();
    let (code, _, err) = nandlab(&["replay", bad_trace.to_str().unwrap(), "--format", "msr"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.csv:2"), "{err}");
    let (code, _, err) = nandlab(&["replay", "x", "--format", "spc"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("spc"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Guards against a panic ("failed printing to stdout") when the output is piped into a
/// program that exits early, like `head`.
#[test]
fn closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .args(["reproduce", "--list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the read end before the program writes
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// `--capture` writes the request stream as a native trace; replaying it on the same device
/// and seed, without the read preconditioning (the run read its unwritten pages from a fresh
/// device too), reproduces the run exactly.
#[test]
fn a_captured_run_replays_to_the_same_report() {
    let dir = std::env::temp_dir().join(format!("nandlab-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let example = std::fs::read_to_string(repo().join("examples/ssd-hybrid-mapping.toml")).unwrap();
    let device = example[..example.find("[workload]").unwrap()].replace("[run]\nseed = 3\n", "");
    std::fs::write(dir.join("device.toml"), device).unwrap();
    let trace = dir.join("trace.csv");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let (code, _, err) = nandlab(&[
        "run",
        "examples/ssd-hybrid-mapping.toml",
        "--capture",
        trace.to_str().unwrap(),
        "--out",
        a.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = nandlab(&[
        "replay",
        trace.to_str().unwrap(),
        "--format",
        "native",
        "--no-read-precondition",
        "--seed",
        "3",
        "--device",
        dir.join("device.toml").to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(a.join("report.json")).unwrap(),
        std::fs::read(b.join("report.json")).unwrap()
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `nandlab run` of a sim-lookup config: `--json` prints the metric row, the same twice for a
/// seed; a config without `[ssd.sim]` is a one-line error naming the key.
#[test]
fn sim_lookup_runs_deterministically_and_bad_input_names_the_key() {
    let text = std::fs::read_to_string(repo().join("examples/ssd-sim-lookup.toml"))
        .unwrap()
        .replace("request_count = 100000", "request_count = 3000");
    let dir = std::env::temp_dir().join(format!("nandlab-simkv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("lookup.toml");
    std::fs::write(&config, &text).unwrap();
    let run = || {
        let (code, out, err) = nandlab(&["run", config.to_str().unwrap(), "--json", "--seed", "3"]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let first = run();
    assert_eq!(first, run());
    let metrics: serde_json::Value = serde_json::from_str(first.trim()).unwrap();
    assert_eq!(metrics["lookups"], 3000.0);
    assert_eq!(metrics["verification_failures"], 0.0);
    let bad = dir.join("bad.toml");
    let without_sim: String = text
        .lines()
        .filter(|l| {
            !["[ssd.sim]", "pages =", "integrity =", "batch_deadline_ns ="]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&bad, without_sim).unwrap();
    let (code, _, err) = nandlab(&["run", bad.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("workload.kind") && err.contains("[ssd.sim]"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
