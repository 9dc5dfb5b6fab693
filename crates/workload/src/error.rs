//! The one error type of the workload layer.
//!
//! Every message is a single line that says where the problem is: `file:line: what` for trace
//! and job-file input, `key: what` for a configuration value.

use std::path::PathBuf;

/// Errors from workload generators, fio job files and trace readers/writers.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A line of a trace or job file that cannot be understood.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// File (or label such as `<stdin>`) the line came from.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong, naming the field and the offending text.
        message: String,
    },
    /// A key of a job file outside the supported subset.
    #[error("{}:{line}: unsupported key \"{key}\"{hint}", path.display())]
    UnsupportedKey {
        /// File the key came from.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The key as written.
        key: String,
        /// Empty, or `"; "` followed by advice.
        hint: String,
    },
    /// A configuration value that is out of range or inconsistent with another.
    #[error("{key}: {message}")]
    Invalid {
        /// The offending key, dotted for nested keys (`distribution.theta`).
        key: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// File being read or written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl WorkloadError {
    /// Shorthand for [`WorkloadError::Invalid`].
    pub fn invalid(key: impl Into<String>, message: impl Into<String>) -> Self {
        WorkloadError::Invalid {
            key: key.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`WorkloadError::Parse`].
    pub fn parse(path: impl Into<PathBuf>, line: u64, message: impl Into<String>) -> Self {
        WorkloadError::Parse {
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    /// Prefixes the key of an [`WorkloadError::Invalid`] error (for a spec nested in a larger
    /// config); other variants are returned unchanged.
    pub fn within(self, prefix: &str) -> Self {
        match self {
            WorkloadError::Invalid { key, message } => WorkloadError::Invalid {
                key: format!("{prefix}.{key}"),
                message,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_and_line_or_key() {
        let e = WorkloadError::parse("trace.csv", 17, "bad offset \"x1f\": expected an integer");
        assert_eq!(
            e.to_string(),
            "trace.csv:17: bad offset \"x1f\": expected an integer"
        );
        let e = WorkloadError::invalid("read_fraction", "must be within 0..=1, got 1.5");
        assert_eq!(
            e.to_string(),
            "read_fraction: must be within 0..=1, got 1.5"
        );
        assert_eq!(
            e.within("workload").to_string(),
            "workload.read_fraction: must be within 0..=1, got 1.5"
        );
        let e = WorkloadError::UnsupportedKey {
            path: "job.fio".into(),
            line: 3,
            key: "rate".into(),
            hint: String::new(),
        };
        assert_eq!(e.to_string(), "job.fio:3: unsupported key \"rate\"");
        let e = WorkloadError::Io {
            path: "missing.csv".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "not found"),
        };
        assert_eq!(e.to_string(), "missing.csv: not found");
    }
}
