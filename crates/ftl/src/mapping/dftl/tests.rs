//! The cached mapping table on a small SLC device (512-byte pages: 128 entries per
//! translation page).

use super::*;
use crate::config::PayloadMode;
use crate::host::HostRequest;
use crate::ssd::Ssd;
use std::collections::HashMap;

const PAGE: u64 = 512;

fn ssd(entries: u32, payload: PayloadMode) -> Ssd {
    let mut c = crate::ssd::test_device::small_slc(1, 1, 4);
    c.ftl.mapping.cache_entries = entries;
    c.ftl.payload = payload;
    Ssd::new(c, 7).unwrap()
}

fn write(s: &mut Ssd, lpa: u64) -> SimTimeNs {
    s.execute(&HostRequest::write(lpa * PAGE, PAGE), None)
        .unwrap()
        .latency
        .as_ns_f64()
}

fn read(s: &mut Ssd, lpa: u64) -> SimTimeNs {
    s.execute(&HostRequest::read(lpa * PAGE, PAGE), None)
        .unwrap()
        .latency
        .as_ns_f64()
}

type SimTimeNs = f64;

#[test]
fn the_split_reserves_one_translation_page_per_entries_per_page() {
    // 128 entries per 512-byte page: 129 map pages = 128 host pages + 1 translation page
    assert_eq!(split(129, 512), (128, 1));
    assert_eq!(split(130, 512), (128, 2));
    assert_eq!(split(19, 512), (18, 1));
}

/// Hand-computed: a 2-entry cache, writes of 0 and 1, a read hit of 0, then misses on 2
/// (evicting dirty 1: one translation write, which also cleans 0) and on 1 (its translation
/// page now exists: one translation read; evicting clean 0: no write).
#[test]
fn hits_misses_and_evictions_follow_lru_with_translation_io() {
    let mut s = ssd(2, PayloadMode::TimingOnly);
    let plain = ssd(0, PayloadMode::TimingOnly);
    assert!(plain.report().cmt.is_none());
    assert_eq!(s.logical_pages() + 1, plain.logical_pages());
    write(&mut s, 0);
    write(&mut s, 1);
    let hit = read(&mut s, 0);
    read(&mut s, 2);
    let c = s.report().cmt.unwrap();
    assert_eq!(
        (c.hits, c.misses, c.evictions, c.dirty_evictions),
        (1, 3, 1, 1)
    );
    assert_eq!((c.translation_reads, c.translation_writes), (0, 1));
    let miss = read(&mut s, 1);
    let r = s.report();
    let c = r.cmt.unwrap();
    assert_eq!(
        (c.hits, c.misses, c.evictions, c.dirty_evictions),
        (1, 4, 2, 1)
    );
    assert_eq!((c.translation_reads, c.translation_writes), (1, 1));
    assert_eq!(c.translation_pages, 1);
    // the translation write is a real program: 2 host pages, 3 programs
    assert_eq!(r.counters.flash_pages_programmed, 3);
    assert_eq!(r.counters.host_pages_written, 2);
    // the miss waited for its translation page's read on the same plane
    assert!(miss > hit, "miss {miss} ns, hit {hit} ns");
    // with the default, the same sequence programs only the host's pages
    let mut plain = plain;
    write(&mut plain, 0);
    write(&mut plain, 1);
    assert_eq!(plain.report().counters.flash_pages_programmed, 2);
}

#[test]
fn cache_entries_need_the_page_mapping() {
    let mut c = crate::ssd::test_device::small_slc(1, 1, 4);
    c.ftl.mapping.cache_entries = 4;
    c.ftl.mapping.kind = crate::config::MappingKind::Block;
    let e = Ssd::new(c, 7).unwrap_err().to_string();
    assert!(e.contains("ftl.cmt_entries"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Random writes and reads through a small cache, enough for GC to move translation pages:
    /// every page reads back what was last written (the table the cache fronts agrees with
    /// the ideal one), every access is a hit or a miss, each dirty eviction and each batch of
    /// GC moves of uncached entries writes one translation page, and the device stays
    /// consistent.
    #[test]
    fn the_cached_table_agrees_with_the_ideal_one(entries in 1u32..6, seed in 0u64..1000) {
        let mut s = ssd(entries, PayloadMode::Full);
        let logical = s.logical_pages();
        let mut model: HashMap<u64, u8> = HashMap::new();
        let mut rng = nandlab_core::SimRng::stream(seed, "cmt");
        let mut accesses = 0;
        for step in 0..400u32 {
            let lpa = rng.below(logical);
            if rng.below(3) == 0 {
                let data = s.read_bytes(lpa * PAGE, PAGE).unwrap();
                let want = model.get(&lpa).copied().unwrap_or(0);
                proptest::prop_assert!(data.iter().all(|b| *b == want));
                read(&mut s, lpa);
            } else {
                let byte = (step % 250) as u8 + 1;
                s.execute(&HostRequest::write(lpa * PAGE, PAGE), Some(&vec![byte; PAGE as usize]))
                    .unwrap();
                model.insert(lpa, byte);
            }
            accesses += 1;
        }
        s.check_consistency().unwrap();
        let r = s.report();
        let c = r.cmt.unwrap();
        proptest::prop_assert_eq!(c.hits + c.misses, accesses);
        proptest::prop_assert_eq!(
            c.translation_writes,
            c.dirty_evictions + c.gc_translation_writes
        );
        // every GC move of a data page changed its entry (the others moved translation pages)
        proptest::prop_assert!(c.gc_entry_updates > 0, "no data page moved");
        proptest::prop_assert!(c.gc_entry_updates <= r.counters.gc_page_copies);
        proptest::prop_assert!(c.gc_cached_updates <= c.gc_entry_updates);
        proptest::prop_assert!(c.evictions + u64::from(entries) >= c.misses);
        proptest::prop_assert!(r.gc_latency.count > 0, "no GC ran");
        for (lpa, byte) in &model {
            let data = s.read_bytes(lpa * PAGE, PAGE).unwrap();
            proptest::prop_assert!(data.iter().all(|b| b == byte));
        }
    }
}
