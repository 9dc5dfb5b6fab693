//! Bounded tables of the host interface: requests in flight (at most the queue depth) and
//! deferred read-modify-write steps (at most one per page of a request in flight). Slots are
//! reused; nothing is allocated per request in steady state.

use super::HostOp;
use crate::address::Lpa;
use nandlab_core::SimTime;

/// One request in flight.
#[derive(Debug)]
pub(crate) struct RequestSlot {
    pub op: HostOp,
    /// Latency is measured from here (the arrival time, or admission for closed loop).
    pub start: SimTime,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    /// Placement id of a write.
    pub placement_id: u16,
    /// Flash ops and deferred steps not finished yet.
    pub outstanding: u32,
    pub in_use: bool,
    /// Write data (full mode) or read data being gathered.
    pub data: Vec<u8>,
    /// A one-page write's bytes staged in a payload slot instead of `data` (full mode, with
    /// controller costs; `Payload::stage`), until its program takes the slot.
    pub staged: Option<u32>,
    /// A read gathers its bytes into `data` (not for `Ssd::execute_read_uncopied`).
    pub gather: bool,
    /// SiM commands: the key and mask of a search, the chunk bitmap of a gather (and 0).
    pub sim_args: (u64, u64),
}

/// Requests in flight, bounded by the queue depth.
#[derive(Debug)]
pub(crate) struct RequestTable {
    pub slots: Vec<RequestSlot>,
    free: Vec<u32>,
}

impl RequestTable {
    pub fn new(queue_depth: u32) -> Self {
        RequestTable {
            slots: (0..queue_depth)
                .map(|_| RequestSlot {
                    op: HostOp::Read,
                    start: SimTime::ZERO,
                    offset_bytes: 0,
                    size_bytes: 0,
                    placement_id: 0,
                    outstanding: 0,
                    in_use: false,
                    data: Vec::new(),
                    staged: None,
                    gather: true,
                    sim_args: (0, 0),
                })
                .collect(),
            free: (0..queue_depth).rev().collect(),
        }
    }
    pub fn in_flight(&self) -> u32 {
        (self.slots.len() - self.free.len()) as u32
    }
    pub fn has_room(&self) -> bool {
        !self.free.is_empty()
    }
    /// The slot the next [`RequestTable::alloc`] takes.
    pub fn next_free(&self) -> Option<u32> {
        self.free.last().copied()
    }
    pub fn alloc(&mut self) -> Option<u32> {
        let slot = self.free.pop()?;
        let s = &mut self.slots[slot as usize];
        s.in_use = true;
        s.outstanding = 0;
        s.data.clear();
        debug_assert!(s.staged.is_none(), "a staged page outlived its request");
        Some(slot)
    }
    pub fn release(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        debug_assert!(s.in_use && s.outstanding == 0);
        s.in_use = false;
        self.free.push(slot);
    }
}

/// A partial-page write waiting for the read of the old page.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Deferred {
    pub request: u32,
    pub lpa: Lpa,
    /// Byte range within the page being written.
    pub page_offset: u32,
    pub len: u32,
    /// Where the new bytes start in the request's data.
    pub data_offset: u32,
}

/// Deferred steps; grows to at most the pages of the requests in flight, then is reused.
#[derive(Debug, Default)]
pub(crate) struct DeferredTable {
    pub entries: Vec<Deferred>,
    free: Vec<u32>,
}

impl DeferredTable {
    pub fn alloc(&mut self, entry: Deferred) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.entries[id as usize] = entry;
                id
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        }
    }
    pub fn release(&mut self, id: u32) -> Deferred {
        self.free.push(id);
        self.entries[id as usize]
    }
    pub fn in_flight(&self) -> usize {
        self.entries.len() - self.free.len()
    }
}
