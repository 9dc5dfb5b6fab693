//! `nandlab fio` on fio's own example job files (issue 31): time-based jobs stop at their
//! simulated `runtime`, a stonewall group's clock starts with the group, and a handful of
//! fio's examples run end to end with the note about the engine. Guards against the request
//! stream ignoring the simulated clock (a time-based job would then run one pass, or forever).

mod common;
use common::{nandlab, repo};

fn metric(json: &str, key: &str) -> f64 {
    let start = json.find(&format!("\"{key}\":")).expect(key) + key.len() + 3;
    let end = json[start..].find([',', '}']).unwrap() + start;
    json[start..end].parse().expect("a number")
}

fn job_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("nandlab-fio-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn time_based_jobs_stop_at_their_simulated_runtime() {
    let path = job_file(
        "tb.fio",
        "[global]\nioengine=libaio\nsize=1m\n[r]\nrw=randread\ntime_based\nruntime=20ms\niodepth=8\n",
    );
    let (code, out, err) = nandlab(&["fio", &path, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("note: ioengine=libaio"), "{err}");
    let sim_us = metric(&out, "sim_time_us");
    assert!((20_000.0..21_000.0).contains(&sim_us), "{sim_us} us");
    // a pass of 1 MiB is 256 reads: time-based runs longer than one pass
    assert!(metric(&out, "requests") > 256.0, "{out}");
    // two groups: 5 ms of writes, then 2 ms ramp + 10 ms of reads
    let path = job_file(
        "groups.fio",
        "[global]\nsize=16m\ntime_based\n[w]\nrw=write\nruntime=5ms\n\
         [r]\nstonewall\nrw=randread\nruntime=10ms\nramp_time=2ms\niodepth=4\n",
    );
    let (code, out, err) = nandlab(&["fio", &path, "--json"]);
    assert_eq!(code, 0, "{err}");
    let sim_us = metric(&out, "sim_time_us");
    assert!((17_000.0..19_000.0).contains(&sim_us), "{sim_us} us");
    assert!(
        metric(&out, "read_lat_p50_us") > 1.0,
        "reads reach the flash: {out}"
    );
}

#[test]
fn some_of_fios_examples_run_end_to_end() {
    let examples = repo().join("crates/workload/tests/data/fio-examples");
    for name in [
        "aio-read.fio",
        "numa.fio",
        "http-s3.fio",
        "libcufile-cufile.fio",
        "surface-scan.fio",
    ] {
        let path = examples.join(name).display().to_string();
        let (code, out, err) = nandlab(&["fio", &path, "--device", "examples/device-mlc.toml"]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("requests"), "{name}: {out}");
    }
    let path = examples.join("cpuio.fio").display().to_string();
    let (code, _, err) = nandlab(&["fio", &path]);
    assert_ne!(code, 0);
    assert!(
        err.contains("cpuio.fio:") && err.contains("no I/O"),
        "{err}"
    );
}
