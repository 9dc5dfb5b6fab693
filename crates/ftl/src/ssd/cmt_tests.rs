//! The cached mapping table (`mapping/dftl`) and GC moves: white-box cases that log moves
//! by hand, and a device whose GC moves pages for real.

use crate::address::Lpa;
use crate::config::PayloadMode;
use crate::flash::emit::Tag;
use crate::host::HostRequest;
use crate::ssd::Ssd;

const PAGE: u64 = 512;

fn ssd(entries: u32) -> Ssd {
    let mut c = crate::ssd::test_device::small_slc(1, 1, 4);
    c.ftl.mapping.cache_entries = entries;
    c.ftl.payload = PayloadMode::TimingOnly;
    Ssd::new(c, 7).unwrap()
}

fn run(s: &mut Ssd, r: HostRequest) {
    s.execute(&r, None).unwrap();
}

/// Hand-computed (one translation page T, at the logical page after the host's): a 2-entry
/// cache; writes of 0, 1, 2 (the miss on 2 evicts dirty 0: T written, 1 cleaned). GC then
/// moves 1 (cached: made dirty), 5 and 7 (uncached, both in T: one read and one write of T,
/// which also cleans 1 and 2) and T itself (the directory only). A read of 0 then misses (a
/// read of T) and evicts 1, clean since the batch: no write.
#[test]
fn gc_moves_dirty_cached_entries_and_batch_uncached_ones() {
    let mut s = ssd(2);
    for lpa in 0..3 {
        run(&mut s, HostRequest::write(lpa * PAGE, PAGE));
    }
    let c = s.report().cmt.unwrap();
    assert_eq!((c.translation_reads, c.translation_pages), (0, 1));
    assert_eq!(c.translation_writes, 1);
    let t = Lpa(s.logical_pages() as u32);
    s.flash.moved_lpas.as_mut().unwrap().extend([
        (Lpa(1), Tag::Internal),
        (Lpa(5), Tag::Internal),
        (Lpa(7), Tag::Internal),
        (t, Tag::Internal),
    ]);
    s.settle_cmt().unwrap();
    let c = s.report().cmt.unwrap();
    assert_eq!(
        (
            c.gc_entry_updates,
            c.gc_cached_updates,
            c.gc_translation_writes
        ),
        (3, 1, 1)
    );
    assert_eq!((c.translation_reads, c.translation_writes), (1, 2));
    assert!(s.flash.moved_lpas.as_ref().unwrap().is_empty());
    run(&mut s, HostRequest::read(0, PAGE));
    let r = s.report();
    let c = r.cmt.unwrap();
    assert_eq!(
        (c.hits, c.misses, c.evictions, c.dirty_evictions),
        (0, 4, 2, 1)
    );
    assert_eq!((c.translation_reads, c.translation_writes), (2, 2));
    // 3 host pages and 2 translation pages programmed, nothing moved
    assert_eq!(r.counters.flash_pages_programmed, 5);
    assert_eq!(r.counters.gc_page_copies, 0);
}

/// Hand-computed: a 2-entry cache; writes of 0 and 1, then a trim of 2 (a miss, evicting
/// dirty 0: T written, no old version to read) and of 1 (a hit).
#[test]
fn a_trim_changes_the_entry_like_a_write() {
    let mut s = ssd(2);
    run(&mut s, HostRequest::write(0, PAGE));
    run(&mut s, HostRequest::write(PAGE, PAGE));
    run(&mut s, HostRequest::trim(2 * PAGE, PAGE));
    run(&mut s, HostRequest::trim(PAGE, PAGE));
    let c = s.report().cmt.unwrap();
    assert_eq!(
        (c.hits, c.misses, c.evictions, c.dirty_evictions),
        (1, 3, 1, 1)
    );
    assert_eq!((c.translation_reads, c.translation_writes), (0, 1));
}

/// With room for every host entry nothing is evicted: each page GC moves is a data page
/// whose entry is cached (no translation I/O), and every move is counted.
#[test]
fn every_gc_move_of_a_cached_entry_is_counted() {
    let mut s = ssd(32);
    let host = s.logical_pages();
    assert!(host <= 32);
    let mut rng = nandlab_core::SimRng::stream(3, "cmt-gc");
    for _ in 0..300 {
        run(&mut s, HostRequest::write(rng.below(host) * PAGE, PAGE));
    }
    let r = s.report();
    let c = r.cmt.unwrap();
    assert!(r.counters.gc_page_copies > 0, "no GC moves");
    assert_eq!(c.gc_entry_updates, r.counters.gc_page_copies);
    assert_eq!(c.gc_cached_updates, c.gc_entry_updates);
    assert_eq!((c.translation_writes, c.gc_translation_writes), (0, 0));
    s.check_consistency().unwrap();
}
