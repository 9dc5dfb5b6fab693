//! The integrity layer on the SSD's SiM region (`ftl.sim_integrity`) with the reliability
//! model's bit errors on: failed header checks take the full-read fallback (with read-retry),
//! aged pages are read out, both are queued and refreshed through the FTL, gathered chunks are
//! corrected by their chunk ECC, and every result equals the software reference (the page's
//! bytes without the header chunk).

use super::tests::{PAGE, random_page, small_sim, write};
use crate::config::{PayloadMode, SsdConfig};
use crate::mapping::Mapping;
use crate::{Lpa, SearchRequest, Ssd};
use nandlab_core::{SimRng, SimTime};
use nandlab_nand::search::format;
use nandlab_nand::search::{chunk_ecc, header};
use nandlab_nand::{ChunkMask, MatchBitmap, SearchKey};

const DAY_MS: u64 = 86_400_000;

/// `small_sim` with the integrity layer and the reliability model's retention errors: raw bit
/// error rate `per_day` × days since the block's last program.
fn checked(sim_pages: u32, per_day: f64, refresh_age_s: u64) -> SsdConfig {
    let mut c = small_sim(sim_pages, PayloadMode::Full);
    let overrides = format!(
        "[geometry]\nchannels = 1\ndies_per_chip = 2\nblocks_per_plane = 16\npages_per_block = 16\n[reliability]\nrber_base = 0.0\nrber_retention_coeff_per_day = {per_day:e}\n"
    );
    c.device.overrides = Some(toml::from_str(&overrides).unwrap());
    c.ftl.search.integrity = true;
    c.ftl.search.refresh_age_s = refresh_age_s;
    c
}

/// The reference bitmap: a match over the host's bytes, the header chunk's slots cleared.
fn reference(page: &[u8], key: SearchKey) -> MatchBitmap {
    let mut b = format::match_page(page, key);
    b.0[0] &= !0xFF;
    b
}

/// Every page searched for `key` (exact and masked) and gathered (chunks 1..64 at random) at
/// `at`: each result equals the reference.
fn check_all(ssd: &mut Ssd, pages: &[(u64, Vec<u8>)], key: u64, rng: &mut SimRng, at: SimTime) {
    for (lpa, page) in pages {
        let keys = [
            SearchKey::exact(key),
            SearchKey {
                key: key & 0xffff,
                mask: 0xffff,
            },
        ];
        for k in keys {
            let at = at.max(ssd.now());
            let done = ssd
                .execute_search(&SearchRequest::search(Lpa(*lpa as u32), k).at(at))
                .unwrap();
            assert_eq!(
                Ssd::bitmap_of(&done).unwrap(),
                reference(page, k),
                "lpa {lpa} key {k:?}"
            );
        }
        let chunks = ChunkMask(rng.below(u64::MAX) & !1 | 2);
        let at = at.max(ssd.now());
        let done = ssd
            .execute_search(&SearchRequest::gather(Lpa(*lpa as u32), chunks).at(at))
            .unwrap();
        let expected: Vec<u8> = chunks
            .chunks()
            .flat_map(|c| format::chunk_bytes(page, c).to_vec())
            .collect();
        assert_eq!(done.data, expected, "gather of lpa {lpa}");
    }
}

fn written(ssd: &mut Ssd, key: u64, rng: &mut SimRng) -> Vec<(u64, Vec<u8>)> {
    let pages: Vec<(u64, Vec<u8>)> = ssd
        .search_region()
        .unwrap()
        .map(|lpa| (lpa, random_page(rng, key)))
        .collect();
    for (lpa, page) in &pages {
        write(ssd, *lpa, page);
    }
    ssd.drain().unwrap();
    pages
}

