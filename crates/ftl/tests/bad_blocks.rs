//! Bad blocks (SPEC C4, `flash/bad_blocks.rs`): factory bad blocks are never written, blocks
//! whose erase fails are retired, and through both every read returns what was last written.

mod common;

use nandlab_ftl::{FtlError, HostRequest, MappingKind, Ssd, SsdConfig};
use proptest::prelude::*;

const PAGE: u64 = 512;

/// 1 die × 2 planes × 32 blocks × 4 pages, full payloads, with `reliability` keys.
fn config(reliability: &str) -> SsdConfig {
    common::with_reliability(common::slc(1, 2, 32, 4, PAGE as u32), reliability)
}

fn write_page(ssd: &mut Ssd, page: u64, stamp: u8) -> Vec<u8> {
    let data: Vec<u8> = (0..PAGE).map(|i| stamp.wrapping_add(i as u8) | 1).collect();
    ssd.execute(&HostRequest::write(page * PAGE, PAGE), Some(&data))
        .unwrap();
    data
}

#[test]
fn bbrd_off_reports_nothing() {
    let mut ssd = Ssd::new(config(""), 1).unwrap();
    write_page(&mut ssd, 0, 1);
    let r = ssd.report();
    assert!(r.bad_blocks.is_none());
    assert!(!r.to_json().contains("bad_blocks"));
}

#[test]
fn bbrd_factory_and_grown_bad_blocks_are_reported_and_keep_data() {
    let mut ssd = Ssd::new(
        config("factory_bad_block_fraction = 0.05\nerase_fail_base = 0.02"),
        5,
    )
    .unwrap();
    let pages = ssd.logical_pages();
    let mut model = vec![None; pages as usize];
    for i in 0..4000u64 {
        let page = (i * 7919) % pages;
        model[page as usize] = Some(write_page(&mut ssd, page, i as u8));
    }
    for (page, expected) in model.iter().enumerate() {
        let Some(expected) = expected else { continue };
        let got = ssd
            .execute(&HostRequest::read(page as u64 * PAGE, PAGE), None)
            .unwrap();
        assert_eq!(&got.data[..], &expected[..], "page {page}");
    }
    let r = ssd.report().bad_blocks.unwrap();
    assert!(r.factory > 0 && r.grown > 0, "{r:?}");
    assert_eq!(r.retired_pages, 4 * u64::from(r.factory + r.grown));
    let json = ssd.report().to_json();
    assert!(json.contains("\"bad_blocks\":{\"factory\":"), "{json}");
}

#[test]
fn bbrd_other_mappings_and_bad_values_are_refused_naming_the_key() {
    let mut c = config("factory_bad_block_fraction = 0.05");
    c.ftl.mapping.kind = MappingKind::Block;
    let err = Ssd::new(c, 1).err().unwrap().to_string();
    assert!(err.contains("factory_bad_block_fraction"), "{err}");
    let err = Ssd::new(config("erase_fail_base = 2.0"), 1)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("erase_fail_base"), "{err}");
    let err = Ssd::new(config("factory_bad_block_fraction = 0.45"), 1)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("spare blocks"), "{err}");
}

/// Program-status failures: each failed program's block has its data rewritten elsewhere and
/// is retired; no acknowledged write is lost.
#[test]
fn bbrd_program_failures_retire_the_block_and_keep_data() {
    let mut ssd = Ssd::new(config("program_fail_base = 0.01"), 3).unwrap();
    let pages = ssd.logical_pages();
    let mut model = vec![None; pages as usize];
    for i in 0..3000u64 {
        let page = (i * 7919) % pages;
        model[page as usize] = Some(write_page(&mut ssd, page, i as u8));
    }
    for (page, expected) in model.iter().enumerate() {
        let Some(expected) = expected else { continue };
        let got = ssd
            .execute(&HostRequest::read(page as u64 * PAGE, PAGE), None)
            .unwrap();
        assert_eq!(&got.data[..], &expected[..], "page {page}");
    }
    let r = ssd.report().bad_blocks.unwrap();
    assert!(r.program_failures > 0, "{r:?}");
    assert_eq!(r.factory, 0);
    // each failure retired its block while the spare lasted
    assert_eq!(
        r.grown + r.spare_exhausted_failures,
        r.program_failures,
        "{r:?}"
    );
    let json = ssd.report().to_json();
    assert!(json.contains("\"program_failures\":"), "{json}");
    let err = Ssd::new(config("program_fail_base = 1.5"), 1)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("program_fail_base"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Whatever the seed and failure rates, retirement keeps data: every read returns the
    /// last write of its page.
    #[test]
    fn bbrd_retirement_keeps_data(
        seed in 0u64..1000,
        fail in 0.0f64..0.1,
        writes in proptest::collection::vec((0u64..1000, any::<u8>()), 1..600),
    ) {
        let c = config(&format!(
            "factory_bad_block_fraction = 0.03\nerase_fail_base = {fail}\nprogram_fail_base = {}",
            fail / 4.0
        ));
        let mut ssd = Ssd::new(c, seed).unwrap();
        let pages = ssd.logical_pages();
        let mut model = vec![None; pages as usize];
        for (i, &(page, stamp)) in writes.iter().enumerate() {
            let page = page % pages;
            let data: Vec<u8> = (0..PAGE).map(|i| stamp.wrapping_add(i as u8) | 1).collect();
            match ssd.execute(&HostRequest::write(page * PAGE, PAGE), Some(&data)) {
                Ok(_) => model[page as usize] = Some(data),
                // a plane's spare used up: a clear error, the page written before stays
                Err(FtlError::DeviceFull { .. }) => {
                    model[page as usize] = None;
                    break;
                }
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            }
            if i % 16 == 0 {
                let got = ssd.execute(&HostRequest::read(page * PAGE, PAGE), None).unwrap();
                prop_assert_eq!(&got.data[..], &model[page as usize].as_ref().unwrap()[..]);
            }
        }
        for (page, expected) in model.iter().enumerate() {
            if let Some(expected) = expected {
                let got = ssd.execute(&HostRequest::read(page as u64 * PAGE, PAGE), None).unwrap();
                prop_assert_eq!(&got.data[..], &expected[..]);
            }
        }
    }
}
