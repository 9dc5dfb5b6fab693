//! One point of the PCM experiments (thesis 001 §5.1): an SSD built by the stack builder from
//! a `[pcm]` section (or none), driven by the desktop workload with real content, measured over
//! the workload after its fill phase.
//!
//! The flash: the `slc` chip preset (NANDFlashSim's Table I, paper 003: read 25 µs, program
//! 250 µs, erase 1.5 ms) reshaped to the thesis's flash (4 KiB pages, 64 pages per block), 2
//! planes, 25 % over-provisioning, greedy GC, full payloads. The thesis's own SSD (Table 5.1)
//! programs in 200 µs, not 250 µs: program time here is 25 % longer than the thesis's, which
//! weighs on the write-time results (R-P2) of every variant alike (docs/experiments.md). Requests are issued one at a time at their arrival (a desktop: queue
//! depth 1, with idle gaps).

use crate::error::{LabError, LabResult};
use crate::stack::Stack;
use nandlab_ftl::{HostOp, HostRequest, PcmStage, Ssd, SsdReport};
use nandlab_workload::content::{DesktopGenerator, DesktopSpec};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Flash pages per block and page size of the experiments (the thesis's shape).
pub const PAGE_SIZE_BYTES: u32 = 4096;
pub const PAGES_PER_BLOCK: u32 = 64;

/// What a point measured (over the workload after the fill).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PcmMeasure {
    pub host_page_writes: u64,
    pub flash_pages_programmed: u64,
    pub erases: u64,
    pub gc_page_copies: u64,
    /// Hybrid mapping: switch, partial and full merges.
    pub ftl_merges_switch: u64,
    pub ftl_merges_partial: u64,
    pub ftl_merges_full: u64,
    /// Sum of the host write requests' latencies, seconds.
    pub write_time_s: f64,
    pub nand_energy_mj: f64,
    pub pcm_read_energy_mj: f64,
    pub pcm_write_energy_mj: f64,
    /// Hashing energy of dedup, mJ.
    pub hash_energy_mj: f64,
    pub merges: u64,
    pub sequential_share: f64,
    /// IPL: log sectors programmed into flash (partial-page programs on the chip model: in
    /// `erases`, `write_time_s` and `nand_energy_mj`, not in `flash_pages_programmed`).
    pub log_sector_writes: u64,
    /// IPL: live log sectors moved when their log block was reclaimed, and log-block erases
    /// (included in `erases`).
    pub log_sector_copies: u64,
    pub log_area_erases: u64,
    pub dedup_checked: u64,
    pub dedup_shared: u64,
    pub dedup_unchanged: u64,
    /// PCM search time per lookup, ns.
    pub search_ns_per_lookup: f64,
    /// Physical pages saved by sharing at the end (Σ refcount − 1), over logical pages used.
    pub space_saved_fraction: f64,
    /// PCM wear: max / mean writes over the words written (1 = even).
    pub pcm_wear_max_over_mean: f64,
    pub check_failures: u64,
}

impl PcmMeasure {
    pub fn energy_mj(&self) -> f64 {
        self.nand_energy_mj
            + self.pcm_read_energy_mj
            + self.pcm_write_energy_mj
            + self.hash_energy_mj
    }
}

