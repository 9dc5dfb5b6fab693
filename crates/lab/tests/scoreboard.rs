//! The scoreboard at the top of docs/experiments.md (issue 30): one row per reference result of
//! the specification (SPEC R-E1 … R-S5), each with a verdict and the command that reproduces
//! it, and a count that agrees with the rows. Guards against an R-id dropping out of the table,
//! a row naming an experiment that does not reproduce that R-id, and a stale count.

use nandlab_lab::experiments;
use std::collections::BTreeSet;

/// The reference results of the specification's table R (SPEC.md, "R. Reference results to
/// reproduce"; the specification is not part of the repository).
const SPEC_R_IDS: [&str; 20] = [
    "R-E1", "R-E2", "R-E3", "R-E4", "R-E5", "R-E6", "R-N1", "R-N2", "R-N3", "R-N4", "R-N5", "R-N6",
    "R-P1", "R-P2", "R-P3", "R-S1", "R-S2", "R-S3", "R-S4", "R-S5",
];

const VERDICTS: [&str; 3] = ["within 15 %", "in shape", "off"];

/// The R-ids named in `text` (`R-` + a capital letter + digits).
fn r_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for (at, _) in text.match_indices("R-") {
        let rest = &text[at + 2..];
        let mut chars = rest.chars();
        let Some(letter) = chars.next().filter(char::is_ascii_uppercase) else {
            continue;
        };
        let digits: String = chars.take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            ids.insert(format!("R-{letter}{digits}"));
        }
    }
    ids
}

struct Row {
    id: String,
    verdict: String,
    command: String,
}

/// The rows of the table under `## Scoreboard` and the line with the count.
fn scoreboard() -> (Vec<Row>, String) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/experiments.md");
    let text = std::fs::read_to_string(path).expect("docs/experiments.md");
    let section = text
        .split("\n## Scoreboard")
        .nth(1)
        .expect("a `## Scoreboard` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let rows = section
        .lines()
        .filter(|l| l.starts_with("| R-") && !l.starts_with("| R-id "))
        .map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            assert_eq!(cells.len(), 6, "six cells: {l}");
            Row {
                id: cells[0].to_string(),
                verdict: cells[3].trim_matches('*').to_string(),
                command: cells[5].to_string(),
            }
        })
        .collect();
    let count = section
        .lines()
        .find(|l| l.contains("Count:"))
        .expect("a `Count:` line")
        .to_string();
    (rows, count)
}

#[test]
fn every_spec_r_id_has_one_scoreboard_row_with_a_verdict_and_its_experiment() {
    let (rows, count) = scoreboard();
    let listed: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        listed, SPEC_R_IDS,
        "one row per R-id, in the specification's order"
    );
    // every R-id an experiment declares is in the specification (and so in the table)
    let mut registered = BTreeSet::new();
    for e in experiments::registry() {
        registered.extend(r_ids(e.reference));
    }
    let spec: BTreeSet<String> = SPEC_R_IDS.iter().map(|s| s.to_string()).collect();
    assert!(registered.is_subset(&spec), "{registered:?}");
    assert_eq!(registered, spec, "every R-id has a registered experiment");
    for row in &rows {
        assert!(
            VERDICTS.contains(&row.verdict.as_str()),
            "{}: verdict {:?}",
            row.id,
            row.verdict
        );
        // the command reproduces this R-id: its experiment declares it
        let id = row
            .command
            .split("nandlab reproduce ")
            .nth(1)
            .and_then(|rest| rest.split([' ', '`']).next())
            .unwrap_or_else(|| panic!("{}: no `nandlab reproduce ID` in {}", row.id, row.command));
        let experiment = experiments::find(id).unwrap();
        assert!(
            r_ids(experiment.reference).contains(&row.id),
            "{}: `{id}` reproduces {}",
            row.id,
            experiment.reference
        );
    }
    for verdict in VERDICTS {
        let n = rows.iter().filter(|r| r.verdict == verdict).count();
        assert!(
            count.contains(&format!("{n} {verdict}")),
            "the count says {count:?}, the rows {n} {verdict}"
        );
    }
}
