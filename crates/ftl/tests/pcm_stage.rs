//! The PCM front-end stage on the whole controller (issue 15 part 2): with dedup, each log
//! buffer (the thesis's region, dPRAM, IPL) and both together, random whole-page writes of a
//! few contents (duplicates), small in-page updates, TRIMs and flushes over a small device with
//! GC and wear-leveling keep returning each page's last written bytes, so no LPA ever returns
//! another page's bytes; the stage's own checks (dedup hits name a page holding the bytes, the
//! log merged with flash equals the current content) never fail; runs are deterministic.

mod common;

use nandlab_core::SimRng;
use nandlab_ftl::{
    FrontEnd, HostOp, HostRequest, LogBufferConfig, PayloadMode, PcmStage, PcmStageConfig, Ssd,
};
use nandlab_pcm::{DedupConfig, DpramConfig, IplConfig, LogRegionConfig};

const PAGE: u32 = 1024;
const PAGES_PER_BLOCK: u32 = 8;

fn device() -> nandlab_pcm::PcmConfig {
    let mut d = nandlab_pcm::preset("cidr11").unwrap();
    d.geometry.capacity_bytes = 1 << 20;
    d
}

fn dedup() -> DedupConfig {
    DedupConfig {
        segments: 2,
        store_size_bytes: 8 * 1024,
        bucket_size_bytes: 1024,
        search: Default::default(),
        hash_latency_ns: 500.0,
        hash_energy_nj: 1.0,
    }
}

fn logs() -> Vec<LogBufferConfig> {
    let mut region = LogRegionConfig::thesis(3 * (256 * PAGES_PER_BLOCK as u64 + 12));
    region.sector_size_bytes = 256;
    vec![
        LogBufferConfig::Region(region),
        LogBufferConfig::Dpram(DpramConfig {
            region_size_bytes: 16 * 256,
            sector_size_bytes: 256,
            max_sectors_per_page: 0,
        }),
        LogBufferConfig::Ipl(IplConfig {
            log_sectors_per_block: 8,
            sector_size_bytes: 256,
        }),
    ]
}

fn ssd(config: PcmStageConfig, buffer_pages: u32, seed: u64) -> Ssd {
    let mut c = common::slc(1, 2, 16, PAGES_PER_BLOCK, PAGE);
    c.ftl.payload = PayloadMode::Full;
    // IPL's log area on flash (8 sectors of 256 B per 8-page unit: a quarter of the data) is
    // taken out of over-provisioning
    let ipl = matches!(config.log, Some(LogBufferConfig::Ipl(_)));
    c.ftl.op_fraction = if ipl { 1.0 } else { 0.5 };
    c.ftl.buffer.pages = buffer_pages;
    c.ftl.wear.leveling = nandlab_ftl::WearLeveling::Static;
    c.ftl.wear.erase_gap_threshold = 2;
    let logical = Ssd::new(c.clone(), seed).unwrap().logical_pages() as u32;
    let stage = PcmStage::new(config, logical, PAGE, PAGES_PER_BLOCK, seed).unwrap();
    Ssd::with_front_ends(c, seed, vec![Box::new(stage) as Box<dyn FrontEnd>]).unwrap()
}

/// Random writes, small updates, trims and flushes checked against a byte array; returns the
/// stage's report as text (for the determinism check).
fn run_model(config: PcmStageConfig, buffer_pages: u32, seed: u64, steps: u32) -> String {
    run_model_hashing(config, buffer_pages, seed, steps, (1, 1))
}

/// [`run_model`] with the stage's hashing ahead set to (threads, pages at least).
fn run_model_hashing(
    config: PcmStageConfig,
    buffer_pages: u32,
    seed: u64,
    steps: u32,
    hashing: (usize, usize),
) -> String {
    run_model_with(config, buffer_pages, seed, steps, hashing, true, false)
}

