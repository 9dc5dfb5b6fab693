//! Closed-loop clients on the open-loop host interface (docs/sim.md): paper 004's baseline
//! (`path = "full-page"`: whole key and value pages read through the host page cache and
//! scanned by the host) and, with updates (`update_fraction` > 0), either path with the page
//! cache holding the updated pages until it evicts and writes them back, so write-backs queue
//! at the SSD with the reads (paper 004 §VII: an FCFS I/O queue).

use super::page_cache::{PageCache, WriteBack};
use super::{Expected, Measured, usage, verify_bitmap, verify_chunk};
use crate::control::Control;
use crate::error::LabResult;
use crate::stack::sections::SimLookupWorkload;
use nandlab_core::SimTime;
use nandlab_ftl::{HostRequest, Lpa, SearchRequest, Ssd};
use nandlab_nand::search::format::SLOTS_PER_CHUNK;
use nandlab_nand::{ChunkMask, MatchBitmap};
use std::collections::{BinaryHeap, HashMap};

/// The host page cache: how many pages, and what a hit costs.
#[derive(Clone, Copy, Debug)]
pub(super) struct CacheSpec {
    pub pages: usize,
    pub hit: SimTime,
}

/// How an operation finds its key: reading the key page whole and scanning it (the
/// baseline), or a SiM search command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Path {
    FullPage,
    Sim,
}

/// The operations: operation `i` is on `requests[i]`'s key (its search command, on the key
/// page), must answer `expected[i]`, and is an update when `updates[i]` (empty: no updates).
pub(super) struct Ops<'a> {
    pub requests: &'a [SearchRequest],
    pub expected: &'a [Expected],
    pub updates: &'a [bool],
}

impl Ops<'_> {
    fn is_update(&self, i: usize) -> bool {
        self.updates.get(i).copied().unwrap_or(false)
    }

    /// The key operation `i` is on.
    fn key(&self, i: usize) -> u64 {
        match &self.requests[i].op {
            nandlab_ftl::SearchOp::Search(keys) => keys[0].key,
            nandlab_ftl::SearchOp::Gather(_) => unreachable!("operations are searches"),
        }
    }

    /// The page operation `i` reads at `step`: its leaf's key page, or the value page after it.
    fn lpa(&self, i: usize, step: Step) -> u32 {
        match step {
            Step::KeyPage | Step::Search => self.requests[i].lpa.0,
            Step::ValuePage | Step::Gather | Step::Updated => self.requests[i].lpa.0 + 1,
        }
    }
}

/// What an operation waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The key page, whole (device read or page cache).
    KeyPage,
    /// The value page, whole: a baseline lookup's value, an update's read-modify-write, or a
    /// SiM lookup's value from a page an update left in the cache.
    ValuePage,
    /// The SiM search of the key page (its match bitmap).
    Search,
    /// The SiM gather of the value chunk.
    Gather,
    /// An update's dirtied page is in the cache (after the write-back of the page it evicted).
    Updated,
}

/// A page-cache hit served at a time: (time, order of scheduling), earliest first.
type Timer = std::cmp::Reverse<(SimTime, u64)>;

/// What arrived for an operation: the operation, its step, its submission and the bytes (a
/// page, a bitmap or a chunk).
type Arrived = (usize, Step, SimTime, Vec<u8>);

