use super::*;
use nandlab_core::SimRng;

fn small() -> MemFtlConfig {
    MemFtlConfig {
        page_size_bytes: 32,
        pages_per_block: 8,
        block_count: 12,
        spare_block_count: 3,
        ..MemFtlConfig::default()
    }
}

fn page(lpa: u64, version: u32) -> Vec<u8> {
    let mut bytes = vec![0u8; 32];
    bytes[..8].copy_from_slice(&lpa.to_le_bytes());
    bytes[8..12].copy_from_slice(&version.to_le_bytes());
    bytes
}

#[test]
fn data_survives_garbage_collection() {
    let mut ftl = MemFtl::new(small()).unwrap();
    let pages = ftl.logical_page_count();
    let mut versions = vec![0u32; pages as usize];
    let mut rng = SimRng::seed_from_u64(5);
    for step in 0..2_000u32 {
        let lpa = rng.below(pages);
        versions[lpa as usize] = step + 1;
        ftl.write_page(Lpa(lpa as u32), &page(lpa, step + 1))
            .unwrap();
    }
    ftl.check_invariants().unwrap();
    assert!(ftl.counters().gc_count > 0 && ftl.counters().page_copies > 0);
    let mut buf = vec![0u8; 32];
    for (lpa, &version) in versions.iter().enumerate() {
        ftl.read_page(Lpa(lpa as u32), &mut buf).unwrap();
        let expected = if version == 0 {
            vec![0; 32]
        } else {
            page(lpa as u64, version)
        };
        assert_eq!(buf, expected, "LPA {lpa}");
    }
    // Round-robin reuse of free blocks keeps wear even.
    let erases = ftl.erase_counts();
    let (min, max) = (erases.iter().min().unwrap(), erases.iter().max().unwrap());
    assert!(max - min <= 2, "uneven wear {erases:?}");
}

#[test]
fn hints_name_the_valid_pages_of_the_fifo_victim() {
    let mut ftl = MemFtl::new(small()).unwrap();
    let pages = ftl.logical_page_count();
    for lpa in 0..pages {
        ftl.write_page(Lpa(lpa as u32), &page(lpa, 1)).unwrap();
    }
    ftl.write_page(Lpa(3), &page(3, 2)).unwrap();
    let mut hinted = Vec::new();
    ftl.next_erase_block_valid_lpas(&mut hinted);
    let victim = ftl.next_victim_block().unwrap();
    assert_eq!(victim, 0);
    let expected: Vec<Lpa> = (0..8).filter(|&l| l != 3).map(Lpa).collect();
    assert_eq!(hinted, expected);
    for lpa in &hinted {
        assert_eq!(ftl.block_of_lpa(*lpa), Some(victim));
    }
    // Rewriting every hinted LPA leaves the victim empty: the next GC copies nothing from it.
    let copies_before = ftl.counters().page_copies;
    for lpa in hinted {
        ftl.write_page(lpa, &page(u64::from(lpa.0), 3)).unwrap();
    }
    assert_eq!(ftl.valid_page_count(victim), 0);
    while ftl.counters().erases == 0 {
        ftl.write_page(Lpa(pages as u32 - 1), &page(pages - 1, 4))
            .unwrap();
    }
    assert_eq!(ftl.counters().page_copies, copies_before);
    ftl.check_invariants().unwrap();
}

#[test]
fn gc_time_follows_the_paper_formula() {
    let config = small();
    let mut ftl = MemFtl::new(config.clone()).unwrap();
    let pages = ftl.logical_page_count();
    for lpa in 0..pages {
        ftl.write_page(Lpa(lpa as u32), &page(lpa, 1)).unwrap();
    }
    while ftl.counters().gc_count == 0 {
        ftl.write_page(Lpa(0), &page(0, 2)).unwrap();
    }
    let counters = ftl.counters();
    let per_copy = config.read_latency + config.program_latency;
    assert_eq!(
        counters.gc_time,
        per_copy * counters.page_copies + config.erase_latency * counters.erases
    );
}

#[test]
fn trim_unmaps_and_bad_config_is_refused() {
    let mut ftl = MemFtl::new(small()).unwrap();
    ftl.write_page(Lpa(1), &page(1, 1)).unwrap();
    ftl.trim_page(Lpa(1)).unwrap();
    assert_eq!(ftl.block_of_lpa(Lpa(1)), None);
    let mut buf = vec![9u8; 32];
    ftl.read_page(Lpa(1), &mut buf).unwrap();
    assert_eq!(buf, vec![0u8; 32]);
    let bad = MemFtlConfig {
        spare_block_count: 1,
        ..small()
    };
    assert!(matches!(
        MemFtl::new(bad),
        Err(EngineError::Config {
            field: "spare_block_count",
            ..
        })
    ));
}
