//! No stack-config TOML built as text (issue 28 item 1): the experiments, the power-loss
//! harnesses, the stack builder's entry points, the Python facade and the CLI build typed
//! configs or typed deltas (dot key path = value) over a config, never TOML text with
//! `format!` or by filling in a text template. A base config written once as a constant is
//! data, not text building.
//!
//! The check reads the sources: `format!("[` anywhere in them (the CLI's tests included), and
//! in the product code a `format!` or `.replace` whose text holds a stack-config table header,
//! or a `.replace` on a text constant (`STACK.replace("KIND", …)`).

use std::path::{Path, PathBuf};

/// Table headers of a stack config (and of a sweep file).
const HEADERS: &[&str] = &[
    "[run",
    "[nand",
    "[ssd",
    "[pcm",
    "[workload",
    "[precondition",
    "[engine",
    "[content",
    "[grid",
    "[zip",
    "[geometry",
    "[timing",
];

/// The text building found in `code` (one Rust file), as short descriptions.
fn text_building(code: &str, product: bool) -> Vec<String> {
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    if code.contains("format!(\"[") {
        found.push("format!(\"[".to_string());
    }
    if !product {
        return found;
    }
    for call in ["format!(", ".replace("] {
        for (at, _) in code.match_indices(call) {
            let span = call_span(&code[at + call.len()..]);
            // a header starts a line of the text (an error message may name a section)
            let header =
                |h: &&str| span.contains(&format!("\\n{h}")) || span.contains(&format!("\"{h}"));
            if let Some(h) = HEADERS.iter().find(|h| header(h)) {
                found.push(format!("{call}…{h}…)"));
            }
            if call == ".replace(" {
                let receiver = receiver(&code[..at]);
                if receiver.len() > 1
                    && receiver
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                {
                    found.push(format!("{receiver}.replace("));
                }
            }
        }
    }
    found
}

/// The arguments of a call: the text up to the parenthesis closing it (strings skipped).
fn call_span(rest: &str) -> &str {
    let (mut depth, mut in_string, mut escaped) = (1, false, false);
    for (i, c) in rest.char_indices() {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (true, '"') => in_string = false,
            (true, _) => {}
            (false, '"') => in_string = true,
            (false, '(') => depth += 1,
            (false, ')') => {
                depth -= 1;
                if depth == 0 {
                    return &rest[..i];
                }
            }
            _ => {}
        }
    }
    rest
}

/// The identifier a method call is made on (`STACK` of `STACK\n    .replace(`).
fn receiver(before: &str) -> &str {
    let trimmed = before.trim_end();
    let start = trimmed
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    &trimmed[start..]
}

/// The Rust files of `dir` (or `dir` itself, a file).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_stack_config_is_built_as_text() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    for (dir, product) in [
        ("crates/lab/src/experiments", true),
        ("crates/lab/src/power", true),
        ("crates/lab/src/power.rs", true),
        ("crates/power/src", true),
        ("crates/lab/src/stack/mod.rs", true),
        ("crates/lab/src/api.rs", true),
        ("crates/cli/src", true),
        ("crates/cli/tests", false),
    ] {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        assert!(!files.is_empty(), "{dir} holds Rust files");
        for file in files {
            let code = std::fs::read_to_string(&file).expect("a source file reads");
            for what in text_building(&code, product) {
                found.push(format!("{}: {what}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "stack configs built as text (build a typed config or typed deltas instead):\n{}",
        found.join("\n")
    );
}

/// The check finds the shapes it forbids (the ones issue 28 found in the experiments).
#[test]
fn the_check_finds_text_building() {
    let zns = "let text = STACK\n    .replace(\"MAPPING\", &format!(\"op_fraction = {op}\\n[ssd.gc]\\nx = 3\"))";
    let found = text_building(zns, true);
    assert!(found.iter().any(|f| f == "STACK.replace("), "{found:?}");
    assert!(found.iter().any(|f| f.contains("[ssd")), "{found:?}");
    let pcm = "let t = format!(\"[pcm]\\npreset = {p}\\n\");";
    assert_eq!(text_building(pcm, false), ["format!(\"["]);
    let scaling = "toml::from_str(&format!(\n  \"[geometry]\\nblocks_per_plane = {b}\\n\"))";
    assert_eq!(text_building(scaling, true), ["format!(…[geometry…)"]);
    // typed deltas, metric names and a fio job file (not a stack config) pass
    let fine = "set(&mut t, \"ssd.gc.policy\", p.into());\nlet k = format!(\"waf_{p}_op{o}\");\n\
                let job = format!(\n \"[global]\\nbs=4k\\n[w]\\nrw=write\\n\");\n\
                let n = name.replace('-', \"_\");\n\
                let e = format!(\"`{k}` runs queries: add an [engine] section\");";
    assert!(
        text_building(fine, true).is_empty(),
        "{:?}",
        text_building(fine, true)
    );
    // a comment naming the shape is not code
    assert!(text_building("// format!(\"[ssd]\")", false).is_empty());
}
