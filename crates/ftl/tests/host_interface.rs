//! Host interface and run-level properties: every request completes exactly once, queue depth
//! bounds the load, timed arrivals are honoured, runs are deterministic, preconditioning
//! terminates, bad requests get clear errors, the co-design hint names the next victim.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{FtlError, GcPolicy, GcScope, HostOp, HostRequest, Precondition, Ssd, SsdConfig};
use nandlab_workload::UniformRandomWrites;

fn small() -> SsdConfig {
    let mut c = common::slc(2, 2, 32, 16, 2048);
    c.ftl.op_fraction = 0.25;
    c
}

fn mixed(ssd: &Ssd, n: u64, seed: u64) -> Vec<HostRequest> {
    let cap = ssd.logical_capacity_bytes();
    let mut rng = nandlab_core::SimRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let size = 512 * (1 + rng.below(12));
            let offset = rng.below(cap - size);
            match i % 7 {
                0 | 1 => HostRequest::read(offset, size),
                2 => HostRequest::trim(offset, size),
                _ => HostRequest::write(offset, size),
            }
        })
        .collect()
}

#[test]
fn every_request_completes_once_and_mapping_stays_consistent() {
    for order in ["channel-chip-die-plane", "plane-die-chip-channel"] {
        let mut c = small();
        c.ftl.mapping.allocation_order = order.into();
        let mut ssd = Ssd::new(c, 3).unwrap();
        let requests = mixed(&ssd, 6000, 1);
        let r = ssd.run(requests).unwrap();
        assert_eq!(r.submitted, 6000);
        assert_eq!(r.completed, 6000);
        assert_eq!(r.read.requests + r.write.requests + r.trim.requests, 6000);
        assert!(
            r.counters.rmw_reads > 0 && r.counters.gc_runs > 0,
            "{:?}",
            r.counters
        );
        assert!(r.waf > 1.0);
        assert!(r.write.lat.p99_us >= r.write.lat.p50_us);
        assert!(!r.write.cdf.is_empty() && r.write.cdf.len() <= 101);
        ssd.check_consistency().unwrap();
    }
}

#[test]
fn same_config_and_seed_give_identical_reports() {
    let run = || {
        let mut ssd = Ssd::new(small(), 11).unwrap();
        let requests = mixed(&ssd, 3000, 5);
        ssd.run(requests).unwrap().to_json()
    };
    assert_eq!(run(), run());
}

#[test]
fn queue_depth_sets_the_load() {
    // Little's law: with closed-loop writes, deeper queues keep both dies busy
    let iops = |qd: u32| {
        let mut c = small();
        c.ftl.host.queue_depth = qd;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let w = UniformRandomWrites::new(1, 2000, ssd.logical_capacity_bytes() / 2, 2048);
        ssd.run(w).unwrap().write.iops
    };
    let (one, eight) = (iops(1), iops(8));
    assert!(eight > 1.7 * one, "qd1 {one} qd8 {eight}");
}

#[test]
fn timed_arrivals_are_honoured() {
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let requests: Vec<HostRequest> = (0..10)
        .map(|i| HostRequest::write(i * 2048, 2048).at(SimTime::from_ms(10 * i)))
        .collect();
    let r = ssd.run(requests).unwrap();
    // idle device: each write takes one program; the last arrives at 90 ms
    assert!(
        r.sim_time_us > 90_000.0 && r.sim_time_us < 91_000.0,
        "{}",
        r.sim_time_us
    );
    assert!(r.write.lat.max_us < 1_000.0);
}

#[test]
fn bad_requests_are_named() {
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let cap = ssd.logical_capacity_bytes();
    let err = ssd
        .execute(&HostRequest::write(cap - 512, 1024), None)
        .unwrap_err();
    assert!(matches!(err, FtlError::OutOfRange { .. }), "{err}");
    assert!(err.to_string().contains(&cap.to_string()));
    let err = ssd.execute(&HostRequest::read(0, 0), None).unwrap_err();
    assert!(err.to_string().contains("0 bytes"), "{err}");
    // the device still works afterwards
    ssd.execute(&HostRequest::new(HostOp::Write, 0, 4096), None)
        .unwrap();
}

