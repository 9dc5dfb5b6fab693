//! What the collector will do next, without doing it: the plane whose GC comes first and the
//! block it erases, for the co-design hint (SPEC F7). Exact for every policy, because a pick is
//! a pure function of the block table (and `random` promises its pick when hinted).

use super::policy::Domain;
use super::{Collector, GcSpace};
use crate::address::{BlockId, Lpa, PlaneId};
use crate::flash::Flash;

impl Collector {
    /// The plane whose GC comes first if host writes continue: the fewest host page writes
    /// until its host frontier is full with fewer than `threshold` free blocks (ties: the
    /// plane reached first by the write cursor).
    pub fn next_gc_plane(&self, map: &impl GcSpace, flash: &Flash) -> PlaneId {
        let planes = map.stripe().len();
        let ppb = u64::from(flash.blocks.pages_per_block());
        let mut best: Option<(u64, PlaneId)> = None;
        for step in 0..planes {
            let plane = map.stripe()[(map.cursor() + step) % planes];
            let left_in_frontier = match map.host_frontier(plane) {
                None => 0,
                Some(frontier) => ppb - u64::from(flash.blocks.next_page(frontier)),
            };
            // blocks the host can still take before a need finds free < threshold
            let spare_blocks = u64::from(
                (flash.blocks.free_count(plane) + 1).saturating_sub(self.config.threshold_blocks),
            );
            let pages = left_in_frontier + spare_blocks * ppb;
            let writes = pages * planes as u64 + step as u64;
            if best.is_none_or(|(w, _)| writes < w) {
                best = Some((writes, plane));
            }
        }
        best.map_or(PlaneId(0), |(_, p)| p)
    }

    /// The LPAs of the valid pages of the block(s) GC erases next (every plane's next victim
    /// with `hint_all_planes`); the policy promises each hinted pick.
    pub fn hint_valid_lpas(&mut self, map: &impl GcSpace, flash: &Flash, out: &mut Vec<Lpa>) {
        out.clear();
        if self.device_wide() {
            self.policy.commit(&flash.blocks, Domain::Device);
            if let Some(victim) = self.policy.peek(&flash.blocks, Domain::Device) {
                map.push_valid_lpas(flash, victim, out);
            }
            return;
        }
        let first = self.next_gc_plane(map, flash);
        let planes = map.stripe().len();
        let start = map.stripe().iter().position(|&p| p == first).unwrap_or(0);
        let count = if self.hint_all_planes { planes } else { 1 };
        for step in 0..count {
            let plane = map.stripe()[(start + step) % planes];
            self.policy.commit(&flash.blocks, Domain::Plane(plane));
            if let Some(victim) = self.policy.peek(&flash.blocks, Domain::Plane(plane)) {
                map.push_valid_lpas(flash, victim, out);
            }
        }
    }

    /// The block the next GC erases (per the policy), if any.
    pub fn next_victim_block(&self, map: &impl GcSpace, flash: &Flash) -> Option<BlockId> {
        let domain = if self.device_wide() {
            Domain::Device
        } else {
            Domain::Plane(self.next_gc_plane(map, flash))
        };
        self.policy.peek(&flash.blocks, domain)
    }
}
