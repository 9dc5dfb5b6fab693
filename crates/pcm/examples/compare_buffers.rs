//! Small in-page updates through the PCM log region, dPRAM and In-Page Logging, and page writes
//! with duplicates through the redundant write finder; prints what each does to flash and how
//! fast the host runs it. A stand-alone sanity run of the crate (no FTL, no chip timing):
//!
//! `ours` is the thesis's log region (whole-block flushes, a block merged when a page's delta
//! outgrows its sector); `-lp` flushes logged pages only, `-wp` writes an overflowing page
//! alone.
//!
//! ```text
//! cargo run -p nandlab-pcm --profile test-release --example compare_buffers [UPDATES]
//! ```

use nandlab_core::SimRng;
use nandlab_pcm::{
    DedupConfig, DpramConfig, DpramLog, FlashPages, FlashShape, FlashWork, InPageLog, IplConfig,
    Location, LogBuffer, LogRegionConfig, PageNo, PcmAddr, PcmDevice, PcmLogRegion,
    RedundantWriteFinder, SectorOverflow, WriteOutcome, preset,
};
use std::time::Instant;

const PAGE: usize = 4096;
const SHAPE: FlashShape = FlashShape {
    page_size_bytes: PAGE as u32,
    pages_per_block: 64,
    pages: 16_384, // 64 MiB of logical pages
};
const PCM_BYTES: u64 = 16 << 20;

/// The caller's flash: a flat array of pages.
struct Flash {
    bytes: Vec<u8>,
    present: Vec<bool>,
    page_writes: u64,
}

impl FlashPages for Flash {
    fn page(&self, page: PageNo) -> Option<&[u8]> {
        let p = page.0 as usize;
        self.present[p].then(|| &self.bytes[p * PAGE..(p + 1) * PAGE])
    }
}

impl Flash {
    fn new() -> Self {
        let pages = SHAPE.pages as usize;
        Flash {
            bytes: vec![0; pages * PAGE],
            present: vec![false; pages],
            page_writes: 0,
        }
    }
    fn apply(&mut self, work: &mut FlashWork) {
        for (page, data) in work.writes() {
            let p = page.0 as usize;
            self.bytes[p * PAGE..(p + 1) * PAGE].copy_from_slice(data);
            self.present[p] = true;
            self.page_writes += 1;
        }
        work.clear();
    }
    fn write_over(&mut self, page: PageNo, offset: usize, data: &[u8]) {
        let p = page.0 as usize;
        self.bytes[p * PAGE + offset..p * PAGE + offset + data.len()].copy_from_slice(data);
        self.present[p] = true;
        self.page_writes += 1;
    }
}

fn device() -> PcmDevice {
    let mut c = preset("cidr11").expect("preset");
    c.geometry.capacity_bytes = PCM_BYTES;
    PcmDevice::new(c, 1).expect("device")
}

