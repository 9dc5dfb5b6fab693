//! Writing results: JSON and CSV files in an output folder.

use crate::error::{LabError, LabResult};
use std::path::Path;

pub fn write_file(path: &Path, text: &str) -> LabResult<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| LabError::Write {
            path: parent.display().to_string(),
            source,
        })?;
    }
    std::fs::write(path, text).map_err(|source| LabError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Makes sure results can be written into `dir` before a run starts (creates it and writes and
/// removes a probe file), so a long run never ends with its results unwritable.
pub fn check_writable_dir(dir: &Path) -> LabResult<()> {
    let probe = dir.join(".nandlab-write-probe");
    write_file(&probe, "")?;
    std::fs::remove_file(&probe).map_err(|source| LabError::Write {
        path: probe.display().to_string(),
        source,
    })
}

/// CSV text written with the `csv` crate: a field holding a comma, a quote or a line break is
/// quoted (quotes doubled), so labels round-trip through any CSV reader; other fields are
/// written as they are, so plain tables keep their bytes.
#[derive(Debug)]
pub struct CsvText {
    writer: csv::Writer<Vec<u8>>,
}

impl CsvText {
    /// A table starting with its header row.
    pub fn new<I, S>(header: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut text = CsvText {
            writer: csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(Vec::new()),
        };
        text.row(header);
        text
    }

    /// Appends one row.
    pub fn row<I, S>(&mut self, fields: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.writer
            .write_record(fields.into_iter().map(|f| f.as_ref().to_owned()))
            .expect("writing CSV into memory cannot fail");
    }

    /// The finished text.
    pub fn finish(self) -> String {
        let bytes = self
            .writer
            .into_inner()
            .expect("flushing CSV into memory cannot fail");
        String::from_utf8(bytes).expect("CSV of strings is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::CsvText;

    #[test]
    fn robust4_csv_labels_round_trip_and_plain_rows_keep_their_bytes() {
        let labels = ["plain", "a,b", "say \"hi\"", "two\nlines", "", " spaced "];
        let mut text = CsvText::new(["label", "value"]);
        for (i, label) in labels.iter().enumerate() {
            text.row([label.to_string(), i.to_string()]);
        }
        let text = text.finish();
        assert!(text.starts_with("label,value\nplain,0\n\"a,b\",1\n\"say \"\"hi\"\"\",2\n"));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let read: Vec<(String, String)> = reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                (r[0].to_string(), r[1].to_string())
            })
            .collect();
        assert_eq!(read.len(), labels.len());
        for (i, (label, value)) in read.iter().enumerate() {
            assert_eq!(label, labels[i]);
            assert_eq!(value, &i.to_string());
        }
    }
}
