//! The integrity layer on the sim2024 chip model (randomized chunks): results against a plain
//! scan of the written data, with the reliability model's bit errors off and on — the fallback
//! (CRC failure → full read with ECC and read-retry), the age-based refresh, and chunk ECC
//! corrections.

use super::*;
use nandlab_core::{SimRng, SimTime};
use nandlab_nand::search::header::DATA_BYTES;
use nandlab_nand::{ChunkMask, NandConfig, NandSim, PageAddress, SearchKey, preset};

const DAY_MS: u64 = 86_400_000;

fn config(rber_base: f64, retention_per_day: f64) -> NandConfig {
    let mut c = preset("sim2024").unwrap();
    c.reliability.rber_base = rber_base;
    c.reliability.rber_retention_coeff_per_day = retention_per_day;
    c
}

fn block(b: u32) -> PageAddress {
    PageAddress {
        block: b,
        ..PageAddress::default()
    }
}

/// Data of logical page `p`: 504 distinct slots `p << 32 | i`.
fn data(p: u32) -> Vec<u8> {
    (0..504u64)
        .flat_map(|i| (u64::from(p) << 32 | i).to_le_bytes())
        .collect()
}

fn settle(sim: &mut NandSim) {
    let mut done = Vec::new();
    sim.run_until_idle(&mut done);
}

/// A store over blocks 0..4 of die 0 with `pages` written at time zero.
fn store(sim: &mut NandSim, pages: u32, store_config: StoreConfig) -> SearchStore {
    let mut s = SearchStore::new(sim, (0..4).map(block).collect(), store_config).unwrap();
    for p in 0..pages {
        s.write(sim, sim.now(), LogicalPage(p), &data(p)).unwrap();
    }
    settle(sim);
    s
}

/// Looks up every slot `probe_step`-th key of every page and a missing key; checks each result
/// against the written data.
fn check_lookups(sim: &mut NandSim, s: &mut SearchStore, pages: u32, probe_step: usize) {
    for p in 0..pages {
        for i in (0..504u32).step_by(probe_step) {
            let key = u64::from(p) << 32 | u64::from(i);
            let now = sim.now();
            let hits = s
                .lookup(sim, now, LogicalPage(p), SearchKey::exact(key))
                .unwrap();
            settle(sim);
            assert_eq!(hits, vec![(i, key)], "page {p} key {key:#x}");
        }
        let now = sim.now();
        let miss = s
            .lookup(sim, now, LogicalPage(p), SearchKey::exact(u64::MAX))
            .unwrap();
        settle(sim);
        assert!(miss.is_empty());
    }
}

#[test]
fn clean_pages_are_served_on_chip() {
    let mut sim = NandSim::new(config(0.0, 0.0), 1).unwrap();
    let mut s = store(&mut sim, 8, StoreConfig::default());
    check_lookups(&mut sim, &mut s, 8, 37);
    // masked search: the high 32 bits select the page's slots, all 504 of them
    let now = sim.now();
    let open = s.open(&mut sim, now, LogicalPage(3)).unwrap();
    assert!(open.on_chip());
    let key = SearchKey {
        key: 3 << 32,
        mask: 0xFFFF_FFFF_0000_0000,
    };
    let bitmap = s.search(&mut sim, now, &open, &[key]).unwrap()[0];
    assert_eq!(bitmap.count(), 504, "the header chunk is never a result");
    s.close(&mut sim, now, open).unwrap();
    settle(&mut sim);
    let st = *s.stats();
    assert_eq!(st.crc_failures + st.aged_opens + st.full_reads, 0);
    assert_eq!(st.opens, st.opens_on_chip);
}

#[test]
fn retention_errors_take_the_fallback_and_results_stay_correct() {
    // rber = 1e-3 per day since the block's last program: about 1e-2 after ten days
    let mut sim = NandSim::new(config(0.0, 1e-3), 2).unwrap();
    let pages = 128; // fills block 0: refreshed copies land in the fresh block 1
    let mut s = store(&mut sim, pages, StoreConfig::default());
    let later = SimTime::from_ms(10 * DAY_MS);
    sim.submit(later, &nandlab_nand::FlashOp::read(block(9)))
        .unwrap();
    settle(&mut sim);
    check_lookups(&mut sim, &mut s, 16, 101);
    let st = *s.stats();
    assert!(
        sim.search_bit_errors() > 0,
        "the latches saw raw bit errors"
    );
    assert_eq!(st.opens_on_chip, 0, "every page failed its CRC: {st:?}");
    assert_eq!(st.crc_failures, st.opens);
    assert_eq!(st.full_reads, st.crc_failures);
    assert!(
        st.read_retries >= st.full_reads,
        "the page ECC needed read-retry: {st:?}"
    );
    assert!(st.controller_searches > 0);
    assert_eq!(s.refresh_queue_len(), 16);
    // refresh rewrites the pages into block 1: they are served on chip again
    let now = sim.now();
    assert_eq!(s.run_refresh(&mut sim, now, 100).unwrap(), 16);
    settle(&mut sim);
    assert_eq!(s.address_of(LogicalPage(0)).unwrap().block, 1);
    let before = *s.stats();
    check_lookups(&mut sim, &mut s, 16, 101);
    let after = *s.stats();
    assert_eq!(after.crc_failures, before.crc_failures, "{after:?}");
    assert_eq!(
        after.opens_on_chip - before.opens_on_chip,
        after.opens - before.opens
    );
}

