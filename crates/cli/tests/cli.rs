//! The `nandlab` binary on good and bad input: bad input gives a one-line error naming the
//! key or value and exit code 2, never a panic.

mod common;
use common::nandlab;

#[test]
fn chip_run_prints_the_report_and_writes_files() {
    let dir = std::env::temp_dir().join(format!("nandlab-cli-{}", std::process::id()));
    let (code, out, err) = nandlab(&[
        "chip",
        "--preset",
        "qdp-slc",
        "--workload",
        "srd",
        "--requests",
        "200",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for needle in ["throughput", "p99", "TOR", "bus contention", "energy"] {
        assert!(out.contains(needle), "missing {needle} in\n{out}");
    }
    for file in [
        "report.json",
        "stages.csv",
        "latency_cdf.csv",
        "op_kinds.csv",
    ] {
        assert!(dir.join(file).exists(), "{file}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_ssd_reports_its_figures_fresh_and_in_steady_state() {
    // speed is measured, never asserted: this checks the report and that steady state pays GC
    let waf = |out: &str| -> f64 {
        let line = out.lines().find(|l| l.contains("WAF")).expect("a WAF line");
        line.split_whitespace().last().unwrap().parse().unwrap()
    };
    let (code, fresh, err) = nandlab(&["bench", "ssd", "--requests", "20000"]);
    assert_eq!(code, 0, "{err}");
    for needle in [
        "host requests / wall-s",
        "simulated write IOPS",
        "peak memory",
    ] {
        assert!(fresh.contains(needle), "missing {needle} in\n{fresh}");
    }
    let (code, steady, err) = nandlab(&["bench", "ssd", "--steady", "--requests", "20000"]);
    assert_eq!(code, 0, "{err}");
    assert!(steady.contains("full and fragmented"), "{steady}");
    // a fresh device writes 20k pages without GC; a full, fragmented one cannot
    assert!(
        waf(&fresh) < 1.01 && waf(&steady) > 1.5,
        "{fresh}\n{steady}"
    );
    // --json: one line per run, to track speed across commits
    for target in ["ssd", "chip", "sim"] {
        let (code, out, err) = nandlab(&["bench", target, "--json", "--requests", "5000"]);
        assert_eq!(code, 0, "{err}");
        let line: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
        assert_eq!(line["target"], target);
        assert_eq!(line["requests"], 5000);
    }
}

#[test]
fn bench_pcm_prints_the_measurement_first_then_labelled_variants() {
    // speed is measured, never asserted: this checks the rows and their counters
    let (code, out, err) = nandlab(&["bench", "pcm", "--json", "--requests", "300"]);
    assert_eq!(code, 0, "{err}");
    let line: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(line["target"], "pcm");
    let rows = line["rows"].as_array().expect("rows");
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "ssd dedup+region",
            "ssd dedup+dpram",
            "ssd dedup only",
            "ssd no pcm",
            "stage alone dedup+region"
        ]
    );
    for r in rows {
        assert_eq!(r["check_failures"], 0, "{r}");
        assert!(r["writes_per_wall_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(line["requests"], rows[0]["requests"]);
    assert!(rows[0]["pages_to_dedup_per_request"].as_f64().unwrap() > 0.0);
    let (code, table, err) = nandlab(&["bench", "pcm", "--requests", "200"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("writes/wall-s") && table.contains("ssd dedup+region"),
        "{table}"
    );
    let (code, _, err) = nandlab(&["bench", "pcm", "--requests", "0"]);
    assert_ne!(code, 0);
    assert!(err.contains("--requests"), "{err}");
}

#[test]
fn same_seed_same_output() {
    let args = [
        "chip",
        "--workload",
        "msnfs",
        "--requests",
        "300",
        "--dies",
        "4",
        "--seed",
        "3",
    ];
    assert_eq!(nandlab(&args).1, nandlab(&args).1);
}

#[test]
fn bad_input_is_a_one_line_error() {
    for (args, needle) in [
        (vec!["chip", "--preset", "mlc9"], "unknown preset `mlc9`"),
        (vec!["chip", "--planes", "0"], "geometry.planes_per_die"),
        (vec!["chip", "--dies", "0"], "geometry.dies_per_chip"),
        (vec!["chip", "--planes", "17"], "planes_per_die"),
        (vec!["chip", "--page-size", "0"], "page_size_bytes"),
        (vec!["chip", "--dies", "100000000"], "blocks in total"),
        (vec!["chip", "--requests", "0"], "requests"),
        (vec!["chip", "--queue-depth", "0"], "queue_depth"),
        (vec!["reproduce", "nope"], "unknown experiment `nope`"),
        (vec!["bench", "disk"], "unknown bench target"),
        (
            vec!["chip", "--config", "/nonexistent.toml"],
            "cannot read /nonexistent.toml",
        ),
    ] {
        let (code, _, err) = nandlab(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn reproduce_list_names_every_nfs_experiment() {
    let (code, out, _) = nandlab(&["reproduce", "--list"]);
    assert_eq!(code, 0);
    for id in [
        "nfs-dies",
        "nfs-planes",
        "nfs-pagesize",
        "nfs-breakdown",
        "nfs-migration",
        "nfs-contention",
        "nfs-energy",
        "nfs-scheduler",
    ] {
        assert!(out.contains(id), "{id}");
    }
}

#[test]
fn a_config_file_replaces_the_preset_and_bad_keys_are_named() {
    let dir = std::env::temp_dir().join(format!("nandlab-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let preset = include_str!("../../../presets/nand/slc.toml");
    let good = dir.join("good.toml");
    std::fs::write(&good, preset.replace("name = \"slc\"", "name = \"my-slc\"")).unwrap();
    let (code, out, err) = nandlab(&[
        "chip",
        "--config",
        good.to_str().unwrap(),
        "--requests",
        "50",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("my-slc"), "{out}");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, preset.replace("erase_us", "erase_time")).unwrap();
    let (code, _, err) = nandlab(&["chip", "--config", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("erase_time") && err.contains("bad.toml"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
