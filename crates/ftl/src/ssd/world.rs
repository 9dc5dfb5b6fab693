//! The world loop: admission under the queue depth, event processing (host arrivals vs chip
//! events, host first on ties), and what a completed op means for its owner (the ops' way to
//! the chip and back is `flash_io.rs`).

use super::{Executed, Ssd};
use crate::address::Lpa;
use crate::controller::CtrlEvent;
use crate::error::{FtlError, FtlResult};
use crate::flash::emit::Tag;
use crate::host::{HostOp, HostRequest};
use crate::mapping::Mapping;
use crate::stats::SsdReport;
use nandlab_core::SimClock;
use nandlab_core::source::earliest;
use nandlab_nand::OpKind;

/// Positions of the optional sources in the world loop's tie-breaking order (host arrivals 0,
/// chip model 1, then these).
const CONTROLLER_SOURCE: usize = 2;
const STAGE_SOURCE: usize = 3;

impl Ssd {
    /// Runs a stream of host requests to completion (including the GC work they cause) and
    /// returns the report of this run. Closed-loop requests (`arrival = None`) are issued as
    /// soon as fewer than `queue_depth` requests are in flight; timed requests wait for their
    /// arrival (and for room in the queue). Memory does not depend on the stream's length.
    pub fn run<I>(&mut self, requests: I) -> FtlResult<SsdReport>
    where
        I: IntoIterator,
        I::Item: Into<HostRequest>,
    {
        self.run_clocked(requests, None)
    }

    /// [`Ssd::run`] that publishes the simulated time on `clock` before each request is taken
    /// from the stream, so a source can stop at a simulated time (fio's `runtime`).
    pub fn run_clocked<I>(&mut self, requests: I, clock: Option<&SimClock>) -> FtlResult<SsdReport>
    where
        I: IntoIterator,
        I::Item: Into<HostRequest>,
    {
        self.reset_measurement();
        let mut source = requests.into_iter().map(Into::into);
        let publish = |now| {
            if let Some(clock) = clock {
                clock.set(now);
            }
        };
        // two requests of lookahead: the mapping-table entries they touch are prefetched while
        // the events before their admission are processed (hides the tables' cache misses)
        publish(self.now);
        let mut next = source.next();
        let mut after = source.next();
        self.prefetch_far(next.as_ref());
        self.prefetch_far(after.as_ref());
        let mut arrival_scheduled = false;
        loop {
            while let Some(request) = next {
                if !self.host.requests.has_room() {
                    break;
                }
                let at = request.arrival.unwrap_or(self.now);
                if at > self.now {
                    if !arrival_scheduled {
                        self.host.events.schedule(at, ());
                        arrival_scheduled = true;
                    }
                    break;
                }
                self.admit(&request, at, None)?;
                next = after.take();
                publish(self.now);
                after = source.next();
                self.prefetch_far(after.as_ref());
                self.prefetch_near(next.as_ref());
            }
            if self.idle_before_arrival() && self.background_gc()? {
                continue;
            }
            match self.step()? {
                Some(true) => arrival_scheduled = false,
                Some(false) => {}
                None => {
                    if next.is_some() || self.host.requests.in_flight() > 0 {
                        return Err(self.stalled());
                    }
                    break;
                }
            }
        }
        let report = self.report();
        assert_eq!(
            report.submitted, report.completed,
            "every submitted request completes exactly once"
        );
        assert_eq!(self.flash.jobs_in_flight(), 0, "every GC job finished");
        assert!(self.sched.all_empty(), "every decided op ran");
        assert_eq!(
            self.sched.merged_in_flight(),
            0,
            "every multiplane op completed"
        );
        Ok(report)
    }

    /// Background GC is on, the chip model has nothing to do, and the next host event (a timed
    /// arrival) is in the future.
    pub(super) fn idle_before_arrival(&self) -> bool {
        self.stages.idle_gc
            && self.chip.nand.next_event_time().is_none()
            && self
                .stages
                .controller
                .as_ref()
                .is_none_or(|c| c.events.peek_time().is_none())
            && self.host.events.peek_time().is_some_and(|h| h > self.now)
    }

