//! The policy enums of the FTL config (mapping scheme, GC, scheduling, wear-leveling, buffer,
//! payload): the values `[ftl]` keys and the grouped `[ssd.*]` sections take.

use serde::{Deserialize, Serialize};

/// Logical-to-physical mapping scheme (SPEC F2, F5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingKind {
    /// Page-level mapping (L2P + P2L tables).
    #[default]
    Page,
    /// Block-level mapping: logical block → physical block, page offset fixed.
    Block,
    /// FAST-style hybrid log-block mapping: block-mapped data blocks, one sequential log block
    /// and `hybrid_random_log_blocks` page-mapped random log blocks.
    Hybrid,
    /// Zoned mapping (NVMe ZNS, `mapping/zoned.rs`): the device is one zoned namespace whose
    /// zones are fixed superblocks of `zone_planes` planes, written only at their write
    /// pointers and erased whole when every written page is trimmed (a zone reset); no GC.
    Zoned,
}

/// Garbage-collection victim policy (SPEC F3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Oldest closed block first (round robin over the plane, as in paper 000).
    Fifo,
    /// Fewest valid pages (ties: lowest block index).
    #[default]
    Greedy,
    /// Largest (1 − u) / 2u × age (Kawaguchi et al. / Rosenblum's LFS).
    CostBenefit,
    /// Uniformly random among reclaimable blocks (seeded, drawn ahead so the hint is exact).
    Random,
}

impl GcPolicy {
    /// Every policy, in report order.
    pub const ALL: [GcPolicy; 4] = [
        GcPolicy::Fifo,
        GcPolicy::Greedy,
        GcPolicy::CostBenefit,
        GcPolicy::Random,
    ];
    /// The config and metric name (`fifo`, `greedy`, `cost-benefit`, `random`).
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Fifo => "fifo",
            GcPolicy::Greedy => "greedy",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::Random => "random",
        }
    }
}

/// Where GC looks for free space and victims (page mapping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcScope {
    /// Each plane collects its own garbage: it runs when the plane's free blocks drop below
    /// `gc_threshold_blocks` and picks its victim among the plane's blocks.
    #[default]
    Plane,
    /// One GC stream for the device (paper 000's FTL): it runs when the device's free blocks
    /// drop below `gc_threshold_blocks` × planes and picks its victim among all blocks; the
    /// valid pages still move within the victim's plane (so copyback applies), and the
    /// co-design hint is the one block erased next.
    Device,
}

/// How GC work is ordered against host I/O on each die ([`crate::sched`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcScheduling {
    /// Foreground GC: GC ops and host ops share one FIFO per die in decision order, so host
    /// ops decided after a GC wait for all of its work on that die (paper 000's `t_GC`).
    #[default]
    Blocking,
    /// GC ops wait in their own queue and run only when the die has no host op waiting, unless
    /// a plane of the die is short of physically free blocks (`gc_urgent_free_blocks`), or the
    /// host op needs GC work first (MQSim's preemptible GC).
    Interleaved,
}

/// How host reads are scheduled against the other ops of their die ([`crate::sched`];
/// SPEC C1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadScheduling {
    /// Host reads wait in the die's queue in decision order like every other op.
    #[default]
    Fifo,
    /// A host read whose page is programmed goes to the chip at once, ahead of the ops
    /// waiting in the controller's queue for its die (it still waits for the ops already on
    /// the chip, a whole program or erase among them).
    Priority,
    /// As `priority`, and the read may also suspend a program or erase under way on its die
    /// (the chip's `[suspend]` section: latencies and the reads served per suspension).
    Suspend,
}

/// Wear-leveling (SPEC F4). Block allocation is always round robin (free blocks are reused in
/// the order they were erased); `static` adds migration of cold blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WearLeveling {
    /// Round-robin allocation only (paper 000).
    #[default]
    RoundRobin,
    /// Round robin plus static wear-leveling: when a plane's erase-count gap exceeds
    /// `wl_erase_gap_threshold`, the least-worn block's data is moved and the block recycled.
    Static,
}

/// Write-buffer eviction order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferPolicy {
    /// Least recently used page first (a hit moves the page to the front).
    #[default]
    Lru,
    /// Oldest inserted page first.
    Fifo,
}

/// Whether page bytes are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PayloadMode {
    /// Page bytes kept per physical page; reads return what was last written.
    Full,
    /// No bytes; memory does not depend on the data written.
    #[default]
    TimingOnly,
}
