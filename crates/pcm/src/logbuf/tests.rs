use super::*;
use crate::device::PcmAddr;
use crate::preset::preset;
use proptest::prelude::*;
use std::collections::HashMap;

pub(crate) fn device(capacity_bytes: u64) -> PcmDevice {
    let mut c = preset("cidr11").unwrap();
    c.geometry.capacity_bytes = capacity_bytes;
    PcmDevice::new(c, 1).unwrap()
}

/// The caller's flash: page contents by page number.
#[derive(Default)]
pub(crate) struct ModelFlash {
    pub pages: HashMap<u32, Vec<u8>>,
    pub page_writes: u64,
}

impl FlashPages for ModelFlash {
    fn page(&self, page: PageNo) -> Option<&[u8]> {
        self.pages.get(&page.0).map(|p| p.as_slice())
    }
}

impl ModelFlash {
    pub fn apply(&mut self, work: &mut FlashWork) {
        for (page, bytes) in work.writes() {
            self.pages.insert(page.0, bytes.to_vec());
            self.page_writes += 1;
        }
        work.clear();
    }

    pub fn write_over(&mut self, page: PageNo, offset: usize, bytes: &[u8], page_size: usize) {
        let p = self
            .pages
            .entry(page.0)
            .or_insert_with(|| vec![0; page_size]);
        p[offset..offset + bytes.len()].copy_from_slice(bytes);
        self.page_writes += 1;
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Op {
    Write {
        page: u32,
        offset: usize,
        len: usize,
        fill: u8,
    },
    Read {
        page: u32,
    },
    Trim {
        page: u32,
    },
    FlushAll,
}

pub(crate) fn ops(pages: u32, page_size: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        8 => (0..pages, 0..page_size, 1..page_size, any::<u8>()).prop_map(move |(page, offset, len, fill)| Op::Write {
            page,
            offset,
            len: len.min(page_size - offset),
            fill,
        }),
        4 => (0..pages).prop_map(|page| Op::Read { page }),
        1 => (0..pages).prop_map(|page| Op::Trim { page }),
        1 => Just(Op::FlushAll),
    ];
    proptest::collection::vec(op, 1..150)
}

/// Runs `ops` through `log` and checks every read against a byte-array model: the log plus the
/// flash page always give the last written bytes.
pub(crate) fn check_against_model<L: LogBuffer>(
    log: &mut L,
    device: &mut PcmDevice,
    ops: &[Op],
    page_size: usize,
) -> Result<(), TestCaseError> {
    let mut flash = ModelFlash::default();
    let mut model: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut work = FlashWork::default();
    let mut out = vec![0u8; page_size];
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Write {
                page,
                offset,
                len,
                fill,
            } => {
                // a recognisable pattern with small runs of equal bytes
                let bytes: Vec<u8> = (0..len).map(|i| fill.wrapping_add((i / 3) as u8)).collect();
                let r = log
                    .write(
                        device,
                        PageNo(page),
                        offset as u32,
                        &bytes,
                        &flash,
                        &mut work,
                    )
                    .unwrap();
                flash.apply(&mut work);
                if r.outcome == WriteOutcome::ToFlash {
                    flash.write_over(PageNo(page), offset, &bytes, page_size);
                }
                let m = model.entry(page).or_insert_with(|| vec![0; page_size]);
                m[offset..offset + len].copy_from_slice(&bytes);
            }
            Op::Read { page } => {
                if let Some(expected) = model.get(&page) {
                    log.read(device, PageNo(page), flash.page(PageNo(page)), &mut out)
                        .unwrap();
                    prop_assert_eq!(&out, expected, "step {} read of page {}", step, page);
                }
            }
            Op::Trim { page } => {
                log.trim(device, PageNo(page)).unwrap();
                flash.pages.remove(&page);
                model.remove(&page);
            }
            Op::FlushAll => {
                log.flush_all(device, &flash, &mut work).unwrap();
                flash.apply(&mut work);
            }
        }
    }
    for (page, expected) in &model {
        log.read(device, PageNo(*page), flash.page(PageNo(*page)), &mut out)
            .unwrap();
        prop_assert_eq!(&out, expected, "final read of page {}", page);
    }
    // after a full flush, flash alone holds everything
    log.flush_all(device, &flash, &mut work).unwrap();
    flash.apply(&mut work);
    for (page, expected) in &model {
        prop_assert_eq!(
            flash.pages.get(page),
            Some(expected),
            "flash copy of page {} after flush_all",
            page
        );
    }
    Ok(())
}

