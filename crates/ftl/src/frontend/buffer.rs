//! DRAM write buffer in the controller (SPEC F6): a bounded set of logical pages with LRU or
//! FIFO eviction, as an intrusive doubly-linked list over fixed slots (no allocation after
//! construction). Reads hit the buffer; a write to a buffered page updates it in place; when
//! the buffer is full the coldest page is evicted (written to flash); a flush writes them all.
//! It is the first stage of the front-end chain ([`super::FrontEnd`]).

use super::{FrontEnd, PageWrite, PageWrites};
use crate::address::{BufferSlot, Lpa};
use crate::config::BufferPolicy;
use crate::stats::FtlCounters;
use nandlab_core::SimTime;

/// The buffered pages and (in full payload mode) their bytes. Empty entries are
/// `BufferSlot::NONE` / `Lpa::NONE`.
#[derive(Debug)]
pub(crate) struct WriteBuffer {
    policy: BufferPolicy,
    page_size_bytes: usize,
    keep_bytes: bool,
    /// Slot of each logical page (one entry per logical page).
    slot_of: Vec<BufferSlot>,
    lpa: Vec<Lpa>,
    /// Write sequence number of each slot's page (goes into the OOB when it is programmed).
    sequence: Vec<u64>,
    /// Placement id of each slot's page.
    placement: Vec<u16>,
    prev: Vec<BufferSlot>,
    next: Vec<BufferSlot>,
    /// Most recently inserted (or, for LRU, used) slot.
    head: BufferSlot,
    /// Next to evict.
    tail: BufferSlot,
    free: Vec<BufferSlot>,
    bytes: Vec<u8>,
    /// The bytes of the page being evicted (full mode; reused).
    evicted: Vec<u8>,
    /// Placement id of the page the last `pop_oldest` returned.
    evicted_placement: u16,
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
            slot_of: vec![BufferSlot::NONE; logical_pages as usize],
            lpa: vec![Lpa::NONE; n],
            sequence: vec![0; n],
            placement: vec![0; n],
            prev: vec![BufferSlot::NONE; n],
            next: vec![BufferSlot::NONE; n],
            head: BufferSlot::NONE,
            tail: BufferSlot::NONE,
            free: (0..capacity_pages).rev().map(BufferSlot).collect(),
            bytes: if keep_bytes {
                vec![0; n * page_size_bytes as usize]
            } else {
                Vec::new()
            },
            evicted: Vec::new(),
            evicted_placement: 0,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lpa.len() - self.free.len()
    }
    pub fn contains(&self, lpa: Lpa) -> bool {
        !self.slot_of[lpa.index()].is_none()
    }

    /// Bytes of a buffered page (full mode).
    pub fn page(&self, lpa: Lpa) -> Option<&[u8]> {
        let slot = self.slot_of[lpa.index()];
        if slot.is_none() || !self.keep_bytes {
            return None;
        }
        let s = slot.index() * self.page_size_bytes;
        Some(&self.bytes[s..s + self.page_size_bytes])
    }

    /// A read hit: LRU moves the page to the front.
    pub fn touch(&mut self, lpa: Lpa) {
        let slot = self.slot_of[lpa.index()];
        if !slot.is_none() && self.policy == BufferPolicy::Lru {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    /// Stores a whole page written by the host write `sequence`. Returns the evicted page's
    /// `(lpa, sequence)` (its bytes in `evicted`) when a page had to leave to make room.
    pub fn insert(
        &mut self,
        lpa: Lpa,
        sequence: u64,
        data: Option<&[u8]>,
        evicted: &mut Vec<u8>,
    ) -> Option<(Lpa, u64)> {
        let mut out = None;
        let slot = match self.slot_of[lpa.index()].get() {
            None => {
                if self.free.is_empty() {
                    out = self.pop_oldest(evicted);
                }
                let slot = self.free.pop().expect("a slot was freed");
                self.lpa[slot.index()] = lpa;
                self.slot_of[lpa.index()] = slot;
                self.push_front(slot);
                slot
            }
            Some(slot) => {
                self.touch(lpa);
                slot
            }
        };
        self.sequence[slot.index()] = sequence;
        if self.keep_bytes {
            let s = slot.index() * self.page_size_bytes;
            let page = &mut self.bytes[s..s + self.page_size_bytes];
            match data {
                Some(d) => page.copy_from_slice(d),
                None => page.fill(0),
            }
        }
        out
    }

    /// Removes the next page to evict and returns its `(lpa, sequence)`; its bytes go to
    /// `evicted` (full mode).
    pub fn pop_oldest(&mut self, evicted: &mut Vec<u8>) -> Option<(Lpa, u64)> {
        let slot = self.tail.get()?;
        let lpa = self.lpa[slot.index()];
        let sequence = self.sequence[slot.index()];
        self.evicted_placement = self.placement[slot.index()];
        if self.keep_bytes {
            let s = slot.index() * self.page_size_bytes;
            evicted.clear();
            evicted.extend_from_slice(&self.bytes[s..s + self.page_size_bytes]);
        }
        self.remove(lpa);
        Some((lpa, sequence))
    }

    /// Drops a page (TRIM). Returns whether it was buffered.
    pub fn remove(&mut self, lpa: Lpa) -> bool {
        let Some(slot) = self.slot_of[lpa.index()].get() else {
            return false;
        };
        self.unlink(slot);
        self.slot_of[lpa.index()] = BufferSlot::NONE;
        self.lpa[slot.index()] = Lpa::NONE;
        self.free.push(slot);
        true
    }

    fn push_front(&mut self, slot: BufferSlot) {
        self.prev[slot.index()] = BufferSlot::NONE;
        self.next[slot.index()] = self.head;
        if let Some(head) = self.head.get() {
            self.prev[head.index()] = slot;
        }
        self.head = slot;
        if self.tail.is_none() {
            self.tail = slot;
        }
    }

    fn unlink(&mut self, slot: BufferSlot) {
        let (p, n) = (self.prev[slot.index()], self.next[slot.index()]);
        match p.get() {
            Some(p) => self.next[p.index()] = n,
            None => self.head = n,
        }
        match n.get() {
            Some(n) => self.prev[n.index()] = p,
            None => self.tail = p,
        }
    }
}

impl FrontEnd for WriteBuffer {
    fn name(&self) -> &'static str {
        "write buffer"
    }
    fn volatile(&self) -> bool {
        true
    }
    fn contains(&self, lpa: Lpa) -> bool {
        WriteBuffer::contains(self, lpa)
    }
    fn page(&self, lpa: Lpa) -> Option<&[u8]> {
        WriteBuffer::page(self, lpa)
    }
    fn read(&mut self, lpa: Lpa, counters: &mut FtlCounters) -> bool {
        if !WriteBuffer::contains(self, lpa) {
            return false;
        }
        self.touch(lpa);
        counters.buffer_read_hits += 1;
        true
    }
    fn write(
        &mut self,
        _now: SimTime,
        page: PageWrite<'_>,
        out: &mut PageWrites,
        counters: &mut FtlCounters,
    ) -> u32 {
        if WriteBuffer::contains(self, page.lpa) {
            counters.buffer_write_hits += 1;
        }
        let mut evicted = std::mem::take(&mut self.evicted);
        if let Some((lpa, sequence)) = self.insert(page.lpa, page.sequence, page.data, &mut evicted)
        {
            counters.buffer_evictions += 1;
            let bytes = self.keep_bytes.then_some(&evicted[..]);
            out.push_placed(lpa, sequence, bytes, self.evicted_placement);
        }
        let slot = self.slot_of[page.lpa.index()];
        self.placement[slot.index()] = page.placement;
        self.evicted = evicted;
        0
    }
    fn trim(&mut self, lpa: Lpa) {
        self.remove(lpa);
    }
    fn flush(&mut self, out: &mut PageWrites) {
        let mut evicted = std::mem::take(&mut self.evicted);
        while let Some((lpa, sequence)) = self.pop_oldest(&mut evicted) {
            let bytes = self.keep_bytes.then_some(&evicted[..]);
            out.push_placed(lpa, sequence, bytes, self.evicted_placement);
        }
        self.evicted = evicted;
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
                let data = [lpa as u8; 4];
                let sequence = 10 + u64::from(lpa);
                assert_eq!(
                    b.insert(Lpa(lpa), sequence, Some(&data), &mut scratch),
                    None
                );
            }
            b.touch(Lpa(1)); // LRU: 1 becomes the most recent
            let out = b.insert(Lpa(4), 14, None, &mut scratch);
            assert_eq!(out, Some((Lpa(expected), 10 + u64::from(expected))));
            assert_eq!(scratch, vec![expected as u8; 4]);
            assert!(!b.contains(Lpa(expected)) && b.contains(Lpa(4)));
            assert_eq!(b.len(), 3);
            assert_eq!(b.page(Lpa(4)), Some(&[0u8; 4][..]));
        }
    }

    #[test]
    fn remove_and_drain() {
        let mut scratch = Vec::new();
        let mut b = WriteBuffer::new(4, 10, 4, BufferPolicy::Lru, false);
        for lpa in [5, 6, 7] {
            b.insert(Lpa(lpa), 0, None, &mut scratch);
        }
        assert!(b.remove(Lpa(6)));
        assert!(!b.remove(Lpa(6)));
        let drained: Vec<u32> = std::iter::from_fn(|| b.pop_oldest(&mut scratch))
            .map(|(l, _)| l.0)
            .collect();
        assert_eq!(drained, vec![5, 7]);
        assert_eq!(b.len(), 0);
    }
}
