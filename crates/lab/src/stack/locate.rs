//! Where a key of a stack config is written: every stack-config error names the key path and,
//! when the key is in the user's text, its line. One position style for all of them:
//! `ORIGIN line N: key `a.b.c`: message` (or `ORIGIN: key `a.b.c`: message` when the key comes
//! from a preset or a default).

use crate::error::LabError;
use toml::de::{DeTable, DeValue};

/// A stack-config text with its origin (a file path, `<python>`, …), to locate keys in.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub origin: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// The 1-based line where `path` (dot separated; a prefix of a longer path works too) is
    /// defined, when it is written in this text.
    pub fn line_of(&self, path: &str) -> Option<usize> {
        let root = DeTable::parse(self.text).ok()?;
        let mut table = root.get_ref();
        let parts: Vec<&str> = path.split('.').filter(|p| !p.is_empty()).collect();
        let mut best = None;
        for (i, part) in parts.iter().enumerate() {
            let (key, value) = table.get_key_value(*part)?;
            best = Some(key.span().start);
            match value.get_ref() {
                DeValue::Table(inner) if i + 1 < parts.len() => table = inner,
                _ => break,
            }
        }
        best.map(|byte| line_at(self.text, byte))
    }

    /// An error about `key` (a dot path), located in this text when it is written there.
    pub fn error(&self, key: &str, message: impl std::fmt::Display) -> LabError {
        let at = match self.line_of(key) {
            Some(line) => format!("{} line {line}", self.origin),
            None => self.origin.to_string(),
        };
        LabError::Usage(format!("{at}: key `{key}`: {message}"))
    }

    /// A TOML syntax error of this text, with its line, and the key written on that line when
    /// there is one (a value out of range: "u64 value was too large" named no key).
    pub fn syntax_error(&self, e: &toml::de::Error) -> LabError {
        let at = match e.span() {
            Some(span) => {
                let line = line_at(self.text, span.start);
                match key_on_line(self.text, line) {
                    Some(key) => format!("{} line {line}: key `{key}`", self.origin),
                    None => format!("{} line {line}", self.origin),
                }
            }
            None => self.origin.to_string(),
        };
        LabError::Usage(format!("{at}: {}", e.message().trim_end()))
    }
}

/// The dotted key assigned on 1-based `line` of `text` (`key = value` under the nearest
/// `[table]` header above it), if the line is such an assignment.
fn key_on_line(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (lhs, _) = lines.get(line.checked_sub(1)?)?.split_once('=')?;
    let is_key = |c: char| c.is_ascii_alphanumeric() || "_-.\"' ".contains(c);
    let key = lhs.trim();
    if key.is_empty() || !key.chars().all(is_key) {
        return None;
    }
    let table = lines[..line - 1].iter().rev().find_map(|l| {
        let l = l.trim();
        l.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .map(|h| h.trim_matches(['[', ']']).trim().to_owned())
    });
    Some(match table {
        Some(table) if !table.is_empty() => format!("{table}.{key}"),
        _ => key.to_owned(),
    })
}

pub use nandlab_core::message::line_at;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_in_dotted_and_table_forms() {
        let text =
            "[run]\nseed = 1\n\n[ssd.gc]\npolicy = \"fifo\"\n[nand]\ngeometry.channels = 2\n";
        let s = Source {
            origin: "t.toml",
            text,
        };
        assert_eq!(s.line_of("run.seed"), Some(2));
        assert_eq!(s.line_of("ssd.gc.policy"), Some(5));
        assert_eq!(s.line_of("nand.geometry.channels"), Some(7));
        // a prefix: the table header's line
        assert_eq!(s.line_of("ssd.gc"), Some(4));
        assert_eq!(s.line_of("ssd.host.queue_depth"), None);
        let e = s.error("ssd.gc.policy", "bad").to_string();
        assert_eq!(e, "t.toml line 5: key `ssd.gc.policy`: bad");
    }

    #[test]
    fn a_value_error_names_the_key_of_its_line() {
        // issue 31 item 6: u64::MAX in a u64 key gave "u64 value was too large" without a key
        // (a stack config is read as a TOML table first: an integer beyond i64 fails there)
        let text = "[run]\nseed = 1\n\n[workload]\nrequest_count = 18446744073709551615\n";
        let e = toml::from_str::<toml::Table>(text).unwrap_err();
        let s = Source {
            origin: "t.toml",
            text,
        };
        let message = s.syntax_error(&e).to_string();
        assert!(
            message.starts_with("t.toml line 5: key `workload.request_count`: "),
            "{message}"
        );
        assert_eq!(
            key_on_line("a = 1\n[x.y]\nb.c = 2\n", 3).as_deref(),
            Some("x.y.b.c")
        );
        assert_eq!(key_on_line("[x]\n", 1), None);
    }
}