/// Fills every page, then runs `updates` small updates (80 % to 20 % of the pages).
fn run(name: &str, log: &mut dyn LogBuffer, dev: &mut PcmDevice, updates: u64) {
    let mut flash = Flash::new();
    let mut work = FlashWork::default();
    let mut rng = SimRng::seed_from_u64(42);
    let fill = vec![0x11u8; PAGE];
    for p in 0..SHAPE.pages {
        let r = log
            .write(dev, PageNo(p), 0, &fill, &flash, &mut work)
            .expect("fill");
        flash.apply(&mut work);
        if r.outcome == WriteOutcome::ToFlash {
            flash.write_over(PageNo(p), 0, &fill);
        }
    }
    let fill_writes = flash.page_writes;
    let mut data = vec![0u8; 256];
    let started = Instant::now();
    for _ in 0..updates {
        let hot = rng.chance(0.8);
        let span = u64::from(SHAPE.pages) / 5;
        let page = if hot {
            rng.below(span)
        } else {
            span + rng.below(u64::from(SHAPE.pages) - span)
        };
        let len = 16 + rng.below(200) as usize;
        let offset = rng.below((PAGE - len) as u64) as usize;
        rng.fill_bytes_into(&mut data[..len]);
        let r = log
            .write(
                dev,
                PageNo(page as u32),
                offset as u32,
                &data[..len],
                &flash,
                &mut work,
            )
            .expect("update");
        flash.apply(&mut work);
        if r.outcome == WriteOutcome::ToFlash {
            flash.write_over(PageNo(page as u32), offset, &data[..len]);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let s = log.stats();
    println!(
        "{name:>9}: merges {:>7}  flash page writes {:>8}  sequential {:>5.1} %  in-flash log sectors {:>8}  unit erases {:>6}  PCM energy {:>8.3} mJ  {:>7.0} k updates/s",
        s.merges,
        flash.page_writes - fill_writes,
        100.0 * s.sequential_share(),
        s.flash_log_sector_writes,
        s.flash_erases,
        s.pcm.energy_pj * 1e-9,
        updates as f64 / seconds / 1e3,
    );
}

fn dedup(pages_written: u64) {
    let mut dev = device();
    let config = DedupConfig {
        segments: 16,
        store_size_bytes: 4 << 20,
        bucket_size_bytes: 4096,
        search: Default::default(),
        hash_latency_ns: 0.0,
        hash_energy_nj: 0.0,
    };
    let mut finder = RedundantWriteFinder::new(config, PcmAddr(0), 1 << 20, &dev).expect("finder");
    let mut rng = SimRng::seed_from_u64(7);
    let mut page = vec![0u8; PAGE];
    let mut next = 0u32;
    let started = Instant::now();
    for i in 0..pages_written {
        // 25 % duplicates of recent content
        let content = if rng.chance(0.25) && next > 0 {
            next - 1 - rng.below(u64::from(next.min(50_000))) as u32
        } else {
            1_000_000 + i as u32
        };
        page[..4].copy_from_slice(&content.to_le_bytes());
        let l = finder.lookup(&mut dev, &page).expect("lookup");
        if l.existing.is_none() && next < 1 << 20 {
            finder
                .insert(&mut dev, l.fingerprint, Location(next))
                .expect("insert");
            next += 1;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let s = finder.stats();
    println!(
        "   dedup: {} page writes, {} duplicates found ({:.1} %), {} evictions, {:.2} range checks + {:.2} probes per lookup, PCM search {:.0} ns per lookup, {:.0} k lookups/s",
        s.lookups,
        s.hits,
        100.0 * s.hits as f64 / s.lookups as f64,
        s.evictions,
        s.lookup_effort.range_checks as f64 / s.lookups as f64,
        s.lookup_effort.entry_probes as f64 / s.lookups as f64,
        s.search_time.as_ns_f64() / s.lookups as f64,
        s.lookups as f64 / seconds / 1e3,
    );
}

trait FillBytes {
    fn fill_bytes_into(&mut self, out: &mut [u8]);
}
impl FillBytes for SimRng {
    fn fill_bytes_into(&mut self, out: &mut [u8]) {
        for b in out {
            *b = self.below(256) as u8;
        }
    }
}

fn main() {
    let updates: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    println!(
        "{updates} small updates (16-215 B, 80 % to 20 % of {} pages of 4 KiB), 16 MiB PCM (cidr11):",
        SHAPE.pages
    );
    let mut dev = device();
    let mut ours = PcmLogRegion::new(LogRegionConfig::thesis(PCM_BYTES), SHAPE, PcmAddr(0), &dev)
        .expect("log region");
    run("ours", &mut ours, &mut dev, updates);
    let wear = ours.wear(&dev).expect("wear");
    println!(
        "          PCM wear: max/mean {:.2}, cov {:.2} over {} words; P-block wear cov {:.3}",
        wear.max_over_mean,
        wear.writes_cov,
        wear.words,
        ours.pblock_wear_cov()
    );
    for (name, whole, overflow) in [
        ("ours-lp", false, SectorOverflow::MergeBlock),
        ("ours-wp", true, SectorOverflow::WritePage),
        ("ours-lpwp", false, SectorOverflow::WritePage),
    ] {
        let mut dev = device();
        let config = LogRegionConfig {
            flush_whole_block: whole,
            on_sector_overflow: overflow,
            ..LogRegionConfig::thesis(PCM_BYTES)
        };
        let mut log = PcmLogRegion::new(config, SHAPE, PcmAddr(0), &dev).expect("log region");
        run(name, &mut log, &mut dev, updates);
    }
    let mut dev = device();
    let dpram_config = DpramConfig {
        region_size_bytes: PCM_BYTES,
        sector_size_bytes: 512,
        max_sectors_per_page: 0,
    };
    let mut dpram = DpramLog::new(dpram_config, SHAPE, PcmAddr(0), &dev).expect("dpram");
    run("dPRAM", &mut dpram, &mut dev, updates);
    let mut dev = device();
    let mut ipl = InPageLog::new(IplConfig::default(), SHAPE).expect("ipl");
    run("IPL", &mut ipl, &mut dev, updates);
    dedup(updates);
}
