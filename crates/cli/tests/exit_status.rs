//! Exit status: 0 for success, 2 for bad input, 1 for a run that failed (a crash-oracle
//! violation, an output that cannot be written, a sweep worker that died), 130 for Ctrl-C.
//!
//! Guards against `crash` and `powercut` printing "13 failing cases" and exiting 0 (a CI job
//! calling them could not fail), `--json > /dev/full` exiting 0 with no output, and a sweep
//! worker killed by the OOM killer being reported as "interrupted".

mod common;
use common::{nandlab, repo};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn crash_exits_1_when_the_oracle_finds_a_violation() {
    let (code, stdout, stderr) = nandlab(&["crash", "--cuts", "200", "--mutation", "no-sequence"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.contains("failing cases"), "{stdout}");
    assert!(
        stdout.contains("reproduce: nandlab crash --seed 1 --case"),
        "{stdout}"
    );
    assert!(
        stderr.contains("error: the crash oracle found violations"),
        "{stderr}"
    );
    // the reproduction line of a failing case fails the same way
    let line = stdout
        .lines()
        .find(|l| l.contains("reproduce: "))
        .expect("a reproduction line");
    let repro: Vec<&str> = line
        .split("reproduce: nandlab ")
        .nth(1)
        .unwrap()
        .split(' ')
        .collect();
    let (code, _, _) = nandlab(&repro);
    assert_eq!(code, 1);
    // the same with --json, and the real firmware passes
    let (code, _, _) = nandlab(&[
        "crash",
        "--cuts",
        "200",
        "--mutation",
        "no-sequence",
        "--json",
    ]);
    assert_eq!(code, 1);
    let (code, _, stderr) = nandlab(&["crash", "--cuts", "200"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn crash_engine_and_powercut_exit_1_under_their_mutations() {
    let (code, _, stderr) = nandlab(&[
        "crash",
        "--engine",
        "--cuts",
        "100",
        "--mutation",
        "no-device-flush",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let (code, stdout, stderr) = nandlab(&[
        "powercut",
        "--preset",
        "mlc1",
        "--no-paired-padding",
        "--sweep",
        "events",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("violations after"), "{stderr}");
    let (code, _, stderr) = nandlab(&["powercut", "--sweep", "events", "--cuts", "50"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, stderr) = nandlab(&["crash", "--mutation", "nonsense"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, _) = nandlab(&["crash", "--no-such-flag"]);
    assert_eq!(code, 2);
    let (code, _, _) = nandlab(&["run", "no/such/file.toml"]);
    assert_eq!(code, 2);
    // a sweep mode the power-cut harness does not know: its name is parsed by lab, not the CLI
    let (code, _, stderr) = nandlab(&["powercut", "--sweep", "nonsense"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--sweep \"nonsense\""), "{stderr}");
    assert!(stderr.contains("chip-ops"), "{stderr}");
}

/// Arguments that made a run test nothing were accepted with exit 0 (issue 31 item 6): now a
/// usage error naming the argument.
#[test]
fn runs_that_would_test_nothing_are_refused() {
    for (args, names) in [
        (&["powercut", "--queue-depth", "0"][..], "queue_depth"),
        (&["powercut", "--requests", "0"][..], "requests"),
        (
            &[
                "powercut",
                "--read-probability",
                "0.6",
                "--trim-probability",
                "0.5",
            ][..],
            "read_probability",
        ),
        (&["bench", "sql", "--requests", "0"][..], "--requests"),
    ] {
        let (code, stdout, stderr) = nandlab(args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(names), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn a_failed_write_to_stdout_is_an_error() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full else {
        eprintln!("no /dev/full here: skipped");
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .args(["crash", "--cuts", "20", "--json"])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write to stdout"), "{stderr}");
}

/// The pids of `pid`'s child processes (Linux: /proc/PID/task/*/children).
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    found
}

#[test]
fn a_sweep_worker_killed_by_a_signal_is_a_failure_naming_the_point() {
    if !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("no /proc here: skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("nandlab-exit-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(repo().join("examples/ssd-random-write.toml")).unwrap();
    std::fs::write(
        dir.join("base.toml"),
        base.replace("request_count = 20000", "request_count = 1000000000"),
    )
    .unwrap();
    std::fs::write(
        dir.join("sweep.toml"),
        "base = \"base.toml\"\n[grid]\n\"ssd.op_fraction\" = [0.15, 0.25]\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args([
            "sweep",
            dir.join("sweep.toml").to_str().unwrap(),
            "--jobs",
            "1",
        ])
        .args(["--out", dir.join("out").to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let worker = loop {
        if let Some(&w) = children(child.id()).first() {
            break w;
        }
        assert!(Instant::now() < deadline, "no sweep worker started");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("/bin/kill")
        .args(["-KILL", &worker.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            panic!("the sweep did not end after its worker was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("point 0"), "{stderr}");
    assert!(stderr.contains("signal 9"), "{stderr}");
    assert!(!stderr.contains("interrupted"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Starts `nandlab ARGS` in its own process group, sends SIGINT to the group (as a terminal's
/// Ctrl-C does) after `after`, and returns (exit code, stdout, stderr).
fn interrupt_group(args: &[&str], after: Duration) -> (Option<i32>, String, String) {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .args(args)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let group = format!("-{}", child.id());
    let sent = Command::new("/bin/kill")
        .args(["-INT", "--", &group])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            panic!("nandlab {args:?} did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ctrl_c_stops_crash_runs_with_their_summary_and_130() {
    let (code, stdout, stderr) = interrupt_group(
        &["crash", "--cuts", "100000000", "--mutation", "no-sequence"],
        Duration::from_millis(1500),
    );
    assert_eq!(code, Some(130), "{stdout}{stderr}");
    assert!(stderr.contains("interrupted: kept results of"), "{stderr}");
    assert!(stdout.contains("failing cases"), "{stdout}");
    assert!(stdout.contains("reproduce: nandlab crash"), "{stdout}");
    let (code, stdout, stderr) = interrupt_group(
        &["crash", "--engine", "--cuts", "100000000"],
        Duration::from_millis(1500),
    );
    assert_eq!(code, Some(130), "{stdout}{stderr}");
    assert!(stdout.contains("engine, seed 1:"), "{stdout}");
}
