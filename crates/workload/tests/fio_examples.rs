//! fio's own example job files (issue 31): how many of them nandlab runs, and that the
//! compatibility table in docs/workloads.md says the same, file by file. The 107 files are
//! vendored from fio (tests/data/fio-examples/README.md); Debian's `fio-examples` package,
//! when installed, is run too (an older set: no panics, one-line errors).

use nandlab_workload::fio::{FioContext, FioJobFile, ZbdDevice};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files of the vendored set that run; the test fails if fewer do.
const RUNNING_AT_LEAST: usize = 83;
/// Requests taken from each file's merged stream.
const REQUESTS_PER_FILE: usize = 2_000;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-examples")
}

/// The device a file runs on: 256 MiB of 32 MiB zones, or the one its comments say it was
/// written for, where it needs more (name, zone size, zones).
const ASSUMED_DEVICES: &[(&str, u64, u64)] = &[
    // "assumes the drive is at around 30 * 124G in size": 30 clones 124 GiB apart
    ("cross-stripe-verify.fio", 4 << 30, 30 * 31),
    // zones of 256 MB (bs=256M trims reset one), 128 of them from the 524th zone on
    ("zbd-rand-write-trim-gc.fio", 256 << 20, 524 + 128),
];

/// Parses, builds and draws requests from a job file on a small device (or the larger one it
/// assumes): `Ok(requests)` or the one-line error.
fn run(path: &Path) -> Result<usize, String> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let (zone_size_bytes, zone_count) = ASSUMED_DEVICES
        .iter()
        .find(|(file, _, _)| *file == name)
        .map_or((32 << 20, 8), |&(_, size, count)| (size, count));
    let context = FioContext {
        device_size_bytes: zone_size_bytes * zone_count,
        seed: 1,
    };
    // zonemode=zbd files run on a zoned namespace filling the device
    let zoned = ZbdDevice {
        start_bytes: 0,
        zone_size_bytes,
        zone_capacity_bytes: zone_size_bytes,
        zone_count,
        max_open_zones: 0,
    };
    let text = with_documented_environment(&std::fs::read_to_string(path).expect("the file"));
    let file = FioJobFile::parse_selected(text.as_bytes(), path, &documented_section(path))
        .map_err(|e| e.to_string())?;
    let device = file.zoned().then_some(&zoned);
    let file = file.with_device_zones(device).map_err(|e| e.to_string())?;
    file.notes(&context).map_err(|e| e.to_string())?;
    let mut taken = 0;
    for request in file
        .zoned_generator(&context, None, device)
        .map_err(|e| e.to_string())?
        .take(REQUESTS_PER_FILE)
    {
        assert!(request.size_bytes > 0, "{}: {request:?}", path.display());
        assert!(
            request.end_bytes() <= context.device_size_bytes,
            "{}: {request:?} beyond the device",
            path.display()
        );
        taken += 1;
    }
    // zbd reads of a fresh (empty) zoned namespace end at once, as in fio
    assert!(
        taken > 0 || device.is_some(),
        "{}: no requests",
        path.display()
    );
    Ok(taken)
}

/// The file's text with the variables its own comments set (`env FIO_BS=4096 fio FILE`, the
/// first such line) substituted for `${NAME}`, as the shell would pass them to fio.
fn with_documented_environment(text: &str) -> String {
    let assignments: Vec<(&str, &str)> = text
        .lines()
        .filter(|l| l.trim_start().starts_with([';', '#']))
        .find_map(|l| l.split_once("env ").map(|(_, rest)| rest))
        .map(|rest| {
            rest.split_whitespace()
                .map_while(|word| word.split_once('='))
                .collect()
        })
        .unwrap_or_default();
    let mut text = text.to_owned();
    for (name, value) in assignments {
        text = text.replace(&format!("${{{name}}}"), value);
    }
    text
}

/// The job section a file's own comments say to run it with (`fio FILE --section=NAME`, the
/// first one given; xNVMe's examples hold one section per use), or none: run every section.
fn documented_section(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| l.trim_start().starts_with([';', '#']))
        .find_map(|l| l.split("--section=").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .map(|name| vec![name.to_owned()])
        .unwrap_or_default()
}

fn results(dir: &Path) -> BTreeMap<String, Result<usize, String>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the examples directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let outcome = run(&path);
            if let Err(message) = &outcome {
                assert!(!message.contains('\n'), "{name}: {message}");
                assert!(message.contains(&name), "{name}: {message} names no file");
            }
            (name, outcome)
        })
        .collect()
}

#[test]
fn fios_examples_run_as_the_compatibility_table_says() {
    let results = results(&examples_dir());
    assert_eq!(results.len(), 107, "the vendored set");
    let running = results.values().filter(|r| r.is_ok()).count();
    for (name, outcome) in &results {
        if let Err(e) = outcome {
            eprintln!("{name}: {e}");
        }
    }
    eprintln!("{running} of {} run", results.len());
    assert!(
        running >= RUNNING_AT_LEAST,
        "{running} of {} examples run, expected at least {RUNNING_AT_LEAST}",
        results.len()
    );
    // docs/workloads.md: one row per file, `| `name.fio` | runs | ...` or `| refused | ...`
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/workloads.md"),
    )
    .expect("docs/workloads.md");
    let mut rows = 0;
    for line in docs.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(name) = cells
            .get(1)
            .and_then(|c| c.strip_prefix('`'))
            .and_then(|c| c.strip_suffix(".fio`"))
        else {
            continue;
        };
        let name = format!("{name}.fio");
        let Some(outcome) = results.get(&name) else {
            panic!("docs/workloads.md lists {name}, which is not one of fio's examples");
        };
        let status = cells.get(2).copied().unwrap_or("");
        assert_eq!(
            status == "runs",
            outcome.is_ok(),
            "docs/workloads.md says {name} {status}, but: {outcome:?}"
        );
        rows += 1;
    }
    assert_eq!(
        rows,
        results.len(),
        "one row per example in docs/workloads.md"
    );
    assert!(
        docs.contains(&format!("{running} of the 107")),
        "docs/workloads.md states the count ({running} of the 107)"
    );
}

#[test]
fn debians_fio_examples_never_panic() {
    let dir = Path::new("/usr/share/doc/fio/examples");
    if !dir.is_dir() {
        eprintln!("skipped: Debian's fio-examples package is not installed");
        return;
    }
    let results = results(dir);
    let running = results.values().filter(|r| r.is_ok()).count();
    eprintln!("Debian's set: {running} of {} run", results.len());
}
