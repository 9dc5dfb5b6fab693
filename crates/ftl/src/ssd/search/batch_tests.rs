//! Batched searches through the SSD: a k-key search command's hand-computed timing, the
//! deadline batch scheduler merging searches of one page, and the host-link charge of SiM
//! commands under controller costs.

use super::tests::{PAGE, random_page, small_sim, write};
use crate::config::PayloadMode;
use crate::controller::ControllerCosts;
use crate::{Lpa, SearchRequest, Ssd};
use nandlab_core::{SimRng, SimTime};
use nandlab_nand::search::format;
use nandlab_nand::{ChunkMask, SearchKey};

/// One search of `k` keys on sim2024 (paper 004 Table II; 5 ns command cycles, 80 MT/s
/// match-mode bus = 12.5 ns per byte): 2 CLE + 5 ALE cycles (35 ns), the keys and masks in
/// (16 B each, 200 ns), k × 10 SiM cycles at 33 MHz (303.03 ns each), the bitmaps out (64 B
/// each, 800 ns).
fn search_ps(k: u64) -> u64 {
    35_000 + k * (200_000 + 303_030 + 800_000)
}

/// page-open: 35 ns + TON 16 us + the 256-byte window (3,200 ns); page-close: 5 ns.
const OPEN_PS: u64 = 19_235_000;
const CLOSE_PS: u64 = 5_000;

