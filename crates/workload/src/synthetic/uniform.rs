//! A minimal, allocation-free generator for benchmarks and steady-state experiments: `count`
//! closed-loop writes of one size, aligned to that size, uniformly random over a capacity.
//! (The general generator is [`super::SyntheticGenerator`]; this one is kept tiny so a
//! benchmark measures the controller, not the generator.)

use crate::request::{BlockRequest, IoOp};
use nandlab_core::SimRng;

/// `count` closed-loop writes of `size_bytes`, aligned to `size_bytes`, uniformly random over
/// the first `capacity_bytes`.
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
            // the stream name predates the move out of the FTL crate; kept so results stay
            // byte-identical
            rng: SimRng::stream(seed, "ftl.experiment.writes"),
            left: count,
            slots: capacity_bytes / size_bytes.max(1),
            size_bytes,
        }
    }
}

impl Iterator for UniformRandomWrites {
    type Item = BlockRequest;
    // inlined across crates: the benchmark's request source should cost next to nothing
    #[inline]
    fn next(&mut self) -> Option<BlockRequest> {
        if self.left == 0 || self.slots == 0 {
            return None;
        }
        self.left -= 1;
        let slot = self.rng.below(self.slots);
        Some(BlockRequest {
            arrival: None,
            op: IoOp::Write,
            offset_bytes: slot * self.size_bytes,
            size_bytes: self.size_bytes,
            placement_id: 0,
        })
    }
}
