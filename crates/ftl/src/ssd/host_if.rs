//! The host interface: the request slots and the host's event queue (arrivals), the deferred
//! steps of requests, the requests a front-end stage completed, FUA writes not yet decided,
//! the request a synchronous call waits for, the transactional counters and the open-loop
//! state (`open_loop.rs`). The command families act on it from `host_path.rs` (block I/O,
//! flush/FUA, trim), `txn.rs` (transactional batch) and `search.rs` (search/gather).

use super::{Executed, open_loop::OpenLoop, txn::TxCounters};
use crate::host::queue::{DeferredTable, RequestTable};
use nandlab_core::EventQueue;

/// `watch` value meaning "the next admitted request".
const WATCH_NEXT: u32 = u32::MAX;

#[derive(Debug)]
pub(super) struct HostInterface {
    pub requests: RequestTable,
    pub deferred: DeferredTable,
    /// Host arrivals.
    pub events: EventQueue<()>,
    /// Requests a front-end stage's device event completed (reused).
    pub stage_done: Vec<u64>,
    /// Request slot that [`super::Ssd::execute`] waits for, and its result when done.
    watch: Option<u32>,
    watched: Option<Executed>,
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
    /// The watched request's error, when it had an uncorrectable read.
    pub watched_error: Option<String>,
}

impl HostInterface {
    pub fn new(queue_depth: u32) -> Self {
        HostInterface {
            requests: RequestTable::new(queue_depth),
            deferred: DeferredTable::default(),
            events: EventQueue::with_capacity(4),
            stage_done: Vec::new(),
            watch: None,
            watched: None,
            fua_slots: Vec::new(),
            fua_slots_set: 0,
            uncopied_read: false,
            txn: TxCounters::default(),
            open_loop: None,
            failed_slots: Vec::new(),
            watched_error: None,
        }
    }

    /// A synchronous call waits for the next admitted request.
    pub fn watch_next(&mut self) {
        self.watched = None;
        self.watched_error = None;
        self.watch = Some(WATCH_NEXT);
    }

    /// Request `slot` was admitted: the one waited for, if a synchronous call waits for the
    /// next.
    #[inline]
    pub fn admitted(&mut self, slot: u32) {
        if self.watch == Some(WATCH_NEXT) {
            self.watch = Some(slot);
        }
    }

    /// Nobody waits any more.
    pub fn unwatch(&mut self) {
        self.watch = None;
    }

    /// Whether request `slot` is the one a synchronous call waits for.
    #[inline]
    pub fn is_watched(&self, slot: u32) -> bool {
        self.watch == Some(slot)
    }

    /// The watched request completed with `done`.
    pub fn watched_done(&mut self, done: Executed) {
        self.watched = Some(done);
    }

    /// The watched request's result, once it completed.
    pub fn take_watched(&mut self) -> Option<Executed> {
        self.watched.take()
    }

    /// Whether the watched request completed.
    pub fn watched_completed(&self) -> bool {
        self.watched.is_some()
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
