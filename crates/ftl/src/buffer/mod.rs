//! DRAM write buffer in the controller (SPEC F6): a bounded set of logical pages with LRU or
//! FIFO eviction, as an intrusive doubly-linked list over fixed slots (no allocation after
//! construction). Reads hit the buffer; a write to a buffered page updates it in place; when
//! the buffer is full the coldest page is evicted (written to flash); a flush writes them all.

use crate::config::BufferPolicy;
use crate::flash::blocks::NONE;

/// The buffered pages and (in full payload mode) their bytes.
#[derive(Debug)]
pub(crate) struct WriteBuffer {
    policy: BufferPolicy,
    page_size_bytes: usize,
    keep_bytes: bool,
    /// Slot of each logical page, or NONE (one entry per logical page).
    slot_of: Vec<u32>,
    lpa: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently inserted (or, for LRU, used) slot.
    head: u32,
    /// Next to evict.
    tail: u32,
    free: Vec<u32>,
    bytes: Vec<u8>,
}

impl WriteBuffer {
    pub fn new(
        capacity_pages: u32,
        logical_pages: u32,
        page_size_bytes: u32,
        policy: BufferPolicy,
        keep_bytes: bool,
    ) -> Self {
        let n = capacity_pages as usize;
        WriteBuffer {
            policy,
            page_size_bytes: page_size_bytes as usize,
            keep_bytes,
            slot_of: vec![NONE; logical_pages as usize],
            lpa: vec![NONE; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            head: NONE,
            tail: NONE,
            free: (0..capacity_pages).rev().collect(),
            bytes: if keep_bytes {
                vec![0; n * page_size_bytes as usize]
            } else {
                Vec::new()
            },
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lpa.len() - self.free.len()
    }
    pub fn contains(&self, lpa: u32) -> bool {
        self.slot_of[lpa as usize] != NONE
    }

    /// Bytes of a buffered page (full mode).
    pub fn page(&self, lpa: u32) -> Option<&[u8]> {
        let slot = self.slot_of[lpa as usize];
        if slot == NONE || !self.keep_bytes {
            return None;
        }
        let s = slot as usize * self.page_size_bytes;
        Some(&self.bytes[s..s + self.page_size_bytes])
    }

    /// A read hit: LRU moves the page to the front.
    pub fn touch(&mut self, lpa: u32) {
        let slot = self.slot_of[lpa as usize];
        if slot != NONE && self.policy == BufferPolicy::Lru {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    /// Stores a whole page. Returns `Some(evicted lpa)` (its bytes in `evicted`) when a page
    /// had to leave to make room.
    pub fn insert(&mut self, lpa: u32, data: Option<&[u8]>, evicted: &mut Vec<u8>) -> Option<u32> {
        let mut out = None;
        let slot = match self.slot_of[lpa as usize] {
            NONE => {
                if self.free.is_empty() {
                    out = self.pop_oldest(evicted);
                }
                let slot = self.free.pop().expect("a slot was freed");
                self.lpa[slot as usize] = lpa;
                self.slot_of[lpa as usize] = slot;
                self.push_front(slot);
                slot
            }
            slot => {
                self.touch(lpa);
                slot
            }
        };
        if self.keep_bytes {
            let s = slot as usize * self.page_size_bytes;
            let page = &mut self.bytes[s..s + self.page_size_bytes];
            match data {
                Some(d) => page.copy_from_slice(d),
                None => page.fill(0),
            }
        }
        out
    }

    /// Removes the next page to evict; its bytes go to `evicted` (full mode).
    pub fn pop_oldest(&mut self, evicted: &mut Vec<u8>) -> Option<u32> {
        let slot = self.tail;
        if slot == NONE {
            return None;
        }
        let lpa = self.lpa[slot as usize];
        if self.keep_bytes {
            let s = slot as usize * self.page_size_bytes;
            evicted.clear();
            evicted.extend_from_slice(&self.bytes[s..s + self.page_size_bytes]);
        }
        self.remove(lpa);
        Some(lpa)
    }

    /// Drops a page (TRIM). Returns whether it was buffered.
    pub fn remove(&mut self, lpa: u32) -> bool {
        let slot = self.slot_of[lpa as usize];
        if slot == NONE {
            return false;
        }
        self.unlink(slot);
        self.slot_of[lpa as usize] = NONE;
        self.lpa[slot as usize] = NONE;
        self.free.push(slot);
        true
    }

    fn push_front(&mut self, slot: u32) {
        self.prev[slot as usize] = NONE;
        self.next[slot as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = slot;
        }
        self.head = slot;
        if self.tail == NONE {
            self.tail = slot;
        }
    }

    fn unlink(&mut self, slot: u32) {
        let (p, n) = (self.prev[slot as usize], self.next[slot as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_and_fifo_evict_in_their_order() {
        let mut scratch = Vec::new();
        for (policy, expected) in [(BufferPolicy::Lru, 2), (BufferPolicy::Fifo, 1)] {
            let mut b = WriteBuffer::new(3, 10, 4, policy, true);
            for lpa in 1..=3 {
                assert_eq!(b.insert(lpa, Some(&[lpa as u8; 4]), &mut scratch), None);
            }
            b.touch(1); // LRU: 1 becomes the most recent
            assert_eq!(b.insert(4, None, &mut scratch), Some(expected));
            assert_eq!(scratch, vec![expected as u8; 4]);
            assert!(!b.contains(expected) && b.contains(4));
            assert_eq!(b.len(), 3);
            assert_eq!(b.page(4), Some(&[0u8; 4][..]));
        }
    }

    #[test]
    fn remove_and_drain() {
        let mut scratch = Vec::new();
        let mut b = WriteBuffer::new(4, 10, 4, BufferPolicy::Lru, false);
        for lpa in [5, 6, 7] {
            b.insert(lpa, None, &mut scratch);
        }
        assert!(b.remove(6));
        assert!(!b.remove(6));
        let drained: Vec<u32> = std::iter::from_fn(|| b.pop_oldest(&mut scratch)).collect();
        assert_eq!(drained, vec![5, 7]);
        assert_eq!(b.len(), 0);
    }
}