#[test]
fn young_pages_pass_the_header_check_and_are_searched_on_chip() {
    let mut ssd = Ssd::new(checked(12, 0.0, 86_400), 1).unwrap();
    let mut rng = SimRng::stream(1, "integrity");
    let key = 0xC0FFEE;
    let pages = written(&mut ssd, key, &mut rng);
    // on flash: chunk 0 is the verification header of the page's LPA
    for (lpa, _) in &pages {
        let ppa = ssd.mapper.locate(Lpa(*lpa as u32)).unwrap();
        let address = ssd.sched.codec().address(ppa).unwrap();
        let chip_ppa = ssd.nand().geometry().ppa(&address).0;
        let stored = ssd.nand().stored_page(&address).unwrap();
        let h = header::verify_window(stored, chip_ppa, true, super::integrity::SIM_MAGIC)
            .expect("the stored header checks");
        assert_eq!(u64::from(h.page), *lpa);
        // the spare area holds each stored chunk's ECC
        for chunk in 0..64 {
            let mut bytes = format::chunk_bytes(stored, chunk).to_vec();
            let at = PAGE as usize + 4 * chunk as usize;
            assert_eq!(
                chunk_ecc::decode(&mut bytes, &stored[at..at + 4]),
                chunk_ecc::Decoded::Clean
            );
        }
    }
    check_all(&mut ssd, &pages, key, &mut rng, SimTime::ZERO);
    let c = ssd.search_counters();
    assert_eq!(c.opens_checked, 2 * pages.len() as u64);
    assert_eq!(c.crc_failures + c.aged_opens + c.fallback_reads, 0, "{c:?}");
    assert_eq!(c.chip_searches, 2 * pages.len() as u64);
    assert_eq!(ssd.search_refresh_queue_len(), 0);
    // a host read returns the host's bytes, chunk 0 included
    let (lpa, page) = &pages[0];
    let read = ssd
        .execute(&crate::HostRequest::read(lpa * PAGE, PAGE), None)
        .unwrap();
    assert_eq!(&read.data, page);
    // chunk 0 is not the host's to gather
    let err = ssd
        .execute_search(&SearchRequest::gather(Lpa(*lpa as u32), ChunkMask(3)))
        .unwrap_err();
    assert!(err.to_string().contains("verification header"), "{err}");
}

#[test]
fn retention_errors_fail_the_crc_take_the_fallback_and_refresh_restores_the_chip_path() {
    // raw bit error rate 1e-3 per day since the block's last program: ~1e-2 after ten days,
    // about ten flipped bits in the 1,024 the header CRC covers
    let mut ssd = Ssd::new(checked(12, 1e-3, 30 * 86_400), 2).unwrap();
    let mut rng = SimRng::stream(2, "integrity");
    let key = 0x5EA4_C4ED;
    let pages = written(&mut ssd, key, &mut rng);
    let later = SimTime::from_ms(10 * DAY_MS);
    check_all(&mut ssd, &pages, key, &mut rng, later);
    let c = ssd.search_counters();
    assert!(
        ssd.nand().search_bit_errors() > 0,
        "the latches saw bit errors"
    );
    assert_eq!(c.opens_checked, 2 * pages.len() as u64);
    assert_eq!(
        c.crc_failures, c.opens_checked,
        "every header failed: {c:?}"
    );
    assert!(c.fallback_reads >= c.crc_failures, "{c:?}");
    assert!(
        c.fallback_read_retries >= c.fallback_reads,
        "the page ECC needed read-retry: {c:?}"
    );
    assert_eq!(c.uncorrectable_reads, 0);
    assert!(c.corrected_answers >= c.crc_failures);
    assert!(
        c.chunks_uncorrectable > 0,
        "gathered chunks failed their ECC: {c:?}"
    );
    assert_eq!(ssd.search_refresh_queue_len(), pages.len());
    assert_eq!(c.refreshes_queued, pages.len() as u64);
    // refresh: every page rewritten through the FTL to a fresh pool page
    let before: Vec<_> = pages
        .iter()
        .map(|(lpa, _)| ssd.mapper.locate(Lpa(*lpa as u32)).unwrap())
        .collect();
    assert_eq!(ssd.search_refresh(100).unwrap(), pages.len());
    assert_eq!(ssd.search_refresh_queue_len(), 0);
    for ((lpa, _), old) in pages.iter().zip(before) {
        assert_ne!(
            ssd.mapper.locate(Lpa(*lpa as u32)).unwrap(),
            old,
            "lpa {lpa} moved"
        );
    }
    ssd.check_consistency().unwrap();
    let c = ssd.search_counters();
    assert_eq!(c.refreshes_done, pages.len() as u64);
    // refreshed pages are young: searched on the chip again, results still exact
    let fallbacks = c.fallback_reads;
    let failures = c.crc_failures;
    let now = ssd.now();
    check_all(&mut ssd, &pages, key, &mut rng, now);
    let c = ssd.search_counters();
    assert_eq!(c.crc_failures, failures, "{c:?}");
    assert_eq!(c.fallback_reads, fallbacks, "{c:?}");
}

