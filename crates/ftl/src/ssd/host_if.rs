//! The host interface: the request slots and the host's event queue (arrivals), the deferred
//! steps of requests, the requests a front-end stage completed, FUA writes not yet decided,
//! the transactional counters and the open-loop state (`open_loop.rs`, which the synchronous
//! calls use too). The command families act on it from `host_path.rs` (block I/O, flush/FUA,
//! trim), `txn.rs` (transactional batch) and `search.rs` (search/gather).

use super::{open_loop::OpenLoop, txn::TxCounters};
use crate::host::queue::{DeferredTable, RequestTable};
use nandlab_core::EventQueue;

#[derive(Debug)]
pub(super) struct HostInterface {
    pub requests: RequestTable,
    pub deferred: DeferredTable,
    /// Host arrivals.
    pub events: EventQueue<()>,
    /// Requests a front-end stage's device event completed (reused).
    pub stage_done: Vec<u64>,
    /// Per request slot, a FUA write not yet decided; how many are set.
    fua_slots: Vec<bool>,
    fua_slots_set: u32,
    /// The read being admitted gathers no bytes ([`super::Ssd::execute_read_uncopied`]).
    pub uncopied_read: bool,
    /// Transactional mode (`txn.rs`): its counters, and whether the commit record's write may
    /// be admitted (its LPA is past the host's range).
    pub txn: TxCounters,
    /// Open-loop host interface state (`open_loop.rs`), once started.
    pub open_loop: Option<Box<OpenLoop>>,
    /// Request slots with an uncorrectable read (`uncorrectable.rs`): they complete with an
    /// error status and no data.
    pub failed_slots: Vec<u32>,
}

impl HostInterface {
    pub fn new(queue_depth: u32) -> Self {
        HostInterface {
            requests: RequestTable::new(queue_depth),
            deferred: DeferredTable::default(),
            events: EventQueue::with_capacity(4),
            stage_done: Vec::new(),
            fua_slots: Vec::new(),
            fua_slots_set: 0,
            uncopied_read: false,
            txn: TxCounters::default(),
            open_loop: None,
            failed_slots: Vec::new(),
        }
    }

    /// Notes whether request `slot` is a FUA write (kept off the request slots: the hot path
    /// tests one counter, [`HostInterface::any_fua`]).
    #[cold]
    #[inline(never)]
    pub fn mark_fua(&mut self, slot: u32, fua: bool) {
        let i = slot as usize;
        if self.fua_slots.len() <= i {
            self.fua_slots.resize(i + 1, false);
        }
        if self.fua_slots[i] != fua {
            self.fua_slots[i] = fua;
            if fua {
                self.fua_slots_set += 1;
            } else {
                self.fua_slots_set -= 1;
            }
        }
    }

    /// Whether any FUA write waits for its decision.
    #[inline]
    pub fn any_fua(&self) -> bool {
        self.fua_slots_set > 0
    }

    /// Whether request `slot` is a FUA write not yet decided.
    pub fn is_fua(&self, slot: u32) -> bool {
        self.fua_slots.get(slot as usize).copied().unwrap_or(false)
    }
}
