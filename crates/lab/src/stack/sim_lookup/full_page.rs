//! `path = "full-page"`: paper 004's baseline on the SSD (docs/sim.md): whole key and value
//! pages read through the open-loop host interface by closed-loop clients, scanned by the host.

use super::page_cache::PageCache;
use super::{Expected, Measured, usage};
use crate::control::Control;
use crate::error::LabResult;
use crate::stack::sections::SimLookupWorkload;
use nandlab_core::SimTime;
use nandlab_ftl::{HostRequest, SearchRequest, Ssd};

/// The host page cache of the full-page path: how many pages, and what a hit costs.
#[derive(Clone, Copy, Debug)]
pub(super) struct CacheSpec {
    pub pages: usize,
    pub hit: SimTime,
}

/// Where a lookup stands when a page arrives (from the device or, after a hit's cost, the
/// page cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    KeyPage,
    ValuePage,
}

/// A page-cache hit served at a time: (time, order of scheduling), earliest first.
type Timer = std::cmp::Reverse<(SimTime, u64)>;

/// The baseline's lookups (`path = "full-page"`, closed loop): each client reads its key page
/// whole, scans it for the key (host time not counted, as for the SiM path's inner level),
/// reads the value page whole for a hit, and submits its next lookup when done. Runs on the
/// open-loop host interface, so the reads queue with the SSD's other work. With a page cache
/// (`cache.pages` > 0) a page read from the device is cached (LRU) and a cached page is taken
/// from the cache after `cache.hit` instead of being read.
pub(super) fn full_page_lookups(
    ssd: &mut Ssd,
    w: &SimLookupWorkload,
    requests: &[SearchRequest],
    expected: &[Expected],
    clients: usize,
    cache: CacheSpec,
    control: &Control,
) -> LabResult<Measured> {
    let page_bytes = u64::from(ssd.page_size_bytes());
    let start = ssd.now();
    ssd.open_loop_begin();
    let mut run = Lookups {
        measured: Measured::new(),
        tags: Default::default(),
        timers: Default::default(),
        from_cache: Default::default(),
        scheduled: 0,
        cache: PageCache::new(cache.pages),
        hit: cache.hit,
        page_bytes,
        end: start,
    };
    let mut next = 0;
    for _ in 0..clients {
        run.fetch(
            ssd,
            next,
            Step::KeyPage,
            lpa_of(requests, next, Step::KeyPage),
            start,
        )?;
        next += 1;
    }
    let mut arrived: Vec<Arrived> = Vec::new();
    loop {
        if !run.next_pages(ssd, requests, &mut arrived)? {
            break;
        }
        for (i, step, submitted, page) in arrived.drain(..) {
            let Some(done) = run.arrive(ssd, w, requests, expected, (i, step, submitted), &page)?
            else {
                continue;
            };
            control.advance(1);
            if next < requests.len() && !control.is_cancelled() {
                let lpa = lpa_of(requests, next, Step::KeyPage);
                run.fetch(ssd, next, Step::KeyPage, lpa, done)?;
                next += 1;
            }
        }
    }
    control.finish();
    let mut measured = run.measured;
    measured.span = run.end - start;
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

/// The state of the full-page path's lookups.
struct Lookups {
    measured: Measured,
    /// Per device read's tag: the lookup, the page it reads and the lookup's submission.
    tags: std::collections::HashMap<u64, (usize, Step, SimTime)>,
    /// Page-cache hits in flight (their cost running) and, by their order, the lookup, step,
    /// submission and the page's bytes as the cache held them.
    timers: std::collections::BinaryHeap<Timer>,
    from_cache: std::collections::HashMap<u64, Arrived>,
    scheduled: u64,
    cache: PageCache,
    hit: SimTime,
    page_bytes: u64,
    end: SimTime,
}

/// The key searched by lookup `i`.
fn key_of(requests: &[SearchRequest], i: usize) -> u64 {
    match &requests[i].op {
        nandlab_ftl::SearchOp::Search(keys) => keys[0].key,
        nandlab_ftl::SearchOp::Gather(_) => unreachable!("lookups are searches"),
    }
}

/// The page lookup `i` reads at `step`: its leaf's key page, or the value page after it.
fn lpa_of(requests: &[SearchRequest], i: usize, step: Step) -> u32 {
    match step {
        Step::KeyPage => requests[i].lpa.0,
        Step::ValuePage => requests[i].lpa.0 + 1,
    }
}

/// A page that arrived: the lookup, its step, its submission and the page's bytes.
type Arrived = (usize, Step, SimTime, Vec<u8>);

impl Lookups {
    /// Simulates until pages arrive (device reads completing, or page-cache hits whose cost
    /// has run) and appends them to `arrived`; false once nothing is left in flight.
    fn next_pages(
        &mut self,
        ssd: &mut Ssd,
        requests: &[SearchRequest],
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
                let (i, step, submitted) = self.tags.remove(&done.tag).expect("our tag");
                self.cache.insert(lpa_of(requests, i, step), &done.data);
                arrived.push((i, step, submitted, done.data));
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

    /// Lookup `i`'s page for `step` has arrived (read, or from the cache) now: checks it,
    /// fetches the value page of a hit, or completes the lookup. The time the lookup
    /// completed, if it did.
    fn arrive(
        &mut self,
        ssd: &mut Ssd,
        w: &SimLookupWorkload,
        requests: &[SearchRequest],
        expected: &[Expected],
        (i, step, submitted): (usize, Step, SimTime),
        page: &[u8],
    ) -> LabResult<Option<SimTime>> {
        let now = ssd.now();
        let key = key_of(requests, i);
        let answer = match step {
            Step::ValuePage => check_value(&expected[i], page),
            Step::KeyPage => {
                let slot = scan_key_page(page, key);
                self.measured.hits += u64::from(slot.is_some());
                if slot.is_some() && w.gather_values {
                    // the slot is checked now, the value when it arrives
                    if let Err(m) = check_slot(&expected[i], slot) {
                        self.measured.fail(i, key, m);
                    }
                    self.measured.gathers += 1;
                    let lpa = lpa_of(requests, i, Step::ValuePage);
                    self.fetch(ssd, i, Step::ValuePage, lpa, submitted)?;
                    return Ok(None);
                }
                check_slot(&expected[i], slot)
            }
        };
        if let Err(m) = answer {
            self.measured.fail(i, key, m);
        }
        self.measured.latency.record(now - submitted);
        self.measured.lookups += 1;
        self.measured.present += u64::from(expected[i].is_some());
        self.end = self.end.max(now);
        Ok(Some(now))
    }

    /// Gets page `lpa` for lookup `i`'s `step`: from the cache after the hit's cost, else by a
    /// device read now.
    fn fetch(
        &mut self,
        ssd: &mut Ssd,
        i: usize,
        step: Step,
        lpa: u32,
        submitted: SimTime,
    ) -> LabResult<()> {
        if let Some(bytes) = self.cache.lookup(lpa) {
            let bytes = bytes.to_vec();
            self.scheduled += 1;
            let at = ssd.now() + self.hit;
            self.timers.push(std::cmp::Reverse((at, self.scheduled)));
            self.from_cache
                .insert(self.scheduled, (i, step, submitted, bytes));
            return Ok(());
        }
        let read = HostRequest::read(u64::from(lpa) * self.page_bytes, self.page_bytes);
        let tag = ssd.submit(&read, None)?;
        self.tags.insert(tag, (i, step, submitted));
        Ok(())
    }
}

/// The slot of a key page holding `key`, found by the host's scan.
fn scan_key_page(page: &[u8], key: u64) -> Option<u32> {
    let key = key.to_le_bytes();
    page.chunks_exact(8)
        .position(|slot| slot == key)
        .map(|slot| slot as u32)
}

/// A full-page lookup's value page against the value it must hold.
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

/// A full-page lookup's slot against the answer it must give.
fn check_slot(expected: &Expected, slot: Option<u32>) -> Result<(), String> {
    match (*expected, slot) {
        (None, None) => Ok(()),
        (None, Some(s)) => Err(format!("absent key found in slot {s}")),
        (Some((want, _)), Some(s)) if s == want => Ok(()),
        (Some((want, _)), got) => Err(format!("found in slot {got:?}, stored in slot {want}")),
    }
}
