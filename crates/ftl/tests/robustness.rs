//! Bad input reaches the controller as an error, never a panic (issue 11): timing parameters
//! and arrival times that would run simulated time past its end, and absurd chip configs.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{FtlError, HostRequest, Ssd, SsdConfig};

fn small() -> SsdConfig {
    common::slc(1, 1, 32, 16, 2048)
}

/// Regression (issue 11): a chip with `program_us = 1e12` passed validation, and its first
/// programs pushed simulated time past 2^64 ps into the event queue's "event scheduled in the
/// past" assert (a `PanicException` from Python). The key is now refused at validation.
#[test]
fn an_absurd_program_time_is_refused_with_its_key() {
    let mut c = small();
    let overrides = c.device.overrides.as_mut().unwrap();
    overrides.insert(
        "timing".into(),
        toml::from_str::<toml::Table>("program_us = 1e12")
            .unwrap()
            .into(),
    );
    let err = Ssd::new(c, 1).unwrap_err().to_string();
    assert!(err.contains("timing.program_us"), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

/// Regression (issue 11): an arrival time near the end of simulated time made the chip's
/// event times wrap around (release) or overflow (debug): a panic. Time now saturates at the
/// end and the run stops with `FtlError::EndOfTime` naming the request.
#[test]
fn work_past_the_end_of_time_is_an_error_naming_the_request() {
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let page = u64::from(ssd.page_size_bytes());
    let requests = vec![
        HostRequest {
            arrival: Some(SimTime::from_us(1)),
            ..HostRequest::write(0, page)
        },
        HostRequest {
            arrival: Some(SimTime::from_ps(u64::MAX - 1_000)),
            ..HostRequest::write(page, page)
        },
    ];
    let err = ssd.run(requests).unwrap_err();
    assert_eq!(err, FtlError::EndOfTime { request: 2 }, "{err}");
    assert!(err.to_string().contains("213"), "{err}");
}

/// Regression (issue 11): an arrival exactly at the last representable time is refused as
/// the request it belongs to, also through `Ssd::execute` (the Python path).
#[test]
fn an_arrival_at_the_end_of_time_is_an_error() {
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let requests = vec![HostRequest {
        arrival: Some(SimTime::MAX),
        ..HostRequest::read(0, 2048)
    }];
    assert_eq!(
        ssd.run(requests).unwrap_err(),
        FtlError::EndOfTime { request: 1 }
    );
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let request = HostRequest {
        arrival: Some(SimTime::MAX),
        ..HostRequest::write(0, 2048)
    };
    assert!(matches!(
        ssd.execute(&request, None),
        Err(FtlError::EndOfTime { .. })
    ));
}

/// Regression (issue 11): preconditioning with a huge `random_overwrites` ran silently and
/// could not be stopped. `precondition_with_progress` reports progress every 65,536 writes and
/// stops with `FtlError::Interrupted` when the callback says so; the device stays consistent.
#[test]
fn preconditioning_reports_progress_and_can_be_stopped() {
    use nandlab_ftl::{PRECONDITION_PROGRESS_WRITES, Precondition};
    use std::ops::ControlFlow;
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let huge = Precondition {
        fill_fraction: 1.0,
        random_overwrites: u64::MAX,
    };
    let mut calls = Vec::new();
    let err = ssd
        .precondition_with_progress(&huge, |done, total| {
            calls.push((done, total));
            if calls.len() == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap_err();
    assert!(matches!(err, FtlError::Interrupted { .. }), "{err}");
    assert!(err.to_string().contains("196608 of"), "{err}");
    assert_eq!(calls[0].0, PRECONDITION_PROGRESS_WRITES);
    assert_eq!(calls[2].0, 3 * PRECONDITION_PROGRESS_WRITES);
    assert!(calls.iter().all(|c| c.1 == calls[0].1));
    ssd.check_consistency().unwrap();
    // a small one runs to the end and reports its total once done
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let mut last = None;
    ssd.precondition_with_progress(&Precondition::full_and_fragmented(10), |d, t| {
        last = Some((d, t));
        ControlFlow::Continue(())
    })
    .unwrap();
    let (done, total) = last.unwrap();
    assert_eq!(done, total);
}

/// Issue 31 item 6: `fill_fraction = 0` with random overwrites was accepted and the overwrites
/// silently skipped (they stay within the filled pages, and none were filled).
#[test]
fn random_overwrites_without_a_fill_are_refused_naming_the_key() {
    let e = nandlab_ftl::Precondition {
        fill_fraction: 0.0,
        random_overwrites: 100,
    }
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("precondition.random_overwrites") && !e.contains('\n'),
        "{e}"
    );
    let mut ssd = Ssd::new(small(), 1).unwrap();
    let nothing = nandlab_ftl::Precondition {
        fill_fraction: 0.0,
        random_overwrites: 0,
    };
    assert!(ssd.precondition(&nothing).is_ok());
}
