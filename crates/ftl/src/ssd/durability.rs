//! Where each host write stands between the host and the flash (for the power-loss work): the
//! OOB of every physical page, and the state of each logical page's latest write.
//!
//! A write is **decided** when the FTL has taken it (its request is in flight: it has a
//! sequence number, maybe a page and a program queued), **acknowledged** when its request has
//! completed to the host but its data is not on flash yet (it sits in the volatile DRAM write
//! buffer, or its eviction's program has not completed), and **durable** once the program that
//! holds it has completed in the chip model. Without a write buffer a write becomes durable
//! before its request completes; with one, a write is acknowledged first and becomes durable
//! when its eviction (or a flush) is programmed. A GC, merge or wear-leveling copy of a durable
//! page is durable at once (its source is erased only after the copy completes); a copy decided
//! while the source's own program was still running is reported durable only when the copy
//! completes (conservative).

use super::Ssd;
use crate::address::{Lpa, Ppa};
use crate::flash::oob::{PageOob, oob_crc};
use crate::host::HostOp;
use crate::mapping::Mapping;

/// The state of the latest write of a logical page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteState {
    /// Taken by the FTL, not acknowledged to the host yet (its request is in flight).
    Decided,
    /// Acknowledged to the host, not on flash yet (lost by a power cut without protection).
    Acknowledged,
    /// On flash: the program holding it has completed.
    Durable,
}

/// How many logical pages are in each [`WriteState`] (pages never written or trimmed are in
/// none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // one count per state
pub struct WriteStateCounts {
    pub decided: u64,
    pub acknowledged: u64,
    pub durable: u64,
}

impl Ssd {
    /// The state of the latest write of `lpa`; `None` if it was never written (or trimmed
    /// since). Not for the hot path: it scans the requests in flight.
    pub fn write_state(&self, lpa: Lpa) -> Option<WriteState> {
        let page = u64::from(self.layout.page_size_bytes);
        let in_flight = self.host.requests.slots.iter().any(|s| {
            s.in_use
                && s.op == HostOp::Write
                && s.offset_bytes < lpa.offset_bytes(page) + page
                && lpa.offset_bytes(page) < s.offset_bytes + s.size_bytes
        });
        if in_flight {
            return Some(WriteState::Decided);
        }
        if let Some(stage) = self.front.holder(lpa) {
            // held by a front-end stage: durable only if that stage survives a power cut
            return Some(if stage.volatile() {
                WriteState::Acknowledged
            } else {
                WriteState::Durable
            });
        }
        let ppa = self.mapper.locate(lpa)?;
        Some(if self.flash.oob.data_is_durable(ppa) {
            WriteState::Durable
        } else {
            WriteState::Acknowledged
        })
    }

    /// [`Ssd::write_state`] of every logical page, counted.
    pub fn write_state_counts(&self) -> WriteStateCounts {
        let mut counts = WriteStateCounts::default();
        for lpa in (0..self.layout.logical_pages).map(Lpa) {
            match self.write_state(lpa) {
                Some(WriteState::Decided) => counts.decided += 1,
                Some(WriteState::Acknowledged) => counts.acknowledged += 1,
                Some(WriteState::Durable) => counts.durable += 1,
                None => {}
            }
        }
        counts
    }

    /// The OOB record of physical page `ppa` as a recovery scan would read it; `None` for an
    /// erased (never programmed since its erase) page. In `full` payload mode it is read from
    /// the page's spare area (its CRC covers the page's bytes, [`Ssd::physical_page`]); in
    /// `timing-only` mode from the compact table (the CRC covers the LPA and sequence number).
    ///
    /// Panics for a stale page whose bytes were released ([`Ssd::set_release_stale_payloads`]).
    pub fn read_oob(&self, ppa: Ppa) -> Option<PageOob> {
        if u64::from(ppa.0) >= self.physical_pages() {
            return None;
        }
        let (lpa, sequence) = self.flash.oob.get(ppa)?;
        if self.flash.payload.enabled() {
            let stored = self.flash.payload.oob(ppa);
            debug_assert_eq!(
                stored.map(|o| (o.lpa, o.sequence)),
                Some((lpa, sequence)),
                "spare area and OOB table disagree at ppa {ppa}"
            );
            return stored;
        }
        Some(PageOob {
            lpa,
            sequence,
            crc: oob_crc(lpa, sequence, None),
        })
    }

