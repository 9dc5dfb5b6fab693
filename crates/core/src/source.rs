//! Event sources: the simulated components that have their own future events (the host's
//! arrivals, the NAND chip model, a PCM device, …). A world loop owns N of them and always
//! advances the one whose next event is earliest; ties go to the source listed first, so the
//! order is deterministic and does not depend on how the sources were built.
//!
//! A source reports completions of its own type `C` into a caller-owned vector (so processing
//! an event allocates nothing in steady state).

use crate::SimTime;

/// A component with its own timed events.
pub trait EventSource {
    /// What a processed event can complete (e.g. a flash op, a PCM access).
    type Completion;

    /// Time of the next pending event, or `None` when the source is idle.
    fn next_event_time(&self) -> Option<SimTime>;

    /// Processes the next event, appending whatever it completed to `completed`; returns the
    /// event's time, or `None` when nothing was pending.
    fn process_next(&mut self, completed: &mut Vec<Self::Completion>) -> Option<SimTime>;
}

/// Index of the source with the earliest next event among `times` (one entry per source, in
/// priority order); ties go to the lowest index. `None` when every source is idle.
#[inline]
pub fn earliest(times: &[Option<SimTime>]) -> Option<usize> {
    let mut best: Option<(usize, SimTime)> = None;
    for (i, t) in times.iter().enumerate() {
        if let Some(t) = *t
            && best.is_none_or(|(_, b)| t < b)
        {
            best = Some((i, t));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_breaks_ties_by_order() {
        let t = SimTime::from_ns;
        assert_eq!(earliest(&[None, None]), None);
        assert_eq!(earliest(&[Some(t(5)), Some(t(3)), Some(t(3))]), Some(1));
        assert_eq!(earliest(&[Some(t(3)), None, Some(t(3))]), Some(0));
        assert_eq!(earliest(&[None, Some(t(9))]), Some(1));
    }
}
