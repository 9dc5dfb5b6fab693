//! The front-end chain (SPEC F6 and the seam for P2–P4): the stages a host page write passes
//! through between the host interface and the mapping. Each stage may absorb a write (keep the
//! page), pass it on, or release older pages it held; whatever leaves the last stage is written
//! by the mapping. Reads ask the stages in order before going to flash.
//!
//! The DRAM write buffer ([`buffer`]) is the first implementation. A PCM log buffer, a dedup
//! filter or In-Page Logging plugs in as another [`FrontEnd`] without touching the controller's
//! loop; a stage with its own device timing (a PCM) is also an event source of the world loop
//! ([`FrontEnd::next_event_time`], [`FrontEnd::process_next`]).
//!
//! Pages move between stages in a [`PageWrites`] list (reused, so steady state allocates
//! nothing).

pub(crate) mod buffer;
pub mod pcm;
pub mod slc;
#[cfg(test)]
mod slc_cut_tests;

use crate::address::Lpa;
pub use crate::flash::log_area::{FlashLogArea, LogAreaOp};
use crate::stats::FtlCounters;
use nandlab_core::SimTime;

/// One whole logical page on its way down the chain.
#[derive(Clone, Copy, Debug)]
pub struct PageWrite<'a> {
    /// The logical page.
    pub lpa: Lpa,
    /// The host write's sequence number (it goes into the page's OOB when programmed).
    pub sequence: u64,
    /// The page's bytes in full payload mode (`None`: timing only, or zeros).
    pub data: Option<&'a [u8]>,
    /// The write's placement id (0 unless `ftl.placement_ids` > 1); a stage that holds the
    /// page passes it on with it.
    pub placement: u16,
    /// The host request this write belongs to, opaque to the stage: a stage that makes the
    /// request wait for its own device reports it back from [`FrontEnd::process_next`].
    pub request: u64,
}

/// A page a stage passes on: a write of bytes, or (from a deduplicating stage) a write whose
/// content equals what logical page `same_as` holds now, so the mapping can share its
/// physical page instead of programming another.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing<'a> {
    /// The logical page.
    pub lpa: Lpa,
    /// Its host write's sequence number.
    pub sequence: u64,
    /// Its bytes (full payload mode, and not a duplicate).
    pub data: Option<&'a [u8]>,
    /// The logical page whose current content this write duplicates.
    pub same_as: Option<Lpa>,
    /// The write's placement id.
    pub placement: u16,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    lpa: Lpa,
    sequence: u64,
    same_as: Lpa,
    placement: u16,
    /// Start of the page's bytes in the arena (`u32::MAX`: none).
    at: u32,
}

/// Pages a stage passes on, in order (with their bytes when the device keeps payloads).
#[derive(Debug, Default)]
pub struct PageWrites {
    /// Log-area work (In-Page Logging), applied after the pages.
    log_ops: Vec<LogAreaOp>,
    pages: Vec<Entry>,
    bytes: Vec<u8>,
    page_size_bytes: usize,
    keep_bytes: bool,
}

