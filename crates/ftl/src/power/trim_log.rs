//! The trim log (issue 14, NVMe semantics): a TRIM becomes durable once a Flush admitted after
//! it has completed. Trims are not in the pages' OOB, so a mount that rebuilds the map from OOB
//! alone brings a trimmed LPA's older page back; the device therefore logs its trims in the
//! metadata area.
//!
//! Each trim decided is noted (LPA, the write sequence current at the trim); a Flush (or a FUA
//! write, which does what a Flush does) with trims not yet logged writes one **record** holding
//! them (12 bytes per entry: LPA 4, sequence 8) and completes only after the record's pages are
//! programmed; a Flush with nothing new to log but a record still being written waits for that
//! record. Records are written one after another (the metadata area is one log), each page
//! taking the slowest program plus the page's transfer, as the map checkpoints' pages do (the
//! area is outside the data blocks and does not contend with them).
//!
//! A record counts once its pages are written (a cut before loses it: its flush had not
//! completed, so the contract does not need it). The mount reads every committed record not
//! covered by the newest committed map checkpoint (whose trim log holds every trim decided
//! before its snapshot; a checkpoint commit truncates the log) and ignores every page of a
//! logged LPA whose sequence number is at most the logged one — both pages it scans and the
//! checkpoint's own entries.
//!
//! [`TrimLogMode::Skipped`] is the `trim-log-skipped` mutation: a Flush forgets the trims it
//! should log (a firmware that keeps deallocations in DRAM only); the oracle must catch it.

use crate::address::Lpa;

/// Bytes of one trim-log entry (LPA 4, sequence number 8).
pub const TRIM_ENTRY_BYTES: u64 = 12;

/// Whether a Flush logs the trims decided before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TrimLogMode {
    /// A Flush writes a record of the trims not yet logged and completes after it (correct).
    #[default]
    OnFlush,
    /// Broken (a mutation): trims are never logged; a Flush completes without them.
    Skipped,
}

/// One record of the trim log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrimRecord {
    /// (LPA, the write sequence current at its trim): pages of the LPA with a sequence number
    /// at most this are older than the trim.
    pub entries: Vec<(Lpa, u64)>,
    /// The number of trims decided (since the trace started) up to this record's newest entry:
    /// a checkpoint whose snapshot saw at least this many covers the record.
    pub trims_through: u64,
    /// Metadata pages it occupies.
    pub pages: u64,
    /// Simulated time its write started (ps).
    pub started_ps: u64,
    /// Simulated time its write ended (ps): it counts from then.
    pub written_ps: u64,
}

impl TrimRecord {
    /// Metadata pages a record of `entries` entries fills.
    pub fn pages_for(entries: usize, page_size_bytes: u32) -> u64 {
        (entries as u64 * TRIM_ENTRY_BYTES)
            .div_ceil(u64::from(page_size_bytes))
            .max(1)
    }
}

/// A record being written, and the flush requests (request slots) that wait for it.
#[derive(Clone, Debug)]
pub(crate) struct PendingTrimRecord {
    pub record: TrimRecord,
    pub waiters: Vec<u32>,
}

/// What the device has noted of its trims under the power trace.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrimLog {
    pub mode: TrimLogMode,
    /// Trims decided and not yet in a record: (LPA, sequence).
    pub unlogged: Vec<(Lpa, u64)>,
    /// Trims decided since the trace started.
    pub trims_decided: u64,
    /// Records being written, oldest first (written one after another).
    pub pending: std::collections::VecDeque<PendingTrimRecord>,
    /// Records and pages written (committed) since the trace started.
    pub records_written: u64,
    pub pages_written: u64,
}

impl TrimLog {
    /// A trim of `lpa` was decided with the write sequence at `sequence`.
    pub fn note(&mut self, lpa: Lpa, sequence: u64) {
        self.trims_decided += 1;
        self.unlogged.push((lpa, sequence));
    }

    /// A Flush was decided at `now_ps` for request `slot`: starts a record of the unlogged
    /// trims (each page taking `page_ps`), or joins the newest record being written. Whether
    /// the flush must wait.
    pub fn on_flush(&mut self, slot: u32, now_ps: u64, page_ps: u64, page_size: u32) -> bool {
        if self.mode == TrimLogMode::Skipped {
            self.unlogged.clear();
            return false;
        }
        if self.unlogged.is_empty() {
            return match self.pending.back_mut() {
                Some(last) => {
                    last.waiters.push(slot);
                    true
                }
                None => false,
            };
        }
        let entries = std::mem::take(&mut self.unlogged);
        let pages = TrimRecord::pages_for(entries.len(), page_size);
        let start = self
            .pending
            .back()
            .map_or(now_ps, |p| p.record.written_ps.max(now_ps));
        self.pending.push_back(PendingTrimRecord {
            record: TrimRecord {
                entries,
                trims_through: self.trims_decided,
                pages,
                started_ps: start,
                written_ps: start + pages * page_ps,
            },
            waiters: vec![slot],
        });
        true
    }

    /// When the oldest record being written is done.
    pub fn next_done_ps(&self) -> Option<u64> {
        self.pending.front().map(|p| p.record.written_ps)
    }

    /// Takes the oldest record if it is written by `now_ps`.
    pub fn take_done(&mut self, now_ps: u64) -> Option<PendingTrimRecord> {
        if self.next_done_ps()? > now_ps {
            return None;
        }
        let done = self.pending.pop_front()?;
        self.records_written += 1;
        self.pages_written += done.record.pages;
        Some(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flush with trims starts a record; one without joins the record being written; records
    /// are written one after another; the mutation logs nothing and waits for nothing.
    #[test]
    fn flushes_log_trims_and_wait_for_their_record() {
        let mut log = TrimLog::default();
        assert!(
            !log.on_flush(0, 0, 10, 512),
            "nothing to log, nothing pending"
        );
        log.note(Lpa(3), 7);
        log.note(Lpa(4), 9);
        assert!(log.on_flush(1, 100, 10, 512));
        assert!(
            log.on_flush(2, 105, 10, 512),
            "joins the record being written"
        );
        log.note(Lpa(5), 11);
        assert!(log.on_flush(3, 106, 10, 512));
        assert_eq!(log.next_done_ps(), Some(110));
        let first = log.take_done(110).unwrap();
        assert_eq!(first.waiters, vec![1, 2]);
        assert_eq!(first.record.entries, vec![(Lpa(3), 7), (Lpa(4), 9)]);
        assert_eq!(first.record.trims_through, 2);
        assert!(
            log.take_done(115).is_none(),
            "the second starts when the first ends"
        );
        assert_eq!(log.take_done(120).unwrap().record.started_ps, 110);
        assert_eq!((log.records_written, log.pages_written), (2, 2));
        assert_eq!(TrimRecord::pages_for(43, 512), 2);
        let mut broken = TrimLog {
            mode: TrimLogMode::Skipped,
            ..TrimLog::default()
        };
        broken.note(Lpa(1), 1);
        assert!(!broken.on_flush(0, 0, 10, 512));
        assert!(broken.pending.is_empty() && broken.unlogged.is_empty());
    }
}
