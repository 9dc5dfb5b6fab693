//! Database storage engine on the simulated SSD (SPEC E, paper 000: Miyaji et al. 2014).
//!
//! A table of fixed-size rows laid over the logical pages of a [`BlockDevice`]; a conventional
//! engine (append, mark-only Delete, in-place Update) and the co-designed one (Insert Address
//! Assist fed by [`CoDesignHints`], Update-to-Delete+Insert), switchable independently. The
//! W2 query generator and a driver live in [`workload`]; in-memory test devices in [`mem`].
//! See `docs/engine.md` for the model and its decisions.

pub mod btree;
pub mod device;
pub mod durability;
pub mod engine;
pub mod error;
pub mod layout;
pub mod mem;
pub mod metrics;
pub mod table;
pub mod workload;

pub use btree::{BTree, BTreeConfig};
pub use device::{BlockDevice, CoDesignHints, DeviceCounters, Lpa};
pub use engine::{CoDesignFallback, ConventionalInsert, Engine, EngineConfig, Query};
pub use error::EngineError;
pub use layout::RowLayout;
pub use mem::{MemDevice, MemFtl, MemFtlConfig};
pub use metrics::{EngineMetrics, QueryKind, QueryStats, RunMetrics};
pub use table::RowId;
pub use workload::{
    ConstantFreeSpace, DriftingFreeSpace, QueryGenerator, QueryMix, fill_to_free_space,
    fill_to_free_space_while, run_queries, run_queries_while, run_until_free_space,
    run_until_free_space_while,
};
