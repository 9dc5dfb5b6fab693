//! `kind = "sim-lookup"`: point lookups in a key-value leaf level on the SSD's SiM region
//! (paper 004 §V-A, Fig. 8; SPEC S2, S5, S6), through the controller's search and gather
//! commands.
//!
//! - **Load**: `records` distinct random keys (never `u64::MAX`, the empty-slot key) with
//!   random values, sorted and cut into leaves of `slots_per_leaf` entries. Leaf `j` is two
//!   logical pages of the region written by ordinary host writes: the key page (LPA
//!   `first + 2j`) with key `i` of the leaf in searchable slot `i`, and the value page (`first +
//!   2j + 1`) with its value in the same slot; unused slots hold `u64::MAX`. With the
//!   integrity layer chunk 0 is the controller's header, so the entries start at slot 8.
//!   The host keeps the inner level: a sorted table of the leaves' low keys.
//! - **Run**: `request_count` lookups arriving open-loop every `interarrival_ns`, or from
//!   `clients` closed-loop clients (each submits its next lookup when its previous one
//!   completes); a lookup is a one-key search command on its key's key page, run concurrently
//!   with the others through [`Ssd::run_search_chained`] (so `ssd.sim.batch_deadline_ns`
//!   batches searches of a page); with `gather_values`, a hit's search completion issues the
//!   gather of the value page's chunk holding the matched slot. A lookup's latency runs from
//!   its arrival (closed loop: its submission) to its search's completion (a miss, or without
//!   gathers) or its gather's completion.
//! - **Clients with a page cache or updates** (`clients.rs`): the full-page baseline, and either
//!   path with `update_fraction` > 0, run as closed-loop clients on the open-loop host
//!   interface; updates dirty pages in the host page cache, which writes them back as it evicts
//!   them (docs/sim.md).
//! - **Verify**: a hit's bitmap must be exactly the key's slot and its gathered value the
//!   stored value; a miss's bitmap must be empty. Every other answer is a verification
//!   failure (counted; the first one is described in the report).

use super::run::{StackOutcome, StackRun};
use super::sections::SimLookupWorkload;
use crate::control::Control;
use crate::error::{LabError, LabResult};
use nandlab_core::stats::LatencySummary;
use nandlab_core::{LatencyHistogram, SimRng, SimTime};
use nandlab_ftl::{HostRequest, Lpa, SearchCounters, SearchRequest, Ssd};
use nandlab_nand::search::format::{SIM_PAGE_BYTES, SLOTS_PER_CHUNK};
use nandlab_nand::{ChunkMask, SearchKey};
use nandlab_workload::ycsb::{YcsbDistribution, YcsbSpec};
use serde::Serialize;

/// Key of an unused slot (the search chip's leaf format, `nandlab-search`'s `EMPTY_KEY`).
pub const EMPTY_KEY: u64 = u64::MAX;
/// Slots of a SiM page.
const PAGE_SLOTS: u32 = SIM_PAGE_BYTES / 8;
/// Slots of the integrity layer's header chunk (chunk 0), not searchable.
const HEADER_SLOTS: u32 = SLOTS_PER_CHUNK;
/// Most records (2^24: their table and the key set take a few hundred MB).
const RECORDS_MAX: u64 = 1 << 24;
/// Most lookups of a run (each lookup's command and result are held until the run ends).
const REQUESTS_MAX: u64 = 10_000_000;

/// What a sim-lookup run measured.
#[derive(Clone, Debug, Serialize)]
pub struct SimLookupReport {
    pub records: u64,
    pub leaves: u32,
    pub slots_per_leaf: u32,
    /// Region pages the leaves take (two per leaf) of `ssd.sim.pages`.
    pub region_pages_used: u32,
    pub region_pages: u32,
    /// Lookups completed and checked.
    pub lookups: u64,
    /// Lookups of loaded keys (the others were drawn absent).
    pub present_lookups: u64,
    /// Lookups whose search matched a slot.
    pub hits: u64,
    /// Value gathers issued.
    pub gathers: u64,
    /// From the first arrival to the last completion.
    pub sim_time_us: f64,
    pub lookups_per_s: f64,
    /// Per lookup: arrival to the completion of its last command.
    pub latency: LatencySummary,
    /// Answers that differ from the loaded records (must be 0).
    pub verification_failures: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
    /// Chip energy of the lookups (ops and idle), mJ.
    pub energy_mj: f64,
    /// The SiM region's counters over the lookups (searches and gathers on the chip, batches,
    /// merged searches, fallback reads, …).
    pub counters: SearchCounters,
    /// The host page cache, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheReport>,
    /// The updates (`update_fraction` > 0), when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updates: Option<UpdateReport>,
}