    /// The bytes programmed at `ppa` (`full` payload mode; `None` otherwise or when erased).
    /// Panics for a stale page whose bytes were released ([`Ssd::set_release_stale_payloads`]).
    pub fn physical_page(&self, ppa: Ppa) -> Option<&[u8]> {
        if u64::from(ppa.0) >= self.physical_pages() {
            return None;
        }
        self.flash.payload.read(ppa)
    }

    /// Where the mapping has `lpa` now (`None`: unmapped, or only in the write buffer).
    pub fn locate(&self, lpa: Lpa) -> Option<Ppa> {
        if lpa.0 >= self.layout.logical_pages {
            return None;
        }
        self.mapper.locate(lpa)
    }

    /// The sequence number of the last host write decided (0 before the first).
    pub fn write_sequence(&self) -> u64 {
        self.flash.write_sequence
    }

    /// Erases that waited for programs on other dies that superseded their pages (since the
    /// device was built; `Flash::erase`).
    pub fn erases_held(&self) -> u64 {
        self.sched.counters().erases_held
    }

    /// Dummy pages programmed by paired-page padding (`ftl.paired_page_padding`).
    pub fn paired_padding_pages(&self) -> u64 {
        self.flash.pad_pages
    }

    /// Whether `ppa` is programmed (not erased since) and its program has completed in the
    /// chip model.
    pub fn is_programmed_durably(&self, ppa: Ppa) -> bool {
        u64::from(ppa.0) < self.physical_pages()
            && self.flash.oob.get(ppa).is_some()
            && self.flash.oob.is_durable(ppa)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FtlConfig, SsdConfig};
    use crate::host::HostRequest;

    fn ssd(buffer_pages: u32) -> Ssd {
        let mut c = crate::ssd::test_device::small_slc(1, 2, 4);
        c.ftl.buffer.pages = buffer_pages;
        Ssd::new(c, 1).unwrap()
    }

    /// GC erases wait for the programs on other dies that superseded their pages: with a write
    /// buffer on four dies the wait happens, and no scheduling mode deadlocks or loses an op
    /// (`run` checks every op ran and every job finished).
    #[test]
    fn held_erases_never_deadlock() {
        use crate::config::GcScheduling;
        for (scheduling, multiplane) in [
            (GcScheduling::Blocking, false),
            (GcScheduling::Interleaved, false),
            (GcScheduling::Blocking, true),
            (GcScheduling::Interleaved, true),
        ] {
            let mut c = crate::ssd::test_device::small_slc(4, 2, 8);
            c.ftl.buffer.pages = 16;
            c.ftl.gc.scheduling = scheduling;
            c.ftl.scheduler.multiplane = multiplane;
            c.ftl.host.queue_depth = 8;
            let mut s = Ssd::new(c, 7).unwrap();
            let logical = s.logical_pages();
            let mut rng = nandlab_core::SimRng::stream(7, "test");
            let requests: Vec<HostRequest> = (0..6000)
                .map(|i| {
                    if i % 50 == 49 {
                        HostRequest::flush()
                    } else {
                        HostRequest::write(rng.below(logical) * 512, 512)
                    }
                })
                .collect();
            s.run(requests).unwrap();
            s.drain().unwrap();
            assert!(s.erases_held() > 0, "{scheduling:?} {multiplane}");
            s.check_consistency().unwrap();
        }
    }

    /// A FUA write is durable when it completes, buffer or not; a plain buffered write only
    /// acknowledged.
    #[test]
    fn a_fua_write_is_durable_at_completion() {
        let mut s = ssd(4);
        s.execute(&HostRequest::write(0, 512), None).unwrap();
        assert_eq!(s.write_state(Lpa(0)), Some(WriteState::Acknowledged));
        s.execute(&HostRequest::write(512, 512).with_fua(), None)
            .unwrap();
        assert_eq!(s.write_state(Lpa(1)), Some(WriteState::Durable));
        // (the buffer went out with it)
        assert_eq!(s.write_state(Lpa(0)), Some(WriteState::Durable));
    }