#[test]
fn preconditioning_to_full_terminates_and_reaches_steady_state() {
    let mut c = common::slc(2, 2, 64, 16, 2048);
    c.ftl.op_fraction = 0.07;
    c.ftl.gc.threshold_blocks = 2;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let logical = ssd.logical_pages();
    ssd.precondition(&Precondition::full_and_fragmented(logical))
        .unwrap();
    ssd.check_consistency().unwrap();
    let mapped: u32 = ssd.report().valid_page_map.valid_pages.iter().sum();
    assert_eq!(u64::from(mapped), logical);
    let w = UniformRandomWrites::new(2, 4000, ssd.logical_capacity_bytes(), 2048);
    let r = ssd.run(w).unwrap();
    assert!(
        r.waf > 2.0,
        "7 % OP in steady state amplifies writes: {}",
        r.waf
    );
    // preconditioning does not count in the run
    assert_eq!(r.counters.host_pages_written, 4000);
    let bad = ssd.precondition(&Precondition {
        fill_fraction: 1.5,
        random_overwrites: 0,
    });
    assert!(bad.unwrap_err().to_string().contains("fill_fraction"));
}

/// The co-design hint (paper 000 IAA): writing exactly the hinted LPAs invalidates the next
/// victim completely, so the next GC erases it with no page copy.
#[test]
fn hint_names_the_valid_pages_of_the_next_victim() {
    for (policy, scope) in GcPolicy::ALL
        .into_iter()
        .flat_map(|p| [(p, GcScope::Plane), (p, GcScope::Device)])
    {
        let mut c = small();
        c.ftl.gc.policy = policy;
        c.ftl.gc.scope = scope;
        let mut ssd = Ssd::new(c, 4).unwrap();
        let logical = ssd.logical_pages();
        ssd.precondition(&Precondition::full_and_fragmented(logical))
            .unwrap();
        ssd.refresh_hint();
        let victim = ssd.next_victim_block().expect("a victim exists");
        let hint = ssd.next_erase_block_valid_lpas();
        assert!(!hint.is_empty());
        let erases_before = ssd.nand().blocks().block(victim).erase_count;
        ssd.reset_measurement();
        let page = u64::from(ssd.page_size_bytes());
        let mut i = 0;
        while ssd.report().counters.erases == 0 {
            let lpa = hint[i % hint.len()];
            ssd.execute(&HostRequest::write(lpa.offset_bytes(page), page), None)
                .unwrap();
            i += 1;
            assert!(i < 10_000, "{policy:?} {scope:?}: no GC");
        }
        let r = ssd.report();
        let erased = ssd.nand().blocks().block(victim).erase_count;
        assert_eq!(
            erased,
            erases_before + 1,
            "{policy:?} {scope:?}: predicted victim {victim} not erased"
        );
        assert_eq!(
            r.counters.gc_page_copies, 0,
            "{policy:?} {scope:?}: page-copy-less GC"
        );
    }
}

/// The workload crate's generators drive the SSD directly.
#[test]
fn workload_generators_drive_the_ssd() {
    use nandlab_workload::{Pattern, SyntheticGenerator, SyntheticSpec};
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let spec = SyntheticSpec::new(
        Pattern::Random,
        0.3,
        4096,
        ssd.logical_capacity_bytes(),
        3000,
    );
    let generator = SyntheticGenerator::new(&spec).unwrap();
    let r = ssd
        .run_source(generator.map(Ok::<_, nandlab_workload::WorkloadError>))
        .unwrap();
    assert_eq!(r.completed, 3000);
    assert!(r.read.requests > 600 && r.write.requests > 1800, "{r:?}");
}

/// With `hint_all_planes` the hint lists the valid pages of every plane's next victim (each
/// plane collects its own garbage): a superset of the one-block hint, spread over the planes.
#[test]
fn hint_all_planes_covers_every_planes_next_victim() {
    let hint = |all: bool| {
        let mut c = small();
        c.ftl.hints.all_planes = all;
        let mut ssd = Ssd::new(c, 4).unwrap();
        let logical = ssd.logical_pages();
        ssd.precondition(&Precondition::full_and_fragmented(logical))
            .unwrap();
        ssd.refresh_hint();
        let planes = ssd.geometry().total_planes();
        (ssd.next_erase_block_valid_lpas(), planes)
    };
    let (one, planes) = hint(false);
    let (every, _) = hint(true);
    assert!(planes > 1);
    assert!(every.len() > one.len(), "{} vs {}", every.len(), one.len());
    assert!(
        one.iter().all(|lpa| every.contains(lpa)),
        "the next block's pages come first"
    );
    assert_eq!(&every[..one.len()], &one[..]);
}
