//! Search-in-Memory index structures (SPEC S6; paper 004 §V) over a [`SearchDevice`]: what sits
//! above a search-capable device. The device is the controller's search component
//! ([`nandlab_ftl::search`]: randomization, verification header, optimistic error correction,
//! refresh, chunk ECC, the deadline batcher and the command codec), attached either straight to
//! a chip model ([`ChipDevice`]: a [`SearchStore`] and its [`nandlab_nand::NandSim`]) or
//! through an SSD's SiM region ([`nandlab_ftl::Ssd`]). This crate runs no chip loop of its own:
//! [`SearchDevice::settle`] is the device's.
//!
//! [`SearchLeafIndex`] is a B+tree leaf level on SiM pages (paper §V-A: key page + value page).
//! [`index`] holds the other integrations of paper §V: a secondary index of bit-packed rows
//! ([`SecondaryIndex`]), range queries as power-of-two key + mask searches, and data
//! redistribution by key-space partition ([`redistribute()`]).
//!
//! [`tree`] runs the engine's B+tree ([`nandlab_engine::BTree`]) on a device, its leaves searched
//! on the chip ([`get_on_chip`]).
//!
//! Layout: `device` (the trait and its implementations), `leaf`, `index`, `tree`, `error`;
//! `header`, `chunk_ecc` and `crc` are re-exported from `nandlab_nand::search`, the store's types
//! from `nandlab_ftl::search`.

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
