//! The host's page cache of the evaluation (paper 004 §VI-A4): LRU over logical pages with a
//! dirty bit, a fixed capacity in pages ("cache coverage" × index pages). Dirty pages are
//! buffered writes; evicting one is a write-back the caller performs.

use nandlab_ftl::search::LogicalPage;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug)]
pub struct PageCache {
    capacity_pages: usize,
    /// page → (last use stamp, dirty)
    entries: HashMap<LogicalPage, (u64, bool)>,
    /// last use stamp → page, oldest first
    order: BTreeMap<u64, LogicalPage>,
    clock: u64,
}

/// What a [`PageCache::insert`] pushed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    pub page: LogicalPage,
    pub dirty: bool,
}

impl PageCache {
    pub fn new(capacity_pages: usize) -> Self {
        PageCache {
            capacity_pages,
            entries: HashMap::with_capacity(capacity_pages + 1),
            order: BTreeMap::new(),
            clock: 0,
        }
    }

    pub fn capacity_pages(&self) -> usize {
        self.capacity_pages
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `Some(dirty)` when cached.
    pub fn state(&self, page: LogicalPage) -> Option<bool> {
        self.entries.get(&page).map(|e| e.1)
    }

    /// Marks `page` used now; false when it is not cached.
    pub fn touch(&mut self, page: LogicalPage) -> bool {
        let Some(entry) = self.entries.get_mut(&page) else {
            return false;
        };
        self.clock += 1;
        self.order.remove(&entry.0);
        entry.0 = self.clock;
        self.order.insert(self.clock, page);
        true
    }

    /// Caches `page` (or updates it), dirty if `dirty` or already dirty; returns the least
    /// recently used page pushed out to make room. A zero-capacity cache keeps nothing: the
    /// page itself comes back as evicted.
    pub fn insert(&mut self, page: LogicalPage, dirty: bool) -> Option<Evicted> {
        if self.capacity_pages == 0 {
            return Some(Evicted { page, dirty });
        }
        if let Some(entry) = self.entries.get_mut(&page) {
            entry.1 |= dirty;
            self.touch(page);
            return None;
        }
        let evicted = if self.entries.len() == self.capacity_pages {
            let (_, victim) = self
                .order
                .pop_first()
                .expect("a full cache has an oldest page");
            let (_, victim_dirty) = self
                .entries
                .remove(&victim)
                .expect("order and entries agree");
            Some(Evicted {
                page: victim,
                dirty: victim_dirty,
            })
        } else {
            None
        };
        self.clock += 1;
        self.entries.insert(page, (self.clock, dirty));
        self.order.insert(self.clock, page);
        debug_assert_eq!(self.entries.len(), self.order.len());
        debug_assert!(self.entries.len() <= self.capacity_pages);
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_keeps_the_dirty_bit() {
        let mut cache = PageCache::new(2);
        assert_eq!(cache.insert(LogicalPage(1), true), None);
        assert_eq!(cache.insert(LogicalPage(2), false), None);
        assert!(cache.touch(LogicalPage(1)));
        assert_eq!(
            cache.insert(LogicalPage(3), false),
            Some(Evicted {
                page: LogicalPage(2),
                dirty: false
            })
        );
        assert_eq!(cache.insert(LogicalPage(3), true), None);
        assert_eq!(
            cache.insert(LogicalPage(4), false),
            Some(Evicted {
                page: LogicalPage(1),
                dirty: true
            })
        );
        assert_eq!(cache.state(LogicalPage(3)), Some(true));
        let mut none = PageCache::new(0);
        assert_eq!(
            none.insert(LogicalPage(7), true),
            Some(Evicted {
                page: LogicalPage(7),
                dirty: true
            })
        );
        assert!(none.is_empty());
    }
}