/// The updates of a run and the write-backs they caused.
#[derive(Clone, Debug, Serialize)]
pub struct UpdateReport {
    /// Updates completed and checked.
    pub updates: u64,
    /// Lookups and updates per second of simulated time (paper 004's QPS).
    pub queries_per_s: f64,
    /// Per update: submission to its page dirtied in the cache.
    pub latency: LatencySummary,
    /// Dirty pages the cache evicted and wrote back (page writes queued with the reads).
    pub write_backs: u64,
}

/// The full-page path's host page cache over a run.
#[derive(Clone, Debug, Serialize)]
pub struct PageCacheReport {
    /// Its size, pages (`page_cache_coverage` of the leaf level's pages).
    pub pages: u64,
    /// What a hit cost, ns.
    pub hit_ns: u64,
    /// Page lookups it served and those that went to the device.
    pub hits: u64,
    pub misses: u64,
}

/// Where the leaves go: entries from slot `first_slot`, `slots_per_leaf` of them per leaf.
#[derive(Clone, Copy, Debug)]
struct Layout {
    first_slot: u32,
    slots_per_leaf: u32,
    leaves: u32,
}

/// What a lookup must answer: the matched slot and value, or nothing.
type Expected = Option<(u32, u64)>;

impl super::Stack {
    /// Loads the leaves, runs the lookups and checks every answer.
    pub(super) fn run_sim_lookup(
        &self,
        w: &SimLookupWorkload,
        control: &Control,
    ) -> LabResult<StackRun> {
        let seed = self.config.run.seed;
        let layout = layout(w, &self.ftl).map_err(|(key, m)| usage(key, m))?;
        let distribution = distribution(w).map_err(|(key, m)| usage(key, m))?;
        let arrivals = arrivals(w).map_err(|(key, m)| usage(key, m))?;
        let mut ssd = self.new_ssd(self.ssd_config(), seed)?;
        let region = ssd
            .search_region()
            .ok_or_else(|| usage("ssd.sim.pages", "the SSD has no SiM region".into()))?;
        let first_lpa = region.start;
        let leaves = Leaves::generate(w, layout, seed);
        load(&mut ssd, &leaves, first_lpa)?;
        let start = ssd.now();
        let gap = match arrivals {
            Arrivals::Every(gap) => Some(gap),
            Arrivals::Clients(_) => None,
        };
        let (requests, expected) = plan(w, &leaves, distribution, gap, start, first_lpa, seed)?;
        let n = requests.len();
        // open loop: every lookup is submitted up front; closed loop: one per client, the
        // rest as follow-ups of completed lookups
        let initial = match arrivals {
            Arrivals::Every(_) => n,
            Arrivals::Clients(c) => (c as usize).min(n),
        };
        control.start(Some(w.request_count));
        if control.is_cancelled() {
            return Ok(self.sim_lookup_run(&leaves, w, &ssd, Measured::new(), true));
        }
        let updates = updates(w, &expected, seed);
        let full_page = full_page(w).map_err(|(key, m)| usage(key, m))?;
        if full_page || !updates.is_empty() {
            let path = if full_page { Path::FullPage } else { Path::Sim };
            let clients = (w.clients.unwrap_or(1) as usize).min(n);
            let cache = cache_spec(w, layout.leaves).map_err(|(key, m)| usage(key, m))?;
            let ops = clients::Ops {
                requests: &requests,
                expected: &expected,
                updates: &updates,
            };
            let measured = run_clients(&mut ssd, w, &ops, (path, clients), cache, control)?;
            let interrupted = measured.lookups + measured.updates < n as u64;
            return Ok(self.sim_lookup_run(&leaves, w, &ssd, measured, interrupted));
        }
        let measured = sim_path_lookups(&mut ssd, w, &requests, &expected, initial, control)?;
        Ok(self.sim_lookup_run(&leaves, w, &ssd, measured, false))
    }

