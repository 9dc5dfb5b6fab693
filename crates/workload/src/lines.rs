//! Bounded, allocation-reusing line reading shared by the trace readers and the fio parser.
//!
//! Lines are read one at a time into a reused buffer, so a trace of any size streams in constant
//! memory. A line longer than [`MAX_LINE_BYTES`] (a binary file, a missing newline) is an error
//! rather than an unbounded allocation.

use crate::WorkloadError;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Longest accepted line, terminator excluded.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Reads lines from a `BufRead`, counting them from 1.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    reader: R,
    path: PathBuf,
    buffer: Vec<u8>,
    line_number: u64,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        LineReader {
            reader,
            path: path.into(),
            buffer: Vec::new(),
            line_number: 0,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The next line without its `\n` or `\r\n`, with its 1-based number; `None` at the end.
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &str)>, WorkloadError> {
        self.buffer.clear();
        let line_number = self.line_number + 1;
        let mut saw_any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(WorkloadError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            };
            if available.is_empty() {
                break;
            }
            saw_any = true;
            let (chunk, found_newline) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            if self.buffer.len() + chunk.len() > MAX_LINE_BYTES {
                return Err(WorkloadError::parse(
                    &self.path,
                    line_number,
                    format!("line longer than {MAX_LINE_BYTES} bytes (is this a text file?)"),
                ));
            }
            self.buffer.extend_from_slice(chunk);
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                break;
            }
        }
        if !saw_any {
            return Ok(None);
        }
        self.line_number = line_number;
        if self.buffer.last() == Some(&b'\r') {
            self.buffer.pop();
        }
        match std::str::from_utf8(&self.buffer) {
            Ok(text) => Ok(Some((line_number, text))),
            Err(_) => Err(WorkloadError::parse(
                &self.path,
                line_number,
                "line is not valid UTF-8",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_lines(input: &[u8]) -> Vec<Result<(u64, String), String>> {
        let mut reader = LineReader::new(input, "t.txt");
        let mut out = Vec::new();
        loop {
            match reader.next_line() {
                Ok(Some((n, text))) => out.push(Ok((n, text.to_owned()))),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn splits_on_lf_and_crlf_and_numbers_from_one() {
        let lines = all_lines(b"a\r\nbb\n\nlast");
        let expected: Vec<Result<(u64, String), String>> = vec![
            Ok((1, "a".into())),
            Ok((2, "bb".into())),
            Ok((3, String::new())),
            Ok((4, "last".into())),
        ];
        assert_eq!(lines, expected);
        assert!(all_lines(b"").is_empty());
    }

    #[test]
    fn rejects_invalid_utf8_and_overlong_lines_with_line_number() {
        let lines = all_lines(b"ok\n\xff\xfe\n");
        assert_eq!(lines[1], Err("t.txt:2: line is not valid UTF-8".into()));
        let long = vec![b'x'; MAX_LINE_BYTES + 1];
        let lines = all_lines(&long);
        assert!(matches!(&lines[0], Err(m) if m.starts_with("t.txt:1: line longer than")));
    }
}
