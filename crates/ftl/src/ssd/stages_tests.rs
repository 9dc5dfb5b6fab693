//! The build-time stages and the observer hooks of the host path (`stages.rs`, the power
//! trace's `trimmed` / `flushed`).

use super::Ssd;
use super::test_device::small_slc;
use crate::config::PayloadMode;
use crate::controller::ControllerCosts;
use crate::host::HostRequest;
use nandlab_core::SimTime;

fn device(payload: PayloadMode) -> Ssd {
    let mut c = small_slc(2, 2, 8);
    c.ftl.payload = payload;
    Ssd::new(c, 5).unwrap()
}

/// The latency of a Flush after a write and (if `trim`) a trim of the written page, with and
/// without the power trace.
fn flush_latency(trace: bool, trim: bool) -> SimTime {
    let mut ssd = device(PayloadMode::Full);
    if trace {
        ssd.start_power_trace().unwrap();
    }
    let page = u64::from(ssd.page_size_bytes());
    ssd.execute(&HostRequest::write(0, page), None).unwrap();
    if trim {
        ssd.execute(&HostRequest::trim(0, page), None).unwrap();
    }
    ssd.execute(&HostRequest::flush(), None).unwrap().latency
}

#[test]
fn stages_the_power_trace_holds_a_flush_for_its_trim_record_only() {
    // the trace's flush hook logs the trim decided before the flush and waits for the record
    assert!(flush_latency(true, true) > flush_latency(false, true));
    // nothing to log: the hook holds nothing, and the flush is as fast as without the trace
    assert_eq!(flush_latency(true, false), flush_latency(false, false));
}

#[test]
fn stages_resolve_the_paths_of_the_features_at_build() {
    let plain = device(PayloadMode::Full);
    let s = &plain.stages;
    assert!(s.direct_writes && s.plain_page_writes && !s.other_sources);
    assert!(!s.search_path && !s.search_placement && !s.idle_gc);
    assert!(plain.controller_costs().is_none());
    // timing only: no payload slot to copy a page into
    assert!(!device(PayloadMode::TimingOnly).stages.plain_page_writes);
    let mut c = small_slc(2, 2, 8);
    c.ftl.controller = ControllerCosts {
        firmware_command_ns: 500.0,
        ..ControllerCosts::default()
    };
    c.ftl.gc.idle_threshold_blocks = 3;
    let costed = Ssd::new(c, 5).unwrap();
    let s = &costed.stages;
    // controller costs: a source of events of its own, and writes decided after the firmware
    assert!(s.other_sources && !s.direct_writes && s.idle_gc);
    assert_eq!(
        costed.controller_costs().map(|c| c.firmware_command_ns),
        Some(500.0)
    );
}
