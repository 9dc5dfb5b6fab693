//! The Search-in-Memory controller (SPEC S2, S4, S5; paper 004 §IV, §VI-A1): one component
//! for both ways a search chip is attached.
//!
//! - **Through the SSD** (`SearchRegion`, plugged into [`crate::Ssd`] when `ftl.sim_pages >
//!   0`): search and gather are host commands on the last logical pages, routed by the page
//!   mapping, queued per die with the other ops; their pool of match-mode blocks is garbage
//!   collected and wear-levelled with the rest ([`crate::Ssd::execute_search`],
//!   [`crate::Ssd::run_search`]). The SSD side of it (admission, chip submission, fallback
//!   reads, refresh through the FTL) is `ssd/search.rs`.
//! - **Straight on a chip model** ([`SearchStore`]): logical pages in match-mode blocks of a
//!   [`nandlab_nand::NandSim`], no FTL (no GC, no host queue); the caller submits at a time and
//!   runs the chip's events. It is the device of the paper's evaluation harness (paper §VI-A:
//!   one query at a time on the chips) and of the index structures in `nandlab-search`.
//!
//! Shared by both: the integrity protocol ([`integrity`]: verification header check, chunk
//! ECC, refresh queue, over the formats of [`nandlab_nand::search`]), the deadline batch
//! scheduler ([`deadline`]) and the NVMe command codec ([`command`]).
//!
//! Layout: `region` (the SSD's region: commands, counters, state), `integrity`, `deadline`,
//! `command`, `store` (the chip-attached store), `error` (the store's errors).

pub mod command;
pub mod deadline;
pub mod error;
pub mod integrity;
pub(crate) mod region;
pub mod store;

pub use command::{CommandRunner, SearchCommand};
pub use deadline::DeadlineScheduler;
pub use error::{StoreError, StoreResult};
pub(crate) use region::SearchRegion;
pub use region::{SearchCounters, SearchOp, SearchRequest};
pub use store::{IntegrityStats, LogicalPage, OpenPage, SearchStore, StoreConfig};

#[cfg(test)]
mod store_tests;
