//! The evaluation harness of paper 004 §VI (SPEC S7): a generic index — an in-memory top level
//! (each leaf's key range) over on-flash leaves of a key page and a value page — driven by a
//! YCSB read/update mix, with a host page cache sized by "cache coverage".
//!
//! - **Baseline** (§VI-A3): a read needs the leaf's key and value pages in the page cache; a
//!   miss is a full-page read (through the page ECC) moved to the host and cached clean.
//! - **SiM**: a read bypasses the cache: page-open of the key page, search, gather of the value
//!   chunk from the value page, page-close; only the 64-byte bitmap and the 64-byte chunk reach
//!   the host. A value page with a buffered (dirty) update is served from the cache after the
//!   search.
//! - **Updates** (both): the value page is read into the cache if absent and marked dirty;
//!   evicting a dirty page writes it back (a program of a new page). Periodic flushing is off,
//!   as in the paper (§VI-A4).
//!
//! One query runs at a time (first come, first served): its chip ops are submitted when the
//! previous query finished and it ends when they complete; host-bus transfers add their time at
//! the host bus rate. QPS counts the queries after the first `warmup_share` (30 %), over their
//! summed latencies. Energy is the NAND chips' (stages and idle) over the same span.

mod batch_run;
mod cache;
mod table1;

pub use batch_run::{BatchConfig, BatchResult, PAPER_DEADLINE, run_batched};
pub use cache::{Evicted, PageCache};
pub use table1::{Table1, Table1Column, table1};

use nandlab_core::{SimRng, SimTime};
use nandlab_ftl::search::{LogicalPage, SearchStore, StoreConfig};
use nandlab_nand::search::format::{self, SLOTS_PER_CHUNK};
use nandlab_nand::{ChunkMask, NandConfig, NandSim, PageAddress, SearchKey};
use nandlab_search::header::DATA_BYTES;
use nandlab_search::index::{chip_bus_bytes, chip_energy_pj};
use nandlab_search::leaf::{EMPTY_KEY, LEAF_SLOTS};
use nandlab_search::{SearchError, SearchResult};
use nandlab_workload::ycsb::{YcsbDistribution, YcsbOp, YcsbSpec, key_value, query_concentration};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which read path the host uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvalMode {
    Baseline,
    Sim,
}

impl EvalMode {
    pub fn label(self) -> &'static str {
        match self {
            EvalMode::Baseline => "baseline",
            EvalMode::Sim => "sim",
        }
    }
}

/// Host bus of Table II: PCIe Gen 3, 128-bit bus at 250 MHz = 4 bytes per ns.
pub const HOST_BUS_BYTES_PER_NS: f64 = 128.0 / 8.0 * 0.25;
/// A search's result bitmap on the host bus (512 bits, §VII-B).
pub const BITMAP_BYTES: u64 = 64;

/// [`YcsbDistribution`] as a config's JSON (a harness run is an experiment's point).
#[derive(Serialize, Deserialize)]
#[serde(remote = "YcsbDistribution", rename_all = "lowercase")]
pub(crate) enum Distribution {
    Uniform,
    Zipfian,
    Latest,
    Hotspot {
        data_fraction: f64,
        op_fraction: f64,
    },
    Zipf {
        alpha: f64,
    },
}

/// One run of the harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalConfig {
    pub mode: EvalMode,
    /// Leaves of the index (each a key page and a value page).
    pub leaves: u32,
    /// Entries per leaf (1..=504).
    pub fill_slots: usize,
    /// Page-cache size as a share of the index's pages (0 = no cache).
    pub cache_coverage: f64,
    /// Share of reads (the rest are updates).
    pub read_share: f64,
    #[serde(with = "Distribution")]
    pub distribution: YcsbDistribution,
    pub queries: u64,
    /// Share of the queries run before measuring (paper: 30 %).
    pub warmup_share: f64,
    /// SiM mode: share of reads served by search + gather; the others are full-page reads
    /// through the page cache as in the baseline (paper §VII-F, Fig. 18). 1 by default.
    pub sim_read_share: f64,
    pub seed: u64,
}

impl EvalConfig {
    pub fn new(
        mode: EvalMode,
        read_share: f64,
        cache_coverage: f64,
        distribution: YcsbDistribution,
    ) -> Self {
        EvalConfig {
            mode,
            leaves: 1000,
            fill_slots: 480,
            cache_coverage,
            read_share,
            distribution,
            queries: 20_000,
            warmup_share: 0.3,
            sim_read_share: 1.0,
            seed: 1,
        }
    }

