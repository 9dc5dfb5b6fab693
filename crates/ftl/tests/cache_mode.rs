//! Cache-mode scheduling (issue 12 item 1): with `ftl.cache_mode` the SSD issues its reads and
//! programs in cache mode, so consecutive programs on a die move their data in while the
//! previous page programs; the report counts them as cache-mode ops.

mod common;

use nandlab_ftl::{HostOp, HostRequest, Ssd};

/// Three one-page writes at time 0 on one die of the `slc` preset (2 KB pages), queue depth 4.
fn three_writes(cache: bool) -> nandlab_ftl::SsdReport {
    let mut c = common::slc(1, 1, 32, 16, 2048);
    c.ftl.scheduler.cache = cache;
    c.ftl.host.queue_depth = 4;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let writes = (0..3u64).map(|i| HostRequest::new(HostOp::Write, i * 2048, 2048));
    ssd.run(writes).unwrap()
}

#[test]
fn a_cache_program_sequence_takes_the_hand_computed_time() {
    // setup of a program: CLE 80h (25 ns) + 5 address cycles (125 ns) + TIR 2,048 B x 25 ns
    // (51.2 us) + CLE 10h (25 ns) = 51.375 us; TIN 250 us; status 50 ns
    let setup_us = 51.375;
    let tin_us = 250.0;
    let status_us = 0.05;
    // legacy: each program holds the die from its setup to its status read
    let legacy = three_writes(false);
    let legacy_end = 3.0 * (setup_us + tin_us + status_us);
    assert!(
        (legacy.sim_time_us - legacy_end).abs() < 1e-6,
        "{} vs {legacy_end}",
        legacy.sim_time_us
    );
    // cache: the second and third setups run during the previous TIN, so the TINs follow
    // each other: one setup, three TINs, the last status
    let cache = three_writes(true);
    let cache_end = setup_us + 3.0 * tin_us + status_us;
    assert!(
        (cache.sim_time_us - cache_end).abs() < 1e-6,
        "{} vs {cache_end}",
        cache.sim_time_us
    );
    assert_eq!(legacy.chip_ops.legacy, 3);
    assert_eq!(legacy.chip_ops.cache, 0);
    assert_eq!(cache.chip_ops.cache, 3);
    assert_eq!(cache.chip_ops.legacy, 0);
    assert_eq!(cache.waf, legacy.waf);
}

#[test]
fn cache_mode_reads_and_gc_complete_and_are_counted() {
    let mut c = common::slc(2, 2, 32, 16, 2048);
    c.ftl.scheduler.cache = true;
    c.ftl.host.queue_depth = 8;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let span = ssd.logical_capacity_bytes() / 2048;
    // fill the device, overwrite it three times at scattered pages (GC runs and moves valid
    // pages), then read it back
    let scattered = |i: u64| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % span;
    let requests: Vec<HostRequest> = (0..span)
        .chain((0..span * 3).map(scattered))
        .map(|page| HostRequest::new(HostOp::Write, page * 2048, 2048))
        .chain((0..span).map(|i| HostRequest::new(HostOp::Read, i * 2048, 2048)))
        .collect();
    let r = ssd.run(requests).unwrap();
    assert_eq!(r.completed, span * 5);
    assert!(
        r.counters.gc_runs > 0 && r.counters.gc_page_copies > 0,
        "{:?}",
        r.counters
    );
    let o = &r.chip_ops;
    // every single-plane read and program is a cache op; erases (and copybacks) are not
    assert_eq!(
        o.cache,
        span * 5 + 2 * r.counters.gc_page_copies - 2 * r.counters.copybacks
    );
    assert!(o.legacy > 0, "erases: {o:?}");
    assert_eq!(o.multiplane, 0);
}

#[test]
fn sequential_writes_gain_from_cache_mode_and_combine_with_multiplane() {
    // the device of tests/multiplane.rs: 2 channels x 2 dies x 2 planes of mlc1, 8 KiB pages
    let run = |cache: bool, multiplane: bool| {
        let mut c = nandlab_ftl::SsdConfig::from_preset("mlc1");
        c.device.overrides = Some(
            toml::from_str(
                "[geometry]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\n\
                 planes_per_die = 2\nblocks_per_plane = 32\npages_per_block = 64\n\
                 page_size_bytes = 8192\n",
            )
            .unwrap(),
        );
        c.ftl = nandlab_ftl::FtlConfig::default();
        c.ftl.scheduler.cache = cache;
        c.ftl.scheduler.multiplane = multiplane;
        c.ftl.mapping.allocation_order = "plane-die-chip-channel".into();
        c.ftl.host.queue_depth = 8;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let span = ssd.logical_capacity_bytes() / (128 << 10) * (128 << 10);
        let requests: Vec<HostRequest> = (0..400u64)
            .map(|i| HostRequest::new(HostOp::Write, (i * (128 << 10)) % span, 128 << 10))
            .collect();
        ssd.run(requests).unwrap()
    };
    let legacy = run(false, false);
    let cache = run(true, false);
    let both = run(true, true);
    eprintln!(
        "sequential 128 KiB writes: legacy {:.1} MiB/s, cache {:.1} MiB/s, multiplane cache {:.1} MiB/s; ops {:?} / {:?}",
        legacy.write.bw_mib_s,
        cache.write.bw_mib_s,
        both.write.bw_mib_s,
        cache.chip_ops,
        both.chip_ops
    );
    assert!(cache.write.bw_mib_s > legacy.write.bw_mib_s * 1.05);
    assert!(both.write.bw_mib_s > cache.write.bw_mib_s);
    assert!(both.chip_ops.multiplane > 0 && both.chip_ops.cache == 0);
    assert_eq!(cache.waf, legacy.waf);
}
