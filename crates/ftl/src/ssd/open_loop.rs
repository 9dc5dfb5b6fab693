//! The open-loop host interface: a host (an NBD server, a VM front end) submits commands at
//! simulated times of its choosing, advances the simulation when it likes, and collects the
//! completions with their tags, as an NVMe driver posts to a submission queue and reaps a
//! completion queue.
//!
//! It drives the same world loop as [`Ssd::run`] and [`Ssd::execute`] (admission under the
//! queue depth, `step_sync`, background GC before an idle gap): a command is admitted at its
//! arrival when the queue has room, else it waits in arrival order for a slot (its latency then
//! includes the wait, as in `run`). The same arrivals give the same completions as `run`.

use super::Ssd;
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
    tag_of_slot: Vec<(u64, SimTime)>,
    waiting: VecDeque<Waiting>,
    done: Vec<HostCompletion>,
}

impl OpenLoop {
    /// Request `slot` completed now (`world::finish`).
    pub(crate) fn finished(&mut self, slot: u32, completed: SimTime, data: Vec<u8>) {
        let (tag, submitted) = self.tag_of_slot[slot as usize];
        self.done.push(HostCompletion {
            tag,
            submitted,
            completed,
            status: Ok(()),
            data,
        });
    }

    /// The completion just pushed failed (an uncorrectable read, `uncorrectable.rs`).
    pub(crate) fn fail_last(&mut self, message: String) {
        if let Some(done) = self.done.last_mut() {
            done.status = Err(message);
            done.data.clear();
        }
    }
}

