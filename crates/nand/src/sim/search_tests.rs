//! Search-in-Memory on the chip model, on the `sim2024` preset (paper 004 Table II: tR 16 us,
//! match bus 80 MT/s = 12.5 ns per byte, command cycle 5 ns, 5 address cycles, SiM 10 cycles at
//! 33 MHz, bus 1.2 V x 5 mA, SiM 3.3 V x 2.5 mA): hand-computed timing and energy, results
//! against a software reference, the latch rules and the switching rules.

use super::*;
use crate::geometry::PageAddress;
use crate::preset::preset;
use crate::search::format::{self, SIM_PAGE_BYTES, SLOTS_PER_PAGE};
use crate::search::{BlockMode, ChunkMask, SearchKey};

/// The sim2024 preset with randomization off (these tests store plain bytes).
fn plain_config() -> crate::NandConfig {
    let mut config = preset("sim2024").unwrap();
    config.search.as_mut().unwrap().randomized_chunks = false;
    config
}

fn sim() -> NandSim {
    NandSim::new(plain_config(), 7).unwrap()
}

fn at(block: u32, page: u32) -> PageAddress {
    PageAddress {
        block,
        page,
        ..PageAddress::default()
    }
}

/// A page of slots `seed * 1000 + i` (distinct within a page), slot 5 repeated at slot 300.
fn page_bytes(seed: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(SIM_PAGE_BYTES as usize);
    for i in 0..u64::from(SLOTS_PER_PAGE) {
        let value = if i == 300 {
            seed * 1000 + 5
        } else {
            seed * 1000 + i
        };
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    bytes
}

/// A SiM device with block 0 in match mode and pages 0..n programmed with `page_bytes(page)`.
fn programmed(n: u32) -> NandSim {
    let mut s = sim();
    s.set_block_mode(&at(0, 0), BlockMode::Match).unwrap();
    for p in 0..n {
        s.program_page(s.now(), at(0, p), &page_bytes(u64::from(p)), 0)
            .unwrap();
    }
    settle(&mut s);
    s
}

fn settle(s: &mut NandSim) -> Vec<Completion> {
    let mut done = Vec::new();
    s.run_until_idle(&mut done);
    done
}

fn latency_of(s: &mut NandSim) -> SimTime {
    let done = settle(s);
    assert_eq!(done.len(), 1);
    done[0].latency()
}

#[test]
fn page_open_search_and_gather_times_by_hand() {
    let mut s = programmed(1);
    let now = s.now();
    s.page_open(now, at(0, 0), 1).unwrap();
    // CLE 2 x 5 ns + ALE 5 x 5 ns + TON 16 us + TOR 256 B x 12.5 ns
    assert_eq!(
        latency_of(&mut s),
        SimTime::from_ns(10 + 25 + 16_000 + 3_200)
    );
    let now = s.now();
    s.search_page(now, at(0, 0), &[SearchKey::exact(5)], 2)
        .unwrap();
    // CLE 10 + ALE 25 + TIR 16 B (200) + MATCH 10 / 33 MHz (303.030 ns) + TOR 64 B (800)
    assert_eq!(latency_of(&mut s), SimTime::from_ps(1_035_000 + 303_030));
    let now = s.now();
    s.search_page(now, at(0, 0), &[SearchKey::exact(5); 4], 3)
        .unwrap();
    // a batch of 4: 4 keys in, 4 matches, 4 bitmaps out
    assert_eq!(
        latency_of(&mut s),
        SimTime::from_ps(35_000 + 4 * (200_000 + 303_030 + 800_000))
    );
    let now = s.now();
    s.gather_chunks(now, at(0, 0), ChunkMask::single(3), 4)
        .unwrap();
    // CLE 10 + ALE 25 + TIR 8 B (100) + TOR 64 + 4 B (850)
    assert_eq!(latency_of(&mut s), SimTime::from_ns(985));
    let k = s.stats().kind(OpKind::Search);
    assert_eq!(k.ops, 2);
    assert_eq!(k.bytes_transferred, 80 + 320);
}

#[test]
fn search_energy_by_hand() {
    let mut s = programmed(1);
    s.page_open(s.now(), at(0, 0), 1).unwrap();
    settle(&mut s);
    s.search_page(s.now(), at(0, 0), &[SearchKey::exact(5)], 2)
        .unwrap();
    settle(&mut s);
    // bus 1,035 ns at 1.2 V x 5 mA = 6,210 pJ; match 303,030 ps at 3.3 V x 2.5 mA = 2,499.9975 pJ
    let search = s.stats().energy_uj(OpKind::Search) * 1e6;
    assert!((search - (6_210.0 + 2_499.997_5)).abs() < 1e-3, "{search}");
    // TON 16 us at 3.3 V x 25 mA = 1,320,000 pJ; bus 3,235 ns x 6 mW = 19,410 pJ
    let open = s.stats().energy_uj(OpKind::PageOpen) * 1e6;
    assert!((open - 1_339_410.0).abs() < 1e-3, "{open}");
}

#[test]
fn searches_and_gathers_equal_a_software_reference() {
    for randomized in [false, true] {
        reference_check(randomized);
    }
}

/// Random pages (stored randomized or not), random keys and masks: every bitmap bit and every
/// gathered chunk equal a scan of the plain bytes.
fn reference_check(randomized: bool) {
    let mut config = plain_config();
    config.search.as_mut().unwrap().randomized_chunks = randomized;
    let mut s = NandSim::new(config, 7).unwrap();
    s.set_block_mode(&at(1, 0), BlockMode::Match).unwrap();
    let mut rng = nandlab_core::SimRng::seed_from_u64(11);
    let mut pages = Vec::new();
    for p in 0..8 {
        // small slot values so that masked keys hit several slots
        let bytes: Vec<u8> = (0..SIM_PAGE_BYTES).map(|_| rng.below(4) as u8).collect();
        let mut stored = bytes.clone();
        if randomized {
            let ppa = s.geometry().ppa(&at(1, p)).0;
            crate::search::randomize::randomize_page(ppa, &mut stored);
        }
        s.program_page(s.now(), at(1, p), &stored, 0).unwrap();
        pages.push(bytes);
    }
    settle(&mut s);
    for (p, bytes) in pages.iter().enumerate() {
        let address = at(1, p as u32);
        s.page_open(s.now(), address, 0).unwrap();
        let keys: Vec<SearchKey> = (0..16)
            .map(|_| SearchKey {
                key: format::slot(bytes, rng.below(512) as u32),
                mask: rng.below(u64::MAX) & 0x0303_0303_0303_0303,
            })
            .collect();
        let bitmaps = s.search_page(s.now(), address, &keys, 0).unwrap();
        for (key, bitmap) in keys.iter().zip(&bitmaps) {
            for slot in 0..SLOTS_PER_PAGE {
                assert_eq!(
                    bitmap.is_set(slot),
                    key.matches(format::slot(bytes, slot)),
                    "page {p} slot {slot}"
                );
            }
            assert!(bitmap.count() >= 1, "the key was taken from the page");
            let chunks = s
                .gather_chunks(s.now(), address, bitmap.chunks(), 0)
                .unwrap();
            let ppa = s.geometry().ppa(&address).0;
            let mut expected = Vec::new();
            for c in bitmap.chunks().chunks() {
                let mut chunk = format::chunk_bytes(bytes, c).to_vec();
                if randomized {
                    let chunk_address = crate::search::randomize::chunk_address(ppa, c);
                    crate::search::randomize::randomize_chunk(chunk_address, &mut chunk);
                }
                expected.extend_from_slice(&chunk);
                expected.extend_from_slice(&[0; 4]); // spare area not given: zero ECC bytes
            }
            assert_eq!(chunks, expected);
        }
        s.page_close(s.now(), address, 0).unwrap();
        settle(&mut s);
    }
    // gather of a page that is not open senses it first
    let chunk = s
        .gather_chunks(s.now(), at(1, 2), ChunkMask::single(63), 0)
        .unwrap();
    let mut plain = chunk[..64].to_vec();
    if randomized {
        let ppa = s.geometry().ppa(&at(1, 2)).0;
        let chunk_address = crate::search::randomize::chunk_address(ppa, 63);
        crate::search::randomize::randomize_chunk(chunk_address, &mut plain);
    }
    assert_eq!(plain, format::chunk_bytes(&pages[2], 63));
    let done = settle(&mut s);
    assert!(done[0].latency() > SimTime::from_us(16));
}

#[test]
fn page_open_cache_loads_latch_1_while_searches_go_on() {
    let mut s = programmed(3);
    s.page_open(s.now(), at(0, 0), 0).unwrap();
    settle(&mut s);
    let start = s.now();
    assert_eq!(s.page_open_cache(start, at(0, 1), 1).unwrap(), None);
    assert_eq!(s.cached_page(&at(0, 0)), Some(at(0, 1)));
    let hit = s
        .search_page(start, at(0, 0), &[SearchKey::exact(5)], 2)
        .unwrap();
    assert_eq!(hit[0].slots().collect::<Vec<_>>(), vec![5, 300]);
    let done = settle(&mut s);
    let search = done.iter().find(|c| c.tag == 2).unwrap();
    let open = done.iter().find(|c| c.tag == 1).unwrap();
    assert!(
        search.completed < open.completed,
        "the search of the active page runs during the cached sense"
    );
    // a second page-open-cache while Latch 1 is full is refused
    let err = s.page_open_cache(s.now(), at(0, 2), 3).unwrap_err();
    assert!(
        err.to_string().contains("already waits in Latch 1"),
        "{err}"
    );
    let (moved, window) = s.page_close(s.now(), at(0, 0), 4).unwrap().unwrap();
    assert_eq!(moved, at(0, 1));
    assert_eq!(window, page_bytes(1)[..256].to_vec());
    let hit = s
        .search_page(s.now(), at(0, 1), &[SearchKey::exact(1005)], 5)
        .unwrap();
    assert_eq!(hit[0].slots().collect::<Vec<_>>(), vec![5, 300]);
    settle(&mut s);
}

#[test]
fn latch_and_mode_rules_are_enforced() {
    let mut s = programmed(2);
    let now = s.now();
    let rule = |e: NandError| match e {
        NandError::SearchRule { message } => message,
        other => panic!("not a SiM rule error: {other}"),
    };
    // SiM commands on a storage-mode block
    let m = rule(s.submit(now, &FlashOp::page_open(at(1, 0))).unwrap_err());
    assert!(m.contains("storage mode"), "{m}");
    // search before page-open
    let m = rule(
        s.search_page(now, at(0, 0), &[SearchKey::exact(1)], 0)
            .unwrap_err(),
    );
    assert!(m.contains("not active"), "{m}");
    // page-close with nothing open
    let m = rule(s.page_close(now, at(0, 0), 0).unwrap_err());
    assert!(m.contains("no page is active"), "{m}");
    // an erased page
    let m = rule(s.page_open(now, at(0, 9), 0).unwrap_err());
    assert!(m.contains("no data"), "{m}");
    s.page_open(now, at(0, 0), 0).unwrap();
    // page-open over an active page
    let m = rule(s.page_open(now, at(0, 1), 0).unwrap_err());
    assert!(m.contains("page-open-cache"), "{m}");
    // legacy ops on the plane's page buffers
    let m = rule(s.submit(now, &FlashOp::read(at(0, 1))).unwrap_err());
    assert!(m.contains("page-close it first"), "{m}");
    let m = rule(s.submit(now, &FlashOp::erase(at(0, 0))).unwrap_err());
    assert!(m.contains("page-close it first"), "{m}");
    // batch bounds and an empty gather
    let keys = vec![SearchKey::exact(1); 65];
    let m = rule(s.search_page(now, at(0, 0), &keys, 0).unwrap_err());
    assert!(m.contains("search.batch_keys_max"), "{m}");
    let m = rule(s.gather_chunks(now, at(0, 0), ChunkMask(0), 0).unwrap_err());
    assert!(m.contains("empty chunk bitmap"), "{m}");
    // mode switches: not while programmed, not while in a latch
    let m = rule(s.set_block_mode(&at(0, 0), BlockMode::Storage).unwrap_err());
    assert!(m.contains("erase it before"), "{m}");
    // multiplane and cache variants that do not exist
    let err = s
        .submit(now, &FlashOp::search(at(0, 0), 1).cached())
        .unwrap_err();
    assert!(err.to_string().contains("no cache mode"), "{err}");
    settle(&mut s);
    s.page_close(s.now(), at(0, 0), 0).unwrap();
    settle(&mut s);
    // erase, then the block may switch back to storage mode
    s.submit(s.now(), &FlashOp::erase(at(0, 0))).unwrap();
    settle(&mut s);
    assert_eq!(s.stored_page(&at(0, 0)), None);
    s.set_block_mode(&at(0, 0), BlockMode::Storage).unwrap();
    let m = rule(
        s.program_page(s.now(), at(0, 0), &page_bytes(0), 0)
            .unwrap_err(),
    );
    assert!(m.contains("storage mode"), "{m}");
}

#[test]
fn addresses_beyond_the_geometry_are_errors_not_panics() {
    let mut s = programmed(1);
    let far = at(1_000, 0);
    let now = s.now();
    for err in [
        s.search_page(now, far, &[SearchKey::exact(1)], 0)
            .unwrap_err(),
        s.gather_chunks(now, far, ChunkMask::ALL, 0).unwrap_err(),
        s.page_open_cache(now, far, 0).unwrap_err(),
        s.page_open(now, far, 0).unwrap_err(),
        s.page_close(now, far, 0).unwrap_err(),
        s.set_block_mode(&far, BlockMode::Match).unwrap_err(),
        s.read_page_data(now, far, 0).unwrap_err(),
        s.program_page(now, far, &page_bytes(0), 0).unwrap_err(),
    ] {
        assert!(matches!(err, NandError::AddressOutOfRange { .. }), "{err}");
    }
    assert_eq!(s.stored_page(&far), None);
    assert_eq!(s.active_page(&far), None);
}

#[test]
fn a_device_without_search_refuses_sim_ops() {
    let mut s = NandSim::new(preset("mlc1").unwrap(), 1).unwrap();
    let err = s.submit(SimTime::ZERO, &FlashOp::page_open(PageAddress::default()));
    assert!(err.unwrap_err().to_string().contains("[search]"));
    let err = s.set_block_mode(&PageAddress::default(), BlockMode::Match);
    assert!(err.unwrap_err().to_string().contains("[search]"));
}

#[test]
fn match_mode_blocks_use_slc_times_and_storage_blocks_the_preset() {
    let mut config = plain_config();
    let search = config.search.as_mut().unwrap();
    search.match_read_us = 20.0;
    search.match_program_us = 100.0;
    let mut s = NandSim::new(config, 1).unwrap();
    s.set_block_mode(&at(0, 0), BlockMode::Match).unwrap();
    for (block, read_us) in [(0, 20), (1, 16)] {
        s.submit(s.now(), &FlashOp::program(at(block, 0))).unwrap();
        settle(&mut s);
        s.submit(s.now(), &FlashOp::read(at(block, 0))).unwrap();
        // CLE 10 + ALE 25 + TON + TOR 4,096 B at 800 MT/s (5,120 ns)
        assert_eq!(
            latency_of(&mut s),
            SimTime::from_ns(35 + read_us * 1000 + 5_120)
        );
    }
}

#[test]
fn bit_errors_land_in_the_latch_not_in_the_stored_page() {
    let mut config = plain_config();
    config.reliability.rber_base = 1e-3;
    let mut s = NandSim::new(config.clone(), 3).unwrap();
    s.set_block_mode(&at(0, 0), BlockMode::Match).unwrap();
    s.program_page(s.now(), at(0, 0), &page_bytes(0), 0)
        .unwrap();
    settle(&mut s);
    let window = s.page_open(s.now(), at(0, 0), 0).unwrap();
    let errors = s.active_page_bit_errors(&at(0, 0)).unwrap();
    // 4,608 bytes x 8 bits x 1e-3: about 37 flips
    assert!((10..100).contains(&errors), "{errors}");
    assert_eq!(s.search_bit_errors(), u64::from(errors));
    assert_eq!(
        &s.stored_page(&at(0, 0)).unwrap()[..4096],
        &page_bytes(0)[..]
    );
    assert_eq!(window.len(), 256);
    // determinism: the same seed flips the same bits
    let mut again = NandSim::new(config, 3).unwrap();
    again.set_block_mode(&at(0, 0), BlockMode::Match).unwrap();
    again
        .program_page(again.now(), at(0, 0), &page_bytes(0), 0)
        .unwrap();
    settle(&mut again);
    assert_eq!(again.page_open(again.now(), at(0, 0), 0).unwrap(), window);
}

#[test]
fn randomized_pages_match_the_plain_keys() {
    let mut s = NandSim::new(preset("sim2024").unwrap(), 7).unwrap();
    assert!(s.search_config().unwrap().randomized_chunks);
    s.set_block_mode(&at(2, 0), BlockMode::Match).unwrap();
    let plain = page_bytes(9);
    let address = at(2, 0);
    let ppa = s.geometry().ppa(&address).0;
    let mut stored = plain.clone();
    crate::search::randomize::randomize_page(ppa, &mut stored);
    s.program_page(s.now(), address, &stored, 0).unwrap();
    settle(&mut s);
    s.page_open(s.now(), address, 0).unwrap();
    let keys = [
        SearchKey::exact(9005),
        SearchKey::exact(9007),
        SearchKey::exact(1),
    ];
    let bitmaps = s.search_page(s.now(), address, &keys, 0).unwrap();
    assert_eq!(bitmaps[0].slots().collect::<Vec<_>>(), vec![5, 300]);
    assert_eq!(bitmaps[1].slots().collect::<Vec<_>>(), vec![7]);
    assert_eq!(bitmaps[2].count(), 0);
    // a gathered chunk de-randomizes on its own
    let mut chunk = s
        .gather_chunks(s.now(), address, ChunkMask::single(37), 0)
        .unwrap();
    chunk.truncate(64);
    crate::search::randomize::randomize_chunk(
        crate::search::randomize::chunk_address(ppa, 37),
        &mut chunk,
    );
    assert_eq!(chunk, format::chunk_bytes(&plain, 37));
}

#[test]
fn randomized_matching_equals_plain_matching_with_bit_errors() {
    // the chip matches the de-randomized latch (kept with the sense's bit errors) against the
    // plain key: the bitmaps equal matching the raw randomized latch with the per-slot
    // randomized key (§IV-C1), bit errors included
    let mut config = preset("sim2024").unwrap();
    config.reliability.rber_base = 2e-3;
    let mut s = NandSim::new(config, 5).unwrap();
    s.set_block_mode(&at(3, 0), BlockMode::Match).unwrap();
    let mut rng = nandlab_core::SimRng::seed_from_u64(2);
    let plain: Vec<u8> = (0..SIM_PAGE_BYTES).map(|_| rng.below(4) as u8).collect();
    let ppa = s.geometry().ppa(&at(3, 1)).0;
    let mut stored = plain.clone();
    crate::search::randomize::randomize_page(ppa, &mut stored);
    s.program_page(s.now(), at(3, 1), &stored, 0).unwrap();
    settle(&mut s);
    s.page_open(s.now(), at(3, 1), 0).unwrap();
    assert!(s.active_page_bit_errors(&at(3, 1)).unwrap() > 20);
    let raw = s
        .search
        .as_ref()
        .unwrap()
        .active(&at(3, 1))
        .unwrap()
        .bytes
        .clone()
        .unwrap();
    let keys: Vec<SearchKey> = (0..32)
        .map(|_| SearchKey {
            key: format::slot(&plain, rng.below(512) as u32),
            mask: rng.below(u64::MAX) & 0x0303_0303_0303_0303,
        })
        .collect();
    let bitmaps = s.search_page(s.now(), at(3, 1), &keys, 0).unwrap();
    let mut differs = false;
    for (key, bitmap) in keys.iter().zip(&bitmaps) {
        assert_eq!(*bitmap, format::match_randomized_page(&raw, *key, ppa));
        differs |= *bitmap != format::match_page(&plain, *key);
    }
    assert!(differs, "the bit errors changed some bitmap");
}
