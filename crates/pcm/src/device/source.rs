//! The device as an event source: requests are submitted at a time, occupy the banks they
//! touch in first-come-first-served order, and complete when their last bank is done. Each
//! bank's share of a request is known at submission (the data effect happens then), so a
//! request needs exactly one event: its completion. Completion slots are recycled, so a
//! steady-state simulation allocates nothing per request.

use super::{AccessCost, PcmAddr, PcmDevice};
use crate::error::PcmResult;
use nandlab_core::{EventSource, SimTime};
use serde::Serialize;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PcmOpKind {
    /// A read (or a charged read).
    Read,
    /// A write.
    Write,
}

/// A finished request.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PcmCompletion {
    /// The caller's tag, returned unchanged.
    pub tag: u64,
    /// Read or write.
    pub kind: PcmOpKind,
    /// When it was submitted.
    pub submitted: SimTime,
    /// When it completed (after waiting for its banks).
    pub completed: SimTime,
    /// Its cost; `cost.latency` is the idle-device latency, `completed - submitted` the real one.
    pub cost: AccessCost,
}

impl PcmDevice {
    /// Submits a read of `out.len()` bytes at `addr` at time `now`: the bytes are copied out
    /// now, the completion comes when the banks have done the work.
    pub fn submit_read(
        &mut self,
        now: SimTime,
        tag: u64,
        addr: PcmAddr,
        out: &mut [u8],
    ) -> PcmResult<()> {
        self.enter(now)?;
        let cost = self.read(addr, out)?;
        self.schedule(tag, PcmOpKind::Read, cost);
        Ok(())
    }

    /// Submits a read of `len_bytes` at `addr` whose bytes the caller does not need.
    pub fn submit_charge_read(
        &mut self,
        now: SimTime,
        tag: u64,
        addr: PcmAddr,
        len_bytes: u64,
    ) -> PcmResult<()> {
        self.enter(now)?;
        let cost = self.charge_read(addr, len_bytes)?;
        self.schedule(tag, PcmOpKind::Read, cost);
        Ok(())
    }

    /// Submits a write of `bytes` at `addr` at time `now` (the cells change now).
    pub fn submit_write(
        &mut self,
        now: SimTime,
        tag: u64,
        addr: PcmAddr,
        bytes: &[u8],
    ) -> PcmResult<()> {
        self.enter(now)?;
        let cost = self.write(addr, bytes)?;
        self.schedule(tag, PcmOpKind::Write, cost);
        Ok(())
    }

    /// Requests submitted and not yet completed.
    pub fn requests_in_flight(&self) -> usize {
        self.queue.len()
    }

    /// The device's current time (last submission or processed event).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Occupies the banks with the work in `bank_work_ps` and schedules the completion.
    fn schedule(&mut self, tag: u64, kind: PcmOpKind, cost: AccessCost) {
        let now = self.now;
        let mut done = now;
        for (bank, &work_ps) in self.bank_work_ps.iter().enumerate() {
            if work_ps == 0 {
                continue;
            }
            let work = SimTime::from_ps(work_ps);
            let end = self.bank_free_at[bank].max(now) + work;
            self.bank_free_at[bank] = end;
            self.stats.bank_busy[bank] += work;
            done = done.max(end);
        }
        let completion = PcmCompletion {
            tag,
            kind,
            submitted: now,
            completed: done,
            cost,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = completion;
                slot
            }
            None => {
                self.slots.push(completion);
                (self.slots.len() - 1) as u32
            }
        };
        self.queue.schedule(done, slot);
    }
}

impl EventSource for PcmDevice {
    type Completion = PcmCompletion;

    #[inline]
    fn next_event_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    fn process_next(&mut self, completed: &mut Vec<PcmCompletion>) -> Option<SimTime> {
        let (time, slot) = self.queue.pop()?;
        self.now = self.now.max(time);
        let completion = self.slots[slot as usize];
        debug_assert_eq!(completion.completed, time);
        completed.push(completion);
        self.free_slots.push(slot);
        Some(time)
    }
}