    fn sim_lookup_run(
        &self,
        leaves: &Leaves,
        w: &SimLookupWorkload,
        ssd: &Ssd,
        measured: Measured,
        interrupted: bool,
    ) -> StackRun {
        let device = ssd.report();
        let span_s = measured.span.as_s_f64();
        let report = SimLookupReport {
            records: w.records,
            leaves: leaves.layout.leaves,
            slots_per_leaf: leaves.layout.slots_per_leaf,
            region_pages_used: 2 * leaves.layout.leaves,
            region_pages: self.ftl.search.pages,
            lookups: measured.lookups,
            present_lookups: measured.present,
            hits: measured.hits,
            gathers: measured.gathers,
            sim_time_us: span_s * 1e6,
            lookups_per_s: if span_s > 0.0 {
                measured.lookups as f64 / span_s
            } else {
                0.0
            },
            latency: measured.latency.summary(),
            verification_failures: measured.failures,
            first_failure: measured.first_failure,
            energy_mj: device.energy.total_mj,
            counters: measured.counters,
            page_cache: measured.page_cache,
            updates: (measured.updates > 0).then(|| UpdateReport {
                updates: measured.updates,
                queries_per_s: if span_s > 0.0 {
                    (measured.lookups + measured.updates) as f64 / span_s
                } else {
                    0.0
                },
                latency: measured.update_latency.summary(),
                write_backs: measured.write_backs,
            }),
        };
        let metrics = sim_lookup_metrics(&report);
        StackRun {
            outcome: StackOutcome::SimLookup {
                report: Box::new(report),
                device: Box::new(device),
                interrupted,
            },
            metrics,
        }
    }
}

/// The SiM path's lookups: searches (and gathers of hits) through
/// [`Ssd::run_search_chained`]; the first `initial` submitted at once (open loop: all), each
/// later one when a client's lookup completes.
fn sim_path_lookups(
    ssd: &mut Ssd,
    w: &SimLookupWorkload,
    requests: &[SearchRequest],
    expected: &[Expected],
    initial: usize,
    control: &Control,
) -> LabResult<Measured> {
    let n = requests.len();
    let start = ssd.now();
    ssd.reset_measurement();
    let counters_start = ssd.search_counters();
    // the result index of each command: searched[i] of lookup i's search, follow[i] of
    // its value gather; lookup_of[r] the lookup whose search result r is
    let mut searched: Vec<usize> = (0..initial).collect();
    let mut lookup_of: Vec<Option<usize>> = (0..initial).map(Some).collect();
    let mut follow: Vec<Option<usize>> = vec![None; n];
    let mut gathers = 0;
    let results = ssd.run_search_chained(&requests[..initial], |index, done| {
        // a closed-loop client's next lookup, once its current one is done
        let mut next_lookup = |lookup_of: &mut Vec<Option<usize>>| {
            let k = searched.len();
            if initial == n || k >= n {
                return None;
            }
            searched.push(lookup_of.len());
            lookup_of.push(Some(k));
            let mut request = requests[k].clone();
            request.arrival = None;
            Some(request)
        };
        let Some(i) = lookup_of[index] else {
            return next_lookup(&mut lookup_of); // a gather completed
        };
        control.advance(1);
        let slot = w
            .gather_values
            .then(|| Ssd::bitmap_of(done)?.slots().next())
            .flatten();
        let Some(slot) = slot else {
            return next_lookup(&mut lookup_of);
        };
        follow[i] = Some(lookup_of.len());
        lookup_of.push(None);
        gathers += 1;
        let value_page = Lpa(requests[i].lpa.0 + 1);
        Some(SearchRequest::gather(
            value_page,
            ChunkMask::single(slot / SLOTS_PER_CHUNK),
        ))
    })?;
    control.finish();
    let mut measured = check_answers(
        requests, expected, &results, initial, &searched, &follow, start,
    );
    measured.counters = ssd.search_counters().since(&counters_start);
    measured.gathers = gathers as u64;
    Ok(measured)
}

/// Writes every leaf's key and value pages by ordinary host writes of the region's LPAs, then
/// flushes and runs the device to idle.
fn load(ssd: &mut Ssd, leaves: &Leaves, first_lpa: u64) -> LabResult<()> {
    let page_bytes = u64::from(ssd.page_size_bytes());
    debug_assert_eq!(page_bytes, u64::from(SIM_PAGE_BYTES));
    let mut keys = vec![0; SIM_PAGE_BYTES as usize];
    let mut values = vec![0; SIM_PAGE_BYTES as usize];
    for leaf in 0..leaves.layout.leaves {
        leaves.pages_of(leaf, &mut keys, &mut values);
        let lpa = first_lpa + 2 * u64::from(leaf);
        ssd.execute(
            &HostRequest::write(lpa * page_bytes, page_bytes),
            Some(&keys),
        )?;
        ssd.execute(
            &HostRequest::write((lpa + 1) * page_bytes, page_bytes),
            Some(&values),
        )?;
    }
    ssd.execute(&HostRequest::flush(), None)?;
    Ok(ssd.drain()?)
}

