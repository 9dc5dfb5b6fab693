//! The controller side of Search-in-Memory (SPEC S4; paper 004 §IV-C), over the chip model's
//! SiM operations ([`nandlab_nand::NandSim`]'s page-open, search, gather, page-close).
//!
//! [`SearchStore`] keeps logical SiM pages in match-mode blocks and guards what the chip
//! returns:
//! - **randomization** per chunk, seeded by the chunk address ([`nandlab_nand::search::randomize`]);
//!   the chip randomizes the search key the same way, so matching needs no de-randomization;
//! - a **verification header** in chunk 0 (CRC-64 over the header fields and the first data
//!   chunk, write timestamp, magic number), checked on every page-open from the window the chip
//!   sends;
//! - **optimistic error correction**: when the CRC fails, or the page is older than the refresh
//!   age, the page is closed and read in full through the page ECC with read-retry; its searches
//!   are then answered by the controller from the corrected copy;
//! - an **age-based refresh queue** (bounded): pages read out for age or errors are rewritten;
//! - a **4-byte ECC per chunk** ([`chunk_ecc`]: SEC-DED Hamming + CRC-16) checked on every
//!   gathered chunk (a concatenated code with the page ECC).
//!
//! [`SearchLeafIndex`] is a B+tree leaf level on SiM pages (paper §V-A: key page + value page).
//! [`index`] holds the other integrations of paper §V: a secondary index of bit-packed rows
//! ([`SecondaryIndex`]), range queries as power-of-two key + mask searches, and data
//! redistribution by key-space partition ([`redistribute()`]).
//!
//! [`tree`] runs the engine's B+tree ([`nandlab_engine::BTree`]) on a store, its leaves searched on
//! the chip ([`get_on_chip`]).
//!
//! Layout: `store` (the API), `leaf`, `index`, `tree`, `error`; `header`, `chunk_ecc` and `crc`
//! are re-exported from `nandlab_nand::search`.

pub mod device;
pub mod error;
pub mod index;
pub mod leaf;
pub mod tree;

/// The integrity formats of the chip crate, re-exported.
pub use nandlab_nand::search::{chunk_ecc, crc, header};

pub use device::{ChipDevice, SearchDevice, SsdOpen};
pub use error::{SearchError, SearchResult};
pub use header::{DATA_BYTES, Header};
pub use index::{
    ChipCost, ChipMeter, FieldRange, Predicate, RangeMethod, RowLayout, SecondaryIndex,
    redistribute,
};
pub use leaf::SearchLeafIndex;
pub use nandlab_ftl::search::{IntegrityStats, LogicalPage, OpenPage, SearchStore, StoreConfig};
pub use tree::{SearchBlockDevice, get_on_chip};
