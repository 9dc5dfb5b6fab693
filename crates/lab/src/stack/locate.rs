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

    /// A TOML syntax error of this text, with its line.
    pub fn syntax_error(&self, e: &toml::de::Error) -> LabError {
        let at = match e.span() {
            Some(span) => format!("{} line {}", self.origin, line_at(self.text, span.start)),
            None => self.origin.to_string(),
        };
        LabError::Usage(format!("{at}: {}", e.message().trim_end()))
    }
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
}