/// The lookups: a search of each key's key page arriving every `gap` from `start` (closed
/// loop, no `gap`: all at `start`, the follow-ups' arrivals cleared when submitted), and the
/// answer each must give.
#[allow(clippy::too_many_arguments)]
fn plan(
    w: &SimLookupWorkload,
    leaves: &Leaves,
    distribution: YcsbDistribution,
    gap: Option<SimTime>,
    start: SimTime,
    first_lpa: u64,
    seed: u64,
) -> LabResult<(Vec<SearchRequest>, Vec<Expected>)> {
    let mut keynums = YcsbSpec::read_update(1.0, distribution, w.records as i64)
        .generator(seed)
        .map_err(|e| usage("workload.distribution", e.to_string()))?;
    let mut miss_rng = SimRng::stream(seed, "sim-lookup.misses");
    let mut absent_rng = SimRng::stream(seed, "sim-lookup.absent");
    let n = w.request_count as usize;
    let mut requests = Vec::with_capacity(n);
    let mut expected: Vec<Expected> = Vec::with_capacity(n);
    for i in 0..w.request_count {
        let arrival = start + SimTime::from_ps(gap.map_or(0, |g| g.as_ps()) * i);
        let (key, answer) = if w.miss_fraction > 0.0 && miss_rng.chance(w.miss_fraction) {
            let key = loop {
                let key = absent_rng.below(EMPTY_KEY);
                if !leaves.contains(key) {
                    break key;
                }
            };
            (key, None)
        } else {
            let r = leaves.by_keynum[keynums.next_keynum() as usize];
            debug_assert_eq!(leaves.leaf_of(r.key), r.leaf);
            (r.key, Some((r.slot, r.value)))
        };
        let lpa = first_lpa + 2 * u64::from(leaves.leaf_of(key));
        requests.push(SearchRequest::search(Lpa(lpa as u32), SearchKey::exact(key)).at(arrival));
        expected.push(answer);
    }
    Ok((requests, expected))
}

/// Checks every lookup's answer and measures its latency (`searched[i]` and `follow[i]`: the
/// result indices of lookup `i`'s search and value gather). A lookup's arrival is its planned
/// one if it was among the `initial` requests (open loop: all), else its search's submission
/// (a closed-loop client's next lookup).
#[allow(clippy::too_many_arguments)]
fn check_answers(
    requests: &[SearchRequest],
    expected: &[Expected],
    results: &[nandlab_ftl::Executed],
    initial: usize,
    searched: &[usize],
    follow: &[Option<usize>],
    start: SimTime,
) -> Measured {
    let mut measured = Measured::new();
    let mut end = start;
    for (i, answer) in expected.iter().enumerate().take(searched.len()) {
        let search = &results[searched[i]];
        let gather = follow[i].map(|g| &results[g]);
        let done = gather.map_or(search.completed, |g| g.completed);
        let arrival = if i < initial {
            requests[i].arrival.expect("arrival set")
        } else {
            search.completed - search.latency
        };
        measured.latency.record(done - arrival);
        end = end.max(done);
        measured.lookups += 1;
        measured.present += u64::from(answer.is_some());
        let bitmap = Ssd::bitmap_of(search);
        measured.hits += u64::from(bitmap.is_some_and(|b| b.count() > 0));
        if let Err(m) = verify(answer, bitmap, gather.map(|g| g.data.as_slice())) {
            measured.failures += 1;
            if measured.first_failure.is_none() {
                let key = match &requests[i].op {
                    nandlab_ftl::SearchOp::Search(keys) => keys[0].key,
                    nandlab_ftl::SearchOp::Gather(_) => unreachable!("lookups are searches"),
                };
                measured.first_failure = Some(format!("lookup {i} (key {key:#x}): {m}"));
            }
        }
    }
    measured.span = end - start;
    measured
}

