//! Full payload mode against a flat byte-array model: whatever mix of (partial-page) writes,
//! reads, TRIMs and flushes, across GC, static wear-leveling and the write buffer, a read (timed,
//! or functional: `read_bytes`, `read_bytes_into`) returns what was last written, and the mapping stays consistent.

mod common;

use nandlab_ftl::{
    BufferPolicy, GcPolicy, GcScope, HostRequest, MappingKind, PayloadMode, Ssd, SsdConfig,
    WearLeveling,
};
use proptest::prelude::*;

const PAGE: u64 = 512;

#[derive(Clone, Debug)]
enum Action {
    Write { offset: u64, len: u64, seed: u8 },
    Read { offset: u64, len: u64 },
    Trim { page: u64, pages: u64 },
    Flush,
}

fn action(capacity: u64) -> impl Strategy<Value = Action> {
    let pages = capacity / PAGE;
    prop_oneof![
        6 => (0..capacity - 1, 1u64..3 * PAGE, any::<u8>()).prop_map(move |(offset, len, seed)| {
            Action::Write { offset, len: len.min(capacity - offset), seed }
        }),
        // whole-page writes to a hot set make GC and wear-leveling work
        6 => (0..pages.min(8), any::<u8>()).prop_map(|(p, seed)| Action::Write { offset: p * PAGE, len: PAGE, seed }),
        3 => (0..capacity - 1, 1u64..2 * PAGE).prop_map(move |(offset, len)| Action::Read {
            offset,
            len: len.min(capacity - offset)
        }),
        1 => (0..pages, 1u64..4).prop_map(move |(page, n)| Action::Trim { page, pages: n.min(pages - page) }),
        1 => Just(Action::Flush),
    ]
}

fn config(mapping: MappingKind, buffer_pages: u32, policy: GcPolicy) -> SsdConfig {
    let mut c = common::slc(1, 2, 12, 4, PAGE as u32);
    c.ftl.payload = PayloadMode::Full;
    c.ftl.op_fraction = 0.6;
    c.ftl.gc.threshold_blocks = 2;
    c.ftl.mapping.kind = mapping;
    c.ftl.gc.policy = policy;
    c.ftl.wear.leveling = WearLeveling::Static;
    c.ftl.wear.erase_gap_threshold = 2;
    c.ftl.buffer.pages = buffer_pages;
    c.ftl.buffer.policy = BufferPolicy::Lru;
    c.ftl.mapping.random_log_blocks = 2;
    c
}

