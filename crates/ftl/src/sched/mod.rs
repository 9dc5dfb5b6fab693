//! The flash transaction scheduler between the FTL's decisions and the chip model (SPEC N10,
//! issue 12): the one piece of code that decides the order and the merging of flash
//! transactions, for the SSD (`ssd/flash_io.rs`) and for chip-level runs
//! (`nandlab chip`, the NANDFlashSim reproductions) alike.
//!
//! | concern | file |
//! |---|---|
//! | policy: die-first / plane-first / FCFS, where consecutive pages go (paper 003 §8.8) | `policy.rs` |
//! | multiplane merging by the plane addressing rule; cache-mode register use; die slots and interleaving | `merge.rs` |
//! | the SSD's per-die queues; blocking vs interleaved GC; merged-op table | `queues.rs` |
//! | the SSD's flash scheduler: placing decided ops, pumping dies, erase gates, batch and queued multiplane merging, chip submission | `scheduler.rs` |
//! | chip-level runs: workloads, the driver's per-die queues, the chip report | `chip/` |
//!
//! The chip model ([`nandlab_nand::NandSim`]) has no scheduler of its own: it runs the ops it is
//! given and checks the plane addressing rule on each.

pub mod chip;
pub mod merge;
pub mod policy;
mod queues;
pub(crate) mod scheduler;

pub use chip::{
    ChipReport, ChipRequest, ChipWorkload, ChipWorkloadKind, DriverConfig, DriverStats, KindReport,
    StageRow, chip_report, run_requests,
};
pub use policy::{SchedulerPolicy, place};
pub(crate) use queues::{MergedOps, OpQueues};
