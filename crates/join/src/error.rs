//! The join layer's one error enum; every message names the offending argument.

use thiserror::Error;

/// What can go wrong building a database in PCM or running a join over it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum JoinError {
    /// An argument out of range or inconsistent with another.
    #[error("{argument}: {message}")]
    Argument {
        /// The argument or config key.
        argument: &'static str,
        /// What is wrong and what is expected.
        message: String,
    },
    /// The PCM device refused an access or a config.
    #[error(transparent)]
    Pcm(#[from] nandlab_pcm::PcmError),
    /// The SSB generator refused its arguments.
    #[error(transparent)]
    Workload(#[from] nandlab_workload::WorkloadError),
}

/// The layer's result type.
pub type JoinResult<T> = Result<T, JoinError>;

/// Shorthand for [`JoinError::Argument`].
pub(crate) fn argument(argument: &'static str, message: impl Into<String>) -> JoinError {
    JoinError::Argument {
        argument,
        message: message.into(),
    }
}
