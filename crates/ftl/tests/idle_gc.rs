//! Background GC (`ftl.idle_gc_threshold_blocks`): while the device idles between bursts of
//! timed arrivals, victims are collected ahead of need, so the bursts meet fewer foreground GCs
//! and lower latency; every byte still reads back as last written.

mod common;

use nandlab_core::{SimRng, SimTime};
use nandlab_ftl::{GcScope, HostRequest, PayloadMode, Precondition, Ssd, SsdConfig, SsdReport};

fn config(idle_threshold: u32, scope: GcScope) -> SsdConfig {
    let mut c = common::slc(2, 2, 32, 16, 2048);
    c.ftl.op_fraction = 0.25;
    c.ftl.gc.threshold_blocks = 2;
    c.ftl.gc.idle_threshold_blocks = idle_threshold;
    c.ftl.gc.scope = scope;
    c.ftl.payload = PayloadMode::Full;
    c
}

/// Bursts of 48 random page writes 20 µs apart (each with its own bytes), each burst followed
/// by 100 ms of silence; `queued` runs them through `Ssd::run` (queue depth 32, zeros written),
/// otherwise one by one through `Ssd::execute` with data. Returns the SSD, the report and the
/// expected bytes of the logical space.
fn bursts(config: SsdConfig, queued: bool) -> (Ssd, SsdReport, Vec<u8>) {
    let mut ssd = Ssd::new(config, 3).unwrap();
    let logical = ssd.logical_pages();
    ssd.precondition(&Precondition::full_and_fragmented(logical))
        .unwrap();
    ssd.reset_measurement();
    let page = u64::from(ssd.page_size_bytes());
    let mut model = vec![0u8; (logical * page) as usize];
    let mut rng = SimRng::seed_from_u64(5);
    let mut at = ssd.now();
    let mut requests = Vec::new();
    for burst in 0..40u64 {
        for i in 0..48u64 {
            let lpa = rng.below(logical);
            let request = HostRequest {
                arrival: Some(at),
                ..HostRequest::write(lpa * page, page)
            };
            if queued {
                requests.push(request);
            } else {
                let data = vec![((burst * 48 + i) % 251) as u8 + 1; page as usize];
                ssd.execute(&request, Some(&data)).unwrap();
                let range = (lpa * page) as usize..((lpa + 1) * page) as usize;
                model[range].copy_from_slice(&data);
            }
            at += SimTime::from_us(20);
        }
        at += SimTime::from_ms(100);
    }
    let report = if queued {
        ssd.run(requests).unwrap()
    } else {
        ssd.drain().unwrap();
        ssd.report()
    };
    (ssd, report, model)
}

#[test]
fn idle_time_collects_ahead_and_bursts_get_faster() {
    for (scope, queued) in [
        (GcScope::Plane, true),
        (GcScope::Device, true),
        (GcScope::Plane, false),
    ] {
        let (off_ssd, off, off_model) = bursts(config(0, scope), queued);
        let (on_ssd, on, model) = bursts(config(5, scope), queued);
        assert_eq!(off_model, model);
        assert_eq!(off.counters.gc_runs_idle, 0);
        assert!(
            on.counters.gc_runs_idle > 0,
            "{scope:?} {queued}: {:?}",
            on.counters
        );
        let foreground = |r: &SsdReport| r.counters.gc_runs - r.counters.gc_runs_idle;
        assert!(
            foreground(&on) < foreground(&off),
            "{scope:?} {queued}: foreground GCs {} with idle GC vs {} without",
            foreground(&on),
            foreground(&off)
        );
        assert!(
            on.write.lat.mean_us < off.write.lat.mean_us,
            "{scope:?} {queued}: mean write latency {} vs {} us",
            on.write.lat.mean_us,
            off.write.lat.mean_us
        );
        for ssd in [&off_ssd, &on_ssd] {
            ssd.check_consistency().unwrap();
            if !queued {
                assert_eq!(ssd.read_bytes(0, model.len() as u64).unwrap(), model);
            }
        }
    }
}

#[test]
fn idle_threshold_must_exceed_the_foreground_threshold() {
    let err = Ssd::new(config(2, GcScope::Plane), 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ftl.idle_gc_threshold_blocks"), "{err}");
}
