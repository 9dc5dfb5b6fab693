//! Recency lists over location ids, one list per segment (intrusive: two `u32` links per
//! location, so touching an entry allocates nothing).

const NONE: u32 = u32::MAX;

/// Per-segment least-recently-used order of the locations that hold a fingerprint.
#[derive(Debug)]
pub(crate) struct Lru {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently used location per segment.
    head: Vec<u32>,
    /// Least recently used location per segment.
    tail: Vec<u32>,
}

impl Lru {
    pub fn new(locations: u32, segments: u32) -> Self {
        Lru {
            prev: vec![NONE; locations as usize],
            next: vec![NONE; locations as usize],
            head: vec![NONE; segments as usize],
            tail: vec![NONE; segments as usize],
        }
    }

    /// Makes `location` the most recent of `segment` (it must not be linked).
    pub fn push_front(&mut self, segment: u32, location: u32) {
        let (s, l) = (segment as usize, location as usize);
        self.prev[l] = NONE;
        self.next[l] = self.head[s];
        if self.head[s] != NONE {
            self.prev[self.head[s] as usize] = location;
        } else {
            self.tail[s] = location;
        }
        self.head[s] = location;
    }

    /// Unlinks `location` from `segment`.
    pub fn unlink(&mut self, segment: u32, location: u32) {
        let (s, l) = (segment as usize, location as usize);
        let (p, n) = (self.prev[l], self.next[l]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            debug_assert_eq!(self.head[s], location);
            self.head[s] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            debug_assert_eq!(self.tail[s], location);
            self.tail[s] = p;
        }
        self.prev[l] = NONE;
        self.next[l] = NONE;
    }

    /// Marks `location` as just used.
    pub fn touch(&mut self, segment: u32, location: u32) {
        if self.head[segment as usize] != location {
            self.unlink(segment, location);
            self.push_front(segment, location);
        }
    }

    /// The least recently used location of `segment`.
    pub fn oldest(&self, segment: u32) -> Option<u32> {
        let t = self.tail[segment as usize];
        (t != NONE).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_follows_use() {
        let mut l = Lru::new(8, 2);
        for loc in [1, 2, 3] {
            l.push_front(0, loc);
        }
        l.push_front(1, 5);
        assert_eq!(l.oldest(0), Some(1));
        l.touch(0, 1);
        assert_eq!(l.oldest(0), Some(2));
        l.unlink(0, 2);
        l.unlink(0, 3);
        assert_eq!(l.oldest(0), Some(1));
        l.unlink(0, 1);
        assert_eq!(l.oldest(0), None);
        assert_eq!(l.oldest(1), Some(5));
    }
}
