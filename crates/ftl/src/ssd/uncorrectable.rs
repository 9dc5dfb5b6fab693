//! Uncorrectable reads (issue 34 item 4): with the raw-bit-error model on
//! (`[nand.reliability]`), a page read whose errors exceed the ECC's correction capability
//! after every read-retry is reported by the chip model (`Completion::uncorrectable`). The
//! request it belongs to (a host read, or the write whose read-modify-write read it) completes
//! with an error status and without data: `Ssd::execute` returns
//! [`crate::FtlError::Uncorrectable`], an open-loop completion carries `Err`. Counted in the
//! report's `ftl` counters (`uncorrectable_host_reads`, `uncorrectable_internal_reads`).
//! Off (no failed read), completing a request pays one empty-`Vec` test.

use super::Ssd;
use crate::flash::emit::Tag;

impl Ssd {
    /// A read op of `tag` failed ECC: marks its request failed (or counts an internal read).
    #[cold]
    #[inline(never)]
    pub(super) fn note_uncorrectable(&mut self, tag: Tag) {
        let slot = match tag {
            Tag::Host(slot) => slot,
            Tag::Deferred(id) => self.host.deferred.entries[id as usize].request,
            _ => {
                self.flash.counters.uncorrectable_internal_reads += 1;
                return;
            }
        };
        self.flash.counters.uncorrectable_host_reads += 1;
        if !self.host.failed_slots.contains(&slot) {
            self.host.failed_slots.push(slot);
        }
    }

    /// Whether request `slot`, completing now, had an uncorrectable read: then its mark is
    /// taken, its bytes dropped, and the error message returned.
    #[inline]
    pub(super) fn take_failure(&mut self, slot: u32) -> Option<String> {
        if self.host.failed_slots.is_empty() {
            return None;
        }
        self.take_failure_cold(slot)
    }

    #[cold]
    #[inline(never)]
    fn take_failure_cold(&mut self, slot: u32) -> Option<String> {
        let at = self.host.failed_slots.iter().position(|&s| s == slot)?;
        self.host.failed_slots.swap_remove(at);
        let s = &mut self.host.requests.slots[slot as usize];
        s.data.clear();
        let retries = self.chip.nand.config().reliability.read_retry_max;
        Some(format!(
            "{:?} of bytes {}..{}: a page failed ECC after {retries} read-retries",
            s.op,
            s.offset_bytes,
            s.offset_bytes + s.size_bytes
        ))
    }
}
