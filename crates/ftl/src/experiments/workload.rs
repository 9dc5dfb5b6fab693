//! A minimal allocation-free request generator used by the experiments (the full workload
//! generators live in `nandlab-workload`).

use crate::host::HostRequest;
use nandlab_core::SimRng;

/// `count` closed-loop, page-aligned writes of `size_bytes`, uniformly random over the first
/// `logical_pages` pages (size must be a multiple of the page size... or not: any size works).
#[derive(Debug)]
pub struct UniformRandomWrites {
    rng: SimRng,
    left: u64,
    slots: u64,
    size_bytes: u64,
}

impl UniformRandomWrites {
    /// Writes of `size_bytes` aligned to `size_bytes` within `capacity_bytes`.
    pub fn new(seed: u64, count: u64, capacity_bytes: u64, size_bytes: u64) -> Self {
        UniformRandomWrites {
            rng: SimRng::stream(seed, "ftl.experiment.writes"),
            left: count,
            slots: capacity_bytes / size_bytes,
            size_bytes,
        }
    }
}

impl Iterator for UniformRandomWrites {
    type Item = HostRequest;
    fn next(&mut self) -> Option<HostRequest> {
        if self.left == 0 || self.slots == 0 {
            return None;
        }
        self.left -= 1;
        let slot = self.rng.below(self.slots);
        Some(HostRequest::write(slot * self.size_bytes, self.size_bytes))
    }
}
