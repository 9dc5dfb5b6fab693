//! The chip port: the chip model and the completions it hands the controller. The world loop
//! asks it for its next event time and runs it to the next completion.

use nandlab_core::SimTime;
use nandlab_nand::{Completion, NandSim};

#[derive(Debug)]
pub(super) struct ChipPort {
    pub nand: NandSim,
    /// Completions of the last chip step (reused).
    pub completions: Vec<Completion>,
}

impl ChipPort {
    pub fn new(nand: NandSim) -> Self {
        ChipPort {
            nand,
            completions: Vec::with_capacity(64),
        }
    }

    /// Runs the chip's events back to back until one completes an op (into `completions`) or
    /// the next is not before `other` (another source's next event: ties go to it); the time
    /// of the last event run. The caller has seen that a chip event is pending.
    #[inline]
    pub fn run_to_completion(
        &mut self,
        completions: &mut Vec<Completion>,
        other: Option<SimTime>,
    ) -> SimTime {
        let mut time = self
            .nand
            .process_next(completions)
            .expect("chip event peeked");
        while completions.is_empty() {
            let Some(next) = self.nand.next_event_time() else {
                break;
            };
            if other.is_some_and(|h| h <= next) {
                break;
            }
            time = self
                .nand
                .process_next(completions)
                .expect("chip event peeked");
        }
        time
    }
}
