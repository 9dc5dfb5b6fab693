//! Idle-time folding of the SLC cache (`ftl.slc_idle_fold_us`, SPEC C3): once the host has
//! been idle that long (nothing in flight, its last request completed that long ago) and the
//! device has nothing else to do before the next host arrival, the cache folds one page at a
//! time (an SLC read and a TLC/QLC program through the mapping; an emptied block is erased).
//! Each step starts only while the device idles, so a host request that arrives waits for at
//! most the one page move (or erase) already on its die: host reads and writes go first.

use super::Ssd;
use crate::error::FtlResult;
use crate::flash::emit::Tag;

impl Ssd {
    /// One idle folding step, at the end of the host's idle time if that is before the next
    /// host arrival; whether it started any flash work.
    #[cold]
    pub(super) fn slc_idle_fold(&mut self) -> FtlResult<bool> {
        let Some(idle) = self.stages.slc_idle_fold else {
            return Ok(false);
        };
        if self.host.requests.in_flight() > 0 || self.front.is_timed() {
            return Ok(false);
        }
        let at = self
            .now
            .max(self.measurement.measure.last_completion + idle);
        if self.host.events.peek_time().is_none_or(|h| h <= at) {
            return Ok(false);
        }
        let mut out = std::mem::take(&mut self.front.out);
        out.clear();
        let mut result = Ok(false);
        if self.front.fold_idle(&mut out) {
            self.now = at;
            result = self.write_out(&out, Tag::Internal).map(|()| true);
        }
        self.front.out = out;
        if result? {
            self.submit_pending()?;
            return Ok(true);
        }
        Ok(false)
    }
}