    pub(super) fn validate(&self) -> SearchResult<()> {
        let bad = |argument: &'static str, message: String| {
            Err(SearchError::Argument { argument, message })
        };
        if self.leaves == 0 || self.leaves > 1 << 20 {
            return bad("leaves", format!("{} is not in 1..=2^20", self.leaves));
        }
        if self.fill_slots == 0 || self.fill_slots > LEAF_SLOTS {
            return bad(
                "fill_slots",
                format!("{} is not in 1..={LEAF_SLOTS}", self.fill_slots),
            );
        }
        if !(0.0..=1.0).contains(&self.cache_coverage) {
            return bad(
                "cache_coverage",
                format!("{} is not in [0, 1]", self.cache_coverage),
            );
        }
        if !(0.0..=1.0).contains(&self.read_share) {
            return bad(
                "read_share",
                format!("{} is not in [0, 1]", self.read_share),
            );
        }
        if !(0.0..=1.0).contains(&self.sim_read_share) {
            return bad(
                "sim_read_share",
                format!("{} is not in [0, 1]", self.sim_read_share),
            );
        }
        if !(0.0..1.0).contains(&self.warmup_share) || self.queries == 0 {
            return bad(
                "warmup_share",
                format!(
                    "{} with {} queries measures nothing",
                    self.warmup_share, self.queries
                ),
            );
        }
        Ok(())
    }
}

/// What a run measured (over the queries after warm-up).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    pub queries_measured: u64,
    pub elapsed_ns: f64,
    pub qps: f64,
    /// NAND chips' energy (stages + idle) in nJ.
    pub nand_energy_nj: f64,
    /// Read latency percentiles p25, p50, p75, p99 in ns.
    pub read_latency_ns: [f64; 4],
    /// Bytes on the chips' buses (commands, addresses, data).
    pub internal_bus_bytes: u64,
    /// Bytes on the host bus (pages, bitmaps, chunks).
    pub host_bus_bytes: u64,
    pub write_backs: u64,
    pub full_page_reads: u64,
    pub chip_lookups: u64,
    /// Reads whose pages were all in the page cache (baseline) or whose value page was dirty
    /// there (SiM).
    pub cache_served_reads: u64,
    /// SiM reads whose value differed from the reference (bit errors; 0 with errors off).
    pub wrong_values: u64,
    /// Shares of the four most frequent keys of the workload (Table III), percent.
    pub concentration: [f64; 4],
}

/// A key's place and current value (the reference; buffered updates included): 16 bytes, so a
/// lookup reads one cache line of the reference.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Record {
    pub(super) value: u64,
    pub(super) leaf: u32,
    /// Data slot in the leaf.
    pub(super) slot: u16,
}

pub(super) struct Index {
    pub(super) store: SearchStore,
    /// Per key number, its record.
    pub(super) records: Vec<Record>,
    /// Per leaf, its key numbers by data slot (to write a value page back).
    pub(super) keynums: Vec<Vec<u32>>,
}

impl Index {
    /// The key of key number `keynum` (YCSB's hashed key: what the leaves store).
    pub(super) fn key(keynum: i64) -> u64 {
        key_value(keynum, true) as u64
    }

    /// The values of `leaf` by data slot.
    fn leaf_values(&self, leaf: u32) -> Vec<u64> {
        self.keynums[leaf as usize]
            .iter()
            .map(|k| self.records[*k as usize].value)
            .collect()
    }
}

pub(super) fn encode(slots: &[u64]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(DATA_BYTES);
    for i in 0..LEAF_SLOTS {
        bytes.extend_from_slice(&slots.get(i).copied().unwrap_or(EMPTY_KEY).to_le_bytes());
    }
    bytes
}

pub(super) fn key_page(leaf: u32) -> LogicalPage {
    LogicalPage(2 * leaf)
}

pub(super) fn value_page(leaf: u32) -> LogicalPage {
    LogicalPage(2 * leaf + 1)
}

