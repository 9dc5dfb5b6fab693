//! Read disturb, read reclaim and uncorrectable reads (issue 34 item 4,
//! `flash/read_reclaim.rs`, `ssd/uncorrectable.rs`): a hot-read block is rewritten at the
//! hand-computed read, reclaim keeps data, and a read the ECC cannot correct is an error,
//! never good data.

mod common;

use nandlab_ftl::{FtlError, HostRequest, MappingKind, Ssd, SsdConfig};
use proptest::prelude::*;

const PAGE: u64 = 512;

/// 1 die × 2 planes × 32 blocks × 4 pages, full payloads, with `reliability` keys.
fn config(reliability: &str) -> SsdConfig {
    common::with_reliability(common::slc(1, 2, 32, 4, PAGE as u32), reliability)
}

fn stamp(page: u64, stamp: u8) -> Vec<u8> {
    (0..PAGE)
        .map(|i| stamp.wrapping_add(i as u8).wrapping_add(page as u8) | 1)
        .collect()
}

fn write_page(ssd: &mut Ssd, page: u64, s: u8) -> Vec<u8> {
    let data = stamp(page, s);
    ssd.execute(&HostRequest::write(page * PAGE, PAGE), Some(&data))
        .unwrap();
    data
}

fn read_page(ssd: &mut Ssd, page: u64) -> Vec<u8> {
    ssd.execute(&HostRequest::read(page * PAGE, PAGE), None)
        .unwrap()
        .data
}

/// rber = 1e-6 · reads (no base, no wear); a codeword of 1 KiB holds 8,192 bits, so the
/// expected errors are 8.192e-3 · reads; t = 40, margin 0.5: 20 errors, reached at read
/// ceil(20 / 8.192e-3) = ceil(2441.4…) = 2,442 of the block.
const DISTURB: &str = "read_disturb_coeff = 1e-6\nread_reclaim_margin = 0.5";

#[test]
fn rd_off_reports_nothing() {
    let mut ssd = Ssd::new(config(""), 1).unwrap();
    write_page(&mut ssd, 0, 1);
    read_page(&mut ssd, 0);
    let r = ssd.report();
    assert!(r.read_reclaim.is_none());
    let json = r.to_json();
    assert!(!json.contains("read_reclaim") && !json.contains("uncorrectable_host"));
}

#[test]
fn rd_a_hot_block_is_reclaimed_at_the_hand_computed_read() {
    let mut c = config(DISTURB);
    c.ftl.gc.copyback = true;
    let mut ssd = Ssd::new(c, 1).unwrap();
    // 16 pages fill whole blocks (closed) on both planes
    let model: Vec<Vec<u8>> = (0..16).map(|p| write_page(&mut ssd, p, 7)).collect();
    let before = ssd.report();
    for _ in 0..2441 {
        read_page(&mut ssd, 0);
    }
    let r = ssd.report();
    assert_eq!(r.read_reclaim.unwrap().reclaims, 0, "{:?}", r.read_reclaim);
    assert_eq!(read_page(&mut ssd, 0), model[0]); // read 2,442 of the block
    let r = ssd.report();
    let rr = r.read_reclaim.unwrap();
    assert_eq!((rr.reclaims, rr.pages_moved), (1, 4), "{rr:?}");
    assert_eq!(rr.max_block_reads, 2442);
    // its own kind of traffic: in the pages programmed (the WAF), not in the GC copies
    let programmed = r.counters.flash_pages_programmed - before.counters.flash_pages_programmed;
    assert_eq!(programmed, 4);
    assert_eq!(r.counters.read_reclaim_page_copies, 4);
    assert_eq!(r.counters.read_reclaims, 1);
    assert_eq!(r.counters.gc_page_copies, before.counters.gc_page_copies);
    // a disturbed page is read off the chip through ECC, never copied back as read (with
    // copyback on for GC): 4 reads and 4 programs, no copyback
    assert_eq!(r.counters.copybacks, before.counters.copybacks);
    for (p, expected) in model.iter().enumerate() {
        assert_eq!(&read_page(&mut ssd, p as u64), expected, "page {p}");
    }
    let json = ssd.report().to_json();
    assert!(json.contains("\"read_reclaim\":{\"reclaims\":1"), "{json}");
}

#[test]
fn rd_other_mappings_and_bad_values_are_refused_naming_the_key() {
    let mut c = config(DISTURB);
    c.ftl.mapping.kind = MappingKind::Block;
    let err = Ssd::new(c, 1).err().unwrap().to_string();
    assert!(err.contains("read_reclaim_margin"), "{err}");
    for (bad, key) in [
        ("read_disturb_coeff = -1.0", "read_disturb_coeff"),
        ("read_disturb_coeff = 0.5", "read_disturb_coeff"),
        (
            "read_disturb_coeff = 1e-6\nread_reclaim_margin = 2.0",
            "read_reclaim_margin",
        ),
    ] {
        let err = Ssd::new(config(bad), 1).err().unwrap().to_string();
        assert!(err.contains(key), "{bad}: {err}");
    }
}

/// A tiny ECC (1 correctable bit per 1 KiB codeword, no read-retry) and rber 1e-3: about 8
/// errors per codeword, so nearly every read fails: each is an error, never data.
#[test]
fn rd_uncorrectable_reads_are_errors_not_data() {
    let mut ssd = Ssd::new(
        config("rber_base = 1e-3\necc_correctable_bits = 1\nread_retry_max = 0"),
        1,
    )
    .unwrap();
    write_page(&mut ssd, 3, 9);
    let mut failed = 0;
    for _ in 0..20 {
        match ssd.execute(&HostRequest::read(3 * PAGE, PAGE), None) {
            Err(FtlError::Uncorrectable { message }) => {
                assert!(message.contains("bytes 1536..2048"), "{message}");
                failed += 1;
            }
            Ok(done) => panic!("an uncorrectable read returned {} bytes", done.data.len()),
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(failed, 20);
    let r = ssd.report();
    assert_eq!(r.counters.uncorrectable_host_reads, 20);
    assert!(r.to_json().contains("\"uncorrectable_host_reads\":20"));
    // the device goes on: a write still succeeds
    write_page(&mut ssd, 4, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Whatever the seed and mix, read reclaim keeps data: every read returns the last write
    /// of its page, while hot pages are read often enough to reclaim their blocks.
    #[test]
    fn rd_reclaim_keeps_data(
        seed in 0u64..1000,
        ops in proptest::collection::vec((0u64..1000, any::<u8>(), 0u8..4), 1..400),
    ) {
        // reclaim after about 25 reads of a block
        let c = config("read_disturb_coeff = 1e-4\nread_reclaim_margin = 0.5");
        let mut ssd = Ssd::new(c, seed).unwrap();
        let pages = ssd.logical_pages();
        let mut model: Vec<Option<Vec<u8>>> = vec![None; pages as usize];
        for &(page, s, kind) in &ops {
            let page = page % pages;
            if kind == 0 {
                model[page as usize] = Some(write_page(&mut ssd, page, s));
            } else {
                // reads favour a few hot pages
                let hot = if kind == 1 { page } else { page % 4 };
                for _ in 0..8 {
                    let got = read_page(&mut ssd, hot);
                    match &model[hot as usize] {
                        Some(expected) => prop_assert_eq!(&got, expected),
                        None => prop_assert!(got.iter().all(|&b| b == 0)),
                    }
                }
            }
        }
        for (page, expected) in model.iter().enumerate() {
            if let Some(expected) = expected {
                prop_assert_eq!(&read_page(&mut ssd, page as u64), expected);
            }
        }
    }
}
