//! The open-loop host interface: a host (an NBD server, a VM front end) submits commands at
//! simulated times of its choosing, advances the simulation when it likes, and collects the
//! completions with their tags, as an NVMe driver posts to a submission queue and reaps a
//! completion queue.
//!
//! It drives the same world loop as [`Ssd::run`] (admission under the queue depth,
//! `step_sync`, background GC before an idle gap): a command is admitted at its arrival when
//! the queue has room, else it waits in arrival order for a slot (its latency then includes the
//! wait, as in `run`). The same arrivals give the same completions as `run`. The synchronous
//! calls ([`Ssd::execute`], [`Ssd::execute_search`]) are this interface too: submit one
//! command, then simulate until its completion ([`Ssd::wait_for`]).

use super::{Executed, Ssd};
use crate::error::{FtlError, FtlResult};
use crate::host::{HostOp, HostRequest};
use crate::search::SearchRequest;
use nandlab_core::SimTime;
use std::collections::VecDeque;

/// One finished host command ([`Ssd::take_completions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCompletion {
    /// The tag [`Ssd::submit`] returned.
    pub tag: u64,
    /// The command's arrival (its simulated submission time).
    pub submitted: SimTime,
    /// When it completed to the host.
    pub completed: SimTime,
    /// `Err(message)` when the command was refused at admission (it waited for a slot and its
    /// range or arguments were bad); `Ok` otherwise.
    pub status: Result<(), String>,
    /// A read's bytes (full payload mode); empty otherwise.
    pub data: Vec<u8>,
}

impl HostCompletion {
    /// From submission to completion.
    pub fn latency(&self) -> SimTime {
        self.completed - self.submitted
    }
}

/// A command waiting for a slot: its tag and the command (arrival set).
#[derive(Debug)]
struct Waiting {
    tag: u64,
    command: Command,
}

/// A submitted command: a block command with a write's bytes, or a SiM command.
#[derive(Debug)]
enum Command {
    Block {
        request: HostRequest,
        data: Option<Vec<u8>>,
    },
    Search(SearchRequest),
}

impl Command {
    fn arrival(&self) -> Option<SimTime> {
        match self {
            Command::Block { request, .. } => request.arrival,
            Command::Search(request) => request.arrival,
        }
    }
}

/// The open-loop state of an [`Ssd`]: tags of the admitted commands by request slot, commands
/// waiting for a slot, and the completions not yet taken.
#[derive(Debug, Default)]
pub(crate) struct OpenLoop {
    next_tag: u64,
    /// Per request slot, the tag and arrival of the command in it (`None`: a slot that
    /// [`Ssd::run`] or the SiM batcher filled; their completions are not posted here).
    tag_of_slot: Vec<Option<(u64, SimTime)>>,
    waiting: VecDeque<Waiting>,
    done: Vec<HostCompletion>,
    /// The command a synchronous call waits for ([`Ssd::wait_for`]), and the error that
    /// refused it if it was refused when a slot freed up (it keeps its type that way).
    awaited: Option<u64>,
    refused: Option<FtlError>,
}

impl OpenLoop {
    /// Request `slot` completed now (`world::finish`) with `data`, or failed with `failure`
    /// (an uncorrectable read, `uncorrectable.rs`: then no data). Nothing is posted for a slot
    /// no open-loop command filled.
    pub(crate) fn finished(
        &mut self,
        slot: u32,
        completed: SimTime,
        mut data: Vec<u8>,
        failure: Option<String>,
    ) {
        let Some((tag, submitted)) = self.tag_of_slot[slot as usize].take() else {
            return;
        };
        let status = match failure {
            Some(message) => {
                data.clear();
                Err(message)
            }
            None => Ok(()),
        };
        self.done.push(HostCompletion {
            tag,
            submitted,
            completed,
            status,
            data,
        });
    }
}