/// Every block of the device, die by die in turn (consecutive blocks on different dies).
fn all_blocks(sim: &NandSim) -> Vec<PageAddress> {
    let g = sim.geometry();
    let mut blocks = Vec::new();
    for block in 0..g.blocks_per_plane {
        for plane in 0..g.planes_per_die {
            for die in 0..g.dies_per_chip {
                for chip in 0..g.chips_per_channel {
                    for channel in 0..g.channels {
                        blocks.push(PageAddress {
                            channel,
                            chip,
                            die,
                            plane,
                            block,
                            page: 0,
                        });
                    }
                }
            }
        }
    }
    blocks
}

pub(super) fn settle(sim: &mut NandSim) {
    let mut done = Vec::new();
    sim.run_until_idle(&mut done);
}

pub(super) fn load(sim: &mut NandSim, config: &EvalConfig) -> SearchResult<Index> {
    let records = u64::from(config.leaves) * config.fill_slots as u64;
    let dies = sim.geometry().total_dies();
    let store = SearchStore::new(
        sim,
        all_blocks(sim),
        StoreConfig {
            logical_pages: 2 * config.leaves,
            stripe_blocks: dies,
            ..StoreConfig::default()
        },
    )?;
    // (key, key number) packed in one integer: sorting primitives is twice as fast as tuples
    let mut packed: Vec<u128> = (0..records as u32)
        .map(|keynum| {
            u128::from(key_value(i64::from(keynum), true) as u64) << 32 | u128::from(keynum)
        })
        .collect();
    packed.sort_unstable();
    let keys: Vec<(u64, u32)> = packed
        .into_iter()
        .map(|p| ((p >> 32) as u64, p as u32))
        .collect();
    debug_assert!(
        keys.windows(2).all(|w| w[0].0 < w[1].0),
        "FNV-64 keys are distinct here"
    );
    let mut index = Index {
        store,
        records: vec![Record::default(); records as usize],
        keynums: Vec::new(),
    };
    for (leaf, chunk) in keys.chunks(config.fill_slots).enumerate() {
        let leaf = leaf as u32;
        let leaf_keys: Vec<u64> = chunk.iter().map(|k| k.0).collect();
        let values: Vec<u64> = leaf_keys
            .iter()
            .map(|k| k.rotate_left(17) ^ 0x5151)
            .collect();
        for (slot, ((_, keynum), value)) in chunk.iter().zip(&values).enumerate() {
            index.records[*keynum as usize] = Record {
                value: *value,
                leaf,
                slot: slot as u16,
            };
        }
        let now = sim.now();
        index
            .store
            .write(sim, now, key_page(leaf), &encode(&leaf_keys))?;
        index
            .store
            .write(sim, now, value_page(leaf), &encode(&values))?;
        settle(sim);
        index.keynums.push(chunk.iter().map(|k| k.1).collect());
    }
    Ok(index)
}

/// Per-query tallies.
#[derive(Default)]
struct Tally {
    host_bytes: u64,
    write_backs: u64,
    full_reads: u64,
    chip_lookups: u64,
    cache_served: u64,
    wrong: u64,
}

struct Run<'a> {
    sim: &'a mut NandSim,
    index: Index,
    cache: PageCache,
    mode: EvalMode,
    tally: Tally,
    sim_read_share: f64,
    /// Draws which SiM-mode reads are full-page reads.
    full_read_rng: SimRng,
    /// The chip model's completions of a query (reused).
    done: Vec<nandlab_nand::Completion>,
}

/// YCSB ops drawn ahead of the one running (prefetch distance).
const LOOKAHEAD: usize = 3;

fn keynum_of(op: &YcsbOp) -> Option<i64> {
    match *op {
        YcsbOp::Read { keynum } | YcsbOp::Update { keynum } => Some(keynum),
        _ => None,
    }
}

