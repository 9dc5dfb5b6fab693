//! A shared, read-only view of a running simulation's clock, for request sources that stop or
//! change phase at a simulated time (fio's `runtime`, `ramp_time`).
//!
//! The world loop that owns the time publishes it ([`SimClock::set`]) before it asks its
//! request source for the next request; the source reads it ([`SimClock::now`]). A source
//! built without a clock sees time 0 forever.

use crate::SimTime;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A cloneable handle on one simulated clock: every clone reads what any clone set.
#[derive(Clone, Debug, Default)]
pub struct SimClock(Arc<AtomicU64>);

impl SimClock {
    /// A clock at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time last published.
    pub fn now(&self) -> SimTime {
        SimTime::from_ps(self.0.load(Ordering::Relaxed))
    }

    /// Publishes the current time (never earlier than what was published before).
    pub fn set(&self, now: SimTime) {
        self.0.fetch_max(now.as_ps(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_monotonic_time() {
        let clock = SimClock::new();
        let view = clock.clone();
        assert_eq!(view.now(), SimTime::ZERO);
        clock.set(SimTime::from_us(5));
        assert_eq!(view.now(), SimTime::from_us(5));
        clock.set(SimTime::from_us(2));
        assert_eq!(view.now(), SimTime::from_us(5), "time never goes back");
    }
}