impl Ssd {
    /// Starts open-loop operation (and a new measurement: the next [`Ssd::report`] covers the
    /// commands submitted from now on). Idempotent apart from the measurement reset.
    pub fn open_loop_begin(&mut self) {
        self.reset_measurement();
        self.ensure_open_loop();
    }

    /// The open-loop state, created if need be (no measurement reset: the synchronous calls).
    fn ensure_open_loop(&mut self) {
        if self.host.open_loop.is_none() {
            self.host.open_loop = Some(Box::new(OpenLoop {
                tag_of_slot: vec![None; self.host.requests.slots.len()],
                ..OpenLoop::default()
            }));
        }
    }

    /// Submits one block command at its arrival (`None`: now; an arrival already past is
    /// taken as now) and simulates until it completes: [`Ssd::submit`] then
    /// [`Ssd::wait_for`]. Does not reset the measurement.
    pub(super) fn execute_open(
        &mut self,
        request: &HostRequest,
        data: Option<&[u8]>,
    ) -> FtlResult<Executed> {
        self.ensure_open_loop();
        let mut request = *request;
        request.arrival = Some(request.arrival.unwrap_or(self.now).max(self.now));
        let tag = self.submit(&request, data)?;
        self.wait_for(tag)
    }

    /// [`Ssd::execute_open`] of a SiM command ([`Ssd::submit_search`]).
    pub(super) fn execute_search_open(&mut self, request: &SearchRequest) -> FtlResult<Executed> {
        self.ensure_open_loop();
        let mut request = request.clone();
        request.arrival = Some(request.arrival.unwrap_or(self.now).max(self.now));
        let tag = self.submit_search(&request)?;
        self.wait_for(tag)
    }

    /// Simulates until the command `tag` completes and takes its completion (the other
    /// completions stay for [`Ssd::take_completions`]). An uncorrectable read is
    /// [`FtlError::Uncorrectable`]; a command refused when a slot freed up, its error.
    pub(super) fn wait_for(&mut self, tag: u64) -> FtlResult<Executed> {
        self.open()?.awaited = Some(tag);
        let done = loop {
            let open = self.open()?;
            if let Some(i) = open.done.iter().rposition(|c| c.tag == tag) {
                break open.done.remove(i);
            }
            match self.step_sync() {
                Ok(Some(_)) => self.admit_waiting()?,
                Ok(None) => return Err(self.stalled()),
                Err(e) => {
                    self.open()?.awaited = None;
                    return Err(e);
                }
            }
        };
        let open = self.open()?;
        open.awaited = None;
        let refused = open.refused.take();
        match (done.status, refused) {
            (Ok(()), _) => Ok(Executed {
                latency: done.completed - done.submitted,
                completed: done.completed,
                data: done.data,
            }),
            (Err(_), Some(error)) => Err(error),
            (Err(message), None) => Err(FtlError::Uncorrectable { message }),
        }
    }

    fn open(&mut self) -> FtlResult<&mut OpenLoop> {
        self.host
            .open_loop
            .as_deref_mut()
            .ok_or_else(|| FtlError::BadRequest {
                message: "open-loop call before Ssd::open_loop_begin".into(),
            })
    }

    /// Submits a host command arriving at `request.arrival` (`None`: now); returns its tag.
    /// The simulation first advances to the arrival ([`Ssd::advance_to`]); an arrival before
    /// the current simulated time is refused. A write's `data` is its bytes (full payload
    /// mode; `None` writes zeros). Bad ranges or arguments are refused here, before anything
    /// is simulated, when the command can be admitted at once.
    pub fn submit(&mut self, request: &HostRequest, data: Option<&[u8]>) -> FtlResult<u64> {
        let at = request.arrival.unwrap_or(self.now);
        let what = || format!("{:?} at offset {}", request.op, request.offset_bytes);
        let tag = self.tag_arriving_at(at, what)?;
        let mut request = *request;
        request.arrival = Some(at);
        if self.open_waiting() == 0 && self.host.requests.has_room() {
            self.admit_tagged(tag, &request, data)?;
        } else {
            // the host path refuses bad arguments at admission; check the range now so the
            // caller hears of it at once
            if request.op != HostOp::Flush {
                self.check_range(request.offset_bytes, request.size_bytes)?;
            }
            let data = data.map(<[u8]>::to_vec);
            let command = Command::Block { request, data };
            self.open()?.waiting.push_back(Waiting { tag, command });
        }
        Ok(tag)
    }