/// The stack of a point: the flash above with `blocks_per_plane`, the FTL mapping `mapping`
/// (`page` or `hybrid`) and `pcm` (the `[pcm]` section's table, or none), built as typed
/// TOML values (no config text).
pub fn stack(blocks_per_plane: u32, mapping: &str, pcm: Option<toml::Table>) -> LabResult<Stack> {
    use toml::Value;
    let geometry = table([
        ("dies_per_chip", Value::Integer(1)),
        ("planes_per_die", Value::Integer(2)),
        ("blocks_per_plane", blocks_per_plane.into()),
        ("pages_per_block", PAGES_PER_BLOCK.into()),
        ("page_size_bytes", PAGE_SIZE_BYTES.into()),
    ]);
    let nand = table([
        ("preset", "slc".into()),
        ("geometry", Value::Table(geometry)),
    ]);
    let mut ssd = table([
        ("op_fraction", Value::Float(0.25)),
        ("payload", "full".into()),
        ("mapping", Value::Table(table([("kind", mapping.into())]))),
    ]);
    if mapping == "page" {
        ssd.insert(
            "gc".into(),
            Value::Table(table([("policy", "greedy".into())])),
        );
    }
    // the point runs the desktop generator with its own bytes (`run_point`), not this
    // placeholder workload; `[content]` only satisfies the stack's rule that `[pcm]` needs bytes
    let workload = table([
        ("kind", "synthetic".into()),
        ("pattern", "random".into()),
        ("read_fraction", Value::Float(0.0)),
        ("request_size_bytes", Value::Integer(4096)),
        ("span_bytes", Value::Integer(0)),
        ("request_count", Value::Integer(1)),
    ]);
    let mut root = table([
        ("nand", Value::Table(nand)),
        ("ssd", Value::Table(ssd)),
        ("workload", Value::Table(workload)),
    ]);
    if let Some(pcm) = pcm {
        root.insert("content".into(), Value::Table(toml::Table::new()));
        root.insert("pcm".into(), Value::Table(pcm));
    }
    let source = crate::stack::Source {
        origin: "pcm point",
        text: "",
    };
    Stack::from_table(source, root, Path::new("."))
}

/// A TOML table of `entries`.
pub fn table<const N: usize>(entries: [(&str, toml::Value); N]) -> toml::Table {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// One point of the PCM experiments: a stack config (its `[workload]` a placeholder), the
/// desktop workload that runs on it and the seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PcmPoint {
    pub stack: crate::stack::StackConfig,
    pub desktop: DesktopSpec,
    pub seed: u64,
}

/// The measure of a [`PcmPoint`] ([`run_point`] on its resolved stack).
#[derive(Debug)]
pub struct PcmDesktop;

impl super::measure::Measure for PcmDesktop {
    const NAME: &'static str = "pcm-desktop";
    type Point = PcmPoint;
    type Output = PcmMeasure;
    fn measure(p: &PcmPoint, _: &crate::control::Control) -> LabResult<Option<PcmMeasure>> {
        let source = crate::stack::Source {
            origin: "pcm point",
            text: "",
        };
        let stack = Stack::resolve(source, p.stack.clone(), Path::new("."))?;
        run_point(&stack, &p.desktop, p.seed).map(Some)
    }
}

/// Runs one point: the desktop workload (`spec` over the device) on `stack`.
pub fn run_point(stack: &Stack, spec: &DesktopSpec, seed: u64) -> LabResult<PcmMeasure> {
    let mut ssd = stack.new_ssd(stack.ssd_config(), seed)?;
    let mut generator = DesktopGenerator::new(spec.clone(), ssd.page_size_bytes(), seed)
        .map_err(|e| LabError::Usage(format!("desktop workload: {e}")))?;
    for _ in 0..generator.fill_requests() {
        let (r, data) = generator.next_request().expect("fill requests");
        let r: HostRequest = r.into();
        ssd.execute(&r, Some(data))?;
    }
    ssd.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)?;
    ssd.drain()?;
    ssd.reset_measurement();
    let start = Snapshot::of(&ssd);
    let offset = ssd.now();
    let mut write_time = nandlab_core::SimTime::ZERO;
    while let Some((r, data)) = generator.next_request() {
        let mut r: HostRequest = r.into();
        r.arrival = r.arrival.map(|a| a + offset);
        let is_write = r.op == HostOp::Write;
        let e = ssd.execute(&r, is_write.then_some(data))?;
        if is_write {
            write_time += e.latency;
        }
    }
    ssd.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)?;
    ssd.drain()?;
    let report = ssd.report();
    Ok(measure(&ssd, &report, &start, write_time.as_s_f64()))
}

