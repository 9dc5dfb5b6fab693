//! `nandlab serve` against bad clients (issue 33 items 1 and 5), with libnbd's Python binding
//! as the client: its own test binary, so that it does not share the machine with the fio,
//! ext4 and PostgreSQL tests of serve.rs.

mod serve_support;

use serve_support::{Served, scratch, tool};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A libnbd client script (Debian's python3-libnbd, run by the system's python3) against the
/// server at `uri`; its last stdout line is JSON.
fn libnbd(dir: &Path, name: &str, uri: &str, body: &str) -> Command {
    tool("nbdinfo");
    let script = dir.join(format!("{name}.py"));
    std::fs::write(
        &script,
        format!(
            "import json, sys, time\nimport nbd\nh = nbd.NBD()\nh.connect_uri({uri:?})\n{body}"
        ),
    )
    .unwrap();
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(script);
    cmd
}

/// Whether the installed nbdkit survives a client that hangs up while several of its worker
/// threads have replies to send: 1.33.10 and later (upstream commit 9d82aa4f; 1.32.4 to 1.33.9
/// abort on an assertion in `raw_send_socket`).
fn nbdkit_drops_queued_replies_safely() -> bool {
    let out = Command::new("nbdkit").arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // "nbdkit 1.32.5"
    let version: Vec<u32> = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("0")
        .split('.')
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    version.as_slice() >= [1, 33, 10].as_slice()
}

/// Issue 33 items 1 and 5: a full-size preset (mqsim-mlc, 512 GB raw, refused before page
/// bytes were stored sparsely) is served; requests beyond the export and unaligned ones get
/// clear answers; a client killed in the middle of its writes costs nothing that was flushed
/// and the server keeps serving; a second server on the same socket is refused; the payload
/// store holds only what was written.
#[test]
fn a_full_size_preset_is_served_and_survives_bad_clients() {
    let dir = scratch("faults");
    let mut served = Served::start("mqsim-mlc", &dir, "none");
    let uri = served.uri();
    // a second server on the same socket: refused, naming the socket, the first unharmed
    let second = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["serve", "mqsim-mlc", "--pace", "none", "--socket"])
        .arg(&served.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{text}");
    assert!(text.contains("another server is listening"), "{text}");
    // far-apart, unaligned and zeroed ranges; a request beyond the end with the client's own
    // bounds check off, so the server sees it
    let first = libnbd(
        &dir,
        "first",
        &uri,
        r#"
h.set_strict_mode(0)
size = h.get_size()
out = {"size": size}
marks = [0, size // 2 + 4096 * 7, size - 8192]
for i, at in enumerate(marks):
    h.pwrite(bytes([i + 1]) * 8192, at)
h.pwrite(b"unaligned!" * 100, 4096 * 3 + 17)
h.zero(600, 4096 * 3 + 117)
h.flush()
out["marks"] = [h.pread(8192, at) == bytes([i + 1]) * 8192 for i, at in enumerate(marks)]
got = h.pread(1000, 4096 * 3 + 17)
out["unaligned"] = got == b"unaligned!" * 10 + bytes(600) + (b"unaligned!" * 100)[700:1000]
try:
    h.pwrite(b"x" * 4096, size - 1024)
    out["beyond"] = "accepted"
except nbd.Error as e:
    out["beyond"] = str(e)
print(json.dumps(out))
"#,
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let out: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(out["size"].as_u64().unwrap() > 400 << 30, "{out}");
    assert_eq!(out["marks"], serde_json::json!([true, true, true]), "{out}");
    assert_eq!(out["unaligned"], true, "{out}");
    let beyond = out["beyond"].as_str().unwrap();
    assert!(
        beyond != "accepted" && beyond.contains("pwrite"),
        "{beyond}"
    );
    // a client killed without a goodbye in the middle of its writes. nbdkit 1.32.4 to 1.33.9
    // (Debian 12 has 1.32.5) abort when a client hangs up while a worker thread is between
    // its status check and its reply (`raw_send_socket: Assertion 'sock >= 0' failed`;
    // upstream fix 9d82aa4f, nbdkit 1.33.10), likely with many small replies queued (one
    // full run of these tests in about seven here with 32 writes of 64 KiB in flight). There
    // the killed client writes 16 MiB at a time, one write in flight: a write outlives the
    // client, so its reply is dropped before it is sent.
    let (in_flight, write_bytes, slots) = if nbdkit_drops_queued_replies_safely() {
        (32, 65536, 4096)
    } else {
        (1, 16 << 20, 16)
    };
    let mut killed = libnbd(
        &dir,
        "killed",
        &uri,
        &format!(
            r#"
buf = nbd.Buffer({write_bytes})
i = 0
while True:
    while h.aio_in_flight() < {in_flight}:
        h.aio_pwrite(buf, (1 << 30) + (i % {slots}) * {write_bytes})
        i += 1
    h.poll(-1)
    print(i - h.aio_in_flight(), flush=True)
"#
        ),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    // killed once three of its writes have completed (it prints how many have), a little later
    let mut completed = 0u64;
    let mut lines = std::io::BufReader::new(killed.stdout.take().unwrap()).lines();
    while completed < 3 {
        let line = lines.next().expect("the killed client runs").unwrap();
        completed = line.trim().parse().unwrap();
    }
    std::thread::sleep(Duration::from_millis(100));
    killed.kill().unwrap();
    killed.wait().unwrap();
    // another connection: the flushed data is there, and the server still serves
    let again = libnbd(
        &dir,
        "again",
        &uri,
        r#"
size = h.get_size()
marks = [0, size // 2 + 4096 * 7, size - 8192]
print(json.dumps([h.pread(8192, at) == bytes([i + 1]) * 8192 for i, at in enumerate(marks)]))
"#,
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&again.stdout);
    if !again.status.success() {
        let (status, server_stderr) = served.ended();
        panic!(
            "{stdout}{}\nthe server: {status}; its stderr:\n{server_stderr}",
            String::from_utf8_lossy(&again.stderr)
        );
    }
    assert_eq!(stdout.trim(), "[true, true, true]");
    let (stderr, report, serve) = served.stop();
    // the writes of the killed client were simulated (those it saw completed, at least, after
    // the first client's three marks)
    assert!(
        report["write"]["requests"].as_u64().unwrap() >= completed + 3,
        "{completed} {}: {stderr}",
        report["write"]
    );
    // page bytes are stored as written: a few MiB, not the device's 512 GB
    let stored = serve["payload_allocated_bytes"].as_u64().unwrap();
    assert!(stored > 0 && stored < 1 << 30, "{serve}");
}
