//! The workspace's layering (DESIGN.md, "Layers"), checked on `cargo metadata`: which crate may
//! depend on which. Dependencies point down only; `lab` is the one place that wires layers
//! together, and only the front ends (`cli`, `py`) sit above it; the CLI depends on `lab` alone.
//!
//! A dependency the rules forbid fails this test unless it is in [`EXCEPTIONS`], a commented
//! list of today's known breaks that must only shrink: an exception no longer present fails the
//! test too, so fixing a break means deleting its line.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each workspace crate (without the `nandlab-` prefix) and the crates it may depend on
/// (normal dependencies; dev-dependencies are checked by [`DEV_RULES`]).
const RULES: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("nand", &["core"]),
    ("pcm", &["core"]),
    // the controller
    ("ftl", &["core", "nand", "pcm"]),
    // drivers and engines, each above a device trait
    ("engine", &["core", "nand", "pcm", "ftl"]),
    ("sql", &["core", "nand", "pcm", "ftl"]),
    ("search", &["core", "nand", "pcm", "ftl"]),
    ("join", &["core", "nand", "pcm", "ftl"]),
    // power-loss testing: harnesses and the crash oracle on the controller's power trace and
    // the drivers' request hooks (its devices come from the stack builder, handed in by lab)
    ("power", &["core", "nand", "pcm", "ftl", "sql"]),
    // generators and trace readers
    ("workload", &["core"]),
    // the one builder, experiments, reports
    (
        "lab",
        &[
            "core", "nand", "pcm", "ftl", "engine", "sql", "search", "join", "workload", "power",
        ],
    ),
    // the front ends: the CLI, the Python bindings and the NBD server's nbdkit plugin
    ("cli", &["lab"]),
    // py also runs the CLI in-process for the `nandlab` console script of `pip install`
    (
        "py",
        &[
            "core", "nand", "pcm", "ftl", "engine", "sql", "search", "join", "workload", "lab",
            "cli",
        ],
    ),
    (
        "nbd",
        &[
            "core", "nand", "pcm", "ftl", "engine", "sql", "search", "join", "workload", "lab",
        ],
    ),
];

/// Dev-dependencies (tests, benches, examples) may reach anything below the front ends: a test
/// may build its device through the stack builder.
/// The CLI's `serve` tests also need the NBD plugin built (`nbd`; it is not linked).
const DEV_RULES: &[&str] = &[
    "core", "nand", "pcm", "ftl", "engine", "sql", "search", "join", "workload", "lab", "nbd",
];

/// Today's known breaks of [`RULES`] (crate, dependency, why). This list must only shrink.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    // The SiM index runs the engine's B+tree on SiM pages (`nandlab_search::tree`): an engine
    // beside another; the B+tree would move below both (or the tree into `engine`).
    ("search", "engine", "SiM B+tree uses the engine's BTree"),
    // The hash joins run over SSB tables whose types (`SsbData`, `Table`) live with the SSB
    // generator; the row types would move below both.
    (
        "join",
        "workload",
        "SSB table types live with the generator",
    ),
];

/// The workspace's crates and, per crate, its normal and dev dependencies on workspace crates.
type Graph = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

fn workspace_graph() -> Graph {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let short = |name: &str| name.strip_prefix("nandlab-").map(str::to_string);
    let mut graph = Graph::new();
    for package in meta["packages"].as_array().expect("packages") {
        let Some(name) = package["name"].as_str().and_then(short) else {
            continue;
        };
        let (normal, dev) = graph.entry(name).or_default();
        for dep in package["dependencies"].as_array().expect("dependencies") {
            let Some(dep_name) = dep["name"].as_str().and_then(short) else {
                continue;
            };
            match dep["kind"].as_str() {
                None | Some("normal") | Some("build") => normal.insert(dep_name),
                _ => dev.insert(dep_name),
            };
        }
    }
    graph
}

fn rule(name: &str) -> &'static [&'static str] {
    RULES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, allowed)| *allowed)
        .unwrap_or_else(|| panic!("workspace crate `{name}` has no layering rule in RULES"))
}

#[test]
fn every_dependency_points_down() {
    let graph = workspace_graph();
    assert!(graph.len() >= RULES.len(), "{graph:?}");
    let mut breaks = Vec::new();
    let mut used = BTreeSet::new();
    for (name, (normal, dev)) in &graph {
        let allowed = rule(name);
        for dep in normal {
            if allowed.contains(&dep.as_str()) {
                continue;
            }
            match EXCEPTIONS.iter().find(|(n, d, _)| n == name && d == dep) {
                Some(e) => {
                    used.insert((e.0, e.1));
                }
                None => breaks.push(format!("{name} -> {dep}")),
            }
        }
        for dep in dev {
            if !DEV_RULES.contains(&dep.as_str()) {
                breaks.push(format!("{name} -(dev)-> {dep}"));
            }
        }
    }
    assert!(
        breaks.is_empty(),
        "dependencies against DESIGN.md's layers: {breaks:?}"
    );
    let stale: Vec<_> = EXCEPTIONS
        .iter()
        .filter(|(n, d, _)| !used.contains(&(*n, *d)))
        .collect();
    assert!(
        stale.is_empty(),
        "exceptions no longer needed (delete them from EXCEPTIONS): {stale:?}"
    );
}

/// The rules themselves point down: each crate may use only crates listed before it, and only
/// the front ends may use `lab`.
#[test]
fn the_rules_point_down() {
    for (i, (name, allowed)) in RULES.iter().enumerate() {
        let below: Vec<_> = RULES[..i].iter().map(|(n, _)| *n).collect();
        for dep in *allowed {
            assert!(below.contains(dep), "{name} may use {dep}, listed after it");
            assert!(
                *dep != "lab" || ["cli", "py", "nbd"].contains(name),
                "{name} may use lab"
            );
        }
    }
    assert_eq!(rule("cli"), ["lab"], "the CLI depends on lab only");
}