/// What `ssd` measured since `start` ([`Snapshot::of`] when the measurement began); `report`
/// is the SSD's report now, counting from the same moment (its measurement was reset then).
pub fn measure(ssd: &Ssd, report: &SsdReport, start: &Snapshot, write_time_s: f64) -> PcmMeasure {
    let c = &report.counters;
    let mut m = PcmMeasure {
        host_page_writes: c.host_pages_written,
        flash_pages_programmed: c.flash_pages_programmed,
        erases: c.erases,
        gc_page_copies: c.gc_page_copies,
        ftl_merges_switch: c.merges_switch,
        ftl_merges_partial: c.merges_partial,
        ftl_merges_full: c.merges_full,
        write_time_s,
        nand_energy_mj: report.energy.total_mj,
        ..PcmMeasure::default()
    };
    if let Some(stage) = ssd.front_end::<PcmStage>() {
        let r = stage.report();
        m.pcm_read_energy_mj = (r.device.read_energy_pj - start.pcm_read_pj) * 1e-9;
        m.pcm_write_energy_mj = (r.device.write_energy_pj - start.pcm_write_pj) * 1e-9;
        m.check_failures = r.check_failures;
        if let Some(l) = &r.log {
            m.merges = l.merges - start.merges;
            let written = l.flash_page_writes() - start.log_page_writes;
            m.sequential_share = if written == 0 {
                0.0
            } else {
                (l.pages_flushed - start.pages_flushed) as f64 / written as f64
            };
            m.log_sector_writes = l.flash_log_sector_writes - start.log_sectors;
        }
        if let (Some(d), Some(f)) = (&r.dedup, &r.finder) {
            m.dedup_checked = d.pages_checked - start.checked;
            m.dedup_shared = d.duplicates_shared - start.shared;
            m.dedup_unchanged = d.duplicates_unchanged - start.unchanged;
            m.hash_energy_mj = (f.hash_energy_pj - start.hash_pj) * 1e-9;
            let lookups = (f.lookups - start.lookups).max(1);
            m.search_ns_per_lookup =
                (f.search_time - start.search_time).as_ns_f64() / lookups as f64;
        }
        let pcm = stage.device();
        if let Ok(w) = pcm.wear(nandlab_pcm::PcmAddr(0), pcm.capacity_bytes()) {
            m.pcm_wear_max_over_mean = w.max_over_mean;
        }
    }
    if let Some(a) = ssd.log_area_stats() {
        m.log_sector_copies = a.sector_copies - start.log_sector_copies;
        m.log_area_erases = a.erases - start.log_area_erases;
    }
    m.space_saved_fraction = space_saved(ssd);
    m
}

/// Σ (refcount − 1) over physical pages, over the logical pages mapped.
fn space_saved(ssd: &Ssd) -> f64 {
    let (mut saved, mut mapped) = (0u64, 0u64);
    for p in 0..ssd.physical_pages() as u32 {
        let r = ssd.refcount(nandlab_ftl::Ppa(p));
        if r > 0 {
            saved += u64::from(r - 1);
            mapped += u64::from(r);
        }
    }
    if mapped == 0 {
        0.0
    } else {
        saved as f64 / mapped as f64
    }
}

/// The stage's counters when the measurement starts.
#[derive(Debug, Default)]
pub struct Snapshot {
    pcm_read_pj: f64,
    pcm_write_pj: f64,
    merges: u64,
    log_sectors: u64,
    log_sector_copies: u64,
    log_area_erases: u64,
    log_page_writes: u64,
    pages_flushed: u64,
    checked: u64,
    shared: u64,
    unchanged: u64,
    hash_pj: f64,
    lookups: u64,
    search_time: nandlab_core::SimTime,
}

impl Snapshot {
    pub fn of(ssd: &Ssd) -> Snapshot {
        let Some(stage) = ssd.front_end::<PcmStage>() else {
            return Snapshot::default();
        };
        let r = stage.report();
        let area = ssd.log_area_stats().unwrap_or_default();
        let mut s = Snapshot {
            pcm_read_pj: r.device.read_energy_pj,
            pcm_write_pj: r.device.write_energy_pj,
            log_sector_copies: area.sector_copies,
            log_area_erases: area.erases,
            ..Snapshot::default()
        };
        if let Some(l) = &r.log {
            s.merges = l.merges;
            s.log_sectors = l.flash_log_sector_writes;
            s.log_page_writes = l.flash_page_writes();
            s.pages_flushed = l.pages_flushed;
        }
        if let (Some(d), Some(f)) = (&r.dedup, &r.finder) {
            s.checked = d.pages_checked;
            s.shared = d.duplicates_shared;
            s.unchanged = d.duplicates_unchanged;
            s.hash_pj = f.hash_energy_pj;
            s.lookups = f.lookups;
            s.search_time = f.search_time;
        }
        s
    }
}
