//! The PCM front-end stage (thesis 001 chapter 3): a PCM device with the log buffer (SPEC P3,
//! or a P4 baseline) and/or the redundant write finder (P2) on it, as one stage of the
//! front-end chain.
//!
//! A page write first meets the log buffer, which logs its changed bytes in PCM or sends it
//! (and pages it merges) on towards flash; every page going to flash then meets dedup, which
//! passes it on, or passes a duplicate of the logical page holding the same bytes. This order
//! keeps dedup exact: a fingerprint names an LPA whose *flash* page holds the bytes, while a
//! page with a logged delta reads its newer content from the log.
//!
//! Timing: each page write (and each flush) is one timed call of the device
//! ([`PcmDevice::begin_call`]): its accesses (store search and updates, log reads and writes)
//! run one after another from the call's time, each occupying the PCM banks it touches after
//! earlier work on them, and hashing delays the next access; a host write waits until the
//! call's last access ends (the stage is an event source of the world loop, its pending ends in
//! a time-ordered queue: a later call on idle banks can end first). Reads of a logged page and
//! TRIMs charge their accesses to the device (energy, wear) but occupy no bank and delay
//! nothing (a read reads the flash page in parallel).
//!
//! Simulator speed (no simulated effect): a page's SHA-1 is remembered while its flash copy
//! is unchanged, so the unchanged pages of a whole-block flush are not hashed again (their
//! simulated hashing is charged all the same), and they reach dedup from the flash mirror
//! without copies ([`PcmStage::set_reuse`] turns both off).

mod config;
mod dedup;
mod log;

pub use config::{LogBufferConfig, PcmStageConfig, pcm_error};
pub use dedup::DedupCounters;

use super::{FlashLogArea, FrontEnd, PageWrite, PageWrites};
use crate::address::Lpa;
use crate::error::FtlResult;
use crate::flash::emit::Tag;
use crate::stats::FtlCounters;
use dedup::DedupFilter;
use log::LogPart;
use nandlab_core::{EventQueue, SimTime};
use nandlab_pcm::dedup::DedupStats;
use nandlab_pcm::{
    AccessCost, DpramLog, Fingerprint, FlashShape, InPageLog, LogStats, PcmAddr, PcmDevice,
    PcmError, PcmLogRegion, PcmStats,
};
use serde::Serialize;

/// What the stage did, for reports and experiments.
#[derive(Clone, Debug, Serialize)]
pub struct PcmStageReport {
    /// The device preset's name.
    pub preset: String,
    /// The log buffer kind (`None`: dedup only).
    pub log_kind: Option<&'static str>,
    /// The device's counters (energy, time, wear).
    pub device: PcmStats,
    /// Dedup's own counters.
    pub dedup: Option<DedupCounters>,
    /// The finder's counters (lookups, hits, search effort).
    pub finder: Option<DedupStats>,
    /// The log buffer's counters (merges, flushes, sequential share).
    pub log: Option<LogStats>,
    /// Host writes the stage made wait for their PCM work.
    pub writes_held: u64,
    /// Sum of the PCM time host writes waited for (arrival to the end of their call).
    pub port_busy: SimTime,
    /// Internal checks that failed (stale dedup hits, log/flash mismatches, PCM errors): 0.
    pub check_failures: u64,
    /// The first PCM error met while running (none expected after construction).
    pub first_error: Option<String>,
}

/// The PCM stage (see the module docs).
pub struct PcmStage {
    device: PcmDevice,
    dedup: Option<DedupFilter>,
    log: Option<LogPart>,
    log_kind: Option<&'static str>,
    /// In-Page Logging's log area on flash (reserved by the SSD).
    log_area: Option<FlashLogArea>,
    page_size_bytes: usize,
    zeros: Vec<u8>,
    /// Sequence and placement of each page's last write (pages the log flushes later).
    sequence: Vec<u64>,
    placement: Vec<u16>,
    /// Ends of the calls host writes wait for, in time order, with the request.
    pending: EventQueue<u64>,
    /// The time of the last page write (a flush, which has no time, starts its work then).
    last_write_at: SimTime,
    writes_held: u64,
    port_busy: SimTime,
    first_error: Option<PcmError>,
    errors: u64,
    /// Threads that hash a merge's pages ahead (1: hashed one by one as dedup meets them).
    hash_threads: usize,
    /// Pages a call must send towards flash before they are hashed ahead.
    hash_min_pages: usize,
    /// Fingerprints hashed ahead (scratch, reused).
    fingerprints: Vec<Fingerprint>,
    /// The pages hashed ahead, one after another (scratch, reused).
    ahead_bytes: Vec<u8>,
    /// SHA-1s the simulator computed (not a simulated quantity: remembered ones not counted).
    sha1_computed: u64,
}