impl PageWrites {
    /// An empty list for pages of `page_size_bytes` (bytes kept when `keep_bytes`).
    pub fn new(page_size_bytes: u32, keep_bytes: bool) -> Self {
        PageWrites {
            log_ops: Vec::new(),
            pages: Vec::with_capacity(8),
            bytes: Vec::new(),
            page_size_bytes: page_size_bytes as usize,
            keep_bytes,
        }
    }
    /// Appends a page (`data` must be a whole page when bytes are kept; `None` is zeros) with
    /// placement id 0.
    pub fn push(&mut self, lpa: Lpa, sequence: u64, data: Option<&[u8]>) {
        self.push_placed(lpa, sequence, data, 0);
    }
    /// Appends a page with its placement id.
    pub fn push_placed(&mut self, lpa: Lpa, sequence: u64, data: Option<&[u8]>, placement: u16) {
        let mut at = u32::MAX;
        if self.keep_bytes {
            at = self.bytes.len() as u32;
            match data {
                Some(d) => {
                    debug_assert_eq!(d.len(), self.page_size_bytes);
                    self.bytes.extend_from_slice(d);
                }
                None => self
                    .bytes
                    .resize(self.bytes.len() + self.page_size_bytes, 0),
            }
        }
        self.pages.push(Entry {
            lpa,
            sequence,
            same_as: Lpa::NONE,
            placement,
            at,
        });
    }
    /// Appends a write of `lpa` whose content equals `same_as`'s current content.
    pub fn push_duplicate(&mut self, lpa: Lpa, sequence: u64, same_as: Lpa) {
        debug_assert!(!same_as.is_none() && same_as != lpa);
        self.pages.push(Entry {
            lpa,
            sequence,
            same_as,
            placement: 0,
            at: u32::MAX,
        });
    }
    /// Number of pages.
    pub fn len(&self) -> usize {
        self.pages.len()
    }
    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
    /// Page `i`.
    pub fn get(&self, i: usize) -> Outgoing<'_> {
        let e = self.pages[i];
        let data = (e.at != u32::MAX).then(|| {
            let s = e.at as usize;
            &self.bytes[s..s + self.page_size_bytes]
        });
        Outgoing {
            lpa: e.lpa,
            sequence: e.sequence,
            data,
            same_as: e.same_as.get(),
            placement: e.placement,
        }
    }
    /// Empties the list (keeping its capacity).
    pub fn clear(&mut self) {
        self.pages.clear();
        self.bytes.clear();
        self.log_ops.clear();
    }
    /// Queues log-area work (applied after the pages, in order).
    pub fn push_log_op(&mut self, op: LogAreaOp) {
        self.log_ops.push(op);
    }
    /// The log-area work queued.
    pub fn log_ops(&self) -> &[LogAreaOp] {
        &self.log_ops
    }
}

