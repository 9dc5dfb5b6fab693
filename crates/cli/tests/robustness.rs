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
    assert_eq!(code, 2, "{err}");
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
