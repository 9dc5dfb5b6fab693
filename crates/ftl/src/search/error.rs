//! The errors of the search store ([`super::SearchStore`]): messages name the logical page or
//! argument. Commands through the SSD report [`crate::FtlError`] instead.

use nandlab_nand::NandError;
use thiserror::Error;

/// What went wrong in a call of the search store.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StoreError {
    /// An error of the chip model (a SiM rule, an address, a reliability constraint).
    #[error(transparent)]
    Nand(#[from] NandError),

    /// An argument out of range.
    #[error("invalid argument `{argument}`: {message}")]
    Argument {
        /// The argument's name.
        argument: &'static str,
        /// What is wrong with it.
        message: String,
    },

    /// A logical page that was never written.
    #[error("logical SiM page {page} was never written")]
    Unwritten {
        /// The logical page.
        page: u32,
    },

    /// The page did not decode even after the last read-retry.
    #[error(
        "logical SiM page {page} is uncorrectable (full read with {retries} read-retries failed)"
    )]
    Uncorrectable {
        /// The logical page.
        page: u32,
        /// Read-retries of the last read.
        retries: u32,
    },

    /// Every page of the store's match-mode blocks is used (garbage collection is not modelled).
    #[error("the SiM store is full ({pages} pages in its match-mode blocks)")]
    Full {
        /// Pages of the store's blocks.
        pages: u64,
    },

    /// The refresh queue is at its bound.
    #[error(
        "refresh queue full ({limit} pages, store.refresh_queue_pages_max) at logical page {page}"
    )]
    RefreshQueueFull {
        /// The page that did not fit.
        page: u32,
        /// The queue's bound.
        limit: usize,
    },
}

/// The result of a search store call.
pub type StoreResult<T> = Result<T, StoreError>;
