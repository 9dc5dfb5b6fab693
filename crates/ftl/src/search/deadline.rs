//! The deadline-based batch scheduler of paper 004 §IV-E (SPEC S5): each submitted search gets
//! a deadline; when the oldest one's deadline expires, it is dispatched together with every
//! other queued search to the same page, as one batched search of the open page. Without a
//! deadline (`None`) every search is dispatched alone at once (first come, first served).

use super::store::LogicalPage;
use nandlab_core::SimTime;
use std::collections::VecDeque;

/// A queued search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingSearch {
    /// The caller's id of the search.
    pub id: u64,
    /// The page searched.
    pub page: LogicalPage,
    /// The key (exact match).
    pub key: u64,
    /// When it was submitted.
    pub submitted: SimTime,
}

/// Searches dispatched together to one page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// The page searched.
    pub page: LogicalPage,
    /// The searches, oldest first.
    pub searches: Vec<PendingSearch>,
}

#[derive(Debug)]
/// The queue of submitted searches and the batching rule (see the module docs).
pub struct DeadlineScheduler {
    deadline: Option<SimTime>,
    keys_per_batch_max: usize,
    queue_len_max: usize,
    queue: VecDeque<PendingSearch>,
}

/// The queue is full (its bound is the scheduler's `queue_len_max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFull;

impl DeadlineScheduler {
    /// `keys_per_batch_max` ≥ 1 (the chip's batch bound), `queue_len_max` ≥ 1.
    pub fn new(deadline: Option<SimTime>, keys_per_batch_max: usize, queue_len_max: usize) -> Self {
        assert!(keys_per_batch_max >= 1 && queue_len_max >= 1);
        DeadlineScheduler {
            deadline,
            keys_per_batch_max,
            queue_len_max,
            queue: VecDeque::new(),
        }
    }

    /// Searches queued.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no search is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Queues `search` (submitted no earlier than the last one); `QueueFull` at the bound.
    pub fn submit(&mut self, search: PendingSearch) -> Result<(), QueueFull> {
        if self.queue.len() >= self.queue_len_max {
            return Err(QueueFull);
        }
        debug_assert!(
            self.queue
                .back()
                .is_none_or(|b| b.submitted <= search.submitted)
        );
        self.queue.push_back(search);
        Ok(())
    }

    fn due(&self, search: &PendingSearch) -> SimTime {
        search.submitted + self.deadline.unwrap_or(SimTime::ZERO)
    }

    /// When the oldest queued search whose page `ready` accepts is due.
    pub fn next_due(&self, ready: impl Fn(LogicalPage) -> bool) -> Option<SimTime> {
        // deadlines expire in submission order: the first ready one is the earliest
        self.queue
            .iter()
            .find(|s| ready(s.page))
            .map(|s| self.due(s))
    }

    /// The batch of the oldest search that is due at `now` and whose page `ready` accepts: it
    /// and the other queued searches to its page (oldest first, up to `keys_per_batch_max`);
    /// alone without a deadline.
    pub fn pop_due(&mut self, now: SimTime, ready: impl Fn(LogicalPage) -> bool) -> Option<Batch> {
        let at = self
            .queue
            .iter()
            .take_while(|s| self.due(s) <= now)
            .position(|s| ready(s.page))?;
        let first = self.queue.remove(at).expect("found");
        let mut searches = vec![first];
        if self.deadline.is_some() {
            let mut i = 0;
            while i < self.queue.len() && searches.len() < self.keys_per_batch_max {
                if self.queue[i].page == first.page {
                    searches.push(self.queue.remove(i).expect("in range"));
                } else {
                    i += 1;
                }
            }
        }
        Some(Batch {
            page: first.page,
            searches,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(id: u64, page: u32, at_ns: u64) -> PendingSearch {
        PendingSearch {
            id,
            page: LogicalPage(page),
            key: id,
            submitted: SimTime::from_ns(at_ns),
        }
    }

    #[test]
    fn searches_to_the_same_page_merge_when_the_oldest_expires() {
        let mut s = DeadlineScheduler::new(Some(SimTime::from_ns(4000)), 2, 8);
        for (id, page, at) in [
            (1, 5, 0),
            (2, 6, 1000),
            (3, 5, 2000),
            (4, 5, 3000),
            (5, 6, 9000),
        ] {
            s.submit(search(id, page, at)).unwrap();
        }
        let any = |_| true;
        assert_eq!(s.next_due(any), Some(SimTime::from_ns(4000)));
        assert_eq!(
            s.next_due(|p| p != LogicalPage(5)),
            Some(SimTime::from_ns(5000))
        );
        assert_eq!(s.pop_due(SimTime::from_ns(3999), any), None);
        assert_eq!(
            s.pop_due(SimTime::from_ns(4500), |p| p != LogicalPage(5)),
            None
        );
        let b = s.pop_due(SimTime::from_ns(4000), any).unwrap();
        assert_eq!(
            (b.page, b.searches.iter().map(|x| x.id).collect::<Vec<_>>()),
            (LogicalPage(5), vec![1, 3])
        );
        let b = s.pop_due(SimTime::from_ns(5000), any).unwrap();
        assert_eq!(
            b.searches.iter().map(|x| x.id).collect::<Vec<_>>(),
            vec![2, 5]
        ); // 5 is not due yet but joins
        let b = s.pop_due(SimTime::from_ns(7000), any).unwrap();
        assert_eq!(b.searches.iter().map(|x| x.id).collect::<Vec<_>>(), vec![4]);
        assert!(s.is_empty());
    }

    #[test]
    fn without_a_deadline_every_search_goes_alone_and_the_queue_is_bounded() {
        let mut s = DeadlineScheduler::new(None, 64, 2);
        s.submit(search(1, 5, 0)).unwrap();
        s.submit(search(2, 5, 0)).unwrap();
        assert_eq!(s.submit(search(3, 5, 0)), Err(QueueFull));
        assert_eq!(
            s.pop_due(SimTime::ZERO, |_| true).unwrap().searches.len(),
            1
        );
        assert_eq!(
            s.pop_due(SimTime::ZERO, |_| true).unwrap().searches.len(),
            1
        );
    }
}
