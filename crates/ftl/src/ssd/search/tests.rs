//! The SiM region through the SSD: commands equal a software reference (also after GC moved
//! the pages), GC keeps pool pages in match-mode blocks and re-randomizes them, and one
//! search's latency is the chip's page-open + search + page-close.

use crate::config::{FtlConfig, PayloadMode, SsdConfig};
use crate::mapping::Mapping;
use crate::{FtlError, HostRequest, Lpa, SearchOp, SearchRequest, Ssd};
use nandlab_core::{SimRng, SimTime};
use nandlab_nand::search::format::{self, SIM_PAGE_BYTES};
use nandlab_nand::search::randomize;
use nandlab_nand::{BlockMode, ChunkMask, PageAddress, SearchKey};

pub(super) const PAGE: u64 = SIM_PAGE_BYTES as u64;

/// The `sim2024` preset shrunk to one channel of 2 dies × 16 blocks of 16 pages; `sim_pages`
/// of the 256 logical pages form the SiM region.
pub(super) fn small_sim(sim_pages: u32, payload: PayloadMode) -> SsdConfig {
    let mut c = SsdConfig::from_preset("sim2024");
    c.device.overrides = Some(
        toml::from_str(
            "[geometry]\nchannels = 1\ndies_per_chip = 2\nblocks_per_plane = 16\npages_per_block = 16\n",
        )
        .unwrap(),
    );
    c.ftl = FtlConfig {
        op_fraction: 1.0,
        gc: crate::config::GcConfig {
            threshold_blocks: 3,
            ..Default::default()
        },
        payload,
        search: crate::config::SearchRegionConfig {
            pages: sim_pages,
            ..Default::default()
        },
        ..FtlConfig::default()
    };
    c
}

/// A page of random slots in which `key` appears in a few slots.
pub(super) fn random_page(rng: &mut SimRng, key: u64) -> Vec<u8> {
    let mut page = vec![0u8; PAGE as usize];
    for slot in page.chunks_exact_mut(8) {
        let v = if rng.below(40) == 0 {
            key
        } else {
            rng.below(u64::MAX)
        };
        slot.copy_from_slice(&v.to_le_bytes());
    }
    page
}

pub(super) fn write(ssd: &mut Ssd, lpa: u64, page: &[u8]) {
    ssd.execute(&HostRequest::write(lpa * PAGE, PAGE), Some(page))
        .unwrap();
}

/// Every search (exact, masked, absent key) and a gather of every page equal the software
/// reference on the page's bytes.
fn check_all(ssd: &mut Ssd, pages: &[(u64, Vec<u8>)], key: u64, rng: &mut SimRng) {
    for (lpa, page) in pages {
        let keys = [
            SearchKey::exact(key),
            SearchKey {
                key: key & 0xffff,
                mask: 0xffff,
            },
            SearchKey::exact(key ^ 1),
        ];
        for k in keys {
            let done = ssd
                .execute_search(&SearchRequest::search(Lpa(*lpa as u32), k))
                .unwrap();
            assert_eq!(
                Ssd::bitmap_of(&done).unwrap(),
                format::match_page(page, k),
                "lpa {lpa} key {k:?}"
            );
        }
        let chunks = ChunkMask(rng.below(u64::MAX) | 1);
        let done = ssd
            .execute_search(&SearchRequest::gather(Lpa(*lpa as u32), chunks))
            .unwrap();
        let expected: Vec<u8> = chunks
            .chunks()
            .flat_map(|c| format::chunk_bytes(page, c).to_vec())
            .collect();
        assert_eq!(done.data, expected, "gather of lpa {lpa}");
    }
}

