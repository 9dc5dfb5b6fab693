//! Erase gates never deadlock (issue 31 item 4). An erase of a block waits at a gate for the
//! programs on other dies that hold the newest copies of its pages (issue 14's erase ordering).
//! On small blocks under deep queues one block is erased, reused and collected again while its
//! first erase still waits in its die's queue; each erase must be held by its own gate only,
//! or a first erase held at the second's gate (programs queued behind it on another die) closes
//! a cycle across dies and the simulation stalls.

mod common;

use common::slc;
use nandlab_core::SimRng;
use nandlab_ftl::{GcScheduling, HostOp, HostRequest, Precondition, Ssd, SsdConfig};
use proptest::prelude::*;

/// A closed-loop random mix of `count` requests of 1 to `max_pages` pages (one in
/// `read_one_in` a read) on a full, fragmented device; false if the config is refused.
fn run_mix(config: SsdConfig, max_pages: u64, read_one_in: u64, count: usize, seed: u64) -> bool {
    let Ok(mut ssd) = Ssd::new(config, seed) else {
        return false;
    };
    let page = u64::from(ssd.page_size_bytes());
    ssd.precondition(&Precondition {
        fill_fraction: 1.0,
        random_overwrites: 2_000,
    })
    .expect("precondition");
    let n = ssd.logical_pages();
    let mut rng = SimRng::seed_from_u64(seed ^ 0x5eed);
    let requests: Vec<HostRequest> = (0..count)
        .map(|_| {
            let pages = 1 + rng.below(max_pages.min(n));
            let first = rng.below(n - pages + 1);
            let op = if rng.below(read_one_in) == 0 {
                HostOp::Read
            } else {
                HostOp::Write
            };
            HostRequest::new(op, first * page, pages * page)
        })
        .collect();
    let report = ssd.run(requests).expect("the run completes");
    assert_eq!(report.completed, count as u64);
    true
}

/// The case that stalled before the fix: two dies, two pages per block, queue depth 16
/// ("simulation stalled: 16 requests … in flight but no event pending at 1.636 s").
#[test]
fn two_page_blocks_at_queue_depth_16_do_not_stall() {
    let mut c = slc(2, 1, 64, 2, 4096);
    c.ftl.op_fraction = 0.25;
    c.ftl.host.queue_depth = 16;
    assert!(run_mix(c, 1, u64::MAX, 5_000, 1), "the device builds");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Small geometries × queue depths × GC scheduling × request sizes: every run completes.
    #[test]
    fn small_geometries_at_any_queue_depth_do_not_stall(
        dies in 1u32..=4,
        planes in 1u32..=2,
        blocks in 16u32..=48,
        pages in prop::sample::select(vec![1u32, 2, 3, 4, 8]),
        queue_depth in prop::sample::select(vec![1u32, 4, 16, 32, 64]),
        interleaved in any::<bool>(),
        max_pages in 1u64..=32,
        read_one_in in 2u64..=10,
        seed in 0u64..1000,
    ) {
        let mut c = slc(dies, planes, blocks, pages, 4096);
        c.ftl.op_fraction = 0.25;
        c.ftl.host.queue_depth = queue_depth;
        if interleaved {
            c.ftl.gc.scheduling = GcScheduling::Interleaved;
        }
        // (a geometry too small for the GC reserve is refused: not the case under test)
        prop_assume!(run_mix(c, max_pages, read_one_in, 1_500, seed));
    }
}

/// Issue 34 (`nandlab crash --controller --seed 2 --case 4233` stalled): blocking GC with
/// multiplane merging of the erases a batch decided. An erase decided later joined an earlier
/// one of the batch, so the merged erase sat at the earlier erase's turn in its die's queue
/// but waited for the later one's programs, decided after an erase on the other die that
/// itself waited for a program queued behind the merged erase: a cycle of gates. The crash
/// case's device: small MLC blocks with paired-page padding (an erase's waits pad word lines,
/// programs decided with the erase), two dies of two planes, a 2-entry cached mapping table,
/// cache mode, queue depth 4; 64 seeds of its kind of workload (some stall without the fix).
#[test]
fn merged_erases_of_one_batch_do_not_close_a_cycle_of_gates() {
    for seed in 0..64 {
        let mut c = SsdConfig::from_preset("mlc1");
        c.device.overrides = Some(
            toml::from_str(
                "[geometry]\ndies_per_chip = 2\nplanes_per_die = 2\nblocks_per_plane = 12\n\
                 pages_per_block = 16\npage_size_bytes = 512\n",
            )
            .unwrap(),
        );
        c.ftl = nandlab_ftl::FtlConfig::default();
        c.ftl.op_fraction = 0.6;
        c.ftl.gc.copyback = true;
        c.ftl.gc.threshold_blocks = 2;
        c.ftl.gc.scheduling = GcScheduling::Blocking;
        c.ftl.mapping.cache_entries = 2;
        c.ftl.mapping.paired_page_padding = true;
        c.ftl.scheduler.multiplane = true;
        c.ftl.scheduler.cache = true;
        c.ftl.host.queue_depth = 4;
        // (the crash case's workload: a fresh device, writes of 1-3 pages over 28 pages)
        let mut ssd = Ssd::new(c, seed).expect("the device builds");
        let mut rng = SimRng::seed_from_u64(seed);
        let requests: Vec<HostRequest> = (0..300)
            .map(|_| {
                let pages = 1 + rng.below(3);
                let first = rng.below(28 - pages + 1);
                let op = if rng.below(10) == 0 {
                    HostOp::Read
                } else {
                    HostOp::Write
                };
                HostRequest::new(op, first * 512, pages * 512)
            })
            .collect();
        let report = ssd.run(requests).expect("the run completes");
        assert_eq!(report.completed, 300, "seed {seed}");
    }
}