impl Run<'_> {
    /// Prefetch hints for the queries drawn ahead (`ahead[0]` runs next): the farthest one's
    /// record, the middle one's pages' table entries, the next one's key page bytes and value
    /// chunk. Speed only: nothing observable changes.
    fn prefetch(&self, ahead: &VecDeque<YcsbOp>) {
        use nandlab_core::prefetch::prefetch;
        let records = &self.index.records;
        if let Some(k) = ahead.get(2).and_then(keynum_of) {
            prefetch(records, k as usize);
        }
        if self.mode != EvalMode::Sim {
            return;
        }
        if let Some(k) = ahead.get(1).and_then(keynum_of)
            && let Some(&Record { leaf, .. }) = records.get(k as usize)
        {
            for page in [key_page(leaf), value_page(leaf)] {
                if let Some(address) = self.index.store.address_of(page) {
                    self.sim.prefetch_stored_entry(&address);
                }
            }
        }
        if let Some(k) = ahead.front().and_then(keynum_of)
            && let Some(&Record { leaf, slot, .. }) = records.get(k as usize)
        {
            if let Some(address) = self.index.store.address_of(key_page(leaf)) {
                self.sim.prefetch_stored_bytes(&address, None);
            }
            if let Some(address) = self.index.store.address_of(value_page(leaf)) {
                let chunk = (u32::from(slot) + SLOTS_PER_CHUNK) / SLOTS_PER_CHUNK;
                self.sim.prefetch_stored_bytes(&address, Some(chunk));
            }
        }
    }

    /// Caches `page` (dirty or clean), writing back a dirty page it evicts.
    fn cache_insert(&mut self, page: LogicalPage, dirty: bool) -> SearchResult<()> {
        if let Some(evicted) = self.cache.insert(page, dirty)
            && evicted.dirty
        {
            debug_assert_eq!(evicted.page.0 % 2, 1, "only value pages are updated");
            let leaf = evicted.page.0 / 2;
            let now = self.sim.now();
            let bytes = encode(&self.index.leaf_values(leaf));
            self.index
                .store
                .write(self.sim, now, evicted.page, &bytes)?;
            self.tally.host_bytes += SIM_PAGE_HOST_BYTES;
            self.tally.write_backs += 1;
        }
        Ok(())
    }

    /// A page into the host: a hit in the cache or a full-page read that is then cached.
    fn fetch(&mut self, page: LogicalPage) -> SearchResult<bool> {
        if self.cache.touch(page) {
            return Ok(true);
        }
        let now = self.sim.now();
        self.index.store.read(self.sim, now, page)?;
        self.tally.full_reads += 1;
        self.tally.host_bytes += SIM_PAGE_HOST_BYTES;
        self.cache_insert(page, false)?;
        Ok(false)
    }

    fn read(&mut self, keynum: i64) -> SearchResult<()> {
        let record = self.index.records[keynum as usize];
        let leaf = record.leaf;
        match self.mode {
            EvalMode::Sim
                if self.sim_read_share >= 1.0 || self.full_read_rng.chance(self.sim_read_share) =>
            {
                self.sim_read(Index::key(keynum), record)?
            }
            EvalMode::Baseline | EvalMode::Sim => {
                let key_hit = self.fetch(key_page(leaf))?;
                let value_hit = self.fetch(value_page(leaf))?;
                if key_hit && value_hit {
                    self.tally.cache_served += 1;
                }
            }
        }
        Ok(())
    }

    fn sim_read(&mut self, key: u64, record: Record) -> SearchResult<()> {
        let Record {
            value: expected,
            leaf,
            ..
        } = record;
        let buffered = self.cache.state(value_page(leaf)) == Some(true);
        let now = self.sim.now();
        let store = &mut self.index.store;
        let open = store.open(self.sim, now, key_page(leaf))?;
        let bitmap = store.search(self.sim, now, &open, &[SearchKey::exact(key)])?[0];
        self.tally.chip_lookups += 1;
        self.tally.host_bytes += BITMAP_BYTES;
        let hit = bitmap.slots().next();
        if buffered {
            self.cache.touch(value_page(leaf));
            self.tally.cache_served += 1;
        } else if let Some(hit) = hit {
            let chunk = hit / SLOTS_PER_CHUNK;
            let bytes =
                store.gather_page(self.sim, now, value_page(leaf), ChunkMask::single(chunk))?;
            self.tally.host_bytes += bytes.len() as u64;
            if format::slot(&bytes, hit % SLOTS_PER_CHUNK) != expected {
                self.tally.wrong += 1;
            }
        } else {
            self.tally.wrong += 1;
        }
        store.close(self.sim, now, open)?;
        Ok(())
    }

    fn update(&mut self, keynum: i64, value: u64) -> SearchResult<()> {
        let leaf = self.index.records[keynum as usize].leaf;
        let page = value_page(leaf);
        if self.cache.state(page).is_none() {
            let now = self.sim.now();
            self.index.store.read(self.sim, now, page)?;
            self.tally.full_reads += 1;
            self.tally.host_bytes += SIM_PAGE_HOST_BYTES;
        }
        self.index.records[keynum as usize].value = value;
        self.cache_insert(page, true)
    }
}

