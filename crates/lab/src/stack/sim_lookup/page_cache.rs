//! The host's page cache of the full-page path (paper 004 §VII: the baseline keeps the pages
//! it reads in the operating system's page cache, sized as a share of the on-disk index, the
//! "cache coverage"): least recently used pages, with their bytes.

use std::collections::{BTreeMap, HashMap};

/// An LRU cache of whole pages by logical page address; a page written by the host (an
/// update) is dirty until evicted, when the caller writes it back.
pub(super) struct PageCache {
    capacity_pages: usize,
    /// Use counter: a page's last use.
    clock: u64,
    pages: HashMap<u32, Entry>,
    /// Pages by last use, oldest first.
    by_use: BTreeMap<u64, u32>,
    pub hits: u64,
    pub misses: u64,
}

/// A cached page: its last use, whether the host changed it, its bytes.
struct Entry {
    used: u64,
    dirty: bool,
    bytes: Vec<u8>,
}

/// A dirty page evicted: its address and bytes, to be written back.
pub(super) type WriteBack = (u32, Vec<u8>);

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
        if !self.pages.contains_key(&lpa) {
            self.misses += 1;
            return None;
        }
        self.hits += 1;
        self.touch(lpa);
        self.pages.get(&lpa).map(|e| e.bytes.as_slice())
    }

    /// Caches `bytes` as `lpa` read from the device, evicting the least recently used page
    /// when full (a dirty one is returned, to be written back). A page already cached is
    /// refreshed; its bytes are replaced unless it is dirty (the host's copy is the newer).
    /// Nothing is cached with a capacity of 0.
    pub(super) fn insert(&mut self, lpa: u32, bytes: &[u8]) -> Option<WriteBack> {
        self.put(lpa, bytes, false)
    }

    /// The host changed `lpa` to `bytes` (an update): cached dirty, evicting as
    /// [`PageCache::insert`] does. With a capacity of 0 the page itself is written back at once.
    pub(super) fn write(&mut self, lpa: u32, bytes: &[u8]) -> Option<WriteBack> {
        if self.capacity_pages == 0 {
            return Some((lpa, bytes.to_vec()));
        }
        self.put(lpa, bytes, true)
    }

    fn put(&mut self, lpa: u32, bytes: &[u8], dirty: bool) -> Option<WriteBack> {
        if self.capacity_pages == 0 {
            return None;
        }
        if let Some(e) = self.pages.get_mut(&lpa) {
            if dirty || !e.dirty {
                e.bytes.clear();
                e.bytes.extend_from_slice(bytes);
            }
            e.dirty |= dirty;
            self.touch(lpa);
            return None;
        }
        let mut evicted = None;
        if self.pages.len() == self.capacity_pages {
            let (_, oldest) = self.by_use.pop_first().expect("a full cache has pages");
            let e = self.pages.remove(&oldest).expect("indexed");
            evicted = e.dirty.then_some((oldest, e.bytes));
        }
        self.clock += 1;
        let bytes = bytes.to_vec();
        let entry = Entry {
            used: self.clock,
            dirty,
            bytes,
        };
        self.pages.insert(lpa, entry);
        self.by_use.insert(self.clock, lpa);
        debug_assert_eq!(self.pages.len(), self.by_use.len());
        debug_assert!(self.pages.len() <= self.capacity_pages);
        evicted
    }

    /// Makes cached `lpa` the most recently used.
    fn touch(&mut self, lpa: u32) {
        let e = self.pages.get_mut(&lpa).expect("cached");
        self.clock += 1;
        self.by_use.remove(&e.used);
        e.used = self.clock;
        self.by_use.insert(self.clock, lpa);
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
        assert_eq!(c.write(1, &[1]), Some((1, vec![1])));
    }

    #[test]
    fn a_dirty_page_is_written_back_when_evicted_and_kept_over_a_read() {
        let mut c = PageCache::new(2);
        assert_eq!(c.insert(1, &[1]), None);
        assert_eq!(c.write(1, &[5]), None); // cached page updated: dirty
        assert_eq!(c.insert(1, &[1]), None); // a later read does not replace the host's copy
        assert_eq!(c.lookup(1), Some(&[5u8][..]));
        assert_eq!(c.write(2, &[2]), None);
        // 1 is the least recently used: evicting it writes its bytes back
        assert_eq!(c.insert(3, &[3]), Some((1, vec![5])));
        // a clean victim leaves silently
        assert_eq!(c.insert(4, &[4]), Some((2, vec![2])));
        assert_eq!(c.insert(5, &[5]), None);
    }
}
