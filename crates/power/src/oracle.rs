//! The crash oracle: what the host did (per LPA, its writes and trims, which writes completed
//! and which a completed flush covered), and the check of a recovered device against the
//! durability contract (NVMe semantics, docs/power.md):
//!
//! * a write is **durable** once it completed and a Flush admitted after its completion
//!   completed, or once it completed on a device with power-loss protection;
//! * after recovery each LPA holds its last durable write or a write issued after it — never
//!   an older write (**resurrected**), never nothing when a durable write exists (**lost**),
//!   never bytes that no write to it carried (**corrupted**: torn, damaged, another LPA's);
//! * until a trim is durable, the recovery scan cannot see it (trims are not in the OOB), so
//!   after a trim, until a later write of the LPA is durable, the LPA may read as zeros or as
//!   any write issued to it since its last durable trim (a stale page may come back);
//! * a **trim is durable** once it completed and a Flush admitted after its completion
//!   completed (the device logs trims in its metadata area on a Flush), or once a map
//!   checkpoint taken after it has committed ([`Oracle::check_with_trim_log`]): the LPA then
//!   reads as zeros or as a write issued after the trim, never an older one.
//!
//! Requests may overlap (queue depth > 1): the device decides them in admission order, so a
//! write issued later holds a higher version and a higher sequence number; a Flush covers the
//! writes and trims that completed before it was admitted ([`FlushCover`]).

use super::payload::{Decoded, decode};
use nandlab_core::Lpa;
use serde::Serialize;

/// What happened to one LPA.
#[derive(Clone, Debug, Default)]
struct LpaHistory {
    /// Versions written to it, in issue order.
    versions: Vec<u64>,
    /// Version of its last durable write (0: none).
    durable: u64,
    /// The newest version issued to it when its last trim was issued (`Some(0)`: trimmed
    /// before any write; `None`: never trimmed). A trim issued after the durable write's issue
    /// (mark >= durable) frees the LPA from the contract until a later write is durable.
    trim_mark: Option<u64>,
    /// When its last trim completed (simulated ps; `None`: not completed, or never trimmed).
    trim_done_ps: Option<u64>,
    /// The mark of its newest trim made durable by a completed Flush (`None`: none): no write
    /// with a version at most this may come back.
    durable_trim: Option<u64>,
}

impl LpaHistory {
    /// A trim came after its last durable write was issued (the write may have been made
    /// durable by a flush that completed after the trim: the trim still supersedes it).
    fn trimmed_since_durable(&self) -> bool {
        self.trim_mark.is_some_and(|mark| mark >= self.durable)
    }
}

/// Violations found, by class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Violations {
    /// A durable write's LPA reads as nothing.
    pub lost: u64,
    /// An LPA reads as a write older than its last durable one.
    pub resurrected: u64,
    /// An LPA reads as bytes no write to it carried.
    pub corrupted: u64,
    /// Up to [`EXAMPLES_MAX`] of them, one line each.
    pub examples: Vec<String>,
}

/// Examples kept per check.
pub const EXAMPLES_MAX: usize = 5;

impl Violations {
    /// Total violations.
    pub fn total(&self) -> u64 {
        self.lost + self.resurrected + self.corrupted
    }

    fn note(&mut self, line: String) {
        if self.examples.len() < EXAMPLES_MAX {
            self.examples.push(line);
        }
    }

    /// Adds `other`'s counts (and examples while there is room).
    pub fn add(&mut self, other: &Violations) {
        self.lost += other.lost;
        self.resurrected += other.resurrected;
        self.corrupted += other.corrupted;
        for e in &other.examples {
            self.note(e.clone());
        }
    }
}

/// What a Flush covers: the completed writes and trims when it was admitted (counts of the
/// oracle's completion lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushCover {
    writes: usize,
    trims: usize,
}

