//! The runner's error enum: every lower layer's error converts into it.

use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LabError {
    #[error(transparent)]
    Nand(#[from] nandlab_nand::NandError),
    #[error(transparent)]
    Ftl(#[from] nandlab_ftl::FtlError),
    #[error(transparent)]
    Engine(#[from] nandlab_engine::EngineError),
    #[error(transparent)]
    Workload(#[from] nandlab_workload::WorkloadError),
    #[error(transparent)]
    Join(#[from] nandlab_join::JoinError),
    #[error("{0}")]
    Usage(String),
    #[error("unknown experiment `{id}` (run `nandlab reproduce --list`)")]
    UnknownExperiment { id: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("interrupted")]
    Interrupted,
    /// The run ended but found a failure: a crash-oracle violation, a failed consistency
    /// check, a worker that died. Exit status 1, not 2 (the input was fine).
    #[error("{0}")]
    Failed(String),
}

impl LabError {
    /// The process exit status for this error: 2 for bad input (arguments, config keys and
    /// values, files that cannot be read), 1 for a run that failed (a violation or failed check,
    /// an output that cannot be written, a simulation that could not go on).
    pub fn exit_status(&self) -> u8 {
        use nandlab_ftl::FtlError;
        match self {
            LabError::Usage(_)
            | LabError::UnknownExperiment { .. }
            | LabError::Read { .. }
            | LabError::Nand(_)
            | LabError::Engine(_)
            | LabError::Workload(_)
            | LabError::Join(_) => 2,
            LabError::Ftl(
                FtlError::Config { .. }
                | FtlError::Workload { .. }
                | FtlError::OutOfRange { .. }
                | FtlError::BadRequest { .. }
                | FtlError::EndOfTime { .. },
            ) => 2,
            LabError::Ftl(_)
            | LabError::Write { .. }
            | LabError::Interrupted
            | LabError::Failed(_) => 1,
        }
    }
}

pub type LabResult<T> = Result<T, LabError>;