    /// One background GC step now; whether it started any flash work.
    pub(super) fn background_gc(&mut self) -> FtlResult<bool> {
        if self.stages.slc_idle_fold.is_some() && self.slc_idle_fold()? {
            return Ok(true);
        }
        let collected = self
            .mapper
            .collect_idle(&mut self.flash)
            .and_then(|c| self.settle_cmt().map(|()| c));
        let submitted = self.submit_pending();
        let collected = collected?;
        submitted?;
        Ok(collected)
    }

    /// Prefetch hint for a request two admissions ahead.
    #[inline]
    fn prefetch_far(&self, request: Option<&HostRequest>) {
        if let Some(r) = request {
            self.mapper.prefetch_far(Lpa(
                (r.offset_bytes / u64::from(self.layout.page_size_bytes)) as u32,
            ));
        }
    }

    /// Prefetch hint for the request admitted next (a write replaces its pages' old copies).
    #[inline]
    fn prefetch_near(&self, request: Option<&HostRequest>) {
        if let Some(r) = request
            && r.op == crate::host::HostOp::Write
        {
            self.mapper.prefetch_near(Lpa(
                (r.offset_bytes / u64::from(self.layout.page_size_bytes)) as u32,
            ));
        }
    }

    /// Runs a fallible request source (a workload generator or trace reader); the first bad
    /// request stops the run with [`FtlError::Workload`] carrying the source's message.
    pub fn run_source<I, E>(&mut self, source: I) -> FtlResult<SsdReport>
    where
        I: IntoIterator<Item = Result<nandlab_core::BlockRequest, E>>,
        E: std::fmt::Display,
    {
        self.run_source_clocked(source, None)
    }

    /// [`Ssd::run_source`] publishing the simulated time on `clock` (see [`Ssd::run_clocked`]).
    pub fn run_source_clocked<I, E>(
        &mut self,
        source: I,
        clock: Option<&SimClock>,
    ) -> FtlResult<SsdReport>
    where
        I: IntoIterator<Item = Result<nandlab_core::BlockRequest, E>>,
        E: std::fmt::Display,
    {
        let mut failure = None;
        let requests = source.into_iter().map_while(|r| match r {
            Ok(r) => Some(HostRequest::from(r)),
            Err(e) => {
                failure = Some(e.to_string());
                None
            }
        });
        let report = self.run_clocked(requests, clock)?;
        match failure {
            Some(message) => Err(FtlError::Workload { message }),
            None => Ok(report),
        }
    }

    /// Submits one request now (or at its arrival, if later) and simulates until it completes.
    /// `data` is the bytes of a write (full payload mode; `None` writes zeros). A thin helper
    /// on the open-loop interface ([`Ssd::submit`], then simulating until its completion).
    pub fn execute(&mut self, request: &HostRequest, data: Option<&[u8]>) -> FtlResult<Executed> {
        self.execute_open(request, data)
    }

    /// [`Ssd::execute`] of a read (`request.op` must be `Read`) whose bytes the caller takes
    /// from the SSD after it completes ([`Ssd::read_bytes_into`], [`Ssd::bytes_equal`]): the
    /// request gathers none, so the page is not copied into a buffer of the request's own and
    /// `Executed::data` is empty. Simulated behaviour is that of [`Ssd::execute`]. The bytes
    /// read afterwards are those the request would have returned as long as no write to its
    /// range was decided while it ran (a caller with one request in flight, or whose writes in
    /// flight are to other pages).
    pub fn execute_read_uncopied(&mut self, request: &HostRequest) -> FtlResult<Executed> {
        if request.op != HostOp::Read {
            return Err(FtlError::BadRequest {
                message: format!("execute_read_uncopied of a {:?}", request.op),
            });
        }
        self.host.uncopied_read = true;
        let done = self.execute(request, None);
        self.host.uncopied_read = false;
        done
    }

    /// Simulates until nothing is in flight (GC work included).
    pub fn drain(&mut self) -> FtlResult<()> {
        while self.step_sync()?.is_some() {}
        if self.host.requests.in_flight() > 0 {
            return Err(self.stalled());
        }
        Ok(())
    }

    /// One step of the synchronous paths ([`Ssd::execute`], [`Ssd::drain`]): the world
    /// loop's, or under a power trace the power driver's, whose metadata writes (trim-log
    /// records, map checkpoints) are events too: a Flush waiting for its trim-log record
    /// would otherwise never complete. `Some(false)` for any event.
    pub(super) fn step_sync(&mut self) -> FtlResult<Option<bool>> {
        if self.power_trace_on() {
            return Ok(self.power_step()?.map(|_| false));
        }
        self.step()
    }

