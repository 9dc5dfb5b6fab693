//! Multiplane scheduling (issue 12 item 1): with `ftl.multiplane` and a plane-first allocation
//! order, the pages of a multi-page write land on the planes of a die at the same offset and go
//! to the chip as one multiplane program, which takes exactly the chip model's time for it;
//! sequential 128 KiB writes then run about twice as fast; the report counts ops per mode.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{HostOp, HostRequest, PayloadMode, Ssd, SsdConfig};
use nandlab_nand::{FlashOp, NandSim, PageAddress};

fn config(multiplane: bool, preset: &str, page_size: u32) -> SsdConfig {
    let mut c = SsdConfig::from_preset(preset);
    c.device.overrides = Some(
        toml::from_str(&format!(
            "[geometry]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\nplanes_per_die = 2\n\
             blocks_per_plane = 32\npages_per_block = 64\npage_size_bytes = {page_size}\n"
        ))
        .unwrap(),
    );
    c.ftl = nandlab_ftl::FtlConfig::default();
    c.ftl.scheduler.multiplane = multiplane;
    c.ftl.mapping.allocation_order = "plane-die-chip-channel".into();
    c.ftl.host.queue_depth = 1;
    c
}

#[test]
fn a_two_plane_program_takes_the_chip_models_time() {
    let c = config(true, "slc", 4096);
    let nand_config = c.nand_config().unwrap();
    let mut ssd = Ssd::new(c, 1).unwrap();
    let e = ssd
        .execute(&HostRequest::new(HostOp::Write, 0, 2 * 4096), None)
        .unwrap();
    // the same 2-plane program on a fresh chip model
    let mut nand = NandSim::new(nand_config, 1).unwrap();
    let page = |plane| PageAddress {
        plane,
        ..PageAddress::default()
    };
    let op = FlashOp {
        targets: vec![page(0), page(1)],
        ..FlashOp::program(page(0))
    };
    nand.submit(SimTime::ZERO, &op).unwrap();
    let mut done = Vec::new();
    nand.run_until_idle(&mut done);
    assert_eq!(e.latency, done[0].latency());
    let report = ssd.run(std::iter::empty::<HostRequest>()).unwrap();
    drop(report);
    // and without merging: two single-plane programs, one after the other on the die
    let mut single = Ssd::new(config(false, "slc", 4096), 1).unwrap();
    let e1 = single
        .execute(&HostRequest::new(HostOp::Write, 0, 2 * 4096), None)
        .unwrap();
    assert!(e1.latency > e.latency, "{} vs {}", e1.latency, e.latency);
}

#[test]
fn sequential_128k_writes_run_about_twice_as_fast_with_multiplane() {
    let run = |multiplane: bool| {
        let mut c = config(multiplane, "mlc1", 8192);
        c.ftl.host.queue_depth = 8;
        c.ftl.payload = PayloadMode::TimingOnly;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let span = ssd.logical_capacity_bytes() / (128 << 10) * (128 << 10);
        let requests: Vec<HostRequest> = (0..400u64)
            .map(|i| HostRequest::new(HostOp::Write, (i * (128 << 10)) % span, 128 << 10))
            .collect();
        ssd.run(requests).unwrap()
    };
    let off = run(false);
    let on = run(true);
    let speedup = on.write.bw_mib_s / off.write.bw_mib_s;
    eprintln!(
        "sequential 128 KiB writes: {:.1} MiB/s single-plane, {:.1} MiB/s multiplane ({speedup:.2}x); ops {:?} vs {:?}",
        off.write.bw_mib_s, on.write.bw_mib_s, off.chip_ops, on.chip_ops
    );
    assert!(speedup > 1.6, "{speedup}");
    assert_eq!(off.chip_ops.multiplane, 0);
    assert!(
        on.chip_ops.multiplane > 0
            && on.chip_ops.multiplane * 2 >= on.counters.flash_pages_programmed * 9 / 10
    );
    assert_eq!(on.waf, off.waf);
}

