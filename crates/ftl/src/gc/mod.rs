//! Garbage collection (SPEC F3) as a component: a [`Collector`] with its own config
//! ([`GcConfig`], `[ssd.gc]`) and a [`VictimPolicy`](policy::VictimPolicy) that picks each victim
//! (`policy/`, one file per policy). The collector decides *when* and *where* to collect
//! (per plane, per superpage group, device-wide, or in the background while the device idles)
//! and which block goes; the page mapping moves the victim's valid pages and erases it
//! ([`GcSpace::relocate_block`], implemented by the page mapping's `PageMap`); the time it all takes emerges from the
//! chip model and the scheduling mode ([`GcScheduling`](crate::config::GcScheduling), applied by the flash scheduler).

mod collect;
mod hint;
pub(crate) mod policy;

use crate::address::{BlockId, Lpa, PlaneId};
use crate::config::{GcConfig, GcScope};
use crate::error::FtlResult;
use crate::flash::Flash;
use crate::flash::blocks::BlockManager;
use crate::wear::ColdMigration;
use policy::{Domain, VictimPolicy};

/// What the collector needs of the mapping it collects for (the page mapping's `PageMap`).
pub(crate) trait GcSpace: ColdMigration {
    /// Moves every valid page of `victim` to a GC write frontier and erases it.
    fn relocate_block(&mut self, flash: &mut Flash, victim: BlockId) -> FtlResult<()>;
    /// Plane ids in host striping order.
    fn stripe(&self) -> &[PlaneId];
    /// The position in [`GcSpace::stripe`] the next host write goes to.
    fn cursor(&self) -> usize;
    /// The open host write frontier of `plane` (placement id 0).
    fn host_frontier(&self, plane: PlaneId) -> Option<BlockId>;
    /// Superpage width in planes (1: off).
    fn superpage(&self) -> u32;
    /// The first plane of `plane`'s superpage group.
    fn group_first(&self, plane: PlaneId) -> u32;
    /// Appends the LPAs of the valid pages of `block` to `out`.
    fn push_valid_lpas(&self, flash: &Flash, block: BlockId, out: &mut Vec<Lpa>);
}

/// The garbage collector: its config and its victim policy (whose state, e.g. `random`'s
/// draw, is the collector's too).
#[derive(Debug)]
pub(crate) struct Collector {
    config: GcConfig,
    /// The co-design hint covers every plane's next victim (`ftl.hint_all_planes`).
    hint_all_planes: bool,
    policy: Box<dyn VictimPolicy>,
}

impl Collector {
    /// A collector with the policy `config` names (`seed` feeds the `random` policy).
    pub fn new(config: GcConfig, hint_all_planes: bool, seed: u64) -> Self {
        Self::with_policy(config, hint_all_planes, policy::build(config.policy, seed))
    }

    /// A collector with a policy of the caller's (tests; a policy not named in configs).
    pub fn with_policy(
        config: GcConfig,
        hint_all_planes: bool,
        policy: Box<dyn VictimPolicy>,
    ) -> Self {
        Collector {
            config,
            hint_all_planes,
            policy,
        }
    }

    /// Whether one GC stream serves the whole device.
    #[inline]
    pub fn device_wide(&self) -> bool {
        self.config.scope == GcScope::Device
    }

    /// Picks the victim of `domain` and tells the policy it was taken.
    fn take(&mut self, blocks: &BlockManager, domain: Domain) -> Option<BlockId> {
        let victim = self.policy.peek(blocks, domain);
        if victim.is_some() {
            self.policy.taken(blocks, domain);
        }
        victim
    }
}
