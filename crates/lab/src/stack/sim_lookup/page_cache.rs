//! The host's page cache of the full-page path (paper 004 §VII: the baseline keeps the pages
//! it reads in the operating system's page cache, sized as a share of the on-disk index, the
//! "cache coverage"): least recently used pages, with their bytes.

use std::collections::{BTreeMap, HashMap};

/// An LRU cache of whole pages by logical page address.
pub(super) struct PageCache {
    capacity_pages: usize,
    /// Use counter: a page's last use.
    clock: u64,
    pages: HashMap<u32, (u64, Vec<u8>)>,
    /// Pages by last use, oldest first.
    by_use: BTreeMap<u64, u32>,
    pub hits: u64,
    pub misses: u64,
}

impl PageCache {
    pub(super) fn new(capacity_pages: usize) -> Self {
        PageCache {
            capacity_pages,
            clock: 0,
            pages: HashMap::with_capacity(capacity_pages),
            by_use: BTreeMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// The bytes of `lpa` if cached (a hit makes it the most recently used), counting the
    /// hit or miss.
    pub(super) fn lookup(&mut self, lpa: u32) -> Option<&[u8]> {
        let Some((used, _)) = self.pages.get_mut(&lpa) else {
            self.misses += 1;
            return None;
        };
        self.hits += 1;
        self.clock += 1;
        self.by_use.remove(used);
        *used = self.clock;
        self.by_use.insert(self.clock, lpa);
        self.pages.get(&lpa).map(|(_, bytes)| bytes.as_slice())
    }

    /// Caches `bytes` as `lpa` (read from the device), evicting the least recently used page
    /// when full. Nothing is cached with a capacity of 0.
    pub(super) fn insert(&mut self, lpa: u32, bytes: &[u8]) {
        if self.capacity_pages == 0 {
            return;
        }
        self.clock += 1;
        if let Some((used, old)) = self.pages.get_mut(&lpa) {
            self.by_use.remove(used);
            *used = self.clock;
            old.clear();
            old.extend_from_slice(bytes);
        } else {
            if self.pages.len() == self.capacity_pages {
                let (_, oldest) = self.by_use.pop_first().expect("a full cache has pages");
                self.pages.remove(&oldest);
            }
            self.pages.insert(lpa, (self.clock, bytes.to_vec()));
        }
        self.by_use.insert(self.clock, lpa);
        debug_assert_eq!(self.pages.len(), self.by_use.len());
        debug_assert!(self.pages.len() <= self.capacity_pages);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_page_goes_first() {
        let mut c = PageCache::new(2);
        c.insert(1, &[1]);
        c.insert(2, &[2]);
        assert_eq!(c.lookup(1), Some(&[1u8][..])); // 2 is now the oldest
        c.insert(3, &[3]);
        assert_eq!(c.lookup(2), None);
        assert_eq!(c.lookup(1), Some(&[1u8][..]));
        assert_eq!(c.lookup(3), Some(&[3u8][..]));
        assert_eq!((c.hits, c.misses), (3, 1));
        // re-inserting a cached page refreshes it and replaces its bytes
        c.insert(1, &[9]);
        c.insert(4, &[4]);
        assert_eq!(c.lookup(3), None);
        assert_eq!(c.lookup(1), Some(&[9u8][..]));
    }

    #[test]
    fn zero_capacity_caches_nothing() {
        let mut c = PageCache::new(0);
        c.insert(1, &[1]);
        assert_eq!(c.lookup(1), None);
        assert_eq!((c.hits, c.misses), (0, 1));
    }
}