/// What the lookups measured.
struct Measured {
    lookups: u64,
    present: u64,
    hits: u64,
    gathers: u64,
    span: SimTime,
    latency: LatencyHistogram,
    failures: u64,
    first_failure: Option<String>,
    counters: SearchCounters,
    /// The full-page path's page cache (size, hit cost, hits and misses), when it has one.
    page_cache: Option<PageCacheReport>,
    /// Updates completed, their latencies, and the dirty pages written back.
    updates: u64,
    update_latency: LatencyHistogram,
    write_backs: u64,
}

impl Measured {
    /// Counts a wrong answer of lookup `i` (of `key`), keeping the first description.
    fn fail(&mut self, i: usize, key: u64, message: String) {
        self.failures += 1;
        if self.first_failure.is_none() {
            self.first_failure = Some(format!("lookup {i} (key {key:#x}): {message}"));
        }
    }

    fn new() -> Self {
        Measured {
            lookups: 0,
            present: 0,
            hits: 0,
            gathers: 0,
            span: SimTime::ZERO,
            latency: LatencyHistogram::new(),
            failures: 0,
            first_failure: None,
            counters: SearchCounters::default(),
            page_cache: None,
            updates: 0,
            update_latency: LatencyHistogram::new(),
            write_backs: 0,
        }
    }
}

/// Checks one lookup's answer: the search's bitmap (`None`: no bytes came back) and, for a
/// hit with `gather_values`, the gathered value chunk.
fn verify(
    expected: &Expected,
    bitmap: Option<nandlab_nand::MatchBitmap>,
    gathered: Option<&[u8]>,
) -> Result<(), String> {
    verify_bitmap(expected, bitmap)?;
    match (*expected, gathered) {
        (Some((slot, value)), Some(chunk)) => verify_chunk(slot, value, chunk),
        _ => Ok(()), // no gathers asked for
    }
}

/// A search's bitmap must be exactly the key's slot, or empty for an absent key.
fn verify_bitmap(
    expected: &Expected,
    bitmap: Option<nandlab_nand::MatchBitmap>,
) -> Result<(), String> {
    let bitmap = bitmap.ok_or_else(|| "the search returned no bitmap".to_string())?;
    let hits: Vec<u32> = bitmap.slots().collect();
    let Some((slot, _)) = *expected else {
        return if hits.is_empty() {
            Ok(())
        } else {
            Err(format!("absent key matched slots {hits:?}"))
        };
    };
    if hits != [slot] {
        return Err(format!("matched slots {hits:?}, stored in slot {slot}"));
    }
    Ok(())
}

/// A gathered chunk must hold `value` at `slot`.
fn verify_chunk(slot: u32, value: u64, chunk: &[u8]) -> Result<(), String> {
    let at = 8 * (slot % SLOTS_PER_CHUNK) as usize;
    let got = chunk
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| format!("the gather returned {} bytes", chunk.len()))?;
    if got == value {
        Ok(())
    } else {
        Err(format!("gathered value {got:#x}, stored {value:#x}"))
    }
}

fn usage(key: &str, message: String) -> LabError {
    LabError::Usage(format!("{key}: {message}"))
}

/// The sim-lookup metric row of a report ([`super::SIM_LOOKUP_METRICS`] order).
pub fn sim_lookup_metrics(r: &SimLookupReport) -> Vec<(&'static str, f64)> {
    let c = &r.counters;
    let values = [
        r.lookups as f64,
        r.hits as f64,
        r.lookups_per_s,
        r.latency.p50_us,
        r.latency.p99_us,
        r.latency.max_us,
        c.chip_searches as f64,
        c.chip_gathers as f64,
        c.keys_searched as f64,
        c.batches as f64,
        c.merged_searches as f64,
        c.fallback_reads as f64,
        c.controller_answers as f64,
        r.energy_mj,
        r.verification_failures as f64,
        r.sim_time_us,
        r.updates.as_ref().map_or(0.0, |u| u.updates as f64),
        r.updates
            .as_ref()
            .map_or(r.lookups_per_s, |u| u.queries_per_s),
        r.updates.as_ref().map_or(0.0, |u| u.write_backs as f64),
    ];
    super::SIM_LOOKUP_METRICS
        .iter()
        .map(|m| m.name)
        .zip(values)
        .collect()
}

mod checks;
mod clients;
mod leaves;
mod page_cache;
pub(super) use checks::check;
use checks::{Arrivals, arrivals, cache_spec, distribution, full_page, layout, updates};
use clients::{CacheSpec, Path, run_clients};
use leaves::Leaves;

#[cfg(test)]
mod tests;
