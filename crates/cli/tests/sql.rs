//! `nandlab sql`: real SQLite on a simulated SSD from the command line, and its errors.

mod common;
use common::{nandlab, repo};
use std::io::Write;
use std::process::{Command, Stdio};

const SCRIPT: &str = "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
INSERT INTO t(v) VALUES ('a'), ('b');
BEGIN; UPDATE t SET v = v || '!' WHERE k = 2; COMMIT;
SELECT k, v FROM t ORDER BY k;";

fn sql_stdin(args: &[&str], script: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .current_dir(repo())
        .arg("sql")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nandlab");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn stdin_script_prints_rows_and_metrics() {
    let (code, out, err) = sql_stdin(&["--journal-mode", "truncate"], SCRIPT);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("k|v\n1|a\n2|b!\n"), "{out}");
    for needle in [
        "journal truncate",
        "write_transactions",
        "commit_latency_us_p99",
        "waf",
        "energy_uj_per_tx",
    ] {
        assert!(out.contains(needle), "missing {needle} in\n{out}");
    }
}

/// Issue 33: page bytes are stored as written, so the full-size presets (512 GB and 1.1 TB
/// raw) run SQL; before, the memory check counted page bytes for the whole device and
/// refused them.
#[test]
fn full_size_presets_run_sql() {
    for device in ["mqsim-mlc", "tlc-nvme"] {
        let (code, out, err) = sql_stdin(&["--device", device], SCRIPT);
        assert_eq!(code, 0, "{device}: {err}");
        assert!(out.starts_with("k|v\n1|a\n2|b!\n"), "{device}: {out}");
    }
}