/// Runs `ops` from `clients` closed-loop clients, each submitting its next operation when its
/// previous one completes; every answer is checked. A lookup: the key's slot (`path`), then
/// for a hit with `gather_values` its value (baseline: the value page through the cache; SiM:
/// a gather, or the cached page if an update dirtied it). An update (the host's index knows
/// the record's leaf and slot, as in the chip-level harness `sim_eval`): the value page
/// through the cache (read on a miss), dirtied there with its value rewritten unchanged (the
/// same I/O as a new value; every later answer stays checkable). A page the cache evicts dirty
/// is written back at once, and the operation whose page took its place waits for the write
/// (the page frame is free only then); the write queues with the reads.
pub(super) fn run_clients(
    ssd: &mut Ssd,
    w: &SimLookupWorkload,
    ops: &Ops<'_>,
    (path, clients): (Path, usize),
    cache: CacheSpec,
    control: &Control,
) -> LabResult<Measured> {
    let start = ssd.now();
    ssd.open_loop_begin();
    let counters_start = ssd.search_counters();
    let mut run = Clients {
        measured: Measured::new(),
        tags: HashMap::new(),
        write_backs: HashMap::new(),
        timers: BinaryHeap::new(),
        from_cache: HashMap::new(),
        scheduled: 0,
        cache: PageCache::new(cache.pages),
        hit: cache.hit,
        page_bytes: u64::from(ssd.page_size_bytes()),
        end: start,
        path,
    };
    let n = ops.requests.len();
    let mut next = 0;
    while next < clients.min(n) {
        run.begin(ssd, ops, next, start)?;
        next += 1;
    }
    let mut arrived: Vec<Arrived> = Vec::new();
    while run.next_arrivals(ssd, ops, &mut arrived)? {
        for (i, step, submitted, bytes) in arrived.drain(..) {
            if !run.arrive(ssd, w, ops, (i, step, submitted), &bytes)? {
                continue;
            }
            control.advance(1);
            if next < n && !control.is_cancelled() {
                run.begin(ssd, ops, next, ssd.now())?;
                next += 1;
            }
        }
    }
    control.finish();
    let mut measured = run.measured;
    measured.span = run.end - start;
    if path == Path::Sim {
        measured.counters = ssd.search_counters().since(&counters_start);
    }
    if cache.pages > 0 {
        measured.page_cache = Some(super::PageCacheReport {
            pages: cache.pages as u64,
            hit_ns: cache.hit.as_ps() / 1000,
            hits: run.cache.hits,
            misses: run.cache.misses,
        });
    }
    Ok(measured)
}

/// The clients' state.
struct Clients {
    measured: Measured,
    /// Per device command's tag: the operation, its step and its submission.
    tags: HashMap<u64, (usize, Step, SimTime)>,
    /// The write-backs in flight by tag, each with what arrives for the operation waiting for it.
    write_backs: HashMap<u64, Arrived>,
    /// Page-cache hits in flight (their cost running) and, by their order, what arrives.
    timers: BinaryHeap<Timer>,
    from_cache: HashMap<u64, Arrived>,
    scheduled: u64,
    cache: PageCache,
    hit: SimTime,
    page_bytes: u64,
    /// The last operation's completion.
    end: SimTime,
    path: Path,
}

impl Clients {
    /// Starts operation `i` (submitted at `submitted`, now): its key page or its search.
    fn begin(
        &mut self,
        ssd: &mut Ssd,
        ops: &Ops<'_>,
        i: usize,
        submitted: SimTime,
    ) -> LabResult<()> {
        if ops.is_update(i) {
            let lpa = ops.lpa(i, Step::ValuePage);
            return self.fetch(ssd, i, Step::ValuePage, lpa, submitted);
        }
        match self.path {
            Path::FullPage => {
                self.fetch(ssd, i, Step::KeyPage, ops.lpa(i, Step::KeyPage), submitted)
            }
            Path::Sim => {
                let mut search = ops.requests[i].clone();
                search.arrival = None;
                self.command(ssd, &search, (i, Step::Search, submitted))
            }
        }
    }

    /// Simulates until something arrives (device commands completing, or page-cache hits
    /// whose cost has run) and appends it to `arrived`; false once nothing is left in flight.
    fn next_arrivals(
        &mut self,
        ssd: &mut Ssd,
        ops: &Ops<'_>,
        arrived: &mut Vec<Arrived>,
    ) -> LabResult<bool> {
        let due = self.timers.peek().map(|t| t.0.0);
        let ready = match due {
            Some(at) => ssd.advance_to_completion_or(at)?,
            None => ssd.advance_to_completion()?,
        };
        if ready {
            for done in ssd.take_completions() {
                done.status.map_err(|m| usage("workload.path", m))?;
                if let Some(waiting) = self.write_backs.remove(&done.tag) {
                    arrived.push(waiting);
                    continue;
                }
                let (i, step, submitted) = self.tags.remove(&done.tag).expect("our tag");
                let page = (i, step, submitted, done.data);
                if matches!(step, Step::KeyPage | Step::ValuePage)
                    && let Some(evicted) = self.cache.insert(ops.lpa(i, step), &page.3)
                {
                    self.write_back(ssd, evicted, page)?;
                } else {
                    arrived.push(page);
                }
            }
            return Ok(true);
        }
        if due.is_none_or(|at| at > ssd.now()) {
            return Ok(false);
        }
        while let Some(&std::cmp::Reverse((at, order))) = self.timers.peek() {
            if at > ssd.now() {
                break;
            }
            self.timers.pop();
            arrived.push(self.from_cache.remove(&order).expect("a timer's page"));
        }
        Ok(true)
    }