    pub(super) fn stalled(&self) -> FtlError {
        FtlError::Stalled {
            message: format!(
                "{} requests and {} deferred steps in flight but no event pending at {}",
                self.host.requests.in_flight(),
                self.host.deferred.in_flight(),
                self.now
            ),
        }
    }

    /// Processes the earliest event of the world's sources: the host's arrivals, the chip
    /// model, the controller's resources, then each front-end stage with its own device, in
    /// that order on ties. `None`
    /// when nothing is pending; `Some(true)` for a host arrival, `Some(false)` otherwise.
    pub(super) fn step(&mut self) -> FtlResult<Option<bool>> {
        let host = self.host.events.peek_time();
        let chip = self.chip.nand.next_event_time();
        if self.stages.other_sources && self.step_other_source(host, chip)? {
            return Ok(Some(false));
        }
        match (host, chip) {
            (None, None) => Ok(None),
            (Some(h), c) if c.is_none_or(|c| h <= c) => {
                let (time, ()) = self.host.events.pop().expect("peeked");
                self.set_now(time);
                if time.is_end() {
                    // the arrival of the next request is what reached the end
                    return Err(FtlError::EndOfTime {
                        request: self.measurement.measure.submitted + 1,
                    });
                }
                Ok(Some(true))
            }
            _ => self.step_chip().map(|()| Some(false)),
        }
    }

    /// Processes the controller's or a timed stage's next event if it comes before the host's
    /// and the chip's (ties go to those); whether it did.
    #[inline(never)]
    fn step_other_source(
        &mut self,
        host: Option<nandlab_core::SimTime>,
        chip: Option<nandlab_core::SimTime>,
    ) -> FtlResult<bool> {
        let controller = self
            .stages
            .controller
            .as_ref()
            .and_then(|c| c.events.peek_time());
        let stage = if self.front.is_timed() {
            self.front.next_event()
        } else {
            None
        };
        let times = [host, chip, controller, stage.map(|(_, t)| t)];
        match earliest(&times) {
            Some(CONTROLLER_SOURCE) => self.step_controller().map(|()| true),
            Some(STAGE_SOURCE) => {
                let (index, _) = stage.expect("a stage's time was earliest");
                self.step_stage(index).map(|()| true)
            }
            _ => Ok(false),
        }
    }

    /// The time before which the chip model may run events back to back: the next host or
    /// front-end event.
    pub(super) fn next_other_event(&self) -> Option<nandlab_core::SimTime> {
        let mut next = self.host.events.peek_time();
        let mut fold = |t: Option<nandlab_core::SimTime>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        if let Some(c) = &self.stages.controller {
            fold(c.events.peek_time());
        }
        if self.front.is_timed() {
            fold(self.front.next_event().map(|(_, t)| t));
        }
        next
    }

    /// Processes the controller's next event (a processed command, a finished DRAM transfer
    /// or ECC decode, read data sent).
    fn step_controller(&mut self) -> FtlResult<()> {
        let c = self
            .stages
            .controller
            .as_mut()
            .expect("controller event peeked");
        let (time, event) = c.events.pop().expect("controller event peeked");
        self.set_now(time);
        if time.is_end() {
            return Err(self.end_of_time());
        }
        match event {
            CtrlEvent::Decide(slot) => self.decide_processed(slot),
            CtrlEvent::StepDone(slot) => {
                self.op_done(slot);
                Ok(())
            }
            CtrlEvent::Complete(slot) => {
                self.finish(slot);
                Ok(())
            }
        }
    }

    /// Processes front-end stage `index`'s next device event: the requests it completed
    /// progress, and pages it released are written (tracked by no request).
    fn step_stage(&mut self, index: usize) -> FtlResult<()> {
        let mut done = std::mem::take(&mut self.host.stage_done);
        let mut out = std::mem::take(&mut self.front.out);
        let time = self
            .front
            .process_stage(
                index,
                self.now,
                &mut done,
                &mut out,
                &mut self.flash.counters,
            )
            .expect("stage event peeked");
        self.set_now(time);
        let mut result = if time.is_end() {
            Err(self.end_of_time())
        } else {
            self.write_out(&out, Tag::Internal)
                .and_then(|()| self.submit_pending())
        };
        for tag in done.drain(..) {
            if result.is_err() {
                continue;
            }
            match Tag::decode(tag) {
                Tag::Host(slot) => self.op_done(slot),
                _ => {
                    result = Err(FtlError::Stalled {
                        message: format!(
                            "front-end stage {index} completed a non-host tag {tag:#x}"
                        ),
                    });
                }
            }
        }
        self.front.out = out;
        self.host.stage_done = done;
        result
    }