#[test]
fn a_k_key_search_is_one_sense_and_k_matches() {
    let mut ssd = Ssd::new(small_sim(16, PayloadMode::Full), 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    let mut rng = SimRng::stream(5, "batch");
    let page = random_page(&mut rng, 99);
    write(&mut ssd, lpa, &page);
    ssd.drain().unwrap();
    let keys = [
        SearchKey::exact(99),
        SearchKey::exact(1),
        SearchKey { key: 0, mask: 0x3 },
    ];
    let start = ssd.now() + SimTime::from_us(100);
    let done = ssd
        .execute_search(&SearchRequest::search_batch(Lpa(lpa as u32), &keys).at(start))
        .unwrap();
    // 19,235 + (35 + 3 × 1,303.03) + 5 = 23,184.09 ns: one page-open for the three keys
    assert_eq!(
        done.latency,
        SimTime::from_ps(OPEN_PS + search_ps(3) + CLOSE_PS)
    );
    assert_eq!(done.latency, SimTime::from_ps(23_184_090));
    let bitmaps = Ssd::bitmaps_of(&done);
    assert_eq!(bitmaps.len(), 3);
    for (bitmap, key) in bitmaps.iter().zip(keys) {
        assert_eq!(*bitmap, format::match_page(&page, key), "{key:?}");
    }
    assert_eq!(ssd.search_counters().keys_searched, 3);
    assert_eq!(ssd.search_counters().chip_searches, 1);
    let max = ssd.nand().search_config().unwrap().batch_keys_max as usize;
    let too_many = vec![SearchKey::exact(0); max + 1];
    let err = ssd
        .execute_search(&SearchRequest::search_batch(Lpa(lpa as u32), &too_many))
        .unwrap_err();
    assert!(err.to_string().contains("search.batch_keys_max"), "{err}");
}

#[test]
fn the_deadline_scheduler_merges_searches_of_one_page() {
    let run = |deadline_ns: u64| {
        let mut c = small_sim(16, PayloadMode::Full);
        c.ftl.search.batch_deadline_ns = deadline_ns;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let region = ssd.search_region().unwrap();
        let (a, b) = (region.start, region.start + 2);
        let mut rng = SimRng::stream(6, "batch");
        let pages = [random_page(&mut rng, 5), random_page(&mut rng, 6)];
        write(&mut ssd, a, &pages[0]);
        write(&mut ssd, b, &pages[1]);
        ssd.drain().unwrap();
        let t0 = ssd.now() + SimTime::from_us(100);
        let us = SimTime::from_us;
        // three searches of page a within 2 us; a gather of a after a's batch is dispatched
        // (before it, the gather would take the die first); a search of page b after a's batch
        // completed (before, its transfers would share the channel with a's)
        let requests = [
            SearchRequest::search(Lpa(a as u32), SearchKey::exact(5)).at(t0),
            SearchRequest::search(Lpa(b as u32), SearchKey::exact(6)).at(t0 + us(40)),
            SearchRequest::search(Lpa(a as u32), SearchKey::exact(7)).at(t0 + us(1)),
            SearchRequest::search_batch(Lpa(a as u32), &[SearchKey::exact(8), SearchKey::exact(5)])
                .at(t0 + us(2)),
            SearchRequest::gather(Lpa(a as u32), ChunkMask(0b110)).at(t0 + us(5)),
        ];
        let done = ssd.run_search(&requests).unwrap();
        // every request's own result equals the reference
        let page_of = |r: &SearchRequest| &pages[usize::from(r.lpa.0 as u64 != a)];
        for (r, d) in requests.iter().zip(&done) {
            match &r.op {
                crate::SearchOp::Search(keys) => {
                    let expected: Vec<_> = keys
                        .iter()
                        .map(|k| format::match_page(page_of(r), *k))
                        .collect();
                    assert_eq!(Ssd::bitmaps_of(d), expected, "{r:?}");
                }
                crate::SearchOp::Gather(chunks) => {
                    let expected: Vec<u8> = chunks
                        .chunks()
                        .flat_map(|c| format::chunk_bytes(page_of(r), c).to_vec())
                        .collect();
                    assert_eq!(d.data, expected);
                }
            }
        }
        (done, ssd.search_counters(), t0)
    };
    let (done, c, t0) = run(4_000);
    assert_eq!(c.batches, 2, "{c:?}");
    assert_eq!(c.merged_searches, 2, "{c:?}");
    assert_eq!(c.chip_searches, 2);
    assert_eq!(c.keys_searched, 5);
    // page a's batch: dispatched at t0 + 4 us, one page-open and a 4-key search; its
    // members complete together
    let batch_a = t0 + SimTime::from_ps(4_000_000 + OPEN_PS + search_ps(4) + CLOSE_PS);
    for i in [0, 2, 3] {
        assert_eq!(done[i].completed, batch_a, "request {i}");
    }
    assert_eq!(done[0].latency, batch_a - t0);
    assert_eq!(done[3].latency, batch_a - t0 - SimTime::from_us(2));
    // without a deadline: four searches, none merged, the first without waiting
    let (done, c, t0) = run(0);
    assert_eq!((c.batches, c.merged_searches, c.chip_searches), (4, 0, 4));
    assert_eq!(
        done[0].latency,
        SimTime::from_ps(OPEN_PS + search_ps(1) + CLOSE_PS)
    );
    assert!(done[0].completed < batch_a.max(t0));
}

#[test]
fn sim_results_and_keys_cross_the_host_link() {
    let mut c = small_sim(16, PayloadMode::Full);
    // PCIe gen 1 × 1: 250 MB/s, 4 ns per byte (nothing else charged)
    c.ftl.controller = ControllerCosts {
        host_link_pcie_gen: 1,
        host_link_lanes: 1,
        host_link_pj_per_byte: 10.0,
        ..ControllerCosts::default()
    };
    let mut ssd = Ssd::new(c, 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    write(&mut ssd, lpa, &vec![0u8; PAGE as usize]);
    ssd.drain().unwrap();
    let start = ssd.now() + SimTime::from_us(100);
    let keys = [SearchKey::exact(0), SearchKey::exact(1)];
    let done = ssd
        .execute_search(&SearchRequest::search_batch(Lpa(lpa as u32), &keys).at(start))
        .unwrap();
    // keys in: 2 × 16 B = 128 ns; two bitmaps out: 128 B = 512 ns
    assert_eq!(
        done.latency,
        SimTime::from_ps(128_000 + OPEN_PS + search_ps(2) + CLOSE_PS + 512_000)
    );
    // gather of two chunks: the 8-byte chunk bitmap in (32 ns), 35 ns + bitmap in (100 ns) +
    // TON 16 us + 2 × 68 B out (1,700 ns) on the chip, 128 B out on the link (512 ns)
    let done = ssd
        .execute_search(&SearchRequest::gather(Lpa(lpa as u32), ChunkMask(0b11)).at(ssd.now()))
        .unwrap();
    assert_eq!(
        done.latency,
        SimTime::from_ps(32_000 + 35_000 + 100_000 + 16_000_000 + 1_700_000 + 512_000)
    );
    // link energy: 10 pJ per byte over 32 + 128 + 8 + 128 bytes (the write's 4 KiB too)
    let mj = ssd.controller_energy_mj();
    assert!(mj > 0.0);
}

#[test]
fn the_report_lists_sim_commands_and_counters_only_on_a_sim_device() {
    let mut ssd = Ssd::new(small_sim(16, PayloadMode::Full), 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    write(&mut ssd, lpa, &vec![0u8; PAGE as usize]);
    ssd.drain().unwrap();
    let keys = [SearchKey::exact(0), SearchKey::exact(1)];
    ssd.execute_search(&SearchRequest::search_batch(Lpa(lpa as u32), &keys))
        .unwrap();
    ssd.execute_search(&SearchRequest::gather(Lpa(lpa as u32), ChunkMask(0b11)))
        .unwrap();
    let report = ssd.report();
    let sim = report.sim.as_ref().unwrap();
    assert_eq!((sim.search.requests, sim.search.bytes), (1, 128));
    assert_eq!((sim.gather.requests, sim.gather.bytes), (1, 128));
    assert_eq!(sim.counters.keys_searched, 2);
    assert!(report.to_json().contains("\"keys_searched\":2"));
    let plain = Ssd::new(small_sim(0, PayloadMode::Full), 1).unwrap();
    assert!(plain.report().sim.is_none());
    assert!(!plain.report().to_json().contains("\"sim\""));
}

/// A gather that depends on a search's answer is issued at the search's completion
/// (`run_search_chained`): two searches of different pages, each followed by a one-chunk gather
/// of the chunk of its first hit; the gathers start exactly when their searches complete,
/// take the hand-computed time of a gather on an idle die, and return the page's chunk; a
/// search that finds nothing has no follow-up; the result numbers follow-ups after the
/// requests in the order they were issued.
#[test]
fn a_follow_up_gather_starts_when_its_search_completes() {
    let mut c = small_sim(16, PayloadMode::Full);
    c.ftl.search.batch_deadline_ns = 4_000;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let region = ssd.search_region().unwrap();
    // pages on different dies (consecutive LPAs stripe over the two dies)
    let (a, b) = (region.start, region.start + 1);
    let mut rng = SimRng::stream(7, "chain");
    let pages = [random_page(&mut rng, 11), random_page(&mut rng, 12)];
    write(&mut ssd, a, &pages[0]);
    write(&mut ssd, b, &pages[1]);
    ssd.drain().unwrap();
    let t0 = ssd.now() + SimTime::from_us(100);
    let requests = [
        SearchRequest::search(Lpa(a as u32), SearchKey::exact(11)).at(t0),
        // far enough apart that no transfer shares the channel with another command's
        SearchRequest::search(Lpa(b as u32), SearchKey::exact(12)).at(t0 + SimTime::from_us(100)),
        SearchRequest::search(Lpa(b as u32), SearchKey::exact(1 << 63 | 3))
            .at(t0 + SimTime::from_us(300)),
    ];
    let mut issued = Vec::new();
    let done = ssd
        .run_search_chained(&requests, |index, result| {
            // the gathers complete too: no follow-up of a follow-up
            let request = requests.get(index)?;
            let bitmap = Ssd::bitmap_of(result)?;
            let slot = bitmap.slots().next()?;
            issued.push(index);
            Some(SearchRequest::gather(
                request.lpa,
                ChunkMask::single(slot / 8),
            ))
        })
        .unwrap();
    assert_eq!(issued.len(), 2, "the absent key has no follow-up");
    assert_eq!(done.len(), 5);
    for (k, &parent) in issued.iter().enumerate() {
        let search = &done[parent];
        let gather = &done[3 + k];
        // issued at the search's completion; 35 + 100 + 16,000 + 850 ns on an idle die
        assert_eq!(gather.completed - gather.latency, search.completed);
        assert_eq!(gather.latency, SimTime::from_ps(16_985_000), "gather {k}");
        let page = &pages[usize::from(requests[parent].lpa.0 as u64 != a)];
        let slot = Ssd::bitmap_of(search).unwrap().slots().next().unwrap();
        assert_eq!(gather.data, format::chunk_bytes(page, slot / 8));
    }
    assert!(Ssd::bitmap_of(&done[2]).unwrap().slots().next().is_none());
    let c = ssd.search_counters();
    assert_eq!((c.chip_searches, c.chip_gathers), (3, 2));
}

/// A bad follow-up (an empty gather) is an error naming it and its predecessor, and the
/// device stays usable: a later run's results are its own, not the failed run's.
#[test]
fn a_bad_follow_up_is_an_error_naming_it_and_the_device_stays_usable() {
    let mut ssd = Ssd::new(small_sim(16, PayloadMode::Full), 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    let mut rng = SimRng::stream(8, "chain");
    let page = random_page(&mut rng, 21);
    write(&mut ssd, lpa, &page);
    ssd.drain().unwrap();
    let searches = [
        SearchRequest::search(Lpa(lpa as u32), SearchKey::exact(21)),
        SearchRequest::search(Lpa(lpa as u32), SearchKey::exact(22)),
    ];
    let err = ssd
        .run_search_chained(&searches, |index, _| {
            (index == 0).then(|| SearchRequest::gather(Lpa(lpa as u32), ChunkMask(0)))
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("follow-up of 0") && err.contains("empty chunk bitmap"),
        "{err}"
    );
    let done = ssd.run_search(&searches).unwrap();
    for (r, d) in searches.iter().zip(&done) {
        let crate::SearchOp::Search(keys) = &r.op else {
            unreachable!()
        };
        assert_eq!(Ssd::bitmap_of(d), Some(format::match_page(&page, keys[0])));
    }
}
