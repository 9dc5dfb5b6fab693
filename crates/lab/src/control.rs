//! Cancellation and progress of long runs: one [`Control`] per run, shared (cheaply cloned) by
//! whatever may stop it (the CLI's Ctrl-C handler, the Python bindings' signal check) and the
//! loops that do the work.
//!
//! Loops call [`Control::advance`] (work done) or [`Control::poll`] (no new work, just a
//! check) and stop admitting work once either returns `false`. At most every
//! [`TICK_INTERVAL`] of wall time a poll passes `(done, total)` to the progress sink, which may
//! ask to cancel by returning [`ControlFlow::Break`]. A cancelled run still returns a valid
//! result of the work it finished, marked interrupted.

use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Least wall time between two calls of the progress sink.
pub const TICK_INTERVAL: Duration = Duration::from_millis(100);

/// Receives progress: `done` units of work out of `total` (`None` when unknown). Returning
/// [`ControlFlow::Break`] cancels the run.
pub trait ProgressSink: Send + Sync {
    fn tick(&self, done: u64, total: Option<u64>) -> ControlFlow<()>;
}

/// The cancel flag and progress of one run. Clones share both.
#[derive(Clone, Default)]
pub struct Control {
    shared: Arc<Shared>,
    /// A part of a larger run ([`Control::part`]): its `start`/`advance`/`finish` leave the
    /// work count to the outer loop, but still poll (the sink ticks, a cancel is seen).
    part: bool,
}

struct Shared {
    cancelled: AtomicBool,
    sink: Option<Box<dyn ProgressSink>>,
    done: AtomicU64,
    /// `u64::MAX` when unknown.
    total: AtomicU64,
    /// When the sink was last called (`None`: not yet).
    last_tick: Mutex<Option<Instant>>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            cancelled: AtomicBool::new(false),
            sink: None,
            done: AtomicU64::new(0),
            total: AtomicU64::new(u64::MAX),
            last_tick: Mutex::new(None),
        }
    }
}

impl fmt::Debug for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Control")
            .field("cancelled", &self.is_cancelled())
            .field("done", &self.done())
            .field("total", &self.total())
            .field("sink", &self.shared.sink.is_some())
            .finish()
    }
}

impl Control {
    /// A control without a progress sink (cancelled only through [`Control::cancel`]).
    pub fn new() -> Self {
        Control::default()
    }

    /// A control that reports progress to `sink` (and lets it cancel).
    pub fn with_sink(sink: impl ProgressSink + 'static) -> Self {
        Control {
            shared: Arc::new(Shared {
                sink: Some(Box::new(sink)),
                ..Shared::default()
            }),
            part: false,
        }
    }

    /// The same run's control for one part of it (a point of an experiment whose progress is
    /// counted in points): shares the cancel flag and the sink, leaves the count alone.
    pub fn part(&self) -> Control {
        Control {
            shared: Arc::clone(&self.shared),
            part: true,
        }
    }

    /// Asks the run to stop admitting work; it finishes what is in flight and returns.
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.shared.cancelled.load(Ordering::Relaxed)
    }

    /// Starts counting work anew: `done` = 0 out of `total`.
    pub fn start(&self, total: Option<u64>) {
        if self.part {
            return;
        }
        self.shared.done.store(0, Ordering::Relaxed);
        self.shared
            .total
            .store(total.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    pub fn done(&self) -> u64 {
        self.shared.done.load(Ordering::Relaxed)
    }

    pub fn total(&self) -> Option<u64> {
        match self.shared.total.load(Ordering::Relaxed) {
            u64::MAX => None,
            n => Some(n),
        }
    }

    /// Counts `units` more work done and polls; `false` once the run is cancelled.
    pub fn advance(&self, units: u64) -> bool {
        if !self.part {
            self.shared.done.fetch_add(units, Ordering::Relaxed);
        }
        self.poll()
    }

    /// Calls the progress sink if [`TICK_INTERVAL`] has passed since its last call (or it was
    /// never called); `false` once the run is cancelled.
    pub fn poll(&self) -> bool {
        if self.shared.sink.is_some() {
            self.tick(false);
        }
        !self.is_cancelled()
    }

    /// Calls the progress sink now (the last tick of a run, so a bar ends at its total).
    pub fn finish(&self) {
        if self.shared.sink.is_some() && !self.part {
            self.tick(true);
        }
    }

    fn tick(&self, force: bool) {
        let Some(sink) = &self.shared.sink else {
            return;
        };
        // another thread ticking right now is as good as ticking here
        let Ok(mut last) = self.shared.last_tick.try_lock() else {
            return;
        };
        let now = Instant::now();
        if !force && last.is_some_and(|at| now.duration_since(at) < TICK_INTERVAL) {
            return;
        }
        *last = Some(now);
        if sink.tick(self.done(), self.total()).is_break() {
            self.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every tick; breaks once `done` reaches `stop_at`.
    struct Recorder {
        ticks: Mutex<Vec<(u64, Option<u64>)>>,
        stop_at: u64,
    }

    impl ProgressSink for Arc<Recorder> {
        fn tick(&self, done: u64, total: Option<u64>) -> ControlFlow<()> {
            self.ticks.lock().unwrap().push((done, total));
            if done >= self.stop_at {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }

    #[test]
    fn a_cancel_is_seen_by_every_clone() {
        let control = Control::new();
        let clone = control.clone();
        assert!(clone.advance(3));
        control.cancel();
        assert!(clone.is_cancelled());
        assert!(!clone.poll());
        assert_eq!(control.done(), 3);
    }

    #[test]
    fn the_sink_ticks_at_once_then_at_most_every_interval_and_may_cancel() {
        let recorder = Arc::new(Recorder {
            ticks: Mutex::new(Vec::new()),
            stop_at: 10,
        });
        let control = Control::with_sink(Arc::clone(&recorder));
        control.start(Some(100));
        assert!(control.advance(1)); // the first poll ticks
        assert_eq!(recorder.ticks.lock().unwrap()[0], (1, Some(100)));
        std::thread::sleep(TICK_INTERVAL);
        assert!(!control.advance(9)); // ticks with done = 10: the sink cancels
        assert!(control.is_cancelled());
        control.finish(); // ticks whatever the time
        let ticks = recorder.ticks.lock().unwrap();
        assert_eq!(ticks[ticks.len() - 2..], [(10, Some(100)), (10, Some(100))]);
    }
}