/// A stage of the front-end chain. The controller calls it with whole logical pages.
///
/// A stage that emits a duplicate ([`PageWrites::push_duplicate`]) must be the last stage, or
/// the later stages must not hold `same_as` (they pass duplicates on untouched).
pub trait FrontEnd: std::fmt::Debug + Send {
    /// The stage's name in reports ("write buffer", …).
    fn name(&self) -> &'static str;
    /// Whether the pages the stage holds are lost on a power cut (DRAM: yes; PCM: no).
    fn volatile(&self) -> bool;
    /// Whether the stage holds the current copy of `lpa`.
    fn contains(&self, lpa: Lpa) -> bool;
    /// The bytes of `lpa` if the stage holds them (full payload mode).
    fn page(&self, lpa: Lpa) -> Option<&[u8]>;
    /// A host read of `lpa`: `true` if the stage serves it (no flash read).
    fn read(&mut self, lpa: Lpa, counters: &mut FtlCounters) -> bool;
    /// A page write arrives: keep it and/or push pages for the next stage onto `out`. Returns
    /// how many of the stage's own device operations the host request must wait for (0 for a
    /// stage without timing; each is reported by [`FrontEnd::process_next`]).
    fn write(
        &mut self,
        now: SimTime,
        page: PageWrite<'_>,
        out: &mut PageWrites,
        counters: &mut FtlCounters,
    ) -> u32;
    /// Forgets `lpa` (TRIM).
    fn trim(&mut self, lpa: Lpa);
    /// Pushes every held page onto `out` (a host Flush).
    fn flush(&mut self, out: &mut PageWrites);
    /// The log area on flash the stage needs (In-Page Logging), reserved when the SSD is built.
    fn flash_log_area(&self) -> Option<FlashLogArea> {
        None
    }
    /// Blocks the stage keeps on flash in SLC mode (the SLC cache, `slc.rs`), reserved when the
    /// SSD is built; 0 for other stages.
    fn slc_blocks(&self) -> u32 {
        0
    }
    /// A host read of `lpa` the stage serves from its flash pages: the op to read it
    /// (applied like log-area work); `None` when the stage does not hold `lpa` on flash.
    fn flash_read(&mut self, _lpa: Lpa) -> Option<LogAreaOp> {
        None
    }
    /// SLC cache pages in use (the time series' occupancy column); `None` for other stages.
    fn slc_occupancy(&self) -> Option<u32> {
        None
    }
    /// One step of idle-time folding (the SLC cache): a page of its oldest block goes to
    /// `out`, or the block, emptied, is erased; `false` when there is nothing to fold.
    fn fold_idle(&mut self, _out: &mut PageWrites) -> bool {
        false
    }
    /// Whether the stage has its own device events (it is then an event source of the world
    /// loop). Fixed for the stage's lifetime.
    fn has_events(&self) -> bool {
        false
    }
    /// Time of the stage's next device event (a stage with its own timing).
    fn next_event_time(&self) -> Option<SimTime> {
        None
    }
    /// Processes the stage's next device event: the requests (the `request` of
    /// [`PageWrite`]) whose operations it completed go to `done`, pages it releases to `out`.
    fn process_next(&mut self, _done: &mut Vec<u64>, _out: &mut PageWrites) -> Option<SimTime> {
        None
    }
    /// The stage as `Any`, so a caller that built it can read its own report
    /// ([`crate::Ssd::front_end`]); `None` for stages that do not offer it.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// The stage as mutable `Any` ([`crate::Ssd::front_end_mut`]); `None` for stages that do
    /// not offer it.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// One FIFO device port of a timed stage (a PCM, a staging memory): a job starts when the port
/// is free and holds it for its duration; a host request can wait for a job's end, which
/// [`StagePort::process_next`] reports (the stage's [`FrontEnd::process_next`] calls it).
#[derive(Debug, Default)]
pub struct StagePort {
    /// Ends of the jobs requests wait for, with the request, in order.
    pending: std::collections::VecDeque<(SimTime, u64)>,
    free_at: SimTime,
}

impl StagePort {
    /// Occupies the port for `duration` from `now` (or from when it is free); returns the end.
    pub fn occupy(&mut self, now: SimTime, duration: SimTime) -> SimTime {
        self.free_at = self.free_at.max(now) + duration;
        self.free_at
    }
    /// [`StagePort::occupy`], and `request` waits for the end.
    pub fn occupy_for(&mut self, now: SimTime, duration: SimTime, request: u64) -> SimTime {
        let end = self.occupy(now, duration);
        self.pending.push_back((end, request));
        end
    }
    /// Adds `duration` to the port's busy time without a request waiting (background work
    /// queued behind what the port already does).
    pub fn extend(&mut self, duration: SimTime) {
        self.free_at += duration;
    }
    /// End of the next job a request waits for.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.pending.front().map(|&(t, _)| t)
    }
    /// The next such job ends: its request goes to `done`; returns the time.
    pub fn process_next(&mut self, done: &mut Vec<u64>) -> Option<SimTime> {
        let (time, request) = self.pending.pop_front()?;
        done.push(request);
        Some(time)
    }
}

/// The stages in order, with one reusable page list per stage.
#[derive(Debug, Default)]
pub(crate) struct Chain {
    stages: Vec<Box<dyn FrontEnd>>,
    outputs: Vec<PageWrites>,
    /// Whether any stage has its own events (the world loop then asks them).
    timed: bool,
    /// Whether a stage keeps a log area on flash (In-Page Logging), resolved once.
    logs_on_flash: bool,
    /// Pages leaving the chain for the mapping (reused).
    pub out: PageWrites,
    /// A whole page merged from a partial write and the page's current bytes before it enters
    /// the chain (full payload mode; reused).
    pub scratch: Vec<u8>,
}