/// Pages a call must have to hash (not remembered) before their SHA-1s are hashed ahead on
/// threads, when threads are set (a merge's flush of many changed pages). Threads are started
/// per call, so fewer pages are not worth them: with the SHA-1s of unchanged pages remembered,
/// a typical merge on the bench device hashes ~20 pages, and hashing those on 2 threads from
/// 16 pages on took as much wall time on an idle 2-core machine and twice as much on a loaded
/// one (docs/pcm.md, "Where a page write's time goes").
const PARALLEL_HASH_MIN_PAGES: usize = 64;

impl std::fmt::Debug for PcmStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcmStage")
            .field("log", &self.log_kind)
            .field("dedup", &self.dedup.is_some())
            .finish_non_exhaustive()
    }
}

impl PcmStage {
    /// A stage for `logical_pages` pages of `page_size_bytes`, `pages_per_block` per flash
    /// block. Errors name the `pcm.` key.
    pub fn new(
        config: PcmStageConfig,
        logical_pages: u32,
        page_size_bytes: u32,
        pages_per_block: u32,
        seed: u64,
    ) -> FtlResult<Self> {
        let shape = FlashShape {
            page_size_bytes,
            pages_per_block,
            pages: logical_pages,
        };
        config.validate(&shape)?;
        let device = PcmDevice::new(config.device, seed).map_err(pcm_error)?;
        let mut base = PcmAddr(0);
        let dedup = match config.dedup {
            Some(c) => {
                let bytes = c.pcm_bytes();
                let d = DedupFilter::new(c, base, logical_pages, &device).map_err(pcm_error)?;
                base = base.offset(bytes);
                Some(d)
            }
            None => None,
        };
        let log_kind = config.log.as_ref().map(LogBufferConfig::kind);
        let mut log_area = None;
        let log = match config.log {
            None => None,
            Some(c) => {
                let buffer: Box<dyn nandlab_pcm::LogBuffer + Send> = match c {
                    LogBufferConfig::Region(c) => {
                        Box::new(PcmLogRegion::new(c, shape, base, &device).map_err(pcm_error)?)
                    }
                    LogBufferConfig::Dpram(c) => {
                        Box::new(DpramLog::new(c, shape, base, &device).map_err(pcm_error)?)
                    }
                    LogBufferConfig::Ipl(c) => {
                        let ipl = InPageLog::new(c, shape).map_err(pcm_error)?;
                        log_area = Some(FlashLogArea {
                            units: logical_pages.div_ceil(pages_per_block),
                            pages_per_unit: pages_per_block,
                            sectors_per_unit: ipl.config().log_sectors_per_block,
                            sector_bytes: ipl.config().sector_size_bytes as u32,
                        });
                        Box::new(ipl)
                    }
                };
                Some(LogPart::new(buffer, shape))
            }
        };
        Ok(PcmStage {
            device,
            dedup,
            log,
            log_kind,
            log_area,
            page_size_bytes: page_size_bytes as usize,
            zeros: vec![0; page_size_bytes as usize],
            sequence: vec![0; logical_pages as usize],
            placement: vec![0; logical_pages as usize],
            pending: EventQueue::with_capacity(64),
            last_write_at: SimTime::ZERO,
            writes_held: 0,
            port_busy: SimTime::ZERO,
            first_error: None,
            errors: 0,
            // one thread by default: threads started per call did not pay on the bench
            // device (docs/pcm.md, "Where a page write's time goes")
            hash_threads: 1,
            hash_min_pages: PARALLEL_HASH_MIN_PAGES,
            fingerprints: Vec::new(),
            ahead_bytes: Vec::new(),
            sha1_computed: 0,
        })
    }

    /// Sets how a call's pages are hashed ahead: on `threads` threads when the call has at
    /// least `min_pages` pages to hash (not remembered) on their way to flash (defaults: 1
    /// thread, which hashes each page as dedup meets it, and 64 pages). Results do not depend
    /// on it.
    pub fn set_hash_ahead(&mut self, threads: usize, min_pages: usize) {
        self.hash_threads = threads.max(1);
        self.hash_min_pages = min_pages.max(1);
    }

    /// Turns the stage's simulator-side shortcuts on (the default) or off: SHA-1s remembered
    /// per page while its flash copy is unchanged (a whole-block flush's unchanged pages are
    /// not hashed again), and those pages passed on from the flash mirror without copies. The
    /// simulated work (hashing time and energy included) and every result are the same either
    /// way; off is the reference the tests compare against.
    pub fn set_reuse(&mut self, reuse: bool) {
        if let Some(log) = &mut self.log {
            log.set_reuse(reuse);
        }
    }

