//! Batched SiM searches under concurrency (paper 004 §IV-E, §VII-E; SPEC S5, R-S4): `clients`
//! closed-loop readers, each issuing its next point lookup when the previous one completed.
//! Lookups go through the [`DeadlineScheduler`]: with a deadline (paper: 4 µs, a quarter of the
//! 16 µs SLC read), searches to the same key page are dispatched as one batch — one page-open,
//! one search of k keys, one gather of the chunks they hit from the value page, one page-close;
//! without one, every lookup is its own batch. The controller sends a die one batch at a time
//! (the next when its page-close completed); lookups wait in the scheduler meanwhile, so a busy
//! die lets lookups to its pages gather. All dies run concurrently; a lookup completes with its
//! batch's page-close. Read-only (as the paper's 3.7× point).

use super::{
    BITMAP_BYTES, EvalConfig, EvalMode, HOST_BUS_BYTES_PER_NS, Index, key_page, load, percentile,
    value_page,
};
use nandlab_core::SimTime;
use nandlab_ftl::search::LogicalPage;
use nandlab_ftl::search::deadline::{DeadlineScheduler, PendingSearch};
use nandlab_nand::search::format::SLOTS_PER_CHUNK;
use nandlab_nand::{ChunkMask, NandConfig, NandSim, OpKind, SearchKey};
use nandlab_search::{SearchError, SearchResult};
use nandlab_workload::ycsb::{YcsbDistribution, YcsbOp, YcsbSpec};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// The paper's deadline (§VII-E).
pub const PAPER_DEADLINE: SimTime = SimTime::from_ns(4000);

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BatchConfig {
    pub leaves: u32,
    pub fill_slots: usize,
    /// Closed-loop readers (≤ 65,535).
    pub clients: u32,
    pub queries: u64,
    pub warmup_share: f64,
    #[serde(with = "super::Distribution")]
    pub distribution: YcsbDistribution,
    /// `None`: no batching.
    pub deadline: Option<SimTime>,
    pub seed: u64,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BatchResult {
    pub queries_measured: u64,
    pub qps: f64,
    /// Share of lookups dispatched in a batch with at least one other lookup.
    pub merge_probability: f64,
    /// Lookups per dispatched batch.
    pub batch_size_mean: f64,
    /// Read latency p25, p50, p75, p99 in ns (arrival to completion, host bus included).
    pub read_latency_ns: [f64; 4],
}

/// Runs a batched read-only workload on a fresh chip model from `chip`.
pub fn run_batched(chip: &NandConfig, config: &BatchConfig) -> SearchResult<BatchResult> {
    if config.clients == 0 || config.clients > u32::from(u16::MAX) {
        return Err(SearchError::Argument {
            argument: "clients",
            message: format!("{} is not in 1..=65535", config.clients),
        });
    }
    let load_config = EvalConfig {
        leaves: config.leaves,
        fill_slots: config.fill_slots,
        queries: config.queries,
        warmup_share: config.warmup_share,
        seed: config.seed,
        ..EvalConfig::new(EvalMode::Sim, 1.0, 0.0, config.distribution)
    };
    load_config.validate()?;
    let mut sim = NandSim::new(chip.clone(), config.seed)?;
    let mut index = load(&mut sim, &load_config)?;
    let keys_max = sim.search_config().map_or(1, |s| s.batch_keys_max as usize);
    let records = i64::from(config.leaves) * config.fill_slots as i64;
    let mut ops = YcsbSpec::read_update(1.0, config.distribution, records)
        .generator(config.seed)
        .map_err(|e| SearchError::Argument {
            argument: "workload",
            message: e.to_string(),
        })?;
    let mut scheduler = DeadlineScheduler::new(config.deadline, keys_max, config.clients as usize);
    let die_of_leaf: Vec<usize> = (0..config.leaves)
        .map(|leaf| {
            let address = index.store.address_of(key_page(leaf)).expect("loaded");
            sim.geometry().die_id(&address).0 as usize
        })
        .collect();
    let mut die_busy = vec![false; sim.geometry().total_dies() as usize];
    let start = sim.now();
    let mut clients: BinaryHeap<Reverse<(SimTime, u32)>> =
        (0..config.clients).map(|c| Reverse((start, c))).collect();
    // Batches in flight per key page, completed in order by their page-close.
    let mut in_flight: HashMap<LogicalPage, VecDeque<Vec<PendingSearch>>> = HashMap::new();
    let warmup = (config.queries as f64 * config.warmup_share) as u64;
    let (mut issued, mut completed) = (0u64, 0u64);
    let (mut merged, mut batches, mut dispatched) = (0u64, 0u64, 0u64);
    let mut measure_from = start;
    let mut latencies = Vec::new();
    let mut done = Vec::new();
    let lookup_host_ns = (BITMAP_BYTES + 64) as f64 / HOST_BUS_BYTES_PER_NS;
    loop {
        let t_client = clients
            .peek()
            .filter(|_| issued < config.queries)
            .map(|r| r.0.0);
        let ready = |page: LogicalPage| !die_busy[die_of_leaf[(page.0 / 2) as usize]];
        let t_due = scheduler.next_due(ready).map(|t| t.max(sim.now()));
        let t_chip = sim.next_event_time();
        let Some(now) = [t_client, t_due, t_chip].into_iter().flatten().min() else {
            break;
        };
        if t_chip == Some(now) {
            done.clear();
            sim.process_next(&mut done);
            for c in done.iter().filter(|c| c.kind == OpKind::PageClose) {
                let page = LogicalPage(c.tag as u32);
                die_busy[die_of_leaf[(page.0 / 2) as usize]] = false;
                let batch = in_flight
                    .get_mut(&page)
                    .and_then(|q| q.pop_front())
                    .expect("a page-close ends a dispatched batch");
                for search in batch {
                    completed += 1;
                    if completed == warmup {
                        measure_from = c.completed;
                    }
                    if completed > warmup {
                        latencies
                            .push((c.completed - search.submitted).as_ns_f64() + lookup_host_ns);
                    }
                    clients.push(Reverse((c.completed, (search.id & 0xffff) as u32)));
                }
            }
        } else if t_due == Some(now) {
            let batch = scheduler.pop_due(now, ready).expect("due");
            die_busy[die_of_leaf[(batch.page.0 / 2) as usize]] = true;
            batches += 1;
            dispatched += batch.searches.len() as u64;
            if batch.searches.len() > 1 {
                merged += batch.searches.len() as u64;
            }
            let leaf = batch.page.0 / 2;
            let keys: Vec<SearchKey> = batch
                .searches
                .iter()
                .map(|s| SearchKey::exact(s.key))
                .collect();
            let store = &mut index.store;
            let open = store.open(&mut sim, now, batch.page)?;
            let bitmaps = store.search(&mut sim, now, &open, &keys)?;
            let mut chunks = 0u64;
            for bitmap in &bitmaps {
                if let Some(slot) = bitmap.slots().next() {
                    chunks |= 1 << (slot / SLOTS_PER_CHUNK);
                }
            }
            if chunks != 0 {
                store.gather_page(&mut sim, now, value_page(leaf), ChunkMask(chunks))?;
            }
            store.close(&mut sim, now, open)?;
            in_flight
                .entry(batch.page)
                .or_default()
                .push_back(batch.searches);
        } else {
            let Reverse((_, client)) = clients.pop().expect("peeked");
            let YcsbOp::Read { keynum } = ops.next_op() else {
                unreachable!("a read-only mix")
            };
            let leaf = index.records[keynum as usize].leaf;
            let search = PendingSearch {
                id: (issued << 16) | u64::from(client),
                page: key_page(leaf),
                key: Index::key(keynum),
                submitted: now,
            };
            issued += 1;
            scheduler
                .submit(search)
                .map_err(|_| SearchError::Argument {
                    argument: "clients",
                    message: "more lookups queued than clients".into(),
                })?;
        }
    }
    debug_assert_eq!(completed, config.queries);
    latencies.sort_unstable_by(f64::total_cmp);
    let span_ns = (sim.now() - measure_from).as_ns_f64();
    let measured = completed - warmup;
    Ok(BatchResult {
        queries_measured: measured,
        qps: measured as f64 / (span_ns * 1e-9),
        merge_probability: merged as f64 / dispatched.max(1) as f64,
        batch_size_mean: dispatched as f64 / batches.max(1) as f64,
        read_latency_ns: [0.25, 0.5, 0.75, 0.99].map(|p| percentile(&latencies, p)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_nand::preset;

    fn run(distribution: YcsbDistribution, deadline: Option<SimTime>) -> BatchResult {
        let config = BatchConfig {
            leaves: 1000,
            fill_slots: 50,
            clients: 32,
            queries: 4000,
            warmup_share: 0.3,
            distribution,
            deadline,
            seed: 1,
        };
        run_batched(&preset("sim2024").unwrap(), &config).unwrap()
    }

    #[test]
    fn batching_pays_only_under_heavy_skew() {
        let gain = |distribution| {
            let plain = run(distribution, None);
            let batched = run(distribution, Some(PAPER_DEADLINE));
            assert_eq!(plain.merge_probability, 0.0);
            eprintln!("{distribution:?}: {plain:?}\n{batched:?}");
            (batched.qps / plain.qps, batched.merge_probability)
        };
        let (steep, steep_merges) = gain(YcsbDistribution::Zipf { alpha: 1.3 });
        let (mild, _) = gain(YcsbDistribution::Zipf { alpha: 0.5 });
        let (flat, flat_merges) = gain(YcsbDistribution::Uniform);
        assert!(steep > 2.0 && steep_merges > 0.4, "{steep} {steep_merges}");
        assert!(mild < 1.3, "{mild}");
        assert!(flat < 1.1 && flat_merges < 0.05, "{flat} {flat_merges}");
        let once = run(YcsbDistribution::Zipf { alpha: 0.9 }, Some(PAPER_DEADLINE));
        assert_eq!(
            once,
            run(YcsbDistribution::Zipf { alpha: 0.9 }, Some(PAPER_DEADLINE))
        );
    }
}