impl Chain {
    pub fn new(stages: Vec<Box<dyn FrontEnd>>, page_size_bytes: u32, keep_bytes: bool) -> Self {
        let timed = stages.iter().any(|s| s.has_events());
        let logs_on_flash = stages.iter().any(|s| s.flash_log_area().is_some());
        let outputs = stages
            .iter()
            .map(|_| PageWrites::new(page_size_bytes, keep_bytes))
            .collect();
        Chain {
            stages,
            outputs,
            timed,
            logs_on_flash,
            out: PageWrites::new(page_size_bytes, keep_bytes),
            scratch: Vec::new(),
        }
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }
    /// The stages in order.
    pub fn stages(&self) -> impl Iterator<Item = &dyn FrontEnd> {
        self.stages.iter().map(|s| s.as_ref())
    }
    /// The stages, mutably (for setup between runs, e.g. after preconditioning).
    pub fn stages_mut(&mut self) -> impl Iterator<Item = &mut (dyn FrontEnd + 'static)> {
        self.stages.iter_mut().map(|s| s.as_mut() as _)
    }
    /// The log area on flash a stage asks for (the first that does).
    pub fn flash_log_area(&self) -> Option<FlashLogArea> {
        self.stages.iter().find_map(|s| s.flash_log_area())
    }
    /// SLC-mode blocks the stages ask for (the SLC cache).
    pub fn slc_blocks(&self) -> u32 {
        self.stages.iter().map(|s| s.slc_blocks()).sum()
    }
    /// The SLC cache stage, if there is one.
    pub fn slc_cache(&self) -> Option<&slc::SlcCache> {
        self.stages
            .iter()
            .find_map(|s| s.as_any().and_then(|a| a.downcast_ref()))
    }
    /// SLC cache pages in use (`None`: no SLC cache).
    pub fn slc_occupancy(&self) -> Option<u32> {
        self.stages.iter().find_map(|s| s.slc_occupancy())
    }
    /// One idle-time folding step of a stage (the SLC cache); whether it did any.
    pub fn fold_idle(&mut self, out: &mut PageWrites) -> bool {
        self.stages.iter_mut().any(|s| s.fold_idle(out))
    }
    /// The flash op of a host read of `lpa` a stage serves from its flash pages.
    pub fn flash_read(&mut self, lpa: Lpa) -> Option<LogAreaOp> {
        self.stages.iter_mut().find_map(|s| s.flash_read(lpa))
    }
    pub fn is_timed(&self) -> bool {
        self.timed
    }
    /// The first stage holding `lpa`.
    pub fn holder(&self, lpa: Lpa) -> Option<&dyn FrontEnd> {
        self.stages
            .iter()
            .find(|s| s.contains(lpa))
            .map(|s| s.as_ref())
    }
    pub fn contains(&self, lpa: Lpa) -> bool {
        self.stages.iter().any(|s| s.contains(lpa))
    }
    /// Whether `lpa`'s changes are in the flash log area of a stage (In-Page Logging).
    pub fn logged_on_flash(&self, lpa: Lpa) -> bool {
        self.logs_on_flash && self.contains(lpa)
    }
    pub fn page(&self, lpa: Lpa) -> Option<&[u8]> {
        self.stages.iter().find_map(|s| s.page(lpa))
    }
    /// A host read: whether a stage served it.
    pub fn read(&mut self, lpa: Lpa, counters: &mut FtlCounters) -> bool {
        self.stages.iter_mut().any(|s| s.read(lpa, counters))
    }
    pub fn trim(&mut self, lpa: Lpa) {
        for s in &mut self.stages {
            s.trim(lpa);
        }
    }