fn check(config: SsdConfig, actions: &[Action]) -> Result<(), TestCaseError> {
    let mut ssd = Ssd::new(config, 7).unwrap();
    let capacity = ssd.logical_capacity_bytes();
    let mut model = vec![0u8; capacity as usize];
    for a in actions {
        match *a {
            Action::Write { offset, len, seed } => {
                if offset + len > capacity {
                    continue;
                }
                let data: Vec<u8> = (0..len).map(|i| seed.wrapping_add(i as u8) | 1).collect();
                ssd.execute(&HostRequest::write(offset, len), Some(&data))
                    .unwrap();
                model[offset as usize..(offset + len) as usize].copy_from_slice(&data);
            }
            Action::Read { offset, len } => {
                if offset + len > capacity {
                    continue;
                }
                let expected = &model[offset as usize..(offset + len) as usize];
                // the functional read, into a dirty buffer (every byte must be overwritten)
                let mut into = vec![0xa5u8; len as usize];
                ssd.read_bytes_into(offset, &mut into).unwrap();
                prop_assert_eq!(&into[..], expected);
                let got = ssd.execute(&HostRequest::read(offset, len), None).unwrap();
                prop_assert_eq!(&got.data[..], expected);
            }
            Action::Trim { page, pages } => {
                let (offset, len) = (page * PAGE, pages * PAGE);
                if offset + len > capacity || len == 0 {
                    continue;
                }
                ssd.execute(&HostRequest::trim(offset, len), None).unwrap();
                model[offset as usize..(offset + len) as usize].fill(0);
            }
            Action::Flush => {
                ssd.execute(&HostRequest::flush(), None).unwrap();
            }
        }
        ssd.check_consistency()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    ssd.drain().unwrap();
    prop_assert_eq!(ssd.read_bytes(0, capacity).unwrap(), model);
    Ok(())
}

fn capacity_of(config: &SsdConfig) -> u64 {
    Ssd::new(config.clone(), 0)
        .unwrap()
        .logical_capacity_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn page_mapping_reads_what_was_written(
        actions in proptest::collection::vec(action(capacity_of(&config(MappingKind::Page, 0, GcPolicy::Greedy))), 1..160),
        policy in proptest::sample::select(GcPolicy::ALL.to_vec()),
        device_gc in any::<bool>(),
    ) {
        let mut c = config(MappingKind::Page, 0, policy);
        if device_gc {
            c.ftl.gc.scope = GcScope::Device;
        }
        check(c, &actions)?;
    }

    #[test]
    fn write_buffer_reads_what_was_written(
        actions in proptest::collection::vec(action(capacity_of(&config(MappingKind::Page, 3, GcPolicy::Greedy))), 1..160),
    ) {
        check(config(MappingKind::Page, 3, GcPolicy::Greedy), &actions)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn block_and_hybrid_mappings_read_what_was_written(
        actions in proptest::collection::vec(action(capacity_of(&config(MappingKind::Block, 0, GcPolicy::Greedy)).min(capacity_of(&config(MappingKind::Hybrid, 0, GcPolicy::Greedy)))), 1..160),
        hybrid in any::<bool>(),
        buffer in proptest::sample::select(vec![0u32, 2]),
    ) {
        let mapping = if hybrid { MappingKind::Hybrid } else { MappingKind::Block };
        check(config(mapping, buffer, GcPolicy::Greedy), &actions)?;
    }
}

#[test]
fn hybrid_merges_of_every_kind_happen() {
    let mut ssd = Ssd::new(config(MappingKind::Hybrid, 0, GcPolicy::Greedy), 1).unwrap();
    let capacity = ssd.logical_capacity_bytes();
    let pages = capacity / PAGE;
    let mut model = vec![0u8; capacity as usize];
    let mut rng = nandlab_core::SimRng::seed_from_u64(3);
    for i in 0..4000u64 {
        // sequential runs (switch and partial merges) mixed with random updates (full merges)
        let page = if i % 3 == 0 {
            rng.below(pages)
        } else {
            i % pages
        };
        let data = vec![(i % 253) as u8 + 1; PAGE as usize];
        ssd.execute(&HostRequest::write(page * PAGE, PAGE), Some(&data))
            .unwrap();
        model[(page * PAGE) as usize..((page + 1) * PAGE) as usize].copy_from_slice(&data);
        if i % 97 == 0 {
            ssd.check_consistency().unwrap();
        }
    }
    ssd.drain().unwrap();
    let r = ssd.report();
    let c = &r.counters;
    assert!(
        c.merges_switch > 0 && c.merges_partial > 0 && c.merges_full > 0,
        "{c:?}"
    );
    assert!(r.waf > 1.0);
    assert_eq!(ssd.read_bytes(0, capacity).unwrap(), model);
}

/// Regression: a host or GC write frontier used to keep pointing at its block after the block
/// filled up; once GC (or static wear-leveling) erased that block and it was reused, two
/// frontiers wrote into one block and an erase found valid pages ("erasing block … with valid
/// pages"). Frontiers are now dropped when their block closes. This run makes GC, static WL and
/// copyback all happen on a small device and checks every byte at the end.
#[test]
fn gc_and_wear_leveling_happen_in_the_model_runs() {
    for scope in [GcScope::Plane, GcScope::Device] {
        let mut c = config(MappingKind::Page, 0, GcPolicy::Greedy);
        c.ftl.gc.scope = scope;
        hot_set_run(c);
    }
}

fn hot_set_run(config: SsdConfig) {
    // a long deterministic hot-set run on the same device: GC, WL and copyback all occur
    let mut ssd = Ssd::new(config, 1).unwrap();
    let capacity = ssd.logical_capacity_bytes();
    let mut model = vec![0u8; capacity as usize];
    let pages = capacity / PAGE;
    for i in 0..pages + 3000 {
        // every page once (cold data), then a hot set of 4 pages with an occasional cold write
        let page = if i < pages {
            i
        } else if i % 50 == 0 {
            (i * 7) % pages
        } else {
            i % 4
        };
        let data = vec![(i % 251) as u8 + 1; PAGE as usize];
        ssd.execute(&HostRequest::write(page * PAGE, PAGE), Some(&data))
            .unwrap();
        model[(page * PAGE) as usize..((page + 1) * PAGE) as usize].copy_from_slice(&data);
    }
    ssd.drain().unwrap();
    let r = ssd.report();
    assert!(r.counters.gc_runs > 100, "{:?}", r.counters);
    assert!(r.counters.wl_migrations > 0, "{:?}", r.counters);
    assert!(r.counters.copybacks > 0, "{:?}", r.counters);
    // static wear-leveling bounds the erase-count gap within each plane (device-wide GC may
    // wear one plane faster than another)
    let g = ssd.geometry();
    for plane in 0..g.total_planes() {
        let counts: Vec<u32> = (0..g.blocks_per_plane)
            .map(|b| {
                let id = nandlab_nand::BlockId(plane * g.blocks_per_plane + b);
                ssd.nand().blocks().block(id).erase_count
            })
            .collect();
        let gap = counts.iter().max().unwrap() - counts.iter().min().unwrap();
        assert!(gap <= 2 + 2, "plane {plane}: {counts:?}");
    }
    assert_eq!(ssd.read_bytes(0, capacity).unwrap(), model);
}
