//! Power-cut remount of a device with a SiM region: the recovered device keeps the region's
//! pages in the pool's own placement id and in match-mode blocks, and its searches and gathers
//! equal the reference (with and without the integrity layer).

use super::tests::{PAGE, random_page, small_sim, write};
use crate::config::PayloadMode;
use crate::mapping::Mapping;
use crate::power::{CutConfig, RecoveryVariant};
use crate::{Lpa, SearchRequest, Ssd};
use nandlab_core::SimRng;
use nandlab_nand::search::format;
use nandlab_nand::{BlockMode, ChunkMask, SearchKey};

fn remount(integrity: bool) {
    let mut config = small_sim(24, PayloadMode::Full);
    config.ftl.search.integrity = integrity;
    let mut ssd = Ssd::new(config.clone(), 7).unwrap();
    ssd.start_power_trace().unwrap();
    let mut rng = SimRng::stream(7, "remount");
    let key = 0xBEEF;
    let region = ssd.search_region().unwrap();
    let mut pages: Vec<(u64, Vec<u8>)> = Vec::new();
    let storage = vec![0x3Cu8; PAGE as usize];
    for (i, lpa) in region.clone().enumerate() {
        let page = random_page(&mut rng, key);
        write(&mut ssd, lpa, &page);
        pages.push((lpa, page));
        write(&mut ssd, i as u64 * 3, &storage);
    }
    // SiM commands under the trace (its fold takes one op per chip op), then more writes
    for (lpa, page) in pages.iter().step_by(3) {
        let k = SearchKey::exact(key);
        let done = ssd
            .execute_search(&SearchRequest::search(Lpa(*lpa as u32), k))
            .unwrap();
        let mut expected = format::match_page(page, k);
        if integrity {
            expected.0[0] &= !0xFF;
        }
        assert_eq!(Ssd::bitmap_of(&done).unwrap(), expected);
        ssd.execute_search(&SearchRequest::gather(Lpa(*lpa as u32), ChunkMask(2)))
            .unwrap();
    }
    for (i, (lpa, page)) in pages.iter_mut().enumerate().skip(1).step_by(4) {
        *page = random_page(&mut rng, key);
        write(&mut ssd, *lpa, page);
        write(&mut ssd, 100 + i as u64, &storage);
    }
    ssd.drain().unwrap();
    let cut = ssd.power_cut(&CutConfig::default()).unwrap();
    let recovered = ssd.recover_cut(&cut, RecoveryVariant::Correct);
    let mut mounted = Ssd::new(config, 8).unwrap();
    mounted.load_recovered(&cut, &recovered).unwrap();
    mounted.check_consistency().unwrap();
    for (lpa, page) in &pages {
        let ppa = mounted.mapper.locate(Lpa(*lpa as u32)).unwrap();
        assert!(
            mounted.flash.in_search_pool(ppa),
            "lpa {lpa} in the pool's blocks"
        );
        let address = mounted.sched.codec().address(ppa).unwrap();
        assert_eq!(
            mounted.nand().block_mode(&address).unwrap(),
            BlockMode::Match
        );
        let k = SearchKey::exact(key);
        let done = mounted
            .execute_search(&SearchRequest::search(Lpa(*lpa as u32), k))
            .unwrap();
        let mut expected = format::match_page(page, k);
        if integrity {
            expected.0[0] &= !0xFF;
        }
        assert_eq!(Ssd::bitmap_of(&done).unwrap(), expected, "lpa {lpa}");
        let chunks = ChunkMask(0b1110);
        let done = mounted
            .execute_search(&SearchRequest::gather(Lpa(*lpa as u32), chunks))
            .unwrap();
        assert_eq!(&done.data[..], &page[64..256]);
    }
    let c = mounted.search_counters();
    assert_eq!(
        c.chip_searches,
        pages.len() as u64,
        "searched on the chip: {c:?}"
    );
    assert_eq!(cut.report.torn_programs + cut.report.ops_not_run, 0);
    assert_eq!(c.controller_answers, 0);
    assert!(c.blocks_to_match > 0);
    assert_eq!(c.crc_failures + c.fallback_reads, 0, "{c:?}");
    // storage pages stayed out of the pool
    let ppa = mounted.mapper.locate(Lpa(3)).unwrap();
    assert!(!mounted.flash.in_search_pool(ppa));
}

#[test]
fn a_remounted_sim_device_keeps_its_pool_and_match_mode() {
    remount(false);
}

#[test]
fn a_remounted_sim_device_with_integrity_passes_its_header_checks() {
    remount(true);
}

/// A cut with programs in flight after SiM commands ran under the trace: the trace holds one op
/// per chip op (a search is three), so the cut finds the in-flight programs among the ops it
/// has not folded, and the mount keeps every SiM page that was durable before.
#[test]
fn a_cut_in_flight_after_sim_commands_mounts_consistently() {
    let config = small_sim(16, PayloadMode::Full);
    let mut ssd = Ssd::new(config.clone(), 9).unwrap();
    ssd.start_power_trace().unwrap();
    let mut rng = SimRng::stream(9, "remount");
    let region = ssd.search_region().unwrap();
    let pages: Vec<(u64, Vec<u8>)> = region.map(|lpa| (lpa, random_page(&mut rng, 1))).collect();
    for (lpa, page) in &pages {
        write(&mut ssd, *lpa, page);
    }
    for (lpa, _) in &pages {
        ssd.execute_search(&SearchRequest::search(
            Lpa(*lpa as u32),
            SearchKey::exact(1),
        ))
        .unwrap();
    }
    // storage writes admitted without waiting; cut while their programs run
    let storage = vec![0x11u8; PAGE as usize];
    for lpa in 0..8u64 {
        let r = crate::HostRequest::write(lpa * PAGE, PAGE);
        assert!(ssd.power_admit(&r, Some(&storage)).unwrap());
    }
    for _ in 0..3 {
        ssd.power_step().unwrap();
    }
    let cut = ssd.power_cut(&CutConfig::default()).unwrap();
    assert!(
        cut.report.torn_programs + cut.report.ops_not_run > 0,
        "{:?}",
        cut.report
    );
    let recovered = ssd.recover_cut(&cut, RecoveryVariant::Correct);
    let mut mounted = Ssd::new(config, 10).unwrap();
    mounted.load_recovered(&cut, &recovered).unwrap();
    for (lpa, page) in &pages {
        let k = SearchKey::exact(1);
        let done = mounted
            .execute_search(&SearchRequest::search(Lpa(*lpa as u32), k))
            .unwrap();
        assert_eq!(Ssd::bitmap_of(&done).unwrap(), format::match_page(page, k));
    }
}
