//! The timed synchronous mode: a caller that runs a chain of dependent accesses now (a finder
//! lookup, a log-buffer call) brackets it with [`PcmDevice::begin_call`] and
//! [`PcmDevice::end_call`]. Inside the bracket each synchronous access starts when the previous
//! one of the call ended and occupies every bank it touches from
//! `max(start, bank_free_at[bank])` for that bank's share of its work (the same bank clocks the
//! event-driven requests use), so calls made at overlapping times contend per bank: two calls
//! on different banks overlap, on the same bank they serialise. Hashing between accesses
//! ([`PcmDevice::compute`]) occupies the controller's one hashing unit. Outside a bracket
//! accesses occupy no bank, as before.

use super::PcmDevice;
use nandlab_core::SimTime;

/// The clock of the call in progress.
#[derive(Clone, Copy, Debug)]
pub(super) struct CallClock {
    /// When the call's next access may start (the previous access's end).
    pub at: SimTime,
}

impl PcmDevice {
    /// Starts a timed call at `now`: the synchronous accesses until [`PcmDevice::end_call`]
    /// occupy the banks one after another from `now`.
    pub fn begin_call(&mut self, now: SimTime) {
        debug_assert!(self.call.is_none(), "a timed call is already open");
        self.call = Some(CallClock { at: now });
    }

    /// Ends the timed call; returns when its last access ended (its start if it made none).
    pub fn end_call(&mut self) -> SimTime {
        self.call.take().map_or(SimTime::ZERO, |c| c.at)
    }

    /// Whether a timed call is open.
    pub fn in_call(&self) -> bool {
        self.call.is_some()
    }

    /// Work of the open call on the controller's one hashing unit, which uses no PCM bank:
    /// it starts when the call's previous access ended and the unit is free, and the call's
    /// next access starts when it ends. No effect outside a call.
    pub fn compute(&mut self, latency: SimTime) {
        if let Some(call) = &mut self.call
            && latency > SimTime::ZERO
        {
            let end = call.at.max(self.compute_free_at) + latency;
            self.compute_free_at = end;
            call.at = end;
        }
    }

    /// When bank `bank` is next free (after the accesses occupying it so far).
    pub fn bank_free_at(&self, bank: usize) -> SimTime {
        self.bank_free_at[bank]
    }

    /// In a timed call: occupies the banks with the access just applied (`bank_work_ps`) from
    /// the call's clock on and moves the clock to the access's end.
    pub(super) fn occupy_call_banks(&mut self) {
        let Some(call) = &mut self.call else {
            return;
        };
        let start = call.at;
        let mut end = start;
        for (bank, &work_ps) in self.bank_work_ps.iter().enumerate() {
            if work_ps == 0 {
                continue;
            }
            let work = SimTime::from_ps(work_ps);
            let bank_end = self.bank_free_at[bank].max(start) + work;
            self.bank_free_at[bank] = bank_end;
            self.stats.bank_busy[bank] += work;
            end = end.max(bank_end);
        }
        call.at = end;
    }
}