#[test]
fn json_output_and_a_stack_config_as_device() {
    let dir = std::env::temp_dir().join(format!("nandlab-sql-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("s.sql");
    std::fs::write(&script, SCRIPT).unwrap();
    let (code, out, err) = nandlab(&[
        "sql",
        script.to_str().unwrap(),
        "--device",
        "examples/ssd-random-write.toml",
        "--journal-mode",
        "wal",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["results"][5]["rows"][1][1], "b!");
    assert_eq!(v["metrics"]["journal_mode"], "wal");
    assert_eq!(v["metrics"]["write_transactions"], 3);
    assert_eq!(v["files"][1]["name"], "main.db-wal");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_one_line_naming_it() {
    for (args, script, needle) in [
        (
            vec!["--journal-mode", "memory"],
            SCRIPT,
            "journal_mode `memory`",
        ),
        (vec!["--device", "no-such.toml"], SCRIPT, "no-such.toml"),
        (vec!["--page-size", "1000"], SCRIPT, "page_size_bytes 1000"),
        (vec![], "SELECT * FROM missing;", "no such table: missing"),
        (vec![], "SELEC 1;", "syntax error"),
    ] {
        let (code, _, err) = sql_stdin(&args, script);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(needle) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn the_example_script_runs_in_every_journal_mode() {
    for mode in ["delete", "truncate", "persist", "wal", "off", "atomic"] {
        let (code, out, err) =
            nandlab(&["sql", "examples/sql-accounts.sql", "--journal-mode", mode]);
        assert_eq!(code, 0, "{mode}: {err}");
        assert!(
            out.contains("accounts|total\n1000|1000000\n"),
            "{mode}: {out}"
        );
        assert!(out.contains("integrity_check\nok\n"), "{mode}: {out}");
    }
}

#[test]
fn tpcc_reports_tpmc_and_consistency() {
    let (code, out, err) = nandlab(&[
        "tpcc",
        "--small",
        "--warehouses",
        "2",
        "--terminals",
        "20",
        "--transactions",
        "200",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["tpmc"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["consistency_violations"].as_array().unwrap().len(), 0);
    assert_eq!(v["metrics"]["journal_mode"], "wal");
    let (code, _, err) = nandlab(&["tpcc", "--small", "--terminals", "11"]);
    assert_eq!(code, 2);
    assert!(err.contains("terminals 11"), "{err}");
}

#[test]
fn the_example_device_with_a_write_buffer_merges_small_writes() {
    let run = |device: &str| -> serde_json::Value {
        let (code, out, err) = nandlab(&[
            "tpcc",
            "--small",
            "--transactions",
            "100",
            "--journal-mode",
            "delete",
            "--device",
            device,
            "--json",
        ]);
        assert_eq!(code, 0, "{device}: {err}");
        serde_json::from_str(out.trim()).unwrap()
    };
    let plain = run("bench-ssd");
    let buffered = run("examples/device-sql.toml");
    let programs = |v: &serde_json::Value| {
        v["metrics"]["nand_pages_programmed_per_tx"]
            .as_f64()
            .unwrap()
    };
    assert!(
        programs(&buffered) < 0.7 * programs(&plain),
        "{plain}\n{buffered}"
    );
    assert!(buffered["tpmc"].as_f64().unwrap() > plain["tpmc"].as_f64().unwrap());
    // the PCM front end of examples/device-sql-pcm.toml (a dPRAM log buffer) cuts programs too,
    // and its energy is counted
    let pcm = run("examples/device-sql-pcm.toml");
    assert!(programs(&pcm) < 0.8 * programs(&plain), "{plain}\n{pcm}");
    assert!(pcm["metrics"]["totals"]["pcm_energy_uj"].as_f64().unwrap() > 0.0);
}

#[test]
fn sql_crash_runs_cuts_and_names_bad_input() {
    let (code, out, err) = nandlab(&[
        "sql-crash",
        "--journal-mode",
        "atomic",
        "--cuts",
        "3",
        "--transactions",
        "5",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v[0]["journal_mode"], "atomic");
    assert_eq!(v[0]["cuts"], 3);
    assert_eq!(v[0]["violations"], 0);
    let (code, _, err) = nandlab(&["sql-crash", "--journal-mode", "memory"]);
    assert_eq!(code, 2);
    assert!(err.contains("journal_mode `memory`"), "{err}");
    // the atomic mode needs a device without a write buffer
    let (code, _, err) = nandlab(&[
        "tpcc",
        "--small",
        "--transactions",
        "10",
        "--journal-mode",
        "atomic",
        "--device",
        "examples/device-sql.toml",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("buffer.pages = 0"), "{err}");
}

/// `--cut-at commits` catches a mount that leaves out each open block's newest page (exit 1,
/// the violation listed); a device outside the power-loss contract (MLC without paired-page
/// padding) and bad values of the new flags are usage errors naming the flag or the key.
#[test]
fn sql_crash_between_commits_catches_a_broken_mount() {
    let base = [
        "sql-crash",
        "--journal-mode",
        "wal",
        "--cuts",
        "8",
        "--transactions",
        "6",
        "--cut-at",
        "commits",
    ];
    let (code, out, err) = nandlab(&base);
    assert_eq!(code, 0, "{out}{err}");
    let mut broken = base.to_vec();
    broken.extend(["--recovery", "skip-newest-page"]);
    let (code, out, _) = nandlab(&broken);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("after the commit of transaction"), "{out}");
    let dir = std::env::temp_dir().join(format!("nandlab-sql-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nopad = dir.join("nopad.toml");
    std::fs::write(
        &nopad,
        "[ssd]\npreset = \"bench-ssd\"\n[nand.geometry]\nchannels = 1\nchips_per_channel = 1\nblocks_per_plane = 32\npages_per_block = 64\n",
    )
    .unwrap();
    let (code, _, err) = nandlab(&["sql-crash", "--device", nopad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("paired_page_padding"), "{err}");
    let (code, _, err) = nandlab(&["sql-crash", "--cut-at", "middle"]);
    assert_eq!(code, 2);
    assert!(err.contains("--cut-at \"middle\""), "{err}");
    let (code, _, err) = nandlab(&["sql-crash", "--recovery", "maybe"]);
    assert_eq!(code, 2);
    assert!(err.contains("--recovery \"maybe\""), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