#[test]
fn aged_pages_are_read_out_and_queued_although_their_crc_checks() {
    let mut ssd = Ssd::new(checked(6, 0.0, 86_400), 3).unwrap();
    let mut rng = SimRng::stream(3, "integrity");
    let key = 42;
    let pages = written(&mut ssd, key, &mut rng);
    check_all(
        &mut ssd,
        &pages,
        key,
        &mut rng,
        SimTime::from_ms(2 * DAY_MS),
    );
    let c = ssd.search_counters();
    assert_eq!(c.aged_opens, c.opens_checked, "{c:?}");
    assert_eq!(c.crc_failures, 0);
    assert_eq!(c.fallback_reads, c.aged_opens);
    assert_eq!(c.fallback_read_retries, 0, "no bit errors: no retry");
    assert_eq!(ssd.search_refresh_queue_len(), pages.len());
    // a page the host rewrites meanwhile needs no refresh
    let (lpa, _) = &pages[0];
    let fresh = random_page(&mut rng, key);
    write(&mut ssd, *lpa, &fresh);
    assert_eq!(ssd.search_refresh(100).unwrap(), pages.len());
    ssd.check_consistency().unwrap();
}

#[test]
fn single_bit_chunk_errors_are_corrected_by_the_chunk_ecc() {
    // ~3e-5 after a day: a gathered 64-byte chunk sees one flipped bit now and then
    let mut ssd = Ssd::new(checked(12, 3e-5, 30 * 86_400), 4).unwrap();
    let mut rng = SimRng::stream(4, "integrity");
    let pages = written(&mut ssd, 7, &mut rng);
    let at = SimTime::from_ms(DAY_MS);
    for round in 0..20 {
        for (lpa, page) in &pages {
            let chunks = ChunkMask(!1);
            let done = ssd
                .execute_search(
                    &SearchRequest::gather(Lpa(*lpa as u32), chunks).at(at.max(ssd.now())),
                )
                .unwrap();
            assert_eq!(&done.data[..], &page[64..], "round {round} lpa {lpa}");
        }
    }
    let c = ssd.search_counters();
    assert!(c.chunk_bits_corrected > 0, "{c:?}");
}

#[test]
fn integrity_configs_are_checked() {
    let mut c = small_sim(8, PayloadMode::TimingOnly);
    c.ftl.search.integrity = true;
    let err = Ssd::new(c, 1).unwrap_err().to_string();
    assert!(
        err.contains("ftl.sim_integrity") && err.contains("full"),
        "{err}"
    );
    let mut c = small_sim(0, PayloadMode::Full);
    c.ftl.search.integrity = true;
    let err = Ssd::new(c, 1).unwrap_err().to_string();
    assert!(
        err.contains("ftl.sim_integrity") && err.contains("sim_pages"),
        "{err}"
    );
}