/// The host's view of a crash run.
#[derive(Clone, Debug)]
pub struct Oracle {
    lpas: Vec<LpaHistory>,
    /// Completed writes, in completion order: (lpa, version); the first `writes_flushed` are
    /// covered by a completed flush.
    completed_writes: Vec<(Lpa, u64)>,
    writes_flushed: usize,
    /// Completed trims, in completion order: (lpa, mark); the first `trims_flushed` are
    /// covered by a completed flush.
    completed_trims: Vec<(Lpa, u64)>,
    trims_flushed: usize,
    plp: bool,
}

impl Oracle {
    /// An oracle for `logical_pages` LPAs; `plp`: the device declares power-loss protection.
    pub fn new(logical_pages: u32, plp: bool) -> Self {
        Oracle {
            lpas: vec![LpaHistory::default(); logical_pages as usize],
            completed_writes: Vec::new(),
            writes_flushed: 0,
            completed_trims: Vec::new(),
            trims_flushed: 0,
            plp,
        }
    }

    /// The oracle of a device just mounted and loaded (a cut–recover–continue cycle): what it
    /// holds now (`read(lpa)`, already checked against the previous cycle's contract) is on
    /// flash, hence the durable baseline of the next cycle.
    pub fn after_mount<'a>(
        logical_pages: u32,
        plp: bool,
        read: impl Fn(Lpa) -> Option<&'a [u8]>,
    ) -> Self {
        let mut o = Oracle::new(logical_pages, plp);
        for (i, h) in o.lpas.iter_mut().enumerate() {
            if let Decoded::Written { lpa, version } = decode(read(Lpa(i as u32)))
                && lpa.0 as usize == i
            {
                h.versions.push(version);
                h.durable = version;
            }
        }
        o
    }

    /// A write of `version` to `lpa` was issued.
    pub fn write_issued(&mut self, lpa: Lpa, version: u64) {
        self.lpas[lpa.index()].versions.push(version);
    }

    /// The write of `version` to `lpa` completed (`fua`: it was written with force unit
    /// access, durable at completion).
    pub fn write_completed(&mut self, lpa: Lpa, version: u64, fua: bool) {
        if self.plp || fua {
            self.make_durable(lpa, version);
        } else {
            self.completed_writes.push((lpa, version));
        }
    }

    /// A trim of `lpa` was issued; its mark (the newest version issued to the LPA so far),
    /// which [`Oracle::trim_completed`] takes back.
    pub fn trim_issued(&mut self, lpa: Lpa) -> u64 {
        let h = &mut self.lpas[lpa.index()];
        let mark = h.versions.last().copied().unwrap_or(0);
        h.trim_mark = Some(mark);
        h.trim_done_ps = None;
        mark
    }

    /// The trim of `lpa` with `mark` completed at `time_ps`.
    pub fn trim_completed(&mut self, lpa: Lpa, mark: u64, time_ps: u64) {
        let h = &mut self.lpas[lpa.index()];
        if h.trim_mark == Some(mark) {
            h.trim_done_ps = Some(time_ps);
        }
        self.completed_trims.push((lpa, mark));
    }

    /// A flush was issued: it covers the writes and trims completed so far.
    pub fn flush_issued(&self) -> FlushCover {
        FlushCover {
            writes: self.completed_writes.len(),
            trims: self.completed_trims.len(),
        }
    }

    /// The flush issued with `cover` completed: what it covers is durable.
    pub fn flush_completed(&mut self, cover: FlushCover) {
        for i in self.writes_flushed..cover.writes {
            let (lpa, version) = self.completed_writes[i];
            self.make_durable(lpa, version);
        }
        self.writes_flushed = self.writes_flushed.max(cover.writes);
        for i in self.trims_flushed..cover.trims {
            let (lpa, mark) = self.completed_trims[i];
            let h = &mut self.lpas[lpa.index()];
            h.durable_trim = Some(h.durable_trim.map_or(mark, |m| m.max(mark)));
        }
        self.trims_flushed = self.trims_flushed.max(cover.trims);
    }

    fn make_durable(&mut self, lpa: Lpa, version: u64) {
        let h = &mut self.lpas[lpa.index()];
        h.durable = h.durable.max(version);
    }

    /// Durable writes (LPAs with one).
    pub fn durable_lpas(&self) -> u64 {
        self.lpas.iter().filter(|h| h.durable > 0).count() as u64
    }

    /// Checks what the recovered device returns for every LPA (`read(lpa)`: its bytes, `None`
    /// when unmapped).
    pub fn check<'a>(&self, read: impl Fn(Lpa) -> Option<&'a [u8]>) -> Violations {
        self.check_with_trim_log(read, |_| false)
    }

    /// [`Oracle::check`] on a device that keeps a trim log: a trim that completed at a time
    /// `durable_trim(time_ps)` says the log had recorded durably binds the LPA (it reads as
    /// nothing or as a write issued after the trim; an older write is resurrected).
    pub fn check_with_trim_log<'a>(
        &self,
        read: impl Fn(Lpa) -> Option<&'a [u8]>,
        durable_trim: impl Fn(u64) -> bool,
    ) -> Violations {
        let mut v = Violations::default();
        for (i, h) in self.lpas.iter().enumerate() {
            let lpa = Lpa(i as u32);
            let trimmed = h.trimmed_since_durable();
            // the version the LPA may not go below: its durable trims' marks (by a flush, or
            // by the device's checkpointed trim log)
            let checkpointed = match (trimmed, h.trim_done_ps, h.trim_mark) {
                (true, Some(t), Some(mark)) if durable_trim(t) => Some(mark),
                _ => None,
            };
            let trim_floor = checkpointed.max(h.durable_trim);
            let nothing_ok = h.durable == 0 || trimmed;
            match decode(read(lpa)) {
                Decoded::Zeros => {
                    if !nothing_ok {
                        v.lost += 1;
                        v.note(format!(
                            "lost: lpa {} reads as nothing; version {} was durable",
                            lpa.0, h.durable
                        ));
                    }
                }
                Decoded::Garbage => {
                    v.corrupted += 1;
                    v.note(format!("corrupted: lpa {} reads as garbage", lpa.0));
                }
                Decoded::Written {
                    lpa: holder,
                    version,
                } => {
                    if holder != lpa || !h.versions.contains(&version) {
                        v.corrupted += 1;
                        v.note(format!(
                            "corrupted: lpa {} holds version {version} of lpa {}",
                            lpa.0, holder.0
                        ));
                    } else if version < h.durable && !trimmed {
                        v.resurrected += 1;
                        v.note(format!(
                            "resurrected: lpa {} holds version {version}, older than durable {}",
                            lpa.0, h.durable
                        ));
                    } else if trim_floor.is_some_and(|mark| version <= mark) {
                        v.resurrected += 1;
                        v.note(format!(
                            "resurrected: lpa {} holds version {version}, trimmed durably after it",
                            lpa.0
                        ));
                    }
                }
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::super::payload::encode;
    use super::*;

    /// The contract, one case per class: a flushed write must survive; an unflushed one may be
    /// lost; an older write after a newer durable one is resurrected; another LPA's page is
    /// corrupted; a trimmed LPA may read as nothing.
    #[test]
    fn classes_follow_the_contract() {
        let mut o = Oracle::new(4, false);
        for (lpa, version) in [(0, 1), (1, 2), (0, 3)] {
            o.write_issued(Lpa(lpa), version);
            o.write_completed(Lpa(lpa), version, false);
        }
        let cover = o.flush_issued();
        o.flush_completed(cover);
        o.write_issued(Lpa(2), 4);
        o.write_completed(Lpa(2), 4, false);
        o.trim_issued(Lpa(1));
        let pages = [encode(Lpa(0), 1, 64), encode(Lpa(3), 9, 64)];
        // lpa 0 -> version 1 (older than durable 3), lpa 1 -> nothing (trimmed),
        // lpa 2 -> nothing (not durable), lpa 3 -> another lpa's page
        let v = o.check(|lpa| match lpa.0 {
            0 => Some(&pages[0][..]),
            3 => Some(&pages[1][..]),
            _ => None,
        });
        assert_eq!((v.lost, v.resurrected, v.corrupted), (0, 1, 1), "{v:?}");
        let v = o.check(|_| None);
        assert_eq!(v.lost, 1, "lpa 0's durable write lost: {v:?}");
        let mut plp = Oracle::new(1, true);
        plp.write_issued(Lpa(0), 1);
        plp.write_completed(Lpa(0), 1, false);
        assert_eq!(plp.check(|_| None).lost, 1, "completed is durable with PLP");
        // a write completed, then trimmed, then covered by a flush: the trim still wins
        let mut o = Oracle::new(1, false);
        o.write_issued(Lpa(0), 1);
        o.write_completed(Lpa(0), 1, false);
        let cover = o.flush_issued();
        let mark = o.trim_issued(Lpa(0));
        o.flush_completed(cover);
        assert_eq!(
            o.check(|_| None).total(),
            0,
            "the trim came after the write"
        );
        // a trim the device's trim log made durable binds the LPA: version 1 is resurrected
        o.trim_completed(Lpa(0), mark, 10);
        let page = encode(Lpa(0), 1, 64);
        assert_eq!(o.check(|_| Some(&page[..])).total(), 0, "no trim log");
        let v = o.check_with_trim_log(|_| Some(&page[..]), |t| t < 20);
        assert_eq!(v.resurrected, 1, "{v:?}");
        assert_eq!(o.check_with_trim_log(|_| None, |t| t < 20).total(), 0);
        assert_eq!(
            o.check_with_trim_log(|_| Some(&page[..]), |t| t < 5)
                .total(),
            0
        );
        o.write_issued(Lpa(0), 2);
        let later = encode(Lpa(0), 2, 64);
        assert_eq!(
            o.check_with_trim_log(|_| Some(&later[..]), |_| true)
                .total(),
            0
        );
        o.write_completed(Lpa(0), 2, false);
        let cover = o.flush_issued();
        o.flush_completed(cover);
        assert_eq!(
            o.check(|_| None).lost,
            1,
            "a later durable write is bound again"
        );
    }

    /// A trim followed by a completed Flush is durable: the LPA may read as nothing or a later
    /// write, never the trimmed one; a Flush admitted before the trim completed does not cover
    /// it; overlapping flushes cover what completed before each was admitted.
    #[test]
    fn a_flushed_trim_is_durable() {
        let mut o = Oracle::new(1, false);
        o.write_issued(Lpa(0), 1);
        o.write_completed(Lpa(0), 1, false);
        let early = o.flush_issued();
        let mark = o.trim_issued(Lpa(0));
        o.trim_completed(Lpa(0), mark, 5);
        let old = encode(Lpa(0), 1, 64);
        o.flush_completed(early);
        assert_eq!(o.check(|_| Some(&old[..])).total(), 0, "not covered yet");
        let late = o.flush_issued();
        o.write_issued(Lpa(0), 2);
        o.flush_completed(late);
        let v = o.check(|_| Some(&old[..]));
        assert_eq!(v.resurrected, 1, "{v:?}");
        assert_eq!(o.check(|_| None).total(), 0);
        let newer = encode(Lpa(0), 2, 64);
        assert_eq!(
            o.check(|_| Some(&newer[..])).total(),
            0,
            "a write issued after the trim"
        );
        // queue depth > 1: two flushes in flight, the later one completes first
        let mut o = Oracle::new(1, false);
        o.write_issued(Lpa(0), 1);
        o.write_completed(Lpa(0), 1, false);
        let a = o.flush_issued();
        o.write_issued(Lpa(0), 2);
        o.write_completed(Lpa(0), 2, false);
        let b = o.flush_issued();
        o.flush_completed(b);
        o.flush_completed(a);
        let one = encode(Lpa(0), 1, 64);
        assert_eq!(o.check(|_| Some(&one[..])).resurrected, 1);
    }
}
