//! Deterministic discrete-event queue.
//!
//! Events are ordered by `(time, sequence)`: equal times pop in insertion order, so a run is
//! bit-for-bit reproducible. The queue never ticks idle time: `pop` jumps straight to the next
//! event. Storage is a binary heap whose capacity is reused, so a steady-state simulation
//! allocates nothing per event.

use crate::time::SimTime;

/// A queued event. `key` packs `(time, sequence)` into one integer whose order is theirs, so a
/// comparison is a single (branch-free) 128-bit compare.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    key: u128,
    payload: E,
}

#[inline]
fn key(time: SimTime, sequence: u64) -> u128 {
    (u128::from(time.as_ps()) << 64) | u128::from(sequence)
}

#[inline]
fn time_of(key: u128) -> SimTime {
    SimTime::from_ps((key >> 64) as u64)
}

/// Puts `entry` in the last place of `heap` (a heap but for that place): moves parents down
/// into the hole until `entry`'s place is found. (Every index is below the slice's length,
/// so the loop has no bounds checks to keep.)
#[inline]
fn sift_up<E: Copy>(heap: &mut [Entry<E>], entry: Entry<E>) {
    let Some(mut hole) = heap.len().checked_sub(1) else {
        return;
    };
    while hole > 0 {
        let parent = (hole - 1) / 2;
        let p = heap[parent];
        if p.key <= entry.key {
            break;
        }
        heap[hole] = p;
        hole = parent;
    }
    heap[hole] = entry;
}

/// A min-queue of events keyed by simulated time, FIFO among equal times.
///
/// A binary min-heap over a flat `Vec`. Both sifts move a hole and keep the moving entry in
/// registers (the standard library's heap reads a just-pushed entry back from memory, a
/// store-forwarding stall on every push), and `pop` sifts the hole to the bottom before placing
/// the last entry (Floyd's bottom-up variant: the last entry almost always belongs there).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_sequence: u64,
    now: SimTime,
    popped_count: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_capacity(64)
    }

    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(capacity),
            next_sequence: 0,
            now: SimTime::ZERO,
            popped_count: 0,
        }
    }

    /// The time of the last popped event (the simulation's "now").
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `payload` at absolute time `time`. Scheduling in the past is a logic error.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, payload: E) {
        assert!(
            time >= self.now,
            "event scheduled in the past: {time} < now {}",
            self.now
        );
        let entry = Entry {
            key: key(time, self.next_sequence),
            payload,
        };
        self.next_sequence += 1;
        self.heap.push(entry);
        sift_up(&mut self.heap, entry);
    }

    /// Schedules `payload` `delay` after now.
    pub fn schedule_after(&mut self, delay: SimTime, payload: E) {
        self.schedule(self.now + delay, payload);
    }

    /// Pops the earliest event and advances "now" to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first() {
            None => last,
            Some(&top) => {
                // sift the root's hole down to a leaf along the smaller children ...
                let heap = self.heap.as_mut_slice();
                let mut hole = 0;
                let mut child = 1;
                // (`pair` holds `child` and `child + 1`: one bounds check per level)
                while let Some(pair) = heap.get(child..child + 2) {
                    let right = usize::from(pair[1].key < pair[0].key);
                    let moved = pair[right];
                    heap[hole] = moved;
                    hole = child + right;
                    child = 2 * hole + 1;
                }
                if let Some(&only) = heap.get(child) {
                    heap[hole] = only;
                    hole = child;
                }
                // ... then sift the last entry up from there
                sift_up(&mut heap[..=hole], last);
                top
            }
        };
        let time = time_of(top.key);
        debug_assert!(time >= self.now);
        self.now = time;
        self.popped_count += 1;
        Some((time, top.payload))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| time_of(e.key))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events popped so far (the simulator's event count).
    pub fn popped_count(&self) -> u64 {
        self.popped_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        let t = SimTime::from_ns(5);
        for i in 0..10 {
            q.schedule(t, i);
        }
        let order: Vec<i32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn time_jumps_to_next_event() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_ms(3), "late");
        q.schedule(SimTime::from_ns(1), "early");
        assert_eq!(q.pop(), Some((SimTime::from_ns(1), "early")));
        assert_eq!(q.now(), SimTime::from_ns(1));
        q.schedule_after(SimTime::from_ns(1), "next");
        assert_eq!(q.pop(), Some((SimTime::from_ns(2), "next")));
        assert_eq!(q.pop(), Some((SimTime::from_ms(3), "late")));
        assert_eq!(q.pop(), None);
        assert_eq!(q.popped_count(), 3);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_is_refused() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_ns(10), ());
        q.pop();
        q.schedule(SimTime::from_ns(5), ());
    }

    /// Regression (issue 11): `schedule_after` with a delay reaching past 2^64 ps wrapped the
    /// event time around into the past (release) and hit the "scheduled in the past" assert. Time
    /// now saturates: the event lands at the end of time, where the layers above stop.
    #[test]
    fn a_delay_past_the_end_of_time_lands_at_the_end() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_ps(u64::MAX - 10), 1);
        q.pop();
        q.schedule_after(SimTime::from_ps(1_000), 2);
        assert_eq!(q.pop(), Some((SimTime::MAX, 2)));
        assert!(q.now().is_end());
    }

    proptest! {
        #[test]
        fn pops_are_sorted_by_time_then_sequence(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule(SimTime::from_ps(*t), i);
            }
            let mut last: Option<(SimTime, usize)> = None;
            let mut n = 0;
            while let Some((t, i)) = q.pop() {
                prop_assert_eq!(SimTime::from_ps(times[i]), t);
                if let Some((lt, li)) = last {
                    prop_assert!(lt < t || (lt == t && li < i));
                }
                last = Some((t, i));
                n += 1;
            }
            prop_assert_eq!(n, times.len());
        }

        /// Pushes and pops interleaved (as a simulation does) pop exactly what a sorted
        /// reference list gives.
        #[test]
        fn interleaved_pushes_and_pops_match_a_sorted_list(
            steps in proptest::collection::vec((any::<bool>(), 0u64..40), 0..400)
        ) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(SimTime, u64)> = Vec::new();
            let mut sequence = 0u64;
            for (push, delay) in steps {
                if push || reference.is_empty() {
                    let t = q.now() + SimTime::from_ps(delay);
                    q.schedule(t, sequence);
                    reference.push((t, sequence));
                    sequence += 1;
                } else {
                    reference.sort();
                    let expected = reference.remove(0);
                    prop_assert_eq!(q.pop(), Some(expected));
                }
                prop_assert_eq!(q.len(), reference.len());
                prop_assert_eq!(q.peek_time(), reference.iter().map(|e| e.0).min());
            }
            reference.sort();
            for expected in reference {
                prop_assert_eq!(q.pop(), Some(expected));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
