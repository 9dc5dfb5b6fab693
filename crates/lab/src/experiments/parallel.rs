//! An experiment's independent points run on the machine's cores.
//!
//! A point is a deterministic function of its config and seed (its own simulated SSD, engine
//! and RNG streams; nothing shared but the read-only config and the run's [`Control`]), so
//! running several at once gives the same numbers as running them one after another. Results
//! come back in point order whatever order the points finish in.
//!
//! [`Control`]: crate::control::Control

use crate::control::Control;
use crate::error::LabResult;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Worker threads for `point_count` points: the cores the process may use, at most one per
/// point, at least one.
pub fn worker_count(point_count: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(1, point_count.max(1))
}

/// How often the calling thread polls the run's control once it has no point left to take.
const IDLE_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// `run(i)` for every `i` in `0..point_count`, on [`worker_count`] threads that each take the
/// lowest index not yet taken; the results in index order.
///
/// The calling thread is one of the workers, and once no index is left it polls `control`
/// until the others finish: a progress sink that must be called on this thread (the Python
/// bindings check for Ctrl-C there) keeps being called while points run elsewhere.
///
/// After a point fails no further index is handed out and the points already running finish.
/// Every index below a failed one was handed out before it and so has run: the error returned
/// is that of the lowest failing index, as a run in order would report.
pub fn map_points<R, F>(point_count: usize, control: &Control, run: F) -> LabResult<Vec<R>>
where
    R: Send,
    F: Fn(usize) -> LabResult<R> + Sync,
{
    let workers = worker_count(point_count);
    if workers == 1 {
        return (0..point_count).map(run).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let running = AtomicUsize::new(workers);
    let slots: Vec<Mutex<Option<LabResult<R>>>> =
        (0..point_count).map(|_| Mutex::new(None)).collect();
    let work = || {
        // counts this worker out even if a point panics (the panic then ends the scope)
        let _done = CountOut(&running);
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= point_count {
                break;
            }
            let result = run(i);
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            *slots[i].lock().expect("a point's slot is written once") = Some(result);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(work);
        }
        work();
        while running.load(Ordering::Acquire) > 0 {
            control.poll();
            std::thread::sleep(IDLE_POLL_INTERVAL);
        }
    });
    let mut out = Vec::with_capacity(point_count);
    for slot in slots {
        match slot.into_inner().expect("workers joined") {
            Some(Ok(r)) => out.push(r),
            Some(Err(e)) => return Err(e),
            // not started: a lower index failed, and its error comes first
            None => continue,
        }
    }
    Ok(out)
}

/// Decrements a count of running workers when dropped.
struct CountOut<'a>(&'a AtomicUsize);

impl Drop for CountOut<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::LabError;

    /// Uneven work (the first points are the longest), so that points finish out of order.
    fn work(i: usize) -> u64 {
        let spins = (40 - i as u64) * 20_000;
        (0..spins).fold(i as u64, |a, b| a.wrapping_mul(31).wrapping_add(b))
    }

    #[test]
    fn results_come_back_in_point_order() {
        let out = map_points(40, &Control::new(), |i| Ok(work(i))).unwrap();
        let in_order: Vec<u64> = (0..40).map(work).collect();
        assert_eq!(out, in_order);
        assert!(
            map_points(0, &Control::new(), |i| Ok(work(i)))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn the_lowest_failure_is_reported() {
        for first_bad in [0, 3, 7] {
            let result = map_points(8, &Control::new(), |i| {
                if i >= first_bad && i % 2 == first_bad % 2 {
                    Err(LabError::Usage(format!("point {i}")))
                } else {
                    Ok(work(i))
                }
            });
            let message = result.unwrap_err().to_string();
            assert!(message.contains(&format!("point {first_bad}")), "{message}");
        }
    }

    /// Records the threads the sink is called on.
    struct Threads(Mutex<Vec<std::thread::ThreadId>>);

    impl crate::control::ProgressSink for std::sync::Arc<Threads> {
        fn tick(&self, _done: u64, _total: Option<u64>) -> std::ops::ControlFlow<()> {
            self.0.lock().unwrap().push(std::thread::current().id());
            std::ops::ControlFlow::Continue(())
        }
    }

    #[test]
    fn the_calling_thread_keeps_polling_while_points_run_elsewhere() {
        if worker_count(4) == 1 {
            return; // one core: the points run on the calling thread, in order
        }
        let caller = std::thread::current().id();
        let threads = std::sync::Arc::new(Threads(Mutex::new(Vec::new())));
        let control = Control::with_sink(std::sync::Arc::clone(&threads));
        // points are instant on the calling thread and slow (no polls) elsewhere, so the caller
        // runs out of points while another is still running
        map_points(4, &control, |i| {
            if std::thread::current().id() != caller {
                std::thread::sleep(Duration::from_millis(300));
            }
            Ok(i)
        })
        .unwrap();
        assert!(threads.0.lock().unwrap().contains(&caller));
    }
}
