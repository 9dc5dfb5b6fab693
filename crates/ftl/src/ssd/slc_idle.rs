//! Idle-time folding of the SLC cache (`ftl.slc_idle_fold_us`, SPEC C3): once the host has
//! been idle that long (nothing in flight, its last request completed that long ago) and the
//! device has nothing else to do before the next host arrival, the cache folds one page at a
//! time (an SLC read and a TLC/QLC program through the mapping; an emptied block is erased).
//! Each step starts only while the device idles, so a host request that arrives waits for at
//! most the one page move (or erase) already on its die: host reads and writes go first.

use super::Ssd;
use crate::error::FtlResult;
use crate::flash::emit::Tag;
use crate::frontend::LogAreaOp;
use crate::mapping::Mapping;

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

    /// A front-end stage's op on its flash area. The SLC cache's pages carry their owner's LPA
    /// and host sequence number (a mount after a cut reads them back), and its erases wait for
    /// the newest copies of what the block held (`flash/slc_area.rs`).
    pub(super) fn log_area_op(&mut self, op: LogAreaOp, tag: Tag) -> FtlResult<()> {
        match op {
            LogAreaOp::SlcProgram { index, page } => {
                let content = self
                    .front
                    .slc_cache()
                    .and_then(|c| c.slot_page(index, page));
                self.flash.slc_program(index, page, content, tag)
            }
            LogAreaOp::SlcErase { index, .. } => {
                let cache = self.front.slc_cache();
                let mapper = &self.mapper;
                self.flash.slc_erase(
                    index,
                    tag,
                    |lpa| cache.and_then(|c| c.slot_of(lpa)),
                    |lpa| mapper.locate(lpa),
                )?;
                // its waits may have padded a frontier block to its end (paired-page padding)
                if let crate::mapping::Mapper::Page(p) = &mut self.mapper {
                    p.map.drop_closed_frontiers(&self.flash);
                }
                Ok(())
            }
            _ => self.flash.log_area_op(op, tag),
        }
    }
}