#[test]
fn search_and_gather_equal_the_reference_also_after_gc_moved_the_pages() {
    let mut ssd = Ssd::new(small_sim(48, PayloadMode::Full), 5).unwrap();
    let region = ssd.search_region().unwrap();
    assert_eq!(region, 208..256);
    let mut rng = SimRng::stream(9, "sim-test");
    let key = 0x5EA4_C4ED_0000_0042;
    let mut pages: Vec<(u64, Vec<u8>)> = region
        .clone()
        .map(|lpa| (lpa, random_page(&mut rng, key)))
        .collect();
    for (lpa, page) in &pages {
        write(&mut ssd, *lpa, page);
    }
    check_all(&mut ssd, &pages, key, &mut rng);
    let copies_before = ssd.flash.counters.gc_page_copies;
    let programs_before = ssd.search_counters().pool_programs;
    // churn: random rewrites of storage pages and of SiM pages until GC has moved pool pages
    let storage = vec![0xA5u8; PAGE as usize];
    let mut host_sim_writes = 0u64;
    for _ in 0..1500 {
        if rng.below(6) == 0 {
            let i = rng.below(pages.len() as u64) as usize;
            let fresh = random_page(&mut rng, key);
            write(&mut ssd, pages[i].0, &fresh);
            pages[i].1 = fresh;
            host_sim_writes += 1;
        } else {
            write(&mut ssd, rng.below(208), &storage);
        }
    }
    ssd.drain().unwrap();
    ssd.check_consistency().unwrap();
    let c = ssd.search_counters();
    assert!(ssd.flash.counters.gc_page_copies > copies_before, "GC ran");
    assert!(
        c.pool_programs - programs_before > host_sim_writes,
        "GC moved pool pages: {} pool programs for {host_sim_writes} host writes",
        c.pool_programs - programs_before
    );
    assert!(
        c.blocks_to_storage > 0,
        "pool blocks were reused for storage"
    );
    // every valid page of the region is in a match-mode block, and its stored bytes are the
    // page randomized for its own physical page
    for (lpa, page) in &pages {
        let ppa = ssd.mapper.locate(Lpa(*lpa as u32)).unwrap();
        let address = ssd.sched.codec().address(ppa).unwrap();
        assert_eq!(ssd.nand().block_mode(&address).unwrap(), BlockMode::Match);
        let mut expected = page.clone();
        randomize::randomize_page(ssd.nand().geometry().ppa(&address).0, &mut expected);
        assert_eq!(
            &ssd.nand().stored_page(&address).unwrap()[..PAGE as usize],
            &expected[..]
        );
    }
    check_all(&mut ssd, &pages, key, &mut rng);
}

#[test]
fn a_moved_page_keeps_matching_only_because_gc_re_randomizes_it() {
    // the bytes of a page randomized for one physical page do not match at another: a
    // copyback (which keeps them) would break every search of a moved page
    let mut rng = SimRng::stream(3, "sim-test");
    let key = 77;
    let page = random_page(&mut rng, key);
    let reference = format::match_page(&page, SearchKey::exact(key));
    assert!(reference.count() > 0);
    let mut stored = page.clone();
    randomize::randomize_page(100, &mut stored);
    assert_eq!(
        format::match_randomized_page(&stored, SearchKey::exact(key), 100),
        reference
    );
    assert_ne!(
        format::match_randomized_page(&stored, SearchKey::exact(key), 101),
        reference
    );
}

