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
    c.ftl.multiplane = multiplane;
    c.ftl.allocation_order = "plane-die-chip-channel".into();
    c.ftl.queue_depth = 1;
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
        c.ftl.queue_depth = 8;
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