/// [`run_model_hashing`] with the stage's shortcuts on or off (`PcmStage::set_reuse`), and
/// the stage's own checks after every step when `check_each_step`.
fn run_model_with(
    config: PcmStageConfig,
    buffer_pages: u32,
    seed: u64,
    steps: u32,
    (threads, min_pages): (usize, usize),
    reuse: bool,
    check_each_step: bool,
) -> String {
    let mut s = ssd(config, buffer_pages, seed);
    let stage = s.front_end_mut::<PcmStage>().unwrap();
    stage.set_hash_ahead(threads, min_pages);
    stage.set_reuse(reuse);
    let lpas = s.logical_pages() as u32;
    let mut rng = SimRng::seed_from_u64(seed);
    let mut model = vec![vec![0u8; PAGE as usize]; lpas as usize];
    for step in 0..steps {
        let lpa = rng.below(u64::from(lpas)) as u32;
        let page_offset = u64::from(lpa * PAGE);
        match rng.below(20) {
            0 => {
                let r = HostRequest::new(HostOp::Trim, page_offset, u64::from(PAGE));
                s.execute(&r, None).unwrap();
                model[lpa as usize].fill(0);
            }
            1 => {
                s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
                    .unwrap();
            }
            2..=9 => {
                // a whole page of one of a few contents (duplicates across LPAs)
                let fill = 1 + rng.below(5) as u8;
                let data = vec![fill; PAGE as usize];
                let r = HostRequest::new(HostOp::Write, page_offset, u64::from(PAGE));
                s.execute(&r, Some(&data)).unwrap();
                model[lpa as usize] = data;
            }
            _ => {
                // a small in-page update (a sub-page request: the FTL merges it)
                let len = 1 + rng.below(120) as u32;
                let at = rng.below(u64::from(PAGE - len)) as u32;
                let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
                let r =
                    HostRequest::new(HostOp::Write, page_offset + u64::from(at), u64::from(len));
                s.execute(&r, Some(&data)).unwrap();
                model[lpa as usize][at as usize..(at + len) as usize].copy_from_slice(&data);
            }
        }
        if check_each_step {
            // the stage's own invariants (no remembered SHA-1 is stale) after every step
            let stage = s.front_end::<PcmStage>().unwrap();
            stage
                .check()
                .unwrap_or_else(|e| panic!("step {step} (seed {seed}): {e}"));
        }
        if step % 113 == 0 || step + 1 == steps {
            s.check_consistency().unwrap();
            let stage = s.front_end::<PcmStage>().unwrap();
            stage.check().unwrap();
            for (l, m) in model.iter().enumerate() {
                let got = s
                    .read_bytes(u64::from(l as u32 * PAGE), u64::from(PAGE))
                    .unwrap();
                assert!(got == *m, "lpa {l} at step {step} (seed {seed})");
            }
            // host reads through the controller too (a logged page merges log and flash)
            for l in 0..lpas {
                let r = HostRequest::new(HostOp::Read, u64::from(l * PAGE), u64::from(PAGE));
                assert!(s.execute(&r, None).unwrap().data == model[l as usize]);
            }
        }
    }
    s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
        .unwrap();
    let report = s.front_end::<PcmStage>().unwrap().report();
    assert_eq!(report.check_failures, 0, "{report:#?}");
    // the components did their work: duplicates shared, updates logged and merged
    if let Some(d) = &report.dedup {
        assert!(d.duplicates_shared > 0, "{d:?}");
    }
    if let Some(l) = &report.log {
        assert!(l.new_sector + l.existing_sector > 0, "{l:?}");
        assert!(l.flash_page_writes() > 0 && l.reads_merged > 0, "{l:?}");
    }
    // IPL's log sectors are partial-page programs on the chip, every one of them
    match (report.log_kind, s.log_area_stats()) {
        (Some("ipl"), Some(a)) => {
            let l = report.log.as_ref().unwrap();
            assert_eq!(a.sector_programs, l.flash_log_sector_writes, "{a:?}");
            assert!(a.erases > 0, "{a:?}");
        }
        (Some("ipl"), None) => panic!("IPL without a log area on flash"),
        (_, a) => assert!(a.is_none(), "{a:?}"),
    }
    if std::env::var_os("PCM_STAGE_VERBOSE").is_some() {
        eprintln!("{report:?}");
    }
    format!("{report:?} {:?}", s.now())
}

