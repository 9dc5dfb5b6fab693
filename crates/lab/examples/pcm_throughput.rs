//! Write requests per wall-second through dedup + the PCM log region (issue 15's speed
//! target, ≥ 500 k/s) on the bench device (`bench-ssd`, full payloads):
//! 1. the PCM stage alone (SHA-1, fingerprint store, log region, mirrors), fed whole pages;
//! 2. the whole SSD with the stage, one request at a time (`Ssd::execute`, the only way to
//!    hand a request its bytes), whole-page writes and small in-page updates of the desktop
//!    workload.
//!
//! `cargo run -p nandlab-lab --profile test-release --example pcm_throughput [REQUESTS [SPAN_PAGES
//! [KIND [HASH_THREADS[:MIN_PAGES] [ssd]]]]]` (defaults 200000, 16384 pages (covered by the log
//! region's 63 P-blocks), region, the stage's choice; `ssd`: only the whole SSD, for profiling).
//! `nandlab bench pcm` is the benchmark; this example is for profiling.

use nandlab_ftl::PcmStage;
use nandlab_lab::bench::{drive_ssd, drive_stage};
use nandlab_workload::content::DesktopGenerator;
use std::time::Instant;

/// CPU time of this process's main thread so far, seconds (`/proc/self/schedstat`; the
/// machine may be shared, so wall time alone understates the simulator's speed).
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns * 1e-9)
}

fn main() {
    let requests: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let span: u32 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(16_384);
    let kind = std::env::args().nth(3).unwrap_or("region".into());
    // threads hashing a merge's pages ahead (default: the stage's own choice)
    // (`T` or `T:MIN`: T threads once a call sends at least MIN pages to hash, default 16)
    let hash_threads: Option<(usize, usize)> = std::env::args().nth(4).and_then(|a| {
        let (t, min) = a.split_once(':').unwrap_or((&a, "16"));
        Some((t.parse().ok()?, min.parse().ok()?))
    });
    let ssd_only = std::env::args().nth(5).as_deref() == Some("ssd");
    // the bench's stack and workload (`nandlab bench pcm`), over `span` pages
    let stack = nandlab_lab::bench::pcm_bench_stack(Some(&kind)).expect("bench stack");
    let page = stack.nand.geometry.page_size_bytes;
    let spec = nandlab_lab::bench::pcm_bench_spec(span, requests);

    // 0. SHA-1 alone: the bound real fingerprinting puts on any dedup path
    let page_bytes = vec![0x5Au8; page as usize];
    let cpu = cpu_s();
    let mut x = 0u8;
    for i in 0..20_000u32 {
        let mut p = page_bytes.clone();
        p[..4].copy_from_slice(&i.to_le_bytes());
        x ^= nandlab_pcm::Fingerprint::of(&p).0[0];
    }
    let s = cpu_s() - cpu;
    println!(
        "SHA-1 of a {page} B page alone: {:.0} pages/CPU-s ({x})",
        20_000.0 / s
    );

    // 1. the stage alone: whole pages (updates applied to a host copy of the page)
    let g = &stack.nand.geometry;
    let stage_config = stack.pcm_stage().unwrap().unwrap();
    let logical = nandlab_ftl::logical_pages(g, stack.ftl.op_fraction) as u32;
    let mut stage =
        PcmStage::new(stage_config, logical, page, g.pages_per_block, 1).expect("stage");
    if let Some((t, min)) = hash_threads {
        stage.set_hash_ahead(t, min);
    }
    let mut generator = DesktopGenerator::new(spec.clone(), page, 1).unwrap();
    let mut pages = vec![0u8; span as usize * page as usize];
    let started = Instant::now();
    let cpu = cpu_s();
    let writes = if ssd_only {
        0
    } else {
        drive_stage(&mut stage, &mut generator, &mut pages, page)
    };
    let s = started.elapsed().as_secs_f64();
    let c = cpu_s() - cpu;
    let r = stage.report();
    println!(
        "stage alone: {writes} page writes in {s:.2} s wall = {:.0} writes/s; {c:.2} s CPU = {:.0} writes/CPU-s (dedup hits {}, merges {})",
        writes as f64 / s,
        writes as f64 / c,
        r.dedup.as_ref().map_or(0, |d| d.duplicates_shared),
        r.log.as_ref().map_or(0, |l| l.merges)
    );

    // 2. the whole SSD, one request at a time
    let mut ssd = stack.new_ssd(stack.ssd_config(), 1).expect("ssd");
    if let Some((t, min)) = hash_threads {
        ssd.front_end_mut::<PcmStage>()
            .unwrap()
            .set_hash_ahead(t, min);
    }
    let mut generator = DesktopGenerator::new(spec, page, 1).unwrap();
    let started = Instant::now();
    let cpu = cpu_s();
    let writes = drive_ssd(&mut ssd, &mut generator).expect("write");
    let s = started.elapsed().as_secs_f64();
    let c = cpu_s() - cpu;
    let r = ssd.front_end::<PcmStage>().unwrap().report();
    println!(
        "whole SSD (execute, QD1): {writes} write requests in {s:.2} s wall = {:.0} writes/s; {c:.2} s CPU = {:.0} writes/CPU-s (check failures {})",
        writes as f64 / s,
        writes as f64 / c,
        r.check_failures
    );
}