    /// SHA-1s the simulator computed so far (a speed figure, not a simulated one: a page whose
    /// SHA-1 was remembered is not counted, though its simulated hashing is charged).
    pub fn sha1_computed(&self) -> u64 {
        self.sha1_computed
    }

    /// The PCM device (its stats, wear).
    pub fn device(&self) -> &PcmDevice {
        &self.device
    }

    /// PCM energy so far: the device's reads and writes plus dedup's SHA-1 hashing, picojoules
    /// (what [`PcmStage::report`] gives, without building the report).
    pub fn energy_pj(&self) -> f64 {
        let device = self.device.stats();
        let hashing = self
            .dedup
            .as_ref()
            .map_or(0.0, |d| d.finder().stats().hash_energy_pj);
        device.read_energy_pj + device.write_energy_pj + hashing
    }

    /// What the stage did so far.
    pub fn report(&self) -> PcmStageReport {
        let mut failures = self.errors;
        if let Some(d) = &self.dedup {
            failures += d.counters.stale_hits;
        }
        if let Some(l) = &self.log {
            failures += l.mismatches;
        }
        PcmStageReport {
            preset: self.device.config().name.clone(),
            log_kind: self.log_kind,
            device: self.device.stats().clone(),
            dedup: self.dedup.as_ref().map(|d| d.counters.clone()),
            finder: self.dedup.as_ref().map(|d| d.finder().stats()),
            log: self.log.as_ref().map(LogPart::stats),
            writes_held: self.writes_held,
            port_busy: self.port_busy,
            check_failures: failures,
            first_error: self.first_error.as_ref().map(ToString::to_string),
        }
    }

    /// Tells the stage that flash holds a page of zeros at `lpa`, written around the stage by
    /// `Ssd::precondition` (a pre-aged flash, functional writes of zeros): the log buffer then
    /// treats the next write of the page as an update of a page on flash (its changed bytes
    /// logged, cases 2–4) rather than a new page (case 1). Pages the stage has already seen
    /// are left alone. The fingerprint store does not learn these pages: fingerprinting the
    /// preconditioned zero pages would not make them shared (they are separate flash copies),
    /// so a later write of zeros elsewhere is programmed as usual. No PCM cost (preconditioning
    /// takes no simulated time).
    pub fn preconditioned(&mut self, lpa: Lpa) {
        if let Some(log) = &mut self.log {
            log.assume_zeros_on_flash(lpa);
        }
    }

    /// Checks dedup's groups against the finder and the log part's own invariants (every
    /// remembered SHA-1 is that of its page's flash mirror) (tests).
    pub fn check(&self) -> Result<(), String> {
        if let Some(d) = &self.dedup {
            d.check()?;
        }
        match &self.log {
            Some(l) => l.check(),
            None => Ok(()),
        }
    }

    fn record(&mut self, result: Result<AccessCost, PcmError>) -> AccessCost {
        result.unwrap_or_else(|e| {
            self.errors += 1;
            self.first_error.get_or_insert(e);
            AccessCost::default()
        })
    }

    /// Sends a page towards flash through dedup (when on); `fingerprint` is its SHA-1 if
    /// already known (hashed ahead, or remembered). Returns the cost and the page's SHA-1
    /// (`None` without dedup).
    fn pass_on(
        &mut self,
        lpa: Lpa,
        data: &[u8],
        fingerprint: Option<Fingerprint>,
        out: &mut PageWrites,
    ) -> (AccessCost, Option<Fingerprint>) {
        let i = lpa.index();
        let (sequence, placement) = (self.sequence[i], self.placement[i]);
        match &mut self.dedup {
            None => {
                out.push_placed(lpa, sequence, Some(data), placement);
                (AccessCost::default(), None)
            }
            Some(d) => {
                let fingerprint = fingerprint.unwrap_or_else(|| {
                    self.sha1_computed += 1;
                    Fingerprint::of(data)
                });
                let r = d.write(
                    &mut self.device,
                    lpa,
                    sequence,
                    placement,
                    data,
                    fingerprint,
                    out,
                );
                (self.record(r), Some(fingerprint))
            }
        }
    }