#[test]
fn dedup_alone_keeps_every_page_its_own_bytes_and_shares_pages() {
    for buffer in [0, 4] {
        let config = PcmStageConfig {
            device: device(),
            dedup: Some(dedup()),
            log: None,
        };
        let mut s = ssd(config.clone(), buffer, 3);
        drop(s.run(std::iter::empty::<HostRequest>()));
        run_model(config, buffer, 3, 2500);
        // a duplicate is shared, not programmed
        let data = vec![9u8; PAGE as usize];
        for lpa in 0..6u32 {
            let r = HostRequest::new(HostOp::Write, u64::from(lpa * PAGE), u64::from(PAGE));
            s.execute(&r, Some(&data)).unwrap();
        }
        s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
            .unwrap();
        let d = s.front_end::<PcmStage>().unwrap().report().dedup.unwrap();
        assert_eq!(d.duplicates_shared, 5, "{d:?}");
    }
}

#[test]
fn each_log_buffer_returns_the_last_written_bytes() {
    for log in logs() {
        for buffer in [0, 3] {
            let config = PcmStageConfig {
                device: device(),
                dedup: None,
                log: Some(log.clone()),
            };
            run_model(config, buffer, 5, 2500);
        }
    }
}

#[test]
fn dedup_and_log_buffer_together_return_the_last_written_bytes() {
    for (seed, log) in logs().into_iter().enumerate() {
        let config = PcmStageConfig {
            device: device(),
            dedup: Some(dedup()),
            log: Some(log),
        };
        run_model(config, 2, 10 + seed as u64, 3000);
    }
}

#[test]
fn runs_with_the_pcm_stage_are_deterministic() {
    let config = PcmStageConfig {
        device: device(),
        dedup: Some(dedup()),
        log: Some(logs().remove(0)),
    };
    let a = run_model(config.clone(), 2, 77, 800);
    let b = run_model(config, 2, 77, 800);
    assert_eq!(a, b);
}

#[test]
fn hashing_a_merges_pages_ahead_on_threads_changes_nothing() {
    for log in [logs().remove(0), logs().remove(1)] {
        let config = PcmStageConfig {
            device: device(),
            dedup: Some(dedup()),
            log: Some(log),
        };
        let serial = run_model_hashing(config.clone(), 0, 5, 1500, (1, 1));
        for ahead in [(2, 2), (4, 1), (3, 8)] {
            let threaded = run_model_hashing(config.clone(), 0, 5, 1500, ahead);
            assert_eq!(serial, threaded, "{ahead:?}");
        }
    }
}

#[test]
fn remembered_hashes_and_unchanged_flush_pages_by_reference_change_nothing() {
    // dedup with each log buffer, and each log buffer alone: the same report (device energy,
    // hashing, finder, log counters, checks) and the same simulated time with the shortcuts
    // off (every page hashed and copied) and on
    for (i, log) in logs().into_iter().enumerate() {
        for dedup_on in [true, false] {
            let config = PcmStageConfig {
                device: device(),
                dedup: dedup_on.then(dedup),
                log: Some(log.clone()),
            };
            for (buffer, hashing) in [(0, (1, 1)), (2, (2, 4))] {
                let seed = 40 + i as u64;
                let off = run_model_with(config.clone(), buffer, seed, 1500, hashing, false, false);
                let on = run_model_with(config.clone(), buffer, seed, 1500, hashing, true, false);
                assert_eq!(off, on, "log {i}, dedup {dedup_on}, buffer {buffer}");
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6))]
    /// No remembered SHA-1 is ever stale, nor the log part's per-page `logged` flag, checked
    /// after every host request (overwrites, merges with deltas, whole-block flushes, TRIMs,
    /// dedup remaps, Flushes).
    #[test]
    fn remembered_hashes_are_never_stale(seed in 0u64..u64::MAX, buffer in 0u32..3) {
        let config = PcmStageConfig {
            device: device(),
            dedup: Some(dedup()),
            log: Some(logs().remove(0)),
        };
        run_model_with(config, buffer, seed, 1200, (1, 1), true, true);
    }
}

