//! Interleaved GC keeps each block's ops in decision order across the host and GC queues: a
//! host program still queued in a block that GC then picks as victim goes to the chip before
//! GC's reads and erase of that block (and before GC's later programs into it once reused).
//! Before the fix GC work overtook it: the chip model refused a program below the block's last
//! programmed page (`nandlab powercut --dies 1 --blocks 13 --gc-policy random --gc-scheduling
//! interleaved --requests 2000 --lpa-span 28 --write-pages-max 3 --seed 5`).

mod common;

use nandlab_core::SimRng;
use nandlab_ftl::{
    GcPolicy, GcScheduling, HostOp, HostRequest, MappingKind, PayloadMode, Ssd, SsdConfig,
};
use proptest::prelude::*;

const PAGE: u64 = 512;

/// A one-die SLC device with 13 blocks of 8 pages under interleaved GC, written at random
/// (1 to 3 pages per request, over `span` LPAs) closed-loop at queue depth `depth` (a new
/// write is admitted as soon as one completes, while GC work may still wait in its queue);
/// then every LPA reads back its last write.
fn run(policy: GcPolicy, mapping: MappingKind, depth: u32, span: u64, seed: u64, requests: u32) {
    run_urgent(policy, mapping, depth, span, seed, requests, 0);
}

/// [`run`] with `gc.urgent_free_blocks = urgent`.
fn run_urgent(
    policy: GcPolicy,
    mapping: MappingKind,
    depth: u32,
    span: u64,
    seed: u64,
    requests: u32,
    urgent: u32,
) {
    run_on(
        common::slc(1, 1, 13, 8, PAGE as u32),
        policy,
        mapping,
        depth,
        span,
        seed,
        requests,
        urgent,
    );
}

/// [`run_urgent`] on device `c`.
#[allow(clippy::too_many_arguments)]
fn run_on(
    mut c: SsdConfig,
    policy: GcPolicy,
    mapping: MappingKind,
    depth: u32,
    span: u64,
    seed: u64,
    requests: u32,
    urgent: u32,
) {
    c.ftl.gc.scheduling = GcScheduling::Interleaved;
    c.ftl.gc.policy = policy;
    c.ftl.mapping.kind = mapping;
    c.ftl.gc.threshold_blocks = 2;
    c.ftl.op_fraction = 0.5;
    c.ftl.payload = PayloadMode::Full;
    c.ftl.host.queue_depth = depth;
    c.ftl.gc.urgent_free_blocks = urgent;
    let mut ssd = Ssd::new(c, seed).unwrap();
    let span = span.min(ssd.logical_pages());
    let mut rng = SimRng::seed_from_u64(seed);
    let mut model = vec![0u8; span as usize];
    let context =
        |step: u32| format!("{policy:?} {mapping:?} depth {depth} seed {seed} step {step}");
    let mut step = 0;
    while step < requests {
        let pages = 1 + rng.below(3);
        let first = rng.below(span - pages + 1);
        let fill = (step % 251) as u8 + 1;
        let r = HostRequest::new(HostOp::Write, first * PAGE, pages * PAGE);
        let data = vec![fill; (pages * PAGE) as usize];
        loop {
            let admitted = ssd
                .power_admit(&r, Some(&data))
                .unwrap_or_else(|e| panic!("{}: {e}", context(step)));
            if admitted {
                break;
            }
            ssd.power_step()
                .unwrap_or_else(|e| panic!("{}: {e}", context(step)));
        }
        for lpa in first..first + pages {
            model[lpa as usize] = fill;
        }
        step += 1;
    }
    ssd.power_drain()
        .unwrap_or_else(|e| panic!("{}: {e}", context(step)));
    for lpa in 0..span {
        let read = HostRequest::new(HostOp::Read, lpa * PAGE, PAGE);
        let got = ssd.execute(&read, None).unwrap().data;
        assert_eq!(
            got,
            vec![model[lpa as usize]; PAGE as usize],
            "lpa {lpa}, {}",
            context(step)
        );
    }
    ssd.check_consistency().unwrap();
}

#[test]
fn random_gc_under_interleaved_scheduling_programs_in_order() {
    run(GcPolicy::Random, MappingKind::Page, 1, 28, 5, 2000);
    run(GcPolicy::Random, MappingKind::Page, 4, 28, 5, 2000);
}

#[test]
fn every_policy_and_mapping_programs_in_order_under_interleaved_gc() {
    for policy in GcPolicy::ALL {
        for mapping in [MappingKind::Page, MappingKind::Block, MappingKind::Hybrid] {
            for depth in [1, 4] {
                for seed in 0..4 {
                    run(policy, mapping, depth, 28, seed, 600);
                }
            }
        }
    }
}

/// MLC and TLC with paired-page padding (page mapping; the crash driver's block sizes).
#[test]
fn paired_page_padding_programs_in_order_under_interleaved_gc() {
    for (preset, pages) in [("mlc1", 16), ("tlc-b17a", 9)] {
        for policy in [GcPolicy::Random, GcPolicy::Greedy] {
            for seed in 0..4 {
                let mut c = SsdConfig::from_preset(preset);
                c.device.overrides = Some(
                    toml::from_str(&format!(
                        "[geometry]\ndies_per_chip = 1\nplanes_per_die = 1\n\
                         blocks_per_plane = 13\npages_per_block = {pages}\n\
                         page_size_bytes = {PAGE}\nspare_bytes_per_page = 64\n"
                    ))
                    .unwrap(),
                );
                c.ftl = Default::default();
                c.ftl.mapping.paired_page_padding = true;
                run_on(c, policy, MappingKind::Page, 2, 28, seed, 600, 0);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn interleaved_gc_keeps_block_order_over_random_seeds(
        seed in 0u64..1_000_000,
        random in any::<bool>(),
        span in 12u64..40,
        depth in 1u32..5,
        urgent in 0u32..4,
    ) {
        let policy = if random { GcPolicy::Random } else { GcPolicy::Greedy };
        run_urgent(policy, MappingKind::Page, depth, span, seed, 500, urgent);
    }
}