    /// Pages the log part queued for flash go through dedup. A page whose flash mirror is
    /// unchanged since it was last hashed (most pages of a whole-block flush) reuses that
    /// SHA-1; the simulated hashing is charged all the same.
    fn drain_log(&mut self, out: &mut PageWrites) -> AccessCost {
        let mut cost = AccessCost::default();
        let Some(mut log) = self.log.take() else {
            return cost;
        };
        let n = log.pending_pages();
        // many pages to hash (a merge's flush of changed pages): their SHA-1s computed ahead
        // on the hashing threads, consumed in order by the sequential dedup decisions (same
        // results as hashing here)
        let mut fingerprints = std::mem::take(&mut self.fingerprints);
        fingerprints.clear();
        if self.dedup.is_some() && self.hash_threads > 1 {
            let unknown = (0..n)
                .filter(|&k| log.pending_page(k).fingerprint.is_none())
                .count();
            if unknown >= self.hash_min_pages {
                let mut bytes = std::mem::take(&mut self.ahead_bytes);
                bytes.clear();
                for k in 0..n {
                    let page = log.pending_page(k);
                    if page.fingerprint.is_none() {
                        bytes.extend_from_slice(page.data);
                    }
                }
                Fingerprint::of_pages(
                    &bytes,
                    self.page_size_bytes,
                    self.hash_threads,
                    &mut fingerprints,
                );
                self.sha1_computed += fingerprints.len() as u64;
                self.ahead_bytes = bytes;
            }
        }
        let mut ahead = fingerprints.iter();
        for k in 0..n {
            let page = log.pending_page(k);
            let known = match page.fingerprint {
                Some(f) => Some(f),
                None if fingerprints.is_empty() => None,
                None => ahead.next().copied(),
            };
            let (c, fingerprint) = self.pass_on(page.lpa, page.data, known, out);
            cost += c;
            if let Some(f) = fingerprint {
                log.hashed(k, f);
            }
        }
        self.fingerprints = fingerprints;
        for &op in log.log_ops() {
            out.push_log_op(op);
        }
        self.log = Some(log);
        cost
    }

    /// The timed call that began at `now` ended at `end`: a host request waits for it.
    fn hold(&mut self, now: SimTime, end: SimTime, request: u64) -> u32 {
        if end <= now || !matches!(Tag::decode(request), Tag::Host(_)) {
            return 0;
        }
        self.pending.schedule(end, request);
        self.writes_held += 1;
        self.port_busy += end - now;
        1
    }
}

impl FrontEnd for PcmStage {
    fn name(&self) -> &'static str {
        "pcm"
    }
    fn volatile(&self) -> bool {
        false
    }
    fn contains(&self, lpa: Lpa) -> bool {
        self.log.as_ref().is_some_and(|l| l.holds(lpa))
    }
    fn page(&self, lpa: Lpa) -> Option<&[u8]> {
        self.log.as_ref()?.page(lpa)
    }
    fn read(&mut self, lpa: Lpa, _counters: &mut FtlCounters) -> bool {
        if let Some(log) = &mut self.log
            && log.holds(lpa)
        {
            let r = log.read(&mut self.device, lpa);
            self.record(r);
        }
        // the flash page is read too (the log holds a delta, not the page)
        false
    }
    fn write(
        &mut self,
        now: SimTime,
        page: PageWrite<'_>,
        out: &mut PageWrites,
        _counters: &mut FtlCounters,
    ) -> u32 {
        let i = page.lpa.index();
        self.sequence[i] = page.sequence;
        self.placement[i] = page.placement;
        let zeros = std::mem::take(&mut self.zeros);
        let data = page.data.unwrap_or(&zeros);
        debug_assert_eq!(data.len(), self.page_size_bytes);
        self.last_write_at = self.last_write_at.max(now);
        self.device.begin_call(now);
        match &mut self.log {
            Some(log) => {
                let r = log.write(&mut self.device, page.lpa, data);
                self.record(r);
                self.drain_log(out);
            }
            None => {
                self.pass_on(page.lpa, data, None, out);
            }
        }
        let end = self.device.end_call();
        self.zeros = zeros;
        self.hold(now, end, page.request)
    }
    fn trim(&mut self, lpa: Lpa) {
        if let Some(log) = &mut self.log {
            let r = log.trim(&mut self.device, lpa);
            self.record(r);
        }
        if let Some(d) = &mut self.dedup {
            let r = d.forget(&mut self.device, lpa);
            self.record(r);
        }
    }
    fn flush(&mut self, out: &mut PageWrites) {
        if let Some(log) = &mut self.log {
            // a flush's PCM work occupies the banks but is not waited for (the Flush waits
            // for the programs)
            self.device.begin_call(self.last_write_at);
            let r = log.flush(&mut self.device);
            self.record(r);
            self.drain_log(out);
            self.device.end_call();
        }
    }
    fn flash_log_area(&self) -> Option<FlashLogArea> {
        self.log_area
    }
    fn has_events(&self) -> bool {
        true
    }
    fn next_event_time(&self) -> Option<SimTime> {
        self.pending.peek_time()
    }
    fn process_next(&mut self, done: &mut Vec<u64>, _out: &mut PageWrites) -> Option<SimTime> {
        let (time, request) = self.pending.pop()?;
        done.push(request);
        Some(time)
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}
