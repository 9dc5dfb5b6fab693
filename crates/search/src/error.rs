//! The index layer's error enum. Messages name the logical page or argument.

use nandlab_nand::NandError;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SearchError {
    /// An error of the chip model (a SiM rule, an address, a reliability constraint).
    #[error(transparent)]
    Nand(#[from] NandError),

    /// An error of the search device (the controller's search store: an unwritten or
    /// uncorrectable page, a full store or refresh queue).
    #[error(transparent)]
    Device(#[from] nandlab_ftl::search::StoreError),

    /// An error of the engine's B+tree run on a store ([`crate::tree`]).
    #[error(transparent)]
    Engine(#[from] nandlab_engine::EngineError),

    /// An argument out of range.
    #[error("invalid argument `{argument}`: {message}")]
    Argument {
        argument: &'static str,
        message: String,
    },
}

pub type SearchResult<T> = Result<T, SearchError>;