    /// Paired-page padding: on TLC (three pages per word line, programmed in a row) a Flush
    /// completes the word line of the last write with dummy pages; off, nothing is padded.
    #[test]
    fn a_flush_completes_the_word_line_on_tlc() {
        for padding in [true, false] {
            let mut c = SsdConfig::from_preset("tlc-b17a");
            c.device.overrides = Some(
                toml::from_str(
                    "[geometry]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\n\
                     planes_per_die = 1\nblocks_per_plane = 12\npages_per_block = 9\n\
                     page_size_bytes = 512\nspare_bytes_per_page = 64\n",
                )
                .unwrap(),
            );
            c.ftl = FtlConfig {
                op_fraction: 0.6,
                gc: crate::config::GcConfig {
                    threshold_blocks: 2,
                    ..Default::default()
                },
                mapping: crate::config::MappingConfig {
                    paired_page_padding: padding,
                    ..Default::default()
                },
                ..FtlConfig::default()
            };
            let mut s = Ssd::new(c, 1).unwrap();
            s.execute(&HostRequest::write(0, 512), None).unwrap();
            s.execute(&HostRequest::flush(), None).unwrap();
            let ppa = s.locate(Lpa(0)).unwrap();
            let padded = s.paired_padding_pages();
            assert_eq!(padded, if padding { 2 } else { 0 });
            // the pads are programmed (durably) right after the data page
            for pad in 1..=padded as u32 {
                assert_eq!(s.is_programmed_durably(Ppa(ppa.0 + pad)), padding);
            }
            s.check_consistency().unwrap();
        }
    }

    /// A write is decided while its request is in flight, and durable once its program has
    /// completed (no buffer: before the host hears of it).
    #[test]
    fn decided_then_durable_without_a_buffer() {
        let mut s = ssd(0);
        let lpa = Lpa(3);
        assert_eq!(s.write_state(lpa), None);
        let now = s.now();
        s.admit(&HostRequest::write(lpa.offset_bytes(512), 512), now, None)
            .unwrap();
        assert_eq!(s.write_state(lpa), Some(WriteState::Decided));
        let ppa = s.locate(lpa).expect("decided: the page is allocated");
        assert!(!s.is_programmed_durably(ppa));
        assert_eq!(s.read_oob(ppa).map(|o| o.sequence), Some(1));
        s.drain().unwrap();
        assert_eq!(s.write_state(lpa), Some(WriteState::Durable));
        assert!(s.is_programmed_durably(ppa));
    }

    /// With a buffer, a write is acknowledged at once and durable only after a flush's program
    /// completes; while the flush runs it stays acknowledged.
    #[test]
    fn acknowledged_in_the_buffer_then_durable_after_a_flush() {
        let mut s = ssd(4);
        let lpa = Lpa(5);
        let now = s.now();
        s.admit(&HostRequest::write(lpa.offset_bytes(512), 512), now, None)
            .unwrap();
        assert_eq!(
            s.host.requests.in_flight(),
            0,
            "a buffered write completes at once"
        );
        assert_eq!(s.write_state(lpa), Some(WriteState::Acknowledged));
        assert_eq!(s.locate(lpa), None);
        s.admit(&HostRequest::flush(), now, None).unwrap();
        let ppa = s.locate(lpa).expect("the flush decided a page");
        assert_eq!(s.write_state(lpa), Some(WriteState::Acknowledged));
        assert!(!s.is_programmed_durably(ppa));
        s.drain().unwrap();
        assert_eq!(s.write_state(lpa), Some(WriteState::Durable));
        assert_eq!(
            s.write_state_counts(),
            WriteStateCounts {
                durable: 1,
                ..WriteStateCounts::default()
            }
        );
    }
}
