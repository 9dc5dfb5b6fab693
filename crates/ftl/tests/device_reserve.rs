//! The device-wide GC reserve (`ftl.gc_device_reserve_blocks`, issue 13): host writes never
//! take the reserve, GC always finds a destination for its moves (across planes), and the
//! smallest over-provisioning validation accepts runs without a deadlock; the config errors
//! name their key.

mod common;

use nandlab_core::SimRng;
use nandlab_ftl::{GcPolicy, GcScope, HostRequest, PayloadMode, Ssd, SsdConfig};

const PAGE: u64 = 512;

/// 2 dies × 2 planes × `blocks` blocks × 8 pages, device GC with a reserve of `reserve`.
fn config(blocks: u32, reserve: u32, op: f64, policy: GcPolicy) -> SsdConfig {
    let mut c = common::slc(2, 2, blocks, 8, PAGE as u32);
    c.ftl.payload = PayloadMode::Full;
    c.ftl.gc.scope = GcScope::Device;
    c.ftl.gc.device_reserve_blocks = reserve;
    c.ftl.gc.threshold_blocks = 2;
    c.ftl.gc.policy = policy;
    c.ftl.gc.copyback = false;
    c.ftl.op_fraction = op;
    c
}

/// The smallest over-provisioning (in steps of 0.5 %) the config validates with.
fn minimal_op(blocks: u32, reserve: u32) -> f64 {
    (1..200)
        .map(|i| f64::from(i) * 0.005)
        .find(|&op| {
            config(blocks, reserve, op, GcPolicy::Fifo)
                .validate()
                .is_ok()
        })
        .expect("some over-provisioning validates")
}

/// Random whole-page overwrites, `device_writes` times the logical capacity; after every
/// request the device keeps its reserve free and the bytes read back are the last written.
fn hammer(c: SsdConfig, device_writes: u64, seed: u64) -> Ssd {
    let reserve = c.ftl.gc.device_reserve_blocks;
    let mut ssd = Ssd::new(c, seed).unwrap();
    let pages = ssd.logical_pages();
    let mut model = vec![0u8; (pages * PAGE) as usize];
    let mut rng = SimRng::stream(seed, "device-reserve-test");
    for i in 0..pages * device_writes {
        // the first pass fills every page, then uniform random overwrites
        let page = if i < pages { i } else { rng.below(pages) };
        let data = vec![(i % 251) as u8 + 1; PAGE as usize];
        ssd.execute(&HostRequest::write(page * PAGE, PAGE), Some(&data))
            .unwrap_or_else(|e| panic!("write {i} of page {page}: {e}"));
        model[(page * PAGE) as usize..((page + 1) * PAGE) as usize].copy_from_slice(&data);
        assert!(
            ssd.free_blocks() >= reserve,
            "write {i}: {} free blocks, reserve {reserve}",
            ssd.free_blocks()
        );
        if i % 211 == 0 {
            ssd.check_consistency().unwrap();
        }
    }
    ssd.drain().unwrap();
    ssd.check_consistency().unwrap();
    assert_eq!(ssd.read_bytes(0, pages * PAGE).unwrap(), model);
    ssd
}

#[test]
fn host_writes_never_take_the_reserve_and_gc_always_finds_a_destination() {
    for policy in [GcPolicy::Fifo, GcPolicy::Greedy] {
        for reserve in [1, 2] {
            let ssd = hammer(config(16, reserve, 0.3, policy), 6, 3);
            let r = ssd.report();
            assert!(
                r.counters.gc_runs > 0 && r.counters.gc_page_copies > 0,
                "{r:?}"
            );
        }
    }
}

#[test]
fn no_deadlock_at_minimal_over_provisioning() {
    for reserve in [1, 2] {
        for blocks in [6, 16] {
            let op = minimal_op(blocks, reserve);
            let ssd = hammer(config(blocks, reserve, op, GcPolicy::Fifo), 8, 5);
            assert!(ssd.report().counters.gc_runs > 0);
        }
    }
}

#[test]
fn the_device_reserve_runs_where_the_per_plane_reserve_cannot() {
    // 8 blocks per plane at 50 % OP: 2 spare blocks per plane, where the per-plane reserve
    // (threshold 2 + 2 frontiers) needs 4; 10 on the device, where the device reserve needs 9
    let per_plane = config(8, 0, 0.5, GcPolicy::Fifo);
    let err = per_plane.validate().unwrap_err().to_string();
    assert!(err.contains("ftl.op_fraction"), "{err}");
    config(8, 2, 0.5, GcPolicy::Fifo).validate().unwrap();
}

#[test]
fn bad_device_reserve_configs_name_the_key() {
    let bad = |c: SsdConfig| c.validate().unwrap_err().to_string();
    let mut c = config(16, 2, 0.3, GcPolicy::Fifo);
    c.ftl.gc.scope = GcScope::Plane;
    let err = bad(c);
    assert!(err.contains("ftl.gc_device_reserve_blocks"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let mut c = config(16, 2, 0.3, GcPolicy::Fifo);
    c.ftl.mapping.placement_ids = 2;
    c.ftl.gc.threshold_blocks = 3;
    assert!(bad(c).contains("ftl.gc_device_reserve_blocks"));
    let err = bad(config(16, 2, 0.02, GcPolicy::Fifo));
    assert!(
        err.contains("ftl.op_fraction") && err.contains("reserve"),
        "{err}"
    );
    assert!(bad(config(16, 65, 0.3, GcPolicy::Fifo)).contains("ftl.gc_device_reserve_blocks"));
}