impl Ssd {
    /// Starts open-loop operation (and a new measurement: the next [`Ssd::report`] covers the
    /// commands submitted from now on). Idempotent apart from the measurement reset.
    pub fn open_loop_begin(&mut self) {
        self.reset_measurement();
        if self.host.open_loop.is_none() {
            self.host.open_loop = Some(Box::new(OpenLoop {
                tag_of_slot: vec![(0, SimTime::ZERO); self.host.requests.slots.len()],
                ..OpenLoop::default()
            }));
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
        self.open()?;
        let at = request.arrival.unwrap_or(self.now);
        if at < self.now {
            return Err(FtlError::BadRequest {
                message: format!(
                    "{:?} at offset {} arrives at {at}, before the simulated time {}",
                    request.op, request.offset_bytes, self.now
                ),
            });
        }
        self.advance_to(at)?;
        let open = self.open()?;
        let tag = open.next_tag;
        open.next_tag += 1;
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
        if at < self.now {
            return Err(FtlError::BadRequest {
                message: format!(
                    "SiM command on lpa {} arrives at {at}, before the simulated time {}",
                    request.lpa.0, self.now
                ),
            });
        }
        self.advance_to(at)?;
        let open = self.open()?;
        let tag = open.next_tag;
        open.next_tag += 1;
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
    fn admit_tagged(
        &mut self,
        tag: u64,
        request: &HostRequest,
        data: Option<&[u8]>,
    ) -> FtlResult<()> {
        let slot = self.host.requests.next_free().expect("room checked");
        let at = request.arrival.unwrap_or(self.now);
        // the tag first: a command can complete inside its admission
        self.open()?.tag_of_slot[slot as usize] = (tag, at);
        self.admit(request, at, data)
    }

    fn admit_command(&mut self, tag: u64, command: &Command) -> FtlResult<()> {
        match command {
            Command::Block { request, data } => self.admit_tagged(tag, request, data.as_deref()),
            Command::Search(request) => {
                let slot = self.host.requests.next_free().expect("room checked");
                let at = request.arrival.unwrap_or(self.now);
                self.open()?.tag_of_slot[slot as usize] = (tag, at);
                self.admit_search(request, at).map(|_| ())
            }
        }
    }

    /// Admits waiting commands while the queue has room; a refused one completes at once with
    /// its error.
    fn admit_waiting(&mut self) -> FtlResult<()> {
        while self.host.requests.has_room() {
            let Some(w) = self.open()?.waiting.pop_front() else {
                break;
            };
            if let Err(e) = self.admit_command(w.tag, &w.command) {
                let now = self.now;
                self.open()?.done.push(HostCompletion {
                    tag: w.tag,
                    submitted: w.command.arrival().unwrap_or(now),
                    completed: now,
                    status: Err(e.to_string()),
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
mod tests {
    use super::*;
    use crate::config::{PayloadMode, SsdConfig};

    fn config(queue_depth: u32) -> SsdConfig {
        let mut c = SsdConfig::from_preset("mlc1");
        c.ftl.queue_depth = queue_depth;
        c.ftl.payload = PayloadMode::Full;
        c
    }

    /// A mixed stream (random writes, reads, a trim, flushes) with arrivals `gap_ns` apart.
    fn stream(ssd: &Ssd, n: u64, gap_ns: u64) -> Vec<HostRequest> {
        let page = u64::from(ssd.page_size_bytes());
        let pages = ssd.logical_pages();
        let mut x = 12345u64;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let lpa = (x >> 33) % (pages - 4);
                let op = match (x >> 20) % 10 {
                    0..=5 => HostOp::Write,
                    6..=8 => HostOp::Read,
                    _ if i % 2 == 0 => HostOp::Trim,
                    _ => HostOp::Flush,
                };
                let size = if op == HostOp::Flush {
                    0
                } else {
                    page * (1 + (x >> 40) % 3)
                };
                let mut r = HostRequest::new(op, lpa * page, size);
                r.arrival = Some(SimTime::from_ns(i * gap_ns));
                r
            })
            .collect()
    }

    /// Submits `requests` in arrival order and collects every completion.
    fn open_loop(ssd: &mut Ssd, requests: &[HostRequest]) -> Vec<HostCompletion> {
        ssd.open_loop_begin();
        let mut tags = Vec::new();
        for r in requests {
            tags.push(ssd.submit(r, None).unwrap());
        }
        let mut done = Vec::new();
        while ssd.advance_to_completion().unwrap() {
            ssd.take_completions_into(&mut done);
        }
        assert_eq!(tags, (0..requests.len() as u64).collect::<Vec<_>>());
        done
    }

    #[test]
    fn open_loop_gives_the_report_of_run_for_the_same_arrivals() {
        for (qd, gap) in [(1, 50_000), (8, 20_000), (32, 2_000), (4, 0)] {
            let mut a = Ssd::new(config(qd), 7).unwrap();
            let requests = stream(&a, 3000, gap);
            let run = a.run(requests.clone()).unwrap();
            let mut b = Ssd::new(config(qd), 7).unwrap();
            let done = open_loop(&mut b, &requests);
            assert_eq!(
                done.len(),
                requests.len(),
                "qd {qd}: every command completes once"
            );
            let mut tags: Vec<u64> = done.iter().map(|c| c.tag).collect();
            tags.sort_unstable();
            assert_eq!(tags, (0..requests.len() as u64).collect::<Vec<_>>());
            assert!(done.iter().all(|c| c.status.is_ok()));
            assert_eq!(b.report(), run, "qd {qd}, gap {gap} ns");
            if qd > 1 && gap < 20_000 {
                // several in flight: completions come out of submission order
                assert!(done.windows(2).any(|w| w[0].tag > w[1].tag), "qd {qd}");
            }
        }
    }

    #[test]
    fn advance_to_completion_or_stops_at_the_time_or_the_completion() {
        let mut ssd = Ssd::new(config(4), 1).unwrap();
        ssd.open_loop_begin();
        let page = u64::from(ssd.page_size_bytes());
        ssd.submit(&HostRequest::write(0, page), None).unwrap();
        // a program takes hundreds of us: nothing completes in the first microsecond
        let early = SimTime::from_us(1);
        assert!(!ssd.advance_to_completion_or(early).unwrap());
        assert_eq!(ssd.now(), early);
        assert_eq!(ssd.open_in_flight(), 1);
        // a later bound: it stops at the completion, before the bound
        let late = SimTime::from_ms(100);
        assert!(ssd.advance_to_completion_or(late).unwrap());
        let done = ssd.take_completions();
        assert_eq!(done.len(), 1);
        assert_eq!(ssd.now(), done[0].completed);
        assert!(done[0].completed < late);
        // nothing in flight: the time moves to the bound
        assert!(!ssd.advance_to_completion_or(late).unwrap());
        assert_eq!(ssd.now(), late);
    }

    #[test]
    fn open_loop_is_deterministic_and_returns_written_bytes() {
        let go = || {
            let mut ssd = Ssd::new(config(8), 3).unwrap();
            ssd.open_loop_begin();
            let page = u64::from(ssd.page_size_bytes());
            let bytes: Vec<u8> = (0..page * 2).map(|i| (i % 251) as u8).collect();
            let mut w = HostRequest::new(HostOp::Write, 5 * page, 2 * page);
            w.arrival = Some(SimTime::from_ns(1000));
            ssd.submit(&w, Some(&bytes)).unwrap();
            let mut r = HostRequest::new(HostOp::Read, 5 * page + 100, page);
            r.arrival = Some(SimTime::from_ns(1000));
            ssd.submit(&r, None).unwrap();
            let mut done = Vec::new();
            while ssd.advance_to_completion().unwrap() {
                ssd.take_completions_into(&mut done);
            }
            // the read arrived with the write in flight; after both, the bytes are there
            let mut later = HostRequest::new(HostOp::Read, 5 * page + 100, page);
            later.arrival = Some(ssd.now() + SimTime::from_ns(10));
            let tag = ssd.submit(&later, None).unwrap();
            while ssd.advance_to_completion().unwrap() {
                ssd.take_completions_into(&mut done);
            }
            let last = done.iter().find(|c| c.tag == tag).unwrap();
            assert_eq!(last.data, bytes[100..100 + page as usize]);
            done
        };
        assert_eq!(go(), go());
    }

    #[test]
    fn execute_equals_open_loop_one_at_a_time() {
        let mut a = Ssd::new(config(4), 9).unwrap();
        let requests = stream(&a, 400, 30_000);
        let mut b = Ssd::new(config(4), 9).unwrap();
        b.open_loop_begin();
        for r in &requests {
            let e = a.execute(r, None).unwrap();
            // execute: at the arrival, or now if that is later
            let mut r = *r;
            r.arrival = r.arrival.map(|t| t.max(b.now()));
            let tag = b.submit(&r, None).unwrap();
            assert!(b.advance_to_completion().unwrap());
            let c = b.take_completions();
            assert_eq!(c.len(), 1);
            assert_eq!(c[0].tag, tag);
            assert_eq!(
                (c[0].completed, c[0].latency(), &c[0].data),
                (e.completed, e.latency, &e.data)
            );
        }
    }

    #[test]
    fn advance_to_moves_time_and_refuses_the_past() {
        let mut ssd = Ssd::new(config(2), 1).unwrap();
        assert!(
            ssd.submit(&HostRequest::new(HostOp::Flush, 0, 0), None)
                .is_err()
        );
        ssd.open_loop_begin();
        ssd.advance_to(SimTime::from_ns(5000)).unwrap();
        assert_eq!(ssd.now(), SimTime::from_ns(5000));
        let mut r = HostRequest::new(HostOp::Read, 0, 4096);
        r.arrival = Some(SimTime::from_ns(10));
        assert!(ssd.submit(&r, None).is_err());
        let beyond = HostRequest::new(HostOp::Read, ssd.logical_capacity_bytes(), 4096);
        assert!(matches!(
            ssd.submit(&beyond, None),
            Err(FtlError::OutOfRange { .. })
        ));
        assert_eq!(ssd.open_in_flight(), 0);
    }
}