    /// Time arithmetic saturates at the end of simulated time: reaching it stops the run.
    pub(super) fn end_of_time(&self) -> FtlError {
        FtlError::EndOfTime {
            request: self.measurement.measure.submitted.max(1),
        }
    }

    pub(super) fn set_now(&mut self, time: nandlab_core::SimTime) {
        debug_assert!(time >= self.now);
        self.now = time;
        self.flash.now = time;
    }

    pub(super) fn on_completion(
        &mut self,
        tag: Tag,
        kind: OpKind,
        read_retries: u32,
    ) -> FtlResult<()> {
        match tag {
            Tag::Host(slot) => {
                // a page read for the host is ECC-decoded before the request goes on
                let decoded = match &mut self.stages.controller {
                    Some(c) if kind == OpKind::Read => c.ecc(self.now, read_retries),
                    _ => None,
                };
                match decoded {
                    Some(t) => {
                        let c = self.stages.controller.as_mut().expect("decoded by it");
                        c.events.schedule(t, CtrlEvent::StepDone(slot));
                    }
                    None => self.op_done(slot),
                }
            }
            Tag::Deferred(id) => {
                debug_assert_eq!(kind, OpKind::Read);
                self.finish_deferred(id)?;
            }
            Tag::Gc(job) => self.flash.job_op_completed(job, self.now),
            Tag::Internal => {}
            Tag::Multi(_) => unreachable!("merged ops complete member by member"),
        }
        Ok(())
    }

    /// One op (or deferred step) of request `slot` finished.
    pub(super) fn op_done(&mut self, slot: u32) {
        let s = &mut self.host.requests.slots[slot as usize];
        debug_assert!(s.in_use && s.outstanding > 0);
        s.outstanding -= 1;
        if s.outstanding == 0 {
            self.complete(slot);
        }
    }

    pub(super) fn complete(&mut self, slot: u32) {
        let s = &self.host.requests.slots[slot as usize];
        // a read's data, a SiM search's bitmaps or a gather's chunks cross the host link
        if matches!(s.op, HostOp::Read | HostOp::Search | HostOp::Gather)
            && let Some(c) = &mut self.stages.controller
            && let Some(t) = c.read_out(self.now, s.size_bytes)
        {
            // the data crosses the host link first
            c.events.schedule(t, CtrlEvent::Complete(slot));
            return;
        }
        self.finish(slot);
    }

    /// Request `slot` completes to the host now.
    fn finish(&mut self, slot: u32) {
        let failed = self.take_failure(slot);
        let s = &mut self.host.requests.slots[slot as usize];
        let latency = self.now - s.start;
        let op = s.op;
        if self.measurement.series.due(self.now) {
            let state = self.series_state();
            self.measurement.series.close_until(self.now, state);
        }
        self.measurement.series.record(op, latency);
        let s = &mut self.host.requests.slots[slot as usize];
        let m = self.measurement.measure.op_mut(s.op);
        m.requests += 1;
        m.bytes += s.size_bytes;
        m.latency.record(latency);
        self.measurement.measure.completed += 1;
        self.measurement.measure.last_completion = self.now;
        if s.op.is_search() {
            // a SiM command of `Ssd::run_search`: the batch scheduler hands its result out;
            // an open-loop one (`Ssd::submit_search`, `Ssd::execute_search`): its completion
            let data = std::mem::take(&mut s.data);
            if let Some(data) = self.search_finished(slot, data)
                && let Some(open) = self.host.open_loop.as_deref_mut()
            {
                open.finished(slot, self.now, data, failed);
            }
        } else if let Some(open) = self.host.open_loop.as_deref_mut() {
            // a read's bytes go to the host; a write's stay in the slot (its capacity is
            // reused by the next request: no allocation per partial-page write)
            let data = if s.op == HostOp::Read {
                std::mem::take(&mut s.data)
            } else {
                Vec::new()
            };
            open.finished(slot, self.now, data, failed);
        }
        self.host.requests.release(slot);
    }
}
