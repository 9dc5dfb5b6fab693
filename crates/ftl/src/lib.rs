#![warn(missing_docs)]
//! SSD controller and flash translation layer (SPEC F1–F8) on top of the chip model
//! [`nandlab_nand::NandSim`].
//!
//! What a user calls, top first:
//! - [`Ssd`]: build from an [`SsdConfig`] and a seed; [`Ssd::run`] a stream of
//!   [`HostRequest`]s and get an [`SsdReport`]; [`Ssd::execute`] one request synchronously;
//!   [`Ssd::precondition`]; the co-design hints [`Ssd::page_size_bytes`] and
//!   [`Ssd::next_erase_block_valid_lpas`].
//!
//! Mechanics below: [`host`] (requests, queue), [`mapping`] (page / block / hybrid),
//! `gc` (victim policies), `wear` (wear-leveling), [`frontend`] (the front-end chain: DRAM
//! write buffer, and later PCM buffer / dedup stages),
//! `flash` (block accounting, op emission, payloads, OOB), [`address`] (typed addresses),
//! [`stats`].
//!
//! Where each policy and mechanism lives:
//!
//! | looking for | open |
//! |---|---|
//! | host interface: queue depth, request slots, read-modify-write steps | `host/mod.rs`, `host/queue.rs` |
//! | NVMe host interface above the SSD: namespaces, queue pairs and arbitration, zone and FDP checks, statuses | `nvme/` |
//! | front-end chain (the stages between host and mapping) | `frontend/mod.rs` |
//! | write buffer (DRAM, LRU / FIFO) | `frontend/buffer.rs` |
//! | page mapping; host and GC write frontiers; striping (allocation order) | `mapping/page.rs`, `mapping/mod.rs` |
//! | block mapping; FAST hybrid log-block mapping (switch / partial / full merges) | `mapping/block.rs`, `mapping/hybrid.rs` |
//! | L2P / P2L tables and the valid bitmap | `mapping/table.rs` |
//! | GC victim policies (`VictimPolicy`): greedy, FIFO, cost-benefit, random, one file each | `gc/policy/` |
//! | GC collector: per-plane / superblock / device-wide GC, background (idle) GC; the hint's prediction | `gc/mod.rs`, `gc/collect.rs`, `gc/hint.rs` |
//! | GC page moves and erase of a victim | `mapping/page.rs` (`PageMap::relocate_block`), `mapping/superblock.rs` |
//! | static wear-leveling (`WearLeveler`): candidate / step; the migration (`ColdMigration`) | `wear/mod.rs` / `wear/migrate.rs`; `mapping/page.rs` |
//! | dynamic wear-leveling (free blocks reused round robin) | `flash/blocks.rs` |
//! | copyback vs read + program moves, erase | `flash/mod.rs` |
//! | the flash transaction scheduler (policy, multiplane merging, cache mode, die slots), per-die op queues; blocking vs interleaved GC | `sched/` (used by `ssd/flash_io.rs`: 2 ops in flight per die, 1 with multiplane merging and no cache mode; and by the chip-level driver `sched/chip/`) |
//! | die-first / plane-first / FCFS policy | `sched/policy.rs` |
//! | multiplane merging of decided ops and of ops queued on a die | `sched/scheduler.rs` (`merge_multiplane`, `merge_queued`), called from `ssd/flash_io.rs` |
//! | superblock write frontiers (superpages of `ftl.superpage_planes` planes), superblock GC | `mapping/superblock.rs` |
//! | OOB metadata (LPA, write sequence, CRC) and write durability | `flash/oob.rs`, `flash/tickets.rs`, `ssd/durability.rs` |
//! | co-design hint (next erase block's valid LPAs) | `mapping/page.rs` (`next_erase_block_valid_lpas`), `ssd/mod.rs` |
//! | preconditioning | `ssd/precondition.rs` |
//! | placement ids (FDP reclaim-unit handles): per-id frontiers and WAF | `flash/placement.rs`, `mapping/page.rs` |
//! | controller costs: firmware, DRAM, host link, ECC (time and energy) | `controller/` |
//! | Search-in-Memory: region, integrity, deadline batcher, command codec; the chip-attached store | `search/` (the SSD side: `ssd/search.rs`) |
//! | counters and the report | `stats/`, `ssd/report.rs` |
//! | memory estimate and budget | `memory.rs` |

pub mod address;
pub mod config;
pub mod controller;
pub mod error;
mod flash;
pub mod frontend;
mod gc;
pub mod host;
pub mod mapping;
pub mod memory;
pub mod nvme;
pub mod power;
pub mod sched;
pub mod search;
mod ssd;
pub mod stats;
mod wear;

pub use address::{Lpa, Ppa};
pub use config::{
    BufferConfig, BufferPolicy, DeviceConfig, FtlConfig, GcConfig, GcPolicy, GcScheduling, GcScope,
    HintsConfig, HostConfig, MappingConfig, MappingKind, PayloadMode, ReadScheduling,
    SchedulerConfig, SearchRegionConfig, SlcCacheConfig, SsdConfig, WearConfig, WearLeveling,
};
pub use controller::{ControllerCosts, ControllerSection};
pub use error::{FtlError, FtlResult};
pub use flash::bad_blocks::BadBlockReport;
pub use flash::log_area::LogAreaStats;
pub use flash::oob::{OOB_BYTES, PageOob, oob_crc};
pub use flash::placement::PlacementReport;
pub use flash::read_reclaim::ReadReclaimReport;
pub use frontend::pcm::{LogBufferConfig, PcmStage, PcmStageConfig, PcmStageReport};
pub use frontend::{FlashLogArea, FrontEnd, LogAreaOp, Outgoing, PageWrite, PageWrites, StagePort};
pub use host::{HostOp, HostRequest};
pub use mapping::dftl::CmtCounters;
pub use memory::MemoryEstimate;
pub use search::{SearchCounters, SearchOp, SearchRequest};
pub use ssd::{
    COMMIT_RECORD_MAGIC, CutOutcome, Executed, HostCompletion, PRECONDITION_PROGRESS_WRITES,
    Precondition, RequestHook, Ssd, TxStats, WriteState, WriteStateCounts, hook_as, logical_pages,
    simulate,
};
pub use stats::{ChipOpModes, FtlCounters, SsdReport, TimeSeriesRow};