const SHAPE: FlashShape = FlashShape {
    page_size_bytes: 64,
    pages_per_block: 4,
    pages: 24,
};

fn region(pblocks: u64, sector: u64, all_used: bool, whole: bool) -> (PcmLogRegion, PcmDevice) {
    region_with(pblocks, sector, all_used, whole, SectorOverflow::MergeBlock)
}

fn region_with(
    pblocks: u64,
    sector: u64,
    all_used: bool,
    whole: bool,
    on_sector_overflow: SectorOverflow,
) -> (PcmLogRegion, PcmDevice) {
    let dev = device(1 << 16);
    let config = LogRegionConfig {
        region_size_bytes: pblocks * (4 * sector + 12),
        sector_size_bytes: sector,
        merge_when_all_sectors_used: all_used,
        flush_whole_block: whole,
        on_sector_overflow,
    };
    let r = PcmLogRegion::new(config, SHAPE, PcmAddr(128), &dev).unwrap();
    assert_eq!(u64::from(r.pblocks()), pblocks);
    (r, dev)
}

fn seeded_flash() -> ModelFlash {
    let mut flash = ModelFlash::default();
    for p in 0..SHAPE.pages {
        flash.pages.insert(p, vec![p as u8; 64]);
    }
    flash
}

#[test]
fn the_four_write_cases() {
    let (mut log, mut dev) = region(2, 32, true, true);
    let mut flash = ModelFlash::default();
    let mut work = FlashWork::default();
    // case 1: no flash copy
    let r = log
        .write(&mut dev, PageNo(0), 0, &[1; 8], &flash, &mut work)
        .unwrap();
    assert_eq!(r.outcome, WriteOutcome::ToFlash);
    flash = seeded_flash();
    // case 2: block 0 has no P-block
    let r = log
        .write(&mut dev, PageNo(1), 4, &[9; 3], &flash, &mut work)
        .unwrap();
    assert_eq!(r.outcome, WriteOutcome::Logged);
    assert!(r.cost.words_written > 0);
    // case 3: the sector holds a delta
    log.write(&mut dev, PageNo(1), 10, &[7; 2], &flash, &mut work)
        .unwrap();
    // case 4: same block, empty sector
    log.write(&mut dev, PageNo(2), 0, &[5], &flash, &mut work)
        .unwrap();
    let s = log.stats();
    assert_eq!(
        (
            s.direct_new_page,
            s.new_log_block,
            s.existing_sector,
            s.new_sector
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(work.writes_len(), 0, "nothing flushed yet");
    let mut out = vec![0u8; 64];
    log.read(&mut dev, PageNo(1), flash.page(PageNo(1)), &mut out)
        .unwrap();
    let mut expected = vec![1u8; 64];
    expected[4..7].copy_from_slice(&[9; 3]);
    expected[10..12].copy_from_slice(&[7; 2]);
    assert_eq!(out, expected);
    // a byte-identical rewrite changes nothing
    log.write(&mut dev, PageNo(1), 4, &[9; 3], &flash, &mut work)
        .unwrap();
    assert_eq!(log.stats().unchanged, 1);
}

#[test]
fn replacement_flushes_the_least_popular_block_sequentially() {
    let (mut log, mut dev) = region(2, 32, false, true);
    let mut flash = seeded_flash();
    let mut work = FlashWork::default();
    // block 0 gets three updates, block 1 one
    for i in 0..3 {
        log.write(&mut dev, PageNo(0), i, &[0xaa], &flash, &mut work)
            .unwrap();
    }
    log.write(&mut dev, PageNo(5), 0, &[0xbb], &flash, &mut work)
        .unwrap();
    assert_eq!(log.popularity(), vec![3, 1]);
    work.clear();
    // block 2 needs a P-block: block 1 (popularity 1) is the victim
    log.write(&mut dev, PageNo(9), 0, &[0xcc], &flash, &mut work)
        .unwrap();
    let pages: Vec<u32> = work.writes().map(|(p, _)| p.0).collect();
    assert_eq!(pages, vec![4, 5, 6, 7], "whole block 1 in page order");
    assert_eq!(work.blocks_flushed, 1);
    let (_, page5) = work.writes().nth(1).unwrap();
    assert_eq!(page5[0], 0xbb);
    flash.apply(&mut work);
    let s = log.stats();
    assert_eq!((s.merges, s.merges_replacement, s.pages_flushed), (1, 1, 4));
    assert_eq!(log.popularity(), vec![3, 1]);
}

#[test]
fn a_block_with_every_sector_used_is_merged() {
    let (mut log, mut dev) = region(2, 32, true, false);
    let flash = seeded_flash();
    let mut work = FlashWork::default();
    for p in 0..4 {
        log.write(&mut dev, PageNo(p), 0, &[0xee], &flash, &mut work)
            .unwrap();
    }
    assert_eq!(log.stats().merges_full, 1);
    assert_eq!(work.writes_len(), 4);
}

#[test]
fn a_delta_too_large_for_a_sector_is_folded_into_a_flush() {
    let (mut log, mut dev) = region(2, 32, true, false);
    let mut flash = seeded_flash();
    let mut work = FlashWork::default();
    log.write(&mut dev, PageNo(1), 0, &[0xab; 4], &flash, &mut work)
        .unwrap();
    let r = log
        .write(&mut dev, PageNo(1), 20, &[0xcd; 40], &flash, &mut work)
        .unwrap();
    assert_eq!(r.outcome, WriteOutcome::Logged);
    let s = log.stats();
    assert_eq!((s.merges_overflow, s.direct_large_delta), (1, 0));
    // the merge wrote the page with its log and the update folded in
    flash.apply(&mut work);
    let mut out = vec![0u8; 64];
    log.read(&mut dev, PageNo(1), flash.page(PageNo(1)), &mut out)
        .unwrap();
    assert_eq!(&out[..4], &[0xab; 4]);
    assert_eq!(&out[20..60], &[0xcd; 40]);
    assert_eq!(out[10], 1);
    assert_eq!(flash.pages[&1], out);
    // a page with no log and a delta too large for a sector goes to the caller
    let r = log
        .write(&mut dev, PageNo(2), 0, &[0xef; 40], &flash, &mut work)
        .unwrap();
    assert_eq!(r.outcome, WriteOutcome::ToFlash);
    assert_eq!(log.stats().direct_large_delta, 1);
}

#[test]
fn an_overflowing_page_can_be_written_alone() {
    let (mut log, mut dev) = region_with(2, 32, true, true, SectorOverflow::WritePage);
    let flash = seeded_flash();
    let mut work = FlashWork::default();
    log.write(&mut dev, PageNo(1), 0, &[0xab; 4], &flash, &mut work)
        .unwrap();
    log.write(&mut dev, PageNo(2), 0, &[0xab; 4], &flash, &mut work)
        .unwrap();
    let r = log
        .write(&mut dev, PageNo(1), 20, &[0xcd; 40], &flash, &mut work)
        .unwrap();
    assert_eq!(r.outcome, WriteOutcome::Logged);
    let pages: Vec<u32> = work.writes().map(|(p, _)| p.0).collect();
    assert_eq!(pages, vec![1], "only the overflowing page");
    let (_, bytes) = work.writes().next().unwrap();
    assert_eq!(&bytes[..4], &[0xab; 4]);
    assert_eq!(&bytes[20..60], &[0xcd; 40]);
    assert_eq!(bytes[10], 1);
    let s = log.stats();
    assert_eq!((s.merges, s.pages_merged_single), (0, 1));
}

#[test]
fn same_updates_same_results() {
    let run = || {
        let (mut log, mut dev) = region(2, 32, true, true);
        let mut flash = seeded_flash();
        let mut work = FlashWork::default();
        let mut rng = nandlab_core::SimRng::seed_from_u64(3);
        for i in 0..500u32 {
            let page = PageNo(rng.below(24) as u32);
            let offset = rng.below(56) as u32;
            log.write(&mut dev, page, offset, &[i as u8; 5], &flash, &mut work)
                .unwrap();
            flash.apply(&mut work);
        }
        (log.stats(), dev.stats().clone())
    };
    assert_eq!(run(), run());
}

#[test]
fn bad_config_names_the_key() {
    let dev = device(1 << 16);
    let cases = [
        (LogRegionConfig::thesis(1 << 14), "log.sector_size_bytes"), // 512 B > 64 B page
        (
            LogRegionConfig {
                sector_size_bytes: 32,
                ..LogRegionConfig::thesis(100)
            },
            "log.region_size_bytes",
        ),
        (
            LogRegionConfig {
                sector_size_bytes: 32,
                ..LogRegionConfig::thesis(1 << 20)
            },
            "log.region_size_bytes",
        ),
    ];
    for (config, key) in cases {
        let e = PcmLogRegion::new(config, SHAPE, PcmAddr(0), &dev).unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
    let (mut log, mut dev) = region(2, 32, true, true);
    let flash = seeded_flash();
    let mut work = FlashWork::default();
    let e = log
        .write(&mut dev, PageNo(99), 0, &[1], &flash, &mut work)
        .unwrap_err();
    assert!(e.to_string().contains("`page`"), "{e}");
    let e = log
        .write(&mut dev, PageNo(1), 60, &[1; 8], &flash, &mut work)
        .unwrap_err();
    assert!(e.to_string().contains("`bytes`"), "{e}");
}

#[test]
fn popularity_replacement_spreads_wear_over_p_blocks() {
    // hot block 0 and a stream of cold blocks: the cold ones rotate through the other P-blocks
    let (mut log, mut dev) = region(4, 32, false, true);
    let mut flash = seeded_flash();
    let mut work = FlashWork::default();
    let mut rng = nandlab_core::SimRng::seed_from_u64(9);
    for i in 0..2_000u32 {
        let page = if i % 2 == 0 {
            rng.below(4) as u32
        } else {
            4 + rng.below(20) as u32
        };
        let offset = rng.below(60) as u32;
        log.write(
            &mut dev,
            PageNo(page),
            offset,
            &[i as u8, 1],
            &flash,
            &mut work,
        )
        .unwrap();
        flash.apply(&mut work);
    }
    let wear = log.wear(&dev).unwrap();
    assert!(wear.words_written > 0 && wear.max_over_mean.is_finite());
    let cov = log.pblock_wear_cov();
    assert!(cov < 1.0, "P-block wear cov {cov}");
    let s = log.stats();
    assert!(s.sequential_share() > 0.9, "{s:?}");
}

proptest! {
    /// The PCM log plus the flash page always give the last written bytes, for any interleaving
    /// of writes, reads, trims, merges (full block, overflow, flush) and replacements.
    #[test]
    fn log_region_merges_to_the_last_written_bytes(
        ops in ops(SHAPE.pages, 64),
        pblocks in 1u64..4,
        sector in prop_oneof![Just(16u64), Just(32), Just(64)],
        all_used in any::<bool>(),
        whole in any::<bool>(),
        page_on_overflow in any::<bool>(),
    ) {
        let overflow = if page_on_overflow { SectorOverflow::WritePage } else { SectorOverflow::MergeBlock };
        let (mut log, mut dev) = region_with(pblocks, sector, all_used, whole, overflow);
        check_against_model(&mut log, &mut dev, &ops, 64)?;
    }
}

fn dpram(sectors: u64, sector: u64, max_per_page: u32) -> (DpramLog, PcmDevice) {
    let dev = device(1 << 16);
    let config = DpramConfig {
        region_size_bytes: sectors * sector,
        sector_size_bytes: sector,
        max_sectors_per_page: max_per_page,
    };
    (
        DpramLog::new(config, SHAPE, PcmAddr(256), &dev).unwrap(),
        dev,
    )
}

#[test]
fn dpram_assigns_sectors_dynamically_and_merges_the_oldest_page() {
    let (mut log, mut dev) = dpram(3, 16, 0);
    let mut flash = seeded_flash();
    let mut work = FlashWork::default();
    // page 1: a 20 B delta needs two 16 B sectors; page 2 takes the third
    log.write(&mut dev, PageNo(1), 0, &[0xaa; 14], &flash, &mut work)
        .unwrap();
    log.write(&mut dev, PageNo(2), 0, &[0xbb; 2], &flash, &mut work)
        .unwrap();
    assert_eq!(work.writes_len(), 0);
    // page 3 needs a sector: page 1 (oldest) is merged alone
    log.write(&mut dev, PageNo(3), 0, &[0xcc; 2], &flash, &mut work)
        .unwrap();
    let pages: Vec<u32> = work.writes().map(|(p, _)| p.0).collect();
    assert_eq!(pages, vec![1]);
    flash.apply(&mut work);
    assert_eq!(&flash.pages[&1][..14], &[0xaa; 14]);
    let s = log.stats();
    assert_eq!(
        (s.merges, s.pages_merged_single, s.pages_flushed),
        (1, 1, 0)
    );
    assert_eq!(s.sequential_share(), 0.0);
    assert!(log.wear(&dev).unwrap().words_written > 0);
}

#[test]
fn ipl_logs_in_flash_and_merges_a_full_unit() {
    let config = IplConfig {
        log_sectors_per_block: 2,
        sector_size_bytes: 16,
    };
    let mut log = InPageLog::new(config, SHAPE).unwrap();
    let mut dev = device(1 << 12);
    let mut flash = seeded_flash();
    let mut work = FlashWork::default();
    log.write(&mut dev, PageNo(0), 0, &[0xaa; 2], &flash, &mut work)
        .unwrap();
    log.write(&mut dev, PageNo(2), 0, &[0xbb; 2], &flash, &mut work)
        .unwrap();
    assert_eq!((work.log_sector_writes, work.writes_len()), (2, 0));
    // the unit's log area is full: merge the unit (all four pages), then log in the fresh one
    let r = log
        .write(&mut dev, PageNo(1), 0, &[0xcc; 2], &flash, &mut work)
        .unwrap();
    assert_eq!(r.outcome, WriteOutcome::Logged);
    assert_eq!(r.cost, AccessCost::default(), "IPL uses no PCM");
    let pages: Vec<u32> = work.writes().map(|(p, _)| p.0).collect();
    assert_eq!(pages, vec![0, 1, 2, 3]);
    flash.apply(&mut work);
    let s = log.stats();
    assert_eq!(
        (s.merges_full, s.flash_erases, s.flash_log_sector_writes),
        (1, 1, 3)
    );
    let mut out = vec![0u8; 64];
    log.read(&mut dev, PageNo(1), flash.page(PageNo(1)), &mut out)
        .unwrap();
    assert_eq!(&out[..3], &[0xcc, 0xcc, 1]);
}

#[test]
fn baselines_name_bad_keys() {
    let dev = device(1 << 12);
    let e = DpramLog::new(
        DpramConfig {
            region_size_bytes: 1 << 20,
            sector_size_bytes: 16,
            max_sectors_per_page: 0,
        },
        SHAPE,
        PcmAddr(0),
        &dev,
    )
    .unwrap_err();
    assert!(e.to_string().contains("dpram.region_size_bytes"), "{e}");
    let e = InPageLog::new(
        IplConfig {
            log_sectors_per_block: 16,
            sector_size_bytes: 512,
        },
        SHAPE,
    )
    .unwrap_err();
    assert!(e.to_string().contains("ipl.sector_size_bytes"), "{e}");
}

proptest! {
    /// dPRAM passes the same model test as the PCM log region.
    #[test]
    fn dpram_merges_to_the_last_written_bytes(
        ops in ops(SHAPE.pages, 64),
        sectors in 1u64..12,
        sector in prop_oneof![Just(16u64), Just(32)],
        max_per_page in 0u32..4,
    ) {
        let (mut log, mut dev) = dpram(sectors, sector, max_per_page);
        check_against_model(&mut log, &mut dev, &ops, 64)?;
    }

    /// In-Page Logging passes the same model test.
    #[test]
    fn ipl_merges_to_the_last_written_bytes(
        ops in ops(SHAPE.pages, 64),
        log_sectors in 1u32..6,
        sector in prop_oneof![Just(16u64), Just(32), Just(64)],
    ) {
        let mut log = InPageLog::new(IplConfig { log_sectors_per_block: log_sectors, sector_size_bytes: sector }, SHAPE).unwrap();
        let mut dev = device(1 << 12);
        check_against_model(&mut log, &mut dev, &ops, 64)?;
    }
}