/// A whole 4 KiB page on the host bus.
const SIM_PAGE_HOST_BYTES: u64 = 4096;

pub(super) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Runs one configuration on a fresh chip model built from `chip` (a `[search]` preset such
/// as `sim2024`).
pub fn run_eval(chip: &NandConfig, config: &EvalConfig) -> SearchResult<EvalResult> {
    config.validate()?;
    let mut sim = NandSim::new(chip.clone(), config.seed)?;
    let index = load(&mut sim, config)?;
    let records = i64::from(config.leaves) * config.fill_slots as i64;
    let spec = YcsbSpec::read_update(config.read_share, config.distribution, records);
    let mut ops = spec
        .generator(config.seed)
        .map_err(|e| SearchError::Argument {
            argument: "workload",
            message: e.to_string(),
        })?;
    let cache_pages = (config.cache_coverage * f64::from(2 * config.leaves)).round() as usize;
    let mut run = Run {
        sim: &mut sim,
        index,
        cache: PageCache::new(cache_pages),
        mode: config.mode,
        tally: Tally::default(),
        sim_read_share: config.sim_read_share,
        full_read_rng: SimRng::stream(config.seed, "eval.full-page-reads"),
        done: Vec::with_capacity(16),
    };
    let warmup = (config.queries as f64 * config.warmup_share) as u64;
    let mut read_latencies = Vec::new();
    let mut elapsed_ns = 0.0;
    let (mut energy0, mut bus0) = (0.0, 0);
    // the YCSB ops are drawn three ahead (the same sequence) so that what the next queries
    // touch is prefetched: the reference tables, then the chip's stored pages
    let mut ahead: VecDeque<YcsbOp> = (0..config.queries.min(LOOKAHEAD as u64))
        .map(|_| ops.next_op())
        .collect();
    for q in 0..config.queries {
        let op = ahead.pop_front().expect("drawn ahead");
        if q + (LOOKAHEAD as u64) < config.queries {
            ahead.push_back(ops.next_op());
        }
        run.prefetch(&ahead);
        if q == warmup {
            energy0 = chip_energy_pj(run.sim);
            bus0 = chip_bus_bytes(run.sim);
            run.tally = Tally::default();
        }
        let start: SimTime = run.sim.now();
        let host_before = run.tally.host_bytes;
        let is_read = match op {
            YcsbOp::Read { keynum } => {
                run.read(keynum)?;
                true
            }
            YcsbOp::Update { keynum } => {
                run.update(keynum, q)?;
                false
            }
            other => unreachable!("a read/update mix produced {other:?}"),
        };
        run.done.clear();
        run.sim.run_until_idle(&mut run.done);
        let host_ns = (run.tally.host_bytes - host_before) as f64 / HOST_BUS_BYTES_PER_NS;
        let latency_ns = (run.sim.now() - start).as_ns_f64() + host_ns;
        if q >= warmup {
            elapsed_ns += latency_ns;
            if is_read {
                read_latencies.push(latency_ns);
            }
        }
    }
    read_latencies.sort_unstable_by(f64::total_cmp);
    let measured = config.queries - warmup;
    let tally = &run.tally;
    Ok(EvalResult {
        queries_measured: measured,
        elapsed_ns,
        qps: if elapsed_ns > 0.0 {
            measured as f64 / (elapsed_ns * 1e-9)
        } else {
            f64::INFINITY
        },
        nand_energy_nj: (chip_energy_pj(run.sim) - energy0) / 1e3,
        read_latency_ns: [0.25, 0.5, 0.75, 0.99].map(|p| percentile(&read_latencies, p)),
        internal_bus_bytes: chip_bus_bytes(run.sim) - bus0,
        host_bus_bytes: tally.host_bytes,
        write_backs: tally.write_backs,
        full_page_reads: tally.full_reads,
        chip_lookups: tally.chip_lookups,
        cache_served_reads: tally.cache_served,
        wrong_values: tally.wrong,
        concentration: query_concentration(&spec, config.seed, config.queries).map_err(|e| {
            SearchError::Argument {
                argument: "workload",
                message: e.to_string(),
            }
        })?,
    })
}

#[cfg(test)]
mod tests;
