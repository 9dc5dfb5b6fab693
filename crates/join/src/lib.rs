//! PCM-aware hash joins (SPEC P6; thesis seed 001, chapter 4 and §5.2): the Star Schema
//! Benchmark tables in a PCM device as a row store or a column store, and the traditional
//! (Grace) and virtual-partitioning hash joins over them, with PCM as storage or as main memory.
//! Every access of the join's data goes through the PCM device model, so wear, energy and
//! latency are measured; the thesis's formulas are computed beside them.
//!
//! ```text
//!  Query (query.rs) ── Database::run (database.rs) ── hash_join (join.rs)
//!                                   │                     │ Reader / Partitions (access.rs)
//!                        StoredTable (store.rs) ──────────┴── PcmDevice (nandlab-pcm)
//!  run_users (users.rs): U users' queries and inserts/updates/deletes (maintain.rs) under a
//!                        shared/exclusive LINEORDER lock, in simulated time
//! ```

pub mod access;
pub mod cost;
pub mod database;
pub mod error;
pub mod join;
mod maintain;
pub mod query;
pub mod reference;
pub mod ssb_queries;
pub mod store;
#[cfg(test)]
mod tests;
pub mod users;

pub use access::{Mode, PAGE_BYTES};
pub use cost::{FormulaConstants, PcmCost};
pub use database::{Database, QueryRun};
pub use error::{JoinError, JoinResult};
pub use join::{Algorithm, JoinCounts, JoinSettings, Predicate};
pub use query::{DimensionJoin, Query, Selection, thesis_queries};
pub use reference::{reference_rows, reference_rows_over};
pub use ssb_queries::ssb_queries;
pub use store::Layout;
pub use users::{UsersConfig, UsersRun, extra_facts_for, run_users};