    /// Sends a page through every stage; the pages leaving the last stage are in `out`
    /// (cleared first). Returns the device operations the request waits for.
    pub fn write(
        &mut self,
        now: SimTime,
        page: PageWrite<'_>,
        out: &mut PageWrites,
        counters: &mut FtlCounters,
    ) -> u32 {
        out.clear();
        let Some((first, rest)) = self.stages.split_first_mut() else {
            out.push_placed(page.lpa, page.sequence, page.data, page.placement);
            return 0;
        };
        let mut hold = first.write(now, page, &mut self.outputs[0], counters);
        hold += Self::pass_down(rest, &mut self.outputs, now, page.request, counters);
        std::mem::swap(out, self.outputs.last_mut().expect("a stage"));
        hold
    }

    /// A host Flush: empties every volatile stage in order; the pages for flash are in `out`.
    /// A non-volatile stage (PCM) keeps what it holds: its pages are already durable (a power
    /// cut reads them back at mount), so a sync does not force them to flash; it only passes
    /// on what the volatile stages before it release.
    pub fn flush(
        &mut self,
        now: SimTime,
        request: u64,
        out: &mut PageWrites,
        counters: &mut FtlCounters,
    ) -> u32 {
        out.clear();
        let mut hold = 0;
        for i in 0..self.stages.len() {
            // what stage i released (its own flush, after what earlier stages gave it)
            if self.stages[i].volatile() {
                self.stages[i].flush(&mut self.outputs[i]);
            }
            let (_, rest) = self.stages.split_at_mut(i + 1);
            hold += Self::pass_down(rest, &mut self.outputs[i..], now, request, counters);
            if i + 1 < self.stages.len() {
                // pages pushed down have been absorbed into later stages' outputs
                debug_assert!(self.outputs[i].is_empty());
            }
        }
        if let Some(last) = self.outputs.last_mut() {
            std::mem::swap(out, last);
        }
        hold
    }

    /// Feeds `outputs[0]` into `stages[0]`, its output into `stages[1]`, and so on;
    /// `outputs[k + 1]` receives stage k's output. `outputs[0]` is drained.
    fn pass_down(
        stages: &mut [Box<dyn FrontEnd>],
        outputs: &mut [PageWrites],
        now: SimTime,
        request: u64,
        counters: &mut FtlCounters,
    ) -> u32 {
        let mut hold = 0;
        for (k, stage) in stages.iter_mut().enumerate() {
            let (input, output) = outputs[k..].split_at_mut(1);
            let input = &mut input[0];
            for i in 0..input.len() {
                let o = input.get(i);
                if let Some(same_as) = o.same_as {
                    // a duplicate passes later stages untouched (it has no bytes to keep)
                    output[0].push_duplicate(o.lpa, o.sequence, same_as);
                    continue;
                }
                let page = PageWrite {
                    lpa: o.lpa,
                    sequence: o.sequence,
                    data: o.data,
                    placement: o.placement,
                    request,
                };
                hold += stage.write(now, page, &mut output[0], counters);
            }
            // log-area work passes later stages untouched
            output[0].log_ops.extend_from_slice(&input.log_ops);
            input.clear();
        }
        hold
    }

    /// Earliest next event among the timed stages, with the stage index.
    pub fn next_event(&self) -> Option<(usize, SimTime)> {
        let mut best: Option<(usize, SimTime)> = None;
        for (i, s) in self.stages.iter().enumerate() {
            if let Some(t) = s.next_event_time()
                && best.is_none_or(|(_, b)| t < b)
            {
                best = Some((i, t));
            }
        }
        best
    }

    /// Processes stage `index`'s next event; pages leaving the chain go to `out`.
    pub fn process_stage(
        &mut self,
        index: usize,
        now: SimTime,
        done: &mut Vec<u64>,
        out: &mut PageWrites,
        counters: &mut FtlCounters,
    ) -> Option<SimTime> {
        out.clear();
        let time = self.stages[index].process_next(done, &mut self.outputs[index]);
        let (_, rest) = self.stages.split_at_mut(index + 1);
        Self::pass_down(rest, &mut self.outputs[index..], now, u64::MAX, counters);
        std::mem::swap(out, self.outputs.last_mut().expect("a stage"));
        time
    }
}
