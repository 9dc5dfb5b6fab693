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
}

pub type LabResult<T> = Result<T, LabError>;
