//! The SQL layer's errors: one enum, each message naming the file, argument or key at fault.

use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SqlError {
    /// Bad argument or option (the message names it).
    #[error("{0}")]
    Usage(String),
    /// The controller refused a request or failed.
    #[error("device: {0}")]
    Device(#[from] nandlab_ftl::FtlError),
    /// SQLite reported an error (the message is SQLite's).
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A file that does not exist on the simulated disk.
    #[error("file `{name}`: not found on the simulated disk")]
    NotFound { name: String },
    /// A file id that is not open (a VFS bug, reported rather than panicking).
    #[error("file id {id}: not open")]
    BadFile { id: u32 },
    /// The device lost power (an armed crash-test cut): no request runs any more.
    #[error("the simulated SSD lost power (power cut)")]
    PowerLost,
    /// The caller's interrupt check asked to stop (Ctrl-C): the statement running was rolled
    /// back by SQLite, the ones before it ran.
    #[error("interrupted")]
    Interrupted,
    /// The logical space is full.
    #[error(
        "file `{name}`: no room for {bytes} bytes ({free_bytes} bytes free on the simulated SSD)"
    )]
    NoSpace {
        name: String,
        bytes: u64,
        free_bytes: u64,
    },
}

impl SqlError {
    /// Whether the error is the input's (a bad option, bad SQL, a constraint the SQL broke, a
    /// missing file): a usage error. Otherwise the run failed on good input (the device
    /// failed, filled up or lost power, SQLite met an I/O error or a corrupt file).
    pub fn is_input_error(&self) -> bool {
        use rusqlite::ErrorCode;
        match self {
            SqlError::Usage(_) | SqlError::NotFound { .. } => true,
            SqlError::Sqlite(rusqlite::Error::SqliteFailure(failure, _)) => matches!(
                failure.code,
                ErrorCode::Unknown // SQLITE_ERROR: syntax, no such table, …
                    | ErrorCode::ConstraintViolation
                    | ErrorCode::TypeMismatch
                    | ErrorCode::ApiMisuse
                    | ErrorCode::ParameterOutOfRange
                    | ErrorCode::TooBig
                    | ErrorCode::ReadOnly
                    | ErrorCode::AuthorizationForStatementDenied
            ),
            SqlError::Sqlite(_) => true, // rusqlite's own checks (parameters, NUL bytes, …)
            SqlError::Device(_)
            | SqlError::BadFile { .. }
            | SqlError::PowerLost
            | SqlError::Interrupted
            | SqlError::NoSpace { .. } => false,
        }
    }
}

pub type SqlResult<T> = Result<T, SqlError>;
