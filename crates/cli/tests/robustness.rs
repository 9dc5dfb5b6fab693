//! Bad input at the CLI: refused before anything runs, with a one-line error naming the key,
//! line or file; Ctrl-C during preconditioning stops the run and keeps what it has.

mod common;
use common::{interrupt_after, nandlab, repo};

use std::path::PathBuf;
use std::time::Duration;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-rob-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example() -> String {
    std::fs::read_to_string(repo().join("examples/ssd-random-write.toml")).unwrap()
}

/// `--out` that cannot be written used to be found only after the run, losing its results.
#[test]
fn an_unwritable_out_folder_is_refused_before_the_run() {
    let dir = temp("out");
    let blocker = dir.join("file");
    std::fs::write(&blocker, "").unwrap();
    let target = blocker.join("sub");
    let (code, out, err) = nandlab(&[
        "run",
        "examples/ssd-random-write.toml",
        "--out",
        target.to_str().unwrap(),
    ]);
    // an output that cannot be written is a failure of the run's environment (status 1, README
    // "Exit status"), found before anything runs
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "nothing ran: {out}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn json_prints_the_metric_row_on_one_line() {
    let (code, out, err) = nandlab(&["run", "examples/ssd-random-write.toml", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    let row: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(row["waf"].as_f64().unwrap() > 1.0);
}

/// A request larger than the whole SSD used to be shrunk into one whole-device write.
#[test]
fn a_trace_request_larger_than_the_ssd_is_an_error_naming_it() {
    let dir = temp("big");
    let trace = dir.join("big.csv");
    // native format: arrival, op, offset, size (1 GiB: the readers' limit; the device is smaller)
    std::fs::write(
        &trace,
        "arrival_ns,op,offset_bytes,size_bytes\n0,write,0,4096\n0,write,0,1073741824\n",
    )
    .unwrap();
    let device = dir.join("small.toml");
    std::fs::write(
        &device,
        "[nand]\npreset = \"slc\"\n[nand.geometry]\nblocks_per_plane = 32\n",
    )
    .unwrap();
    let (code, _, err) = nandlab(&[
        "replay",
        trace.to_str().unwrap(),
        "--format",
        "native",
        "--device",
        device.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("request 2") && err.contains("larger than the SSD"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_span_beyond_the_ssd_is_an_error_naming_the_key() {
    let dir = temp("span");
    let config = dir.join("span.toml");
    std::fs::write(
        &config,
        example().replace("span_bytes = 0 ", "span_bytes = 1099511627776 "),
    )
    .unwrap();
    let (code, _, err) = nandlab(&["run", config.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("span_bytes"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Preconditioning ignored the first Ctrl-C and showed no progress; a huge
/// `random_overwrites` ran silently for ever.
#[test]
fn ctrl_c_stops_a_long_precondition() {
    let dir = temp("pre");
    let config = dir.join("long.toml");
    std::fs::write(
        &config,
        example().replace(
            "random_overwrites = 20000",
            "random_overwrites = 100000000000",
        ),
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
        Duration::from_secs(10),
    );
    assert_eq!(code, Some(130), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["completed"], 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// Found by the adversarial pass (scripts/adversarial.py): clap's own errors were several
/// lines (the error, a tip, the usage, a pointer to --help), and a negative number given to an
/// option was reported as an unexpected argument without naming the option.
#[test]
fn command_line_errors_are_one_line_naming_the_flag() {
    for (args, named) in [
        (&["chip", "--seed", "-1"][..], "--seed"),
        (
            &["run", "examples/ssd-random-write.toml", "--bogus"][..],
            "--bogus",
        ),
        (&["replay", "x.csv"][..], "--format"),
        (&["chip", "--requests", "abc"][..], "--requests"),
        (
            &["reproduce", "nfs-dies", "--quick", "--full"][..],
            "--full",
        ),
        (&[][..], "command"),
    ] {
        let (code, _, err) = nandlab(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
    let (code, out, _) = nandlab(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Usage"), "{out}");
}

/// Found by the adversarial pass: flags that do not apply were accepted and ignored.
#[test]
fn flags_that_do_not_apply_are_refused() {
    let (code, _, err) = nandlab(&["bench", "chip", "--steady", "--requests", "10"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--steady"), "{err}");
    let (code, _, err) = nandlab(&[
        "replay",
        "crates/workload/tests/data/msr_sample.csv",
        "--format",
        "msr",
        "--queue-events",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("queue_events") && err.contains("blkparse"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Found by the adversarial pass: a grid of billions of points aborted on allocating its
/// point list; it is an error naming the grid.
#[test]
fn a_sweep_grid_beyond_the_point_limit_is_refused() {
    let dir = temp("huge-grid");
    let list = toml::Value::Array((0..2000).map(toml::Value::Integer).collect());
    let grid: toml::Table = [("run.seed", &list), ("workload.seed", &list)]
        .into_iter()
        .map(|(key, values)| (key.to_string(), values.clone()))
        .collect();
    let mut sweep = toml::Table::new();
    let base = repo().join("examples/ssd-random-write.toml");
    sweep.insert("base".into(), base.display().to_string().into());
    sweep.insert("grid".into(), grid.into());
    std::fs::write(dir.join("s.toml"), toml::to_string(&sweep).unwrap()).unwrap();
    let (code, _, err) = nandlab(&["sweep", dir.join("s.toml").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("grid") && err.contains("4000000 points"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Found by the adversarial pass: an error inside `[workload]` named only `workload` (the
/// kind-tagged table), not the key.
#[test]
fn an_error_inside_the_workload_names_its_key_and_line() {
    let dir = temp("workload-key");
    let config = example().replace("request_count = 20000", "request_count = -1");
    std::fs::write(dir.join("c.toml"), &config).unwrap();
    let (code, _, err) = nandlab(&["run", dir.join("c.toml").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let line = config
        .lines()
        .position(|l| l.starts_with("request_count"))
        .unwrap()
        + 1;
    assert!(
        err.contains("`workload.request_count`") && err.contains(&format!("line {line}")),
        "{err}"
    );
    let config = example().replace(
        "[ssd.gc]",
        "[ssd.mapping]\nallocation_order = \"\"\n[ssd.gc]",
    );
    std::fs::write(dir.join("c.toml"), &config).unwrap();
    let (code, _, err) = nandlab(&["run", dir.join("c.toml").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("allocation_order"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 31 item 6: `--jobs -1` said "at least 0" and `--jobs 99999` was accepted; both are
/// refused naming the bound, for `sweep` and `reproduce`.
#[test]
fn robust5_jobs_out_of_bounds_names_the_bound() {
    for command in [
        &["sweep", "examples/ssd-gc-sweep.toml"][..],
        &["reproduce", "ctrl-suspend", "--quick"][..],
    ] {
        for jobs in ["-1", "0", "99999", "x"] {
            let mut args = command.to_vec();
            args.extend(["--jobs", jobs]);
            let (code, out, err) = nandlab(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(out.is_empty(), "{args:?}: {out}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.contains("--jobs") && err.contains("1 to 1024"),
                "{args:?}: {err}"
            );
        }
    }
}

/// Issue 31 item 6: an empty device file was "key `nand`: missing field `geometry`"; a
/// placement id beyond the device failed the first tagged write without a job-file line.
#[test]
fn robust5_an_empty_device_and_a_missing_placement_id_say_what_and_where() {
    let dir = temp("robust5-info");
    let empty = dir.join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let (code, out, err) = nandlab(&["info", empty.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("empty.toml") && err.contains("no settings") && err.contains("[nand]"),
        "{err}"
    );
    let job = dir.join("j.fio");
    std::fs::write(&job, "[a]\nrw=write\nsize=1m\nfdp=1\nfdp_pli=99\n").unwrap();
    let (code, _, err) = nandlab(&["fio", job.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("j.fio:5:") && err.contains("fdp_pli") && err.contains("placement_ids"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