#[test]
fn host_writes_wait_for_pcm_time() {
    let config = PcmStageConfig {
        device: device(),
        dedup: Some(dedup()),
        log: None,
    };
    let mut s = ssd(config, 0, 1);
    let data = vec![7u8; PAGE as usize];
    let r = HostRequest::new(HostOp::Write, 0, u64::from(PAGE));
    s.execute(&r, Some(&data)).unwrap();
    // the duplicate write programs nothing: its latency is its PCM call alone
    let r = HostRequest::new(HostOp::Write, u64::from(PAGE), u64::from(PAGE));
    let e = s.execute(&r, Some(&data)).unwrap();
    let report = s.front_end::<PcmStage>().unwrap().report();
    assert!(
        e.latency >= nandlab_core::SimTime::from_ns(500),
        "{}",
        e.latency
    );
    assert!(
        e.latency < nandlab_core::SimTime::from_us(50),
        "{}",
        e.latency
    );
    assert_eq!(report.writes_held, 2);
}

/// The ends of the host writes `pages` (lpa, byte) a fresh dedup stage receives together at
/// time 0, by request, from its time-ordered queue; and each bank's busy time. The store is
/// 8 KiB of 64 B buckets (one line: a header and two entries) in 5 segments of 25 buckets, so
/// the segments' first buckets lie in banks 0, 1, 2, 3, 0.
type Ends = Vec<(u64, nandlab_core::SimTime)>;
fn writes_at_once(pages: &[(u32, u8)]) -> (Ends, Vec<nandlab_core::SimTime>) {
    use nandlab_ftl::{FtlCounters, Lpa, PageWrite, PageWrites};
    let mut config = dedup();
    config.hash_latency_ns = 0.0;
    config.segments = 5;
    config.bucket_size_bytes = 64;
    let stage_config = PcmStageConfig {
        device: device(),
        dedup: Some(config),
        log: None,
    };
    let mut stage = PcmStage::new(stage_config, 64, PAGE, PAGES_PER_BLOCK, 1).unwrap();
    let (mut out, mut counters) = (PageWrites::new(PAGE, true), FtlCounters::default());
    for (request, &(lpa, byte)) in pages.iter().enumerate() {
        let data = vec![byte; PAGE as usize];
        let page = PageWrite {
            lpa: Lpa(lpa),
            sequence: request as u64,
            data: Some(&data),
            placement: 0,
            request: request as u64,
        };
        assert_eq!(
            stage.write(nandlab_core::SimTime::ZERO, page, &mut out, &mut counters),
            1
        );
    }
    let (mut ends, mut done) = (Vec::new(), Vec::new());
    while let Some(t) = stage.process_next(&mut done, &mut out) {
        ends.extend(done.drain(..).map(|r| (r, t)));
    }
    (ends, stage.report().device.bank_busy)
}

