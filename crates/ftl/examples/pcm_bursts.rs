//! The PCM stage at queue depth > 1: bursts of host page writes arriving together, fed to the
//! stage alone (no flash), and how long each write waits for its PCM work. Compares the stage's
//! timing models across versions (docs/pcm.md, "Bank contention"): the same program runs on
//! the one-port model (each call's summed latency, first come first served) and on the banked
//! timed calls.
//!
//! `cargo run -p nandlab-ftl --release --example pcm_bursts [BURSTS] [BURST_SIZE] [GAP_US] [LOG]`
//! (defaults 2000, 32, 200, region; LOG is `region`, `dpram` or `none`). 4 KiB pages, 16,384
//! logical pages of 64-page blocks, 16 MiB `cidr11` PCM: a 4 MiB fingerprint store (16
//! segments, binary search) and an 8 MiB log. Each burst: `BURST_SIZE` writes at one time,
//! half whole pages (30 % of them one of 64 common contents), half 64–256 B updates of a page.

use nandlab_core::{SimRng, SimTime};
use nandlab_ftl::{
    FrontEnd, FtlCounters, LogBufferConfig, Lpa, PageWrite, PageWrites, PcmStage, PcmStageConfig,
};
use nandlab_pcm::{DedupConfig, DpramConfig, LogRegionConfig};

const PAGE: usize = 4096;
const PAGES: u32 = 16_384;
const PAGES_PER_BLOCK: u32 = 64;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| -> u64 {
        args.get(i).map_or(default, |a| {
            a.parse()
                .unwrap_or_else(|_| panic!("argument {}: not a number: {a}", i + 1))
        })
    };
    let (bursts, burst, gap_us) = (number(0, 2000), number(1, 32), number(2, 200));
    let kind = args.get(3).map_or("region", String::as_str);
    let mut device = nandlab_pcm::preset("cidr11").expect("preset");
    device.geometry.capacity_bytes = 16 << 20;
    let log = match kind {
        "region" => Some(LogBufferConfig::Region(LogRegionConfig::thesis(8 << 20))),
        "dpram" => Some(LogBufferConfig::Dpram(DpramConfig {
            region_size_bytes: 8 << 20,
            sector_size_bytes: 512,
            max_sectors_per_page: 0,
        })),
        "none" => None,
        other => panic!("argument 4: log kind `{other}` is not region, dpram or none"),
    };
    let config = PcmStageConfig {
        device,
        dedup: Some(DedupConfig {
            segments: 16,
            store_size_bytes: 4 << 20,
            bucket_size_bytes: 4096,
            search: nandlab_pcm::dedup::BucketSearch::Binary,
            hash_latency_ns: 0.0,
            hash_energy_nj: 0.0,
        }),
        log,
    };
    let mut stage = PcmStage::new(config, PAGES, PAGE as u32, PAGES_PER_BLOCK, 1).expect("stage");
    let mut rng = SimRng::seed_from_u64(7);
    let mut pages: Vec<Vec<u8>> = vec![Vec::new(); PAGES as usize];
    let mut out = PageWrites::new(PAGE as u32, true);
    let mut counters = FtlCounters::default();
    let mut arrivals = Vec::new();
    let mut waits_ns: Vec<u64> = Vec::new();
    let mut done = Vec::new();
    let mut request = 0u64;
    let mut last_end = SimTime::ZERO;
    for b in 0..bursts {
        let now = SimTime::from_us(b * gap_us);
        // writes whose PCM work ended by now
        drain(
            &mut stage,
            Some(now),
            &mut out,
            &mut done,
            &arrivals,
            &mut waits_ns,
            &mut last_end,
        );
        for _ in 0..burst {
            let lpa = rng.below(u64::from(PAGES)) as u32;
            let page = &mut pages[lpa as usize];
            if page.is_empty() {
                page.resize(PAGE, 0);
            }
            if rng.below(2) == 0 {
                if rng.below(10) < 3 {
                    let c = rng.below(64) as u8;
                    page.iter_mut().for_each(|x| *x = c);
                } else {
                    page.iter_mut().for_each(|x| *x = rng.below(256) as u8);
                }
            } else {
                let len = 64 + rng.below(193) as usize;
                let at = rng.below((PAGE - len) as u64) as usize;
                page[at..at + len]
                    .iter_mut()
                    .for_each(|x| *x = rng.below(256) as u8);
            }
            out.clear();
            arrivals.push(now);
            let held = stage.write(
                now,
                PageWrite {
                    lpa: Lpa(lpa),
                    sequence: request,
                    data: Some(page),
                    placement: 0,
                    request,
                },
                &mut out,
                &mut counters,
            );
            if held == 0 {
                waits_ns.push(0);
            }
            request += 1;
        }
    }
    drain(
        &mut stage,
        None,
        &mut out,
        &mut done,
        &arrivals,
        &mut waits_ns,
        &mut last_end,
    );
    waits_ns.sort_unstable();
    let n = waits_ns.len();
    let mean = waits_ns.iter().sum::<u64>() as f64 / n as f64;
    let pct = |p: f64| waits_ns[((n as f64 * p) as usize).min(n - 1)] as f64 / 1e3;
    let report = stage.report();
    println!(
        "log {kind}: {n} writes in bursts of {burst} every {gap_us} us | PCM wait per write: \
         mean {:.2} us, p50 {:.2}, p99 {:.2}, max {:.2} | last PCM end {:.3} ms | held {} | \
         checks failed {}",
        mean / 1e3,
        pct(0.5),
        pct(0.99),
        pct(1.0),
        last_end.as_ps() as f64 / 1e9,
        report.writes_held,
        report.check_failures,
    );
}

/// Takes the stage's finished waits up to `until` (all of them for `None`).
fn drain(
    stage: &mut PcmStage,
    until: Option<SimTime>,
    out: &mut PageWrites,
    done: &mut Vec<u64>,
    arrivals: &[SimTime],
    waits_ns: &mut Vec<u64>,
    last_end: &mut SimTime,
) {
    while let Some(t) = stage.next_event_time() {
        if until.is_some_and(|u| t > u) {
            break;
        }
        done.clear();
        let t = stage.process_next(done, out).expect("an event");
        for &r in done.iter() {
            waits_ns.push((t - arrivals[r as usize]).as_ps() / 1000);
        }
        *last_end = (*last_end).max(t);
    }
}