/// Issue 12 item 1 (c): with blocking GC, GC's erases (and copybacks, at equal offsets) on the
/// planes of one die merge into multiplane ops as the plane rule allows. Sequential 8 KiB
/// overwrites put each request's two pages on the two planes of a die, so both planes run out
/// of free blocks in the same request and their (fully invalid) victims are erased together.
#[test]
fn gc_erases_merge_into_multiplane_erases_under_blocking_gc() {
    let run = |multiplane: bool| {
        let mut c = config(multiplane, "slc", 4096);
        c.ftl.host.queue_depth = 8;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let span = ssd.logical_capacity_bytes() / 8192 * 8192;
        let requests: Vec<HostRequest> = (0..span / 8192 * 4)
            .map(|i| HostRequest::new(HostOp::Write, (i * 8192) % span, 8192))
            .collect();
        let report = ssd.run(requests).unwrap();
        let stats = ssd.nand().stats();
        let erase_ops = stats.kind(nandlab_nand::OpKind::Erase).ops;
        let chip_ops: u64 = nandlab_nand::OpKind::ALL
            .iter()
            .map(|&k| stats.kind(k).ops)
            .sum();
        (report, erase_ops, chip_ops)
    };
    let (off, off_erase_ops, _) = run(false);
    let (on, on_erase_ops, on_chip_ops) = run(true);
    eprintln!(
        "erases {} in {off_erase_ops} chip ops single-plane, {} in {on_erase_ops} multiplane; {:?}; {:.1} vs {:.1} MiB/s",
        off.counters.erases, on.counters.erases, on.chip_ops, off.write.bw_mib_s, on.write.bw_mib_s
    );
    assert!(off.counters.erases > 0);
    assert_eq!(on.counters.erases, off.counters.erases);
    assert_eq!(off_erase_ops, off.counters.erases);
    // most erases went out two planes at a time
    assert!(
        on_erase_ops * 10 < off_erase_ops * 6,
        "{on_erase_ops} of {off_erase_ops}"
    );
    assert_eq!(on.waf, off.waf);
    // the modes partition the chip ops: each multiplane op once
    let o = &on.chip_ops;
    assert_eq!(
        o.legacy + o.multiplane + o.copyback + o.cache,
        on_chip_ops,
        "{o:?}"
    );
    assert_eq!(o.cache, 0);
}

/// Issue 12 item 1 (c): GC copybacks whose sources and destinations sit at the same offsets on
/// two planes of a die go out as one 2-plane copyback (2x internal data move). Filling the
/// device with 8 KiB writes (a page on each plane at one offset) and then overwriting every
/// other request leaves victims whose valid pages line up across the two planes.
#[test]
fn gc_copybacks_at_equal_offsets_merge_into_multiplane_copybacks() {
    let run = |multiplane: bool| {
        let mut c = config(multiplane, "slc", 4096);
        c.ftl.host.queue_depth = 1;
        let mut ssd = Ssd::new(c, 1).unwrap();
        let chunks = ssd.logical_capacity_bytes() / 8192;
        let requests: Vec<HostRequest> = (0..chunks)
            .chain((0..chunks * 3).map(|i| (2 * i) % chunks))
            .map(|chunk| HostRequest::new(HostOp::Write, chunk * 8192, 8192))
            .collect();
        let report = ssd.run(requests).unwrap();
        let copyback_ops = ssd.nand().stats().kind(nandlab_nand::OpKind::Copyback).ops;
        (report, copyback_ops)
    };
    let (off, off_ops) = run(false);
    let (on, on_ops) = run(true);
    eprintln!(
        "copybacks {} in {off_ops} chip ops single-plane, {} in {on_ops} multiplane; {:?}",
        off.counters.copybacks, on.counters.copybacks, on.chip_ops
    );
    assert!(off.counters.copybacks > 0);
    assert_eq!(on.counters.copybacks, off.counters.copybacks);
    assert_eq!(off_ops, off.counters.copybacks);
    assert!(on_ops < off_ops * 3 / 4, "{on_ops} of {off_ops}");
    assert_eq!(on.waf, off.waf);
    // single-plane copybacks are counted as copyback, 2-plane ones as multiplane
    assert_eq!(on.chip_ops.copyback, 2 * on_ops - on.counters.copybacks);
}