    /// Operation `i`'s bytes for `step` arrived now: checks them and takes its next step.
    /// True when the operation completed.
    fn arrive(
        &mut self,
        ssd: &mut Ssd,
        w: &SimLookupWorkload,
        ops: &Ops<'_>,
        (i, step, submitted): (usize, Step, SimTime),
        bytes: &[u8],
    ) -> LabResult<bool> {
        let key = ops.key(i);
        if step == Step::Updated {
            self.complete(ssd, ops, i, submitted);
            return Ok(true);
        }
        let answer = match step {
            Step::KeyPage => {
                let slot = scan_key_page(bytes, key);
                return self.found(ssd, w, ops, (i, submitted), slot);
            }
            Step::Search => {
                let bitmap = bitmap(bytes);
                if let Err(m) = verify_bitmap(&ops.expected[i], bitmap) {
                    self.measured.fail(i, key, m);
                }
                let slot = bitmap.and_then(|b| b.slots().next());
                return self.found(ssd, w, ops, (i, submitted), slot);
            }
            Step::ValuePage => check_value(&ops.expected[i], bytes),
            Step::Gather => match ops.expected[i] {
                Some((slot, value)) => verify_chunk(slot, value, bytes),
                None => Err("a value was gathered for an absent key".into()),
            },
            Step::Updated => unreachable!("completed above"),
        };
        if let Err(m) = answer {
            self.measured.fail(i, key, m);
        }
        if ops.is_update(i) {
            // the value rewritten (unchanged) into the cached page: dirty until evicted
            let lpa = ops.lpa(i, Step::ValuePage);
            if let Some(evicted) = self.cache.write(lpa, bytes) {
                self.write_back(ssd, evicted, (i, Step::Updated, submitted, Vec::new()))?;
                return Ok(false);
            }
        }
        self.complete(ssd, ops, i, submitted);
        Ok(true)
    }

    /// Lookup `i` found its key in `slot` (or not): a hit fetches its value; otherwise the
    /// lookup completes. True when it completed.
    fn found(
        &mut self,
        ssd: &mut Ssd,
        w: &SimLookupWorkload,
        ops: &Ops<'_>,
        (i, submitted): (usize, SimTime),
        slot: Option<u32>,
    ) -> LabResult<bool> {
        debug_assert!(!ops.is_update(i), "an update goes to its value page");
        self.measured.hits += u64::from(slot.is_some());
        if let Some(hit) = slot
            && w.gather_values
        {
            // the slot is checked now, the value when it arrives
            if self.path == Path::FullPage
                && let Err(m) = check_slot(&ops.expected[i], slot)
            {
                self.measured.fail(i, ops.key(i), m);
            }
            let lpa = ops.lpa(i, Step::ValuePage);
            self.measured.gathers += 1;
            if self.path == Path::FullPage {
                self.fetch(ssd, i, Step::ValuePage, lpa, submitted)?;
                return Ok(false);
            }
            if !self.cached(ssd, i, Step::ValuePage, lpa, submitted) {
                let gather =
                    SearchRequest::gather(Lpa(lpa), ChunkMask::single(hit / SLOTS_PER_CHUNK));
                self.command(ssd, &gather, (i, Step::Gather, submitted))?;
            }
            return Ok(false);
        }
        if self.path == Path::FullPage
            && let Err(m) = check_slot(&ops.expected[i], slot)
        {
            self.measured.fail(i, ops.key(i), m);
        }
        self.complete(ssd, ops, i, submitted);
        Ok(true)
    }