#[test]
fn pages_older_than_the_refresh_age_are_read_out_and_refreshed() {
    let mut sim = NandSim::new(config(0.0, 0.0), 3).unwrap();
    let store_config = StoreConfig {
        refresh_age: SimTime::from_ms(DAY_MS),
        ..StoreConfig::default()
    };
    let mut s = store(&mut sim, 4, store_config);
    let later = SimTime::from_ms(2 * DAY_MS);
    let hits = s
        .lookup(
            &mut sim,
            later,
            LogicalPage(2),
            SearchKey::exact(2 << 32 | 77),
        )
        .unwrap();
    settle(&mut sim);
    assert_eq!(hits, vec![(77, 2 << 32 | 77)]);
    assert_eq!((s.stats().aged_opens, s.stats().full_reads), (1, 1));
    assert_eq!(s.refresh_queue_len(), 1);
    let now = sim.now();
    s.run_refresh(&mut sim, now, 10).unwrap();
    settle(&mut sim);
    let now = sim.now();
    let open = s.open(&mut sim, now, LogicalPage(2)).unwrap();
    assert!(open.on_chip(), "the rewritten page carries a new timestamp");
    s.close(&mut sim, now, open).unwrap();
    // a bounded queue: a second page beyond a bound of one is an error naming the bound
    let mut sim = NandSim::new(config(0.0, 0.0), 3).unwrap();
    let tiny = StoreConfig {
        refresh_age: SimTime::from_ms(DAY_MS),
        refresh_queue_pages_max: 1,
        ..StoreConfig::default()
    };
    let mut s = store(&mut sim, 2, tiny);
    let later = SimTime::from_ms(2 * DAY_MS);
    s.lookup(&mut sim, later, LogicalPage(0), SearchKey::exact(1))
        .unwrap();
    settle(&mut sim);
    let now = sim.now();
    let err = s.open(&mut sim, now, LogicalPage(1)).unwrap_err();
    assert!(err.to_string().contains("refresh_queue_pages_max"), "{err}");
}

#[test]
fn single_bit_errors_in_gathered_chunks_are_corrected() {
    // about one raw bit error per sensed page (4,608 bytes x 8 x 3e-5)
    let mut sim = NandSim::new(config(3e-5, 0.0), 4).unwrap();
    let mut s = store(&mut sim, 8, StoreConfig::default());
    let mut rng = SimRng::seed_from_u64(5);
    for _ in 0..300 {
        let p = rng.below(8) as u32;
        let chunk = 1 + rng.below(63) as u32;
        let now = sim.now();
        let mut open = s.open(&mut sim, now, LogicalPage(p)).unwrap();
        let got = s
            .gather(&mut sim, now, &mut open, ChunkMask::single(chunk))
            .unwrap();
        s.close(&mut sim, now, open).unwrap();
        settle(&mut sim);
        let at = (chunk as usize - 1) * 64;
        assert_eq!(got, data(p)[at..at + 64].to_vec(), "page {p} chunk {chunk}");
    }
    let st = *s.stats();
    assert!(st.chunk_bits_corrected > 0, "{st:?}");
    assert!(sim.search_bit_errors() > 100);
}

#[test]
fn bad_arguments_are_named() {
    let mut sim = NandSim::new(config(0.0, 0.0), 1).unwrap();
    let mut s = store(&mut sim, 1, StoreConfig::default());
    let now = sim.now();
    let err = s
        .write(&mut sim, now, LogicalPage(1), &[0; 10])
        .unwrap_err();
    assert!(err.to_string().contains("`data`"), "{err}");
    let err = s.open(&mut sim, now, LogicalPage(5)).unwrap_err();
    assert!(err.to_string().contains("never written"), "{err}");
    let err = s.open(&mut sim, now, LogicalPage(1 << 20)).unwrap_err();
    assert!(err.to_string().contains("`page`"), "{err}");
    let mut open = s.open(&mut sim, now, LogicalPage(0)).unwrap();
    let err = s
        .gather(&mut sim, now, &mut open, ChunkMask(1))
        .unwrap_err();
    assert!(err.to_string().contains("verification header"), "{err}");
    assert_eq!(DATA_BYTES, 4032);
    let mut plain = NandSim::new(preset("mlc1").unwrap(), 1).unwrap();
    let err = SearchStore::new(&mut plain, vec![block(0)], StoreConfig::default()).unwrap_err();
    assert!(err.to_string().contains("[search]"), "{err}");
}

#[test]
fn same_seed_same_errors_same_outcome() {
    let run = || {
        let mut sim = NandSim::new(config(2e-4, 0.0), 9).unwrap();
        let mut s = store(&mut sim, 6, StoreConfig::default());
        let mut found = Vec::new();
        for p in 0..6 {
            for i in [0u64, 100, 503] {
                let now = sim.now();
                found.push(
                    s.lookup(
                        &mut sim,
                        now,
                        LogicalPage(p),
                        SearchKey::exact(u64::from(p) << 32 | i),
                    )
                    .unwrap(),
                );
                settle(&mut sim);
            }
        }
        (found, *s.stats(), sim.search_bit_errors(), sim.now())
    };
    let first = run();
    assert!(first.2 > 0, "errors were injected");
    assert_eq!(first, run());
}