    /// Submits a SiM command (search or gather of a page of the SiM region) arriving at
    /// `request.arrival` (`None`: now), as [`Ssd::submit`] does a block command; its
    /// completion's `data` is what [`Ssd::execute_search`] returns (a search's match bitmaps,
    /// a gather's chunks). Open-loop SiM commands are dispatched one by one (the deadline
    /// batcher is [`Ssd::run_search_chained`]'s). A command outside the SiM region, or on a
    /// device without one, is refused here.
    pub fn submit_search(&mut self, request: &SearchRequest) -> FtlResult<u64> {
        self.open()?;
        self.check_search(request)?;
        let at = request.arrival.unwrap_or(self.now);
        let tag = self.tag_arriving_at(at, || format!("SiM command on lpa {}", request.lpa.0))?;
        let mut request = request.clone();
        request.arrival = Some(at);
        let command = Command::Search(request);
        if self.open_waiting() == 0 && self.host.requests.has_room() {
            self.admit_command(tag, &command)?;
        } else {
            self.open()?.waiting.push_back(Waiting { tag, command });
        }
        Ok(tag)
    }

    /// Commands submitted and not yet completed (admitted or waiting for a slot).
    pub fn open_in_flight(&self) -> u64 {
        u64::from(self.host.requests.in_flight()) + self.open_waiting() as u64
    }

    fn open_waiting(&self) -> usize {
        self.host.open_loop.as_ref().map_or(0, |o| o.waiting.len())
    }

    /// Admits `request` now under `tag` (room in the queue checked by the caller).
    /// The tag of a command arriving at `at` (`what` names it in the error when `at` is
    /// already past), once the simulation has advanced to `at`.
    fn tag_arriving_at(&mut self, at: SimTime, what: impl FnOnce() -> String) -> FtlResult<u64> {
        self.open()?;
        if at < self.now {
            return Err(FtlError::BadRequest {
                message: format!(
                    "{} arrives at {at}, before the simulated time {}",
                    what(),
                    self.now
                ),
            });
        }
        self.advance_to(at)?;
        let open = self.open()?;
        let tag = open.next_tag;
        open.next_tag += 1;
        Ok(tag)
    }

    fn admit_tagged(
        &mut self,
        tag: u64,
        request: &HostRequest,
        data: Option<&[u8]>,
    ) -> FtlResult<()> {
        let at = request.arrival.unwrap_or(self.now);
        self.admit_in_slot(tag, at, |ssd| ssd.admit(request, at, data))
    }

    /// Admits a command (`admit`) into the next free slot under `tag`. The tag goes in first,
    /// since a command can complete inside its admission; a refused command leaves no tag in
    /// its slot (the next occupant may be `run`'s).
    fn admit_in_slot(
        &mut self,
        tag: u64,
        at: SimTime,
        admit: impl FnOnce(&mut Self) -> FtlResult<()>,
    ) -> FtlResult<()> {
        let slot = self.host.requests.next_free().expect("room checked") as usize;
        self.open()?.tag_of_slot[slot] = Some((tag, at));
        let admitted = admit(self);
        if admitted.is_err() {
            self.open()?.tag_of_slot[slot] = None;
        }
        admitted
    }

    fn admit_command(&mut self, tag: u64, command: &Command) -> FtlResult<()> {
        match command {
            Command::Block { request, data } => self.admit_tagged(tag, request, data.as_deref()),
            Command::Search(request) => {
                let at = request.arrival.unwrap_or(self.now);
                self.admit_in_slot(tag, at, |ssd| ssd.admit_search(request, at).map(|_| ()))
            }
        }
    }

