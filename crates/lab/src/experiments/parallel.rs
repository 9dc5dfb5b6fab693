//! An experiment's independent points run on the machine's cores.
//!
//! A point is a deterministic function of its config and seed (its own simulated SSD, engine
//! and RNG streams; nothing shared but the read-only config and the run's [`Control`]), so
//! running several at once gives the same numbers as running them one after another. Results
//! come back in point order whatever order the points finish in.
//!
//! [`Control`]: crate::control::Control

use crate::error::LabResult;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Worker threads for `point_count` points: the cores the process may use, at most one per
/// point, at least one.
pub fn worker_count(point_count: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(1, point_count.max(1))
}

/// `run(i)` for every `i` in `0..point_count`, on [`worker_count`] threads that each take the
/// lowest index not yet taken; the results in index order.
///
/// After a point fails no further index is handed out and the points already running finish.
/// Every index below a failed one was handed out before it and so has run: the error returned
/// is that of the lowest failing index, as a run in order would report.
pub fn map_points<R, F>(point_count: usize, run: F) -> LabResult<Vec<R>>
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
    let slots: Vec<Mutex<Option<LabResult<R>>>> =
        (0..point_count).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
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
            });
        }
    });
    let mut out = Vec::with_capacity(point_count);
    for slot in slots {
        match slot.into_inner().expect("workers joined") {
            Some(Ok(r)) => out.push(r),
            Some(Err(e)) => return Err(e),
            // not started: a lower or higher index failed; the lowest failure is reported
            None => continue,
        }
    }
    debug_assert!(
        !failed.load(Ordering::Relaxed) || out.len() < point_count,
        "a failure leaves a point without a result"
    );
    Ok(out)
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
        let out = map_points(40, |i| Ok(work(i))).unwrap();
        let in_order: Vec<u64> = (0..40).map(work).collect();
        assert_eq!(out, in_order);
        assert!(map_points(0, |i| Ok(work(i))).unwrap().is_empty());
    }

    #[test]
    fn the_lowest_failure_is_reported() {
        for first_bad in [0, 3, 7] {
            let result = map_points(8, |i| {
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
}