#[test]
fn one_search_and_one_gather_take_the_chips_stage_times() {
    let mut ssd = Ssd::new(small_sim(16, PayloadMode::Full), 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    write(&mut ssd, lpa, &vec![0u8; PAGE as usize]);
    ssd.drain().unwrap();
    let start = ssd.now() + SimTime::from_us(100);
    let done = ssd
        .execute_search(&SearchRequest::search(Lpa(lpa as u32), SearchKey::exact(0)).at(start))
        .unwrap();
    // sim2024 (paper 004 Table II; 5 ns command cycles, 80 MT/s match-mode bus):
    // page-open: 2 CLE + 5 ALE cycles (35 ns) + TON 16 us + 256-byte window (3,200 ns)
    //   = 19,235 ns;
    // search of one key: 35 ns + key and mask in (16 B, 200 ns) + 10 cycles at 33 MHz
    //   (303.03 ns) + bitmap out (64 B, 800 ns) = 1,338.03 ns;
    // page-close: 1 CLE cycle (5 ns), no page waiting in Latch 1.
    assert_eq!(
        done.latency,
        SimTime::from_ps(19_235_000 + 1_338_030 + 5_000)
    );
    assert_eq!(
        Ssd::bitmap_of(&done).unwrap().count(),
        512,
        "a zero page matches key 0"
    );
    // gather of one chunk of a page not in the latches: 35 ns + chunk bitmap in (8 B, 100
    // ns) + TON 16 us + the chunk and its 4 ECC bytes out (68 B, 850 ns) = 16,985 ns
    let done = ssd
        .execute_search(&SearchRequest::gather(Lpa(lpa as u32), ChunkMask(1)).at(ssd.now()))
        .unwrap();
    assert_eq!(done.latency, SimTime::from_ps(16_985_000));
    assert_eq!(done.data, vec![0u8; 64]);
}

#[test]
fn buffered_and_unwritten_pages_are_answered_by_the_controller() {
    let mut c = small_sim(16, PayloadMode::Full);
    c.ftl.buffer.pages = 4;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    let mut rng = SimRng::stream(4, "sim-test");
    let page = random_page(&mut rng, 9);
    write(&mut ssd, lpa, &page);
    let k = SearchKey::exact(9);
    let done = ssd
        .execute_search(&SearchRequest::search(Lpa(lpa as u32), k))
        .unwrap();
    assert_eq!(Ssd::bitmap_of(&done).unwrap(), format::match_page(&page, k));
    let done = ssd
        .execute_search(&SearchRequest::search(
            Lpa(lpa as u32 + 1),
            SearchKey::exact(0),
        ))
        .unwrap();
    assert_eq!(
        Ssd::bitmap_of(&done).unwrap().count(),
        512,
        "never written: zeros"
    );
    assert_eq!(ssd.search_counters().controller_answers, 2);
    assert_eq!(ssd.search_counters().chip_searches, 0);
}

#[test]
fn timing_only_searches_run_on_the_chip_without_results() {
    let mut ssd = Ssd::new(small_sim(16, PayloadMode::TimingOnly), 1).unwrap();
    let lpa = ssd.search_region().unwrap().start;
    ssd.execute(&HostRequest::write(lpa * PAGE, PAGE), None)
        .unwrap();
    let done = ssd
        .execute_search(&SearchRequest::search(Lpa(lpa as u32), SearchKey::exact(0)))
        .unwrap();
    assert!(done.data.is_empty());
    assert_eq!(
        done.latency,
        SimTime::from_ps(19_235_000 + 1_338_030 + 5_000)
    );
    assert_eq!(ssd.search_counters().chip_searches, 1);
}

#[test]
fn bad_commands_and_configs_are_named() {
    let mut ssd = Ssd::new(small_sim(16, PayloadMode::Full), 1).unwrap();
    let err = ssd
        .execute_search(&SearchRequest::search(Lpa(3), SearchKey::exact(0)))
        .unwrap_err();
    assert!(
        err.to_string().contains("SiM region is lpa 240..256"),
        "{err}"
    );
    let err = ssd
        .execute_search(&SearchRequest::gather(Lpa(240), ChunkMask(0)))
        .unwrap_err();
    assert!(err.to_string().contains("empty chunk bitmap"), "{err}");
    let mut request = HostRequest::read(0, PAGE);
    request.op = crate::HostOp::Search;
    let err = ssd.execute(&request, None).unwrap_err();
    assert!(err.to_string().contains("execute_search"), "{err}");
    let mut plain = SsdConfig::from_preset("slc");
    plain.ftl.search.pages = 8;
    let err = Ssd::new(plain, 1).unwrap_err();
    assert!(matches!(err, FtlError::Config { .. }));
    assert!(err.to_string().contains("ftl.sim_pages"), "{err}");
    let mut multi = small_sim(16, PayloadMode::Full);
    multi.ftl.scheduler.multiplane = true;
    assert!(
        Ssd::new(multi, 1)
            .unwrap_err()
            .to_string()
            .contains("multiplane")
    );
    let mut none = Ssd::new(small_sim(0, PayloadMode::Full), 1).unwrap();
    let err = none
        .execute_search(&SearchRequest::search(Lpa(3), SearchKey::exact(0)))
        .unwrap_err();
    assert!(err.to_string().contains("without a SiM region"), "{err}");
    let _ = SearchOp::Gather(ChunkMask(1));
    let _ = PageAddress::default();
}

#[test]
fn open_loop_search_commands_complete_with_what_execute_returns() {
    let mut rng = SimRng::stream(3, "sim-open-loop");
    let key = 0x0BE7_0000_0000_0042;
    let mut sync = Ssd::new(small_sim(8, PayloadMode::Full), 5).unwrap();
    let mut open = Ssd::new(small_sim(8, PayloadMode::Full), 5).unwrap();
    let region = sync.search_region().unwrap();
    let pages: Vec<(u64, Vec<u8>)> = region
        .map(|lpa| (lpa, random_page(&mut rng, key)))
        .collect();
    for (lpa, page) in &pages {
        write(&mut sync, *lpa, page);
        write(&mut open, *lpa, page);
    }
    open.open_loop_begin();
    // every page's search and a gather, all submitted at once (they queue for slots and
    // dies), mixed with a block read of the region
    let mut tags = Vec::new();
    for (lpa, _) in &pages {
        let search = SearchRequest::search(Lpa(*lpa as u32), SearchKey::exact(key));
        let gather = SearchRequest::gather(Lpa(*lpa as u32), ChunkMask(0b101));
        let want_search = sync.execute_search(&search).unwrap().data;
        let want_gather = sync.execute_search(&gather).unwrap().data;
        tags.push((open.submit_search(&search).unwrap(), want_search));
        tags.push((open.submit_search(&gather).unwrap(), want_gather));
    }
    let read = open
        .submit(&HostRequest::read(pages[0].0 * PAGE, PAGE), None)
        .unwrap();
    let mut done = Vec::new();
    while open.advance_to_completion().unwrap() {
        done.extend(open.take_completions());
    }
    assert_eq!(done.len(), tags.len() + 1);
    for (tag, want) in tags {
        let got = done.iter().find(|c| c.tag == tag).unwrap();
        assert_eq!(got.status, Ok(()));
        assert_eq!(got.data, want, "tag {tag}");
        assert!(got.completed > got.submitted);
    }
    let read = done.iter().find(|c| c.tag == read).unwrap();
    assert_eq!(read.data, pages[0].1);
    // outside the region: refused at submission
    let outside = SearchRequest::search(Lpa(0), SearchKey::exact(key));
    assert!(matches!(
        open.submit_search(&outside),
        Err(FtlError::BadRequest { .. })
    ));
}
