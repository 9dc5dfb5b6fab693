//! The SiM controller layer's error enum. Messages name the logical page or argument.

use nandlab_nand::NandError;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SearchError {
    /// An error of the chip model (a SiM rule, an address, a reliability constraint).
    #[error(transparent)]
    Nand(#[from] NandError),

    /// An error of the engine's B+tree run on a store ([`crate::tree`]).
    #[error(transparent)]
    Engine(#[from] nandlab_engine::EngineError),

    /// An argument out of range.
    #[error("invalid argument `{argument}`: {message}")]
    Argument {
        argument: &'static str,
        message: String,
    },

    /// A logical page that was never written.
    #[error("logical SiM page {page} was never written")]
    Unwritten { page: u32 },

    /// The page did not decode even after the last read-retry.
    #[error(
        "logical SiM page {page} is uncorrectable (full read with {retries} read-retries failed)"
    )]
    Uncorrectable { page: u32, retries: u32 },

    /// Every page of the store's match-mode blocks is used (garbage collection is not modelled).
    #[error("the SiM store is full ({pages} pages in its match-mode blocks)")]
    Full { pages: u64 },

    /// The refresh queue is at its bound.
    #[error(
        "refresh queue full ({limit} pages, store.refresh_queue_pages_max) at logical page {page}"
    )]
    RefreshQueueFull { page: u32, limit: usize },
}

pub type SearchResult<T> = Result<T, SearchError>;