#[test]
fn writes_arriving_together_overlap_on_different_banks_and_serialise_on_one() {
    let ns = nandlab_core::SimTime::from_ns;
    // `cidr11`: 225 ns per programmed word. A write of a new page into an empty segment does no
    // lookup read; its insert programs the bucket's header word and its 3-word entry (900 ns on
    // the bucket's bank), then the location's 8 B reverse-map slot (225 ns, on the slot's bank)
    let banks = |page: (u32, u8)| {
        let (ends, busy) = writes_at_once(&[page]);
        assert_eq!(ends, vec![(0, ns(1125))]);
        match busy.iter().position(|&b| b == ns(1125)) {
            Some(both) => (both, both),
            None => {
                let bank_of = |t| busy.iter().position(|&b| b == ns(t)).unwrap();
                (bank_of(900), bank_of(225))
            }
        }
    };
    let candidates = (0..64u32).flat_map(|l| (1..40u8).map(move |b| (l, b)));
    let segment = |p: (u32, u8)| nandlab_pcm::Fingerprint::of(&vec![p.1; PAGE as usize]).segment(5);
    // A in segment 0 (bank 0), its slot in another bank
    let a = candidates
        .clone()
        .find(|&p| segment(p) == 0 && banks(p).0 != banks(p).1)
        .unwrap();
    let (a_bucket, a_slot) = banks(a);
    let candidates = candidates.filter(move |p| p.0 != a.0 && p.1 != a.1);
    // a write whose bucket and slot banks are both free of A's: it runs beside A, 0..1125
    // (one port: 1125 + 1125)
    let apart = candidates
        .clone()
        .find(|&p| {
            let (bucket, slot) = banks(p);
            bucket != slot
                && ![a_bucket, a_slot].contains(&bucket)
                && ![a_bucket, a_slot].contains(&slot)
        })
        .unwrap();
    assert_eq!(
        writes_at_once(&[a, apart]).0,
        vec![(0, ns(1125)), (1, ns(1125))]
    );
    // a write into segment 4, whose bucket is in A's bucket bank (its slot elsewhere): its
    // bucket waits for A's (900..1800), then its slot (1800..2025)
    let same = candidates
        .clone()
        .find(|&p| {
            let (bucket, slot) = banks(p);
            segment(p) == 4 && bucket == a_bucket && ![a_bucket, a_slot].contains(&slot)
        })
        .unwrap();
    assert_eq!(
        writes_at_once(&[a, same]).0,
        vec![(0, ns(1125)), (1, ns(2025))]
    );
    // the queue is in time order: a later call that ends first is released first
    let (ends, _) = writes_at_once(&[a, same, apart]);
    assert_eq!(ends[0], (0, ns(1125)));
    assert!(ends.windows(2).all(|w| w[0].1 <= w[1].1));
}