    /// Admits waiting commands while the queue has room; a refused one completes at once with
    /// its error. (Called after every step of the synchronous calls: nothing to do is one test.)
    #[inline]
    fn admit_waiting(&mut self) -> FtlResult<()> {
        if self.open_waiting() == 0 {
            return Ok(());
        }
        self.admit_waiting_now()
    }

    #[inline(never)]
    fn admit_waiting_now(&mut self) -> FtlResult<()> {
        while self.host.requests.has_room() {
            let Some(w) = self.open()?.waiting.pop_front() else {
                break;
            };
            if let Err(e) = self.admit_command(w.tag, &w.command) {
                let now = self.now;
                let open = self.open()?;
                let message = e.to_string();
                if open.awaited == Some(w.tag) {
                    open.refused = Some(e);
                }
                open.done.push(HostCompletion {
                    tag: w.tag,
                    submitted: w.command.arrival().unwrap_or(now),
                    completed: now,
                    status: Err(message),
                    data: Vec::new(),
                });
            }
        }
        Ok(())
    }

    /// Simulates every event before `time` and moves the simulated time to `time` (events at
    /// exactly `time` stay pending: a command submitted at `time` goes first, as in `run`).
    pub fn advance_to(&mut self, time: SimTime) -> FtlResult<()> {
        self.open()?;
        self.admit_waiting()?;
        if time <= self.now {
            return Ok(());
        }
        // a host event at `time`: the world loop stops there (host first on ties)
        self.host.events.schedule(time, ());
        loop {
            if self.idle_before_arrival() && self.background_gc()? {
                self.admit_waiting()?;
                continue;
            }
            match self.step_sync()? {
                None => return Err(self.stalled()),
                Some(_) if self.now >= time && self.host.events.peek_time() != Some(time) => break,
                Some(_) => {}
            }
            self.admit_waiting()?;
        }
        self.admit_waiting()
    }

    /// Simulates until at least one command has completed (and not been taken) or nothing is
    /// in flight; whether completions are ready.
    pub fn advance_to_completion(&mut self) -> FtlResult<bool> {
        self.open()?;
        self.admit_waiting()?;
        while self.open()?.done.is_empty() && self.open_in_flight() > 0 {
            if self.step_sync()?.is_none() {
                return Err(self.stalled());
            }
            self.admit_waiting()?;
        }
        Ok(!self.open()?.done.is_empty())
    }

    /// [`Ssd::advance_to_completion`], but stopping at `time` at the latest: simulates the
    /// events before `time` until a command completes; if none does, moves the simulated time
    /// to `time` (as [`Ssd::advance_to`]). For a host with its own timers (e.g. page-cache
    /// hits) between the device's completions. Whether completions are ready.
    pub fn advance_to_completion_or(&mut self, time: SimTime) -> FtlResult<bool> {
        self.open()?;
        self.admit_waiting()?;
        while self.open()?.done.is_empty() && self.open_in_flight() > 0 {
            if self.next_event_time().is_none_or(|t| t >= time) {
                break;
            }
            if self.step_sync()?.is_none() {
                return Err(self.stalled());
            }
            self.admit_waiting()?;
        }
        if self.open()?.done.is_empty() {
            self.advance_to(time)?;
        }
        Ok(!self.open()?.done.is_empty())
    }

    /// The completions since the last call, in completion order.
    pub fn take_completions(&mut self) -> Vec<HostCompletion> {
        self.host
            .open_loop
            .as_deref_mut()
            .map(|o| std::mem::take(&mut o.done))
            .unwrap_or_default()
    }

    /// [`Ssd::take_completions`] appending to `out` (no allocation once `out` has grown).
    pub fn take_completions_into(&mut self, out: &mut Vec<HostCompletion>) {
        if let Some(o) = self.host.open_loop.as_deref_mut() {
            out.append(&mut o.done);
        }
    }
}

#[cfg(test)]
#[path = "open_loop_tests.rs"]
mod tests;
