//! Controller costs (issue 12 item 3) add exactly their configured time and energy: a write
//! pays the host link for its data and the firmware for its command; a read pays the firmware,
//! the ECC decode of its page and the link for its data; the DRAM buffer pays access +
//! transfer per page; idle power accrues over the run.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{ControllerCosts, HostOp, HostRequest, Ssd, SsdConfig};

const PAGE: u64 = 512;

fn config(costs: ControllerCosts, buffer_pages: u32) -> SsdConfig {
    let mut c = common::slc(1, 1, 32, 8, PAGE as u32);
    c.ftl.host.queue_depth = 1;
    c.ftl.buffer.pages = buffer_pages;
    c.ftl.controller = costs;
    c
}

fn costs() -> ControllerCosts {
    ControllerCosts {
        source: "test".into(),
        firmware_command_ns: 2000.0,
        host_link_pcie_gen: 3, // 984.615 MB/s per lane: 512 B take 520 ns
        host_link_lanes: 1,
        ecc_decode_ns: 1000.0,
        controller_command_nj: 5.0,
        host_link_pj_per_byte: 10.0,
        idle_power_mw: 100.0,
        ..ControllerCosts::default()
    }
}

fn latencies(config: SsdConfig) -> (SimTime, SimTime, Ssd) {
    let mut ssd = Ssd::new(config, 1).unwrap();
    let write = HostRequest::new(HostOp::Write, 0, PAGE);
    let w = ssd.execute(&write, None).unwrap().latency;
    let read = HostRequest::new(HostOp::Read, 0, PAGE);
    let r = ssd.execute(&read, None).unwrap().latency;
    (w, r, ssd)
}

#[test]
fn costs_add_exactly_their_time() {
    let (w0, r0, _) = latencies(config(ControllerCosts::default(), 0));
    let (w1, r1, _) = latencies(config(costs(), 0));
    let link = SimTime::from_ns(520);
    assert_eq!(
        w1,
        w0 + link + SimTime::from_ns(2000),
        "write: link in + firmware"
    );
    assert_eq!(
        r1,
        r0 + SimTime::from_ns(2000) + SimTime::from_ns(1000) + link,
        "read: firmware + ECC + link out"
    );
}

#[test]
fn costs_add_exactly_their_energy_and_the_report_splits_it() {
    let mut ssd = Ssd::new(config(costs(), 0), 1).unwrap();
    let requests = [
        HostRequest::new(HostOp::Write, 0, PAGE),
        HostRequest::new(HostOp::Read, 0, PAGE),
    ];
    let report = ssd.run(requests).unwrap();
    let c = report.controller.expect("a controller section");
    assert!((c.energy.controller_mj - 2.0 * 5.0e-6).abs() < 1e-15);
    assert!((c.energy.host_link_mj - 1024.0 * 10.0e-9).abs() < 1e-15);
    let elapsed_s = report.sim_time_us / 1e6;
    assert!((c.energy.idle_mj - 100.0 * elapsed_s).abs() < 1e-12);
    assert!((c.busy.firmware_us - 4.0).abs() < 1e-9);
    assert!((c.busy.ecc_us - 1.0).abs() < 1e-9);
    assert!((c.busy.host_link_us - 1.04).abs() < 1e-9);
    let sum = report.energy.total_mj
        + c.energy.controller_mj
        + c.energy.dram_mj
        + c.energy.host_link_mj
        + c.energy.idle_mj;
    assert!((c.device_total_mj - sum).abs() < 1e-12);
    assert_eq!(c.source, "test");
}

#[test]
fn a_buffered_write_pays_the_dram() {
    let dram = ControllerCosts {
        dram_access_ns: 30.0,
        dram_bandwidth_mb_s: 1000.0, // 512 B in 512 ns
        dram_pj_per_byte: 2.0,
        ..ControllerCosts::default()
    };
    let mut ssd = Ssd::new(config(dram, 4), 1).unwrap();
    let write = HostRequest::new(HostOp::Write, 0, PAGE);
    let e = ssd.execute(&write, None).unwrap();
    assert_eq!(e.latency, SimTime::from_ns(30 + 512), "buffered: DRAM only");
    let read = HostRequest::new(HostOp::Read, 0, PAGE);
    assert_eq!(
        ssd.execute(&read, None).unwrap().latency,
        SimTime::from_ns(542)
    );
}

#[test]
fn zero_costs_leave_no_controller_section() {
    let (_, _, mut ssd) = latencies(config(ControllerCosts::default(), 0));
    let report = ssd.run(std::iter::empty::<HostRequest>()).unwrap();
    assert!(report.controller.is_none());
    assert!(!report.to_json().contains("controller"));
}