    /// Counts operation `i` as completed now.
    fn complete(&mut self, ssd: &Ssd, ops: &Ops<'_>, i: usize, submitted: SimTime) {
        let now = ssd.now();
        if ops.is_update(i) {
            self.measured.update_latency.record(now - submitted);
            self.measured.updates += 1;
        } else {
            self.measured.latency.record(now - submitted);
            self.measured.lookups += 1;
            self.measured.present += u64::from(ops.expected[i].is_some());
        }
        self.end = self.end.max(now);
    }

    /// Gets page `lpa` for operation `i`'s `step`: from the cache after the hit's cost, else
    /// by a device read now.
    fn fetch(
        &mut self,
        ssd: &mut Ssd,
        i: usize,
        step: Step,
        lpa: u32,
        submitted: SimTime,
    ) -> LabResult<()> {
        if self.cached(ssd, i, step, lpa, submitted) {
            return Ok(());
        }
        let read = HostRequest::read(u64::from(lpa) * self.page_bytes, self.page_bytes);
        let tag = ssd.submit(&read, None)?;
        self.tags.insert(tag, (i, step, submitted));
        Ok(())
    }

    /// Schedules page `lpa`'s arrival from the cache after the hit's cost, if it is cached.
    fn cached(&mut self, ssd: &Ssd, i: usize, step: Step, lpa: u32, submitted: SimTime) -> bool {
        let Some(bytes) = self.cache.lookup(lpa) else {
            return false;
        };
        let bytes = bytes.to_vec();
        self.scheduled += 1;
        let at = ssd.now() + self.hit;
        self.timers.push(std::cmp::Reverse((at, self.scheduled)));
        self.from_cache
            .insert(self.scheduled, (i, step, submitted, bytes));
        true
    }

    /// Submits SiM command `request` for operation `i`'s step.
    fn command(
        &mut self,
        ssd: &mut Ssd,
        request: &SearchRequest,
        (i, step, submitted): (usize, Step, SimTime),
    ) -> LabResult<()> {
        let tag = ssd.submit_search(request)?;
        self.tags.insert(tag, (i, step, submitted));
        Ok(())
    }

    /// Writes an evicted dirty page back to the device now; `waiting` arrives when it is done.
    fn write_back(
        &mut self,
        ssd: &mut Ssd,
        (lpa, bytes): WriteBack,
        waiting: Arrived,
    ) -> LabResult<()> {
        let write = HostRequest::write(u64::from(lpa) * self.page_bytes, self.page_bytes);
        let tag = ssd.submit(&write, Some(&bytes))?;
        self.write_backs.insert(tag, waiting);
        self.measured.write_backs += 1;
        Ok(())
    }
}

/// A search's match bitmap from its 64 result bytes (`None`: no bytes came back).
fn bitmap(bytes: &[u8]) -> Option<MatchBitmap> {
    Some(MatchBitmap::from_le_bytes(bytes.try_into().ok()?))
}

/// The slot of a key page holding `key`, found by the host's scan.
fn scan_key_page(page: &[u8], key: u64) -> Option<u32> {
    let key = key.to_le_bytes();
    page.chunks_exact(8)
        .position(|slot| slot == key)
        .map(|slot| slot as u32)
}

/// A whole value page against the value it must hold.
fn check_value(expected: &Expected, page: &[u8]) -> Result<(), String> {
    let Some((slot, value)) = *expected else {
        return Err("a value page was read for an absent key".into());
    };
    let at = 8 * slot as usize;
    let got = page
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    if got == Some(value) {
        Ok(())
    } else {
        Err(format!("value {got:?}, stored {value:#x}"))
    }
}

/// A scanned slot against the answer it must give.
fn check_slot(expected: &Expected, slot: Option<u32>) -> Result<(), String> {
    match (*expected, slot) {
        (None, None) => Ok(()),
        (None, Some(s)) => Err(format!("absent key found in slot {s}")),
        (Some((want, _)), Some(s)) if s == want => Ok(()),
        (Some((want, _)), got) => Err(format!("found in slot {got:?}, stored in slot {want}")),
    }
}