#[test]
fn bad_pcm_configs_name_the_key() {
    let mut small = device();
    small.geometry.capacity_bytes = 4096;
    let cases = [
        (
            PcmStageConfig {
                device: small,
                dedup: Some(dedup()),
                log: None,
            },
            "pcm.dedup.store_size_bytes",
        ),
        (
            PcmStageConfig {
                device: device(),
                dedup: None,
                log: Some(LogBufferConfig::Region(LogRegionConfig::thesis(1 << 16))),
            },
            "pcm.log.sector_size_bytes",
        ),
        (
            PcmStageConfig {
                device: device(),
                dedup: None,
                log: None,
            },
            "pcm",
        ),
    ];
    for (config, key) in cases {
        let e = PcmStage::new(config, 64, 256, 8, 1).unwrap_err();
        assert!(
            matches!(&e, nandlab_ftl::FtlError::Config { key: k, .. } if k == key),
            "{e}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
    /// The model check over random seeds, for dedup with the thesis's log region.
    #[test]
    fn any_seed_returns_the_last_written_bytes(seed in 0u64..u64::MAX, buffer in 0u32..4) {
        let config = PcmStageConfig {
            device: device(),
            dedup: Some(dedup()),
            log: Some(logs().remove((seed % 3) as usize)),
        };
        run_model(config, buffer, seed, 700);
    }
}

/// Preconditioned pages (zeros written around the stage) that the stage is told about are
/// updates for each log buffer: small writes into them are logged against the zero flash copy
/// (no page goes to flash as new), and every page reads back its bytes through `read_bytes`
/// and host reads, before and after a Flush; dedup and the stage's checks stay clean.
#[test]
fn preconditioned_pages_are_logged_updates_and_read_back() {
    for log in logs() {
        let kind = log.kind();
        let config = PcmStageConfig {
            device: device(),
            dedup: Some(dedup()),
            log: Some(log),
        };
        let mut s = ssd(config, 0, 9);
        let lpas = s.logical_pages() as u32;
        s.precondition(&nandlab_ftl::Precondition {
            fill_fraction: 1.0,
            random_overwrites: u64::from(lpas),
        })
        .unwrap();
        let stage = s.front_end_mut::<PcmStage>().unwrap();
        for lpa in 0..lpas {
            stage.preconditioned(nandlab_ftl::Lpa(lpa));
        }
        let mut rng = SimRng::seed_from_u64(9);
        let mut model = vec![vec![0u8; PAGE as usize]; lpas as usize];
        for _ in 0..300 {
            let lpa = rng.below(u64::from(lpas)) as u32;
            let at = rng.below(u64::from(PAGE) - 64) as usize;
            let page = &mut model[lpa as usize];
            for b in &mut page[at..at + 48] {
                *b = rng.below(256) as u8;
            }
            let data = page.clone();
            let r = HostRequest::write(u64::from(lpa * PAGE), u64::from(PAGE));
            s.execute(&r, Some(&data)).unwrap();
        }
        let check = |s: &mut Ssd, when: &str| {
            for (l, page) in model.iter().enumerate() {
                let offset = u64::from(l as u32 * PAGE);
                assert_eq!(
                    &s.read_bytes(offset, u64::from(PAGE)).unwrap(),
                    page,
                    "{kind} {when}: lpa {l}"
                );
                let r = HostRequest::read(offset, u64::from(PAGE));
                assert!(
                    &s.execute(&r, None).unwrap().data == page,
                    "{kind} {when}: {l}"
                );
            }
        };
        check(&mut s, "logged");
        let report = s.front_end::<PcmStage>().unwrap().report();
        let l = report.log.as_ref().unwrap();
        assert_eq!(l.direct_new_page, 0, "{kind}: {l:?}");
        assert!(
            l.new_log_block + l.new_sector + l.existing_sector > 0,
            "{kind}: {l:?}"
        );
        s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
            .unwrap();
        s.drain().unwrap();
        check(&mut s, "flushed");
        let report = s.front_end::<PcmStage>().unwrap().report();
        assert_eq!(report.check_failures, 0, "{kind}: {:?}", report.first_error);
        s.front_end::<PcmStage>().unwrap().check().unwrap();
        s.check_consistency().unwrap();
    }
}

/// In-Page Logging's log sectors are partial-page programs on the chip: a cold unit's sectors
/// survive while hot units churn the log ring (its block is reclaimed: live sectors read and
/// programmed again, then the block erased), every page still reads back its last bytes, the
/// chip model accepts every program (NOP and in-order rules), and a log sector costs write
/// time. With a NOP limit of 1 each sector takes a page of its own.
#[test]
fn ipl_log_sectors_are_programs_on_the_chip() {
    for nop in [4u32, 1] {
        let config = PcmStageConfig {
            device: device(),
            dedup: None,
            log: Some(logs().remove(2)),
        };
        let mut c = common::slc(1, 2, 16, PAGES_PER_BLOCK, PAGE);
        c.ftl.payload = PayloadMode::Full;
        // a sector per page (NOP 1) needs a page per sector: a log area as large as the data
        c.ftl.op_fraction = if nop == 1 { 3.0 } else { 1.0 };
        let over = c.device.overrides.as_mut().unwrap();
        let reliability =
            toml::Value::Table(toml::from_str(&format!("nop_limit = {nop}")).unwrap());
        over.insert("reliability".into(), reliability);
        let logical = Ssd::new(c.clone(), 3).unwrap().logical_pages() as u32;
        let stage = PcmStage::new(config, logical, PAGE, PAGES_PER_BLOCK, 3).unwrap();
        let mut s = Ssd::with_front_ends(c, 3, vec![Box::new(stage) as Box<dyn FrontEnd>]).unwrap();
        let lpas = logical;
        let mut model = vec![vec![0u8; PAGE as usize]; lpas as usize];
        let mut rng = SimRng::seed_from_u64(3);
        // every page on flash first, then one small update of page 0 (unit 0 stays cold)
        for l in 0..lpas {
            let r = HostRequest::write(u64::from(l * PAGE), u64::from(PAGE));
            model[l as usize].fill(l as u8 | 1);
            s.execute(&r, Some(&model[l as usize])).unwrap();
        }
        let mut update = |s: &mut Ssd, lpa: u32, rng: &mut SimRng| {
            let page = &mut model[lpa as usize];
            let at = rng.below(u64::from(PAGE) - 40) as usize;
            for b in &mut page[at..at + 30] {
                *b = rng.below(256) as u8;
            }
            let r = HostRequest::write(u64::from(lpa * PAGE), u64::from(PAGE));
            s.execute(&r, Some(page)).unwrap().latency
        };
        update(&mut s, 0, &mut rng);
        let mut logged_latency = nandlab_core::SimTime::ZERO;
        for _ in 0..2000 {
            let lpa = PAGES_PER_BLOCK + rng.below(u64::from(lpas - PAGES_PER_BLOCK)) as u32;
            logged_latency = logged_latency.max(update(&mut s, lpa, &mut rng));
        }
        let a = s.log_area_stats().unwrap();
        assert!(
            a.sector_copies > 0 && a.page_reads > 0 && a.erases > 0 && a.merge_page_reads > 0,
            "nop {nop}: {a:?}"
        );
        let report = s.front_end::<PcmStage>().unwrap().report();
        let l = report.log.as_ref().unwrap();
        assert_eq!(a.sector_programs, l.flash_log_sector_writes, "nop {nop}");
        // a logged update waits for its sector's program (slc: 250 µs)
        assert!(logged_latency.as_ns_f64() > 200_000.0, "{logged_latency:?}");
        for (l, page) in model.iter().enumerate() {
            let got = s
                .read_bytes(u64::from(l as u32 * PAGE), u64::from(PAGE))
                .unwrap();
            assert!(&got == page, "nop {nop}: lpa {l}");
        }
        s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
            .unwrap();
        s.drain().unwrap();
        s.check_consistency().unwrap();
        assert_eq!(
            s.front_end::<PcmStage>().unwrap().report().check_failures,
            0
        );
    }
}

#[test]
fn a_read_of_a_page_with_ipl_log_sectors_reads_its_log_pages_on_the_chip() {
    let config = PcmStageConfig {
        device: device(),
        dedup: None,
        log: Some(logs().remove(2)),
    };
    let mut s = ssd(config, 0, 5);
    let mut page = vec![3u8; PAGE as usize];
    for lpa in [0, 1, PAGES_PER_BLOCK] {
        let r = HostRequest::write(u64::from(lpa * PAGE), u64::from(PAGE));
        s.execute(&r, Some(&page)).unwrap();
    }
    // two small updates of page 0 (unit 0): two log sectors in one log page
    for at in [100, 600] {
        page[at..at + 20].fill(9);
        let r = HostRequest::write(0, u64::from(PAGE));
        s.execute(&r, Some(&page)).unwrap();
    }
    let before = s.log_area_stats().unwrap();
    assert_eq!(before.sector_programs, 2);
    let read = |s: &mut Ssd, lpa: u32| {
        let r = HostRequest::new(HostOp::Read, u64::from(lpa * PAGE), u64::from(PAGE));
        s.execute(&r, None).unwrap()
    };
    // a page of another unit, and an unlogged page of unit 0: no log page read
    let plain = read(&mut s, PAGES_PER_BLOCK);
    read(&mut s, 1);
    assert_eq!(s.log_area_stats().unwrap().host_read_page_reads, 0);
    // the logged page: its data page and the one log page holding both sectors
    let logged = read(&mut s, 0);
    assert!(logged.data == page);
    assert_eq!(s.log_area_stats().unwrap().host_read_page_reads, 1);
    assert!(
        logged.latency > plain.latency,
        "{} vs {}",
        logged.latency,
        plain.latency
    );
    let report = s.front_end::<PcmStage>().unwrap().report();
    assert_eq!(report.log.unwrap().reads_merged, 1);
    assert_eq!(report.check_failures, 0);
}
