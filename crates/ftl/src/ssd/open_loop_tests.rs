//! Tests of the open-loop host interface (`open_loop.rs`) and of the synchronous calls on it.

use super::*;
use crate::config::{PayloadMode, SsdConfig};

fn config(queue_depth: u32) -> SsdConfig {
    let mut c = SsdConfig::from_preset("mlc1");
    c.ftl.host.queue_depth = queue_depth;
    c.ftl.payload = PayloadMode::Full;
    c
}

/// A mixed stream (random writes, reads, a trim, flushes) with arrivals `gap_ns` apart.
fn stream(ssd: &Ssd, n: u64, gap_ns: u64) -> Vec<HostRequest> {
    let page = u64::from(ssd.page_size_bytes());
    let pages = ssd.logical_pages();
    let mut x = 12345u64;
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpa = (x >> 33) % (pages - 4);
            let op = match (x >> 20) % 10 {
                0..=5 => HostOp::Write,
                6..=8 => HostOp::Read,
                _ if i % 2 == 0 => HostOp::Trim,
                _ => HostOp::Flush,
            };
            let size = if op == HostOp::Flush {
                0
            } else {
                page * (1 + (x >> 40) % 3)
            };
            let mut r = HostRequest::new(op, lpa * page, size);
            r.arrival = Some(SimTime::from_ns(i * gap_ns));
            r
        })
        .collect()
}

/// Submits `requests` in arrival order and collects every completion.
fn open_loop(ssd: &mut Ssd, requests: &[HostRequest]) -> Vec<HostCompletion> {
    ssd.open_loop_begin();
    let mut tags = Vec::new();
    for r in requests {
        tags.push(ssd.submit(r, None).unwrap());
    }
    let mut done = Vec::new();
    while ssd.advance_to_completion().unwrap() {
        ssd.take_completions_into(&mut done);
    }
    assert_eq!(tags, (0..requests.len() as u64).collect::<Vec<_>>());
    done
}

#[test]
fn open_loop_gives_the_report_of_run_for_the_same_arrivals() {
    for (qd, gap) in [(1, 50_000), (8, 20_000), (32, 2_000), (4, 0)] {
        let mut a = Ssd::new(config(qd), 7).unwrap();
        let requests = stream(&a, 3000, gap);
        let run = a.run(requests.clone()).unwrap();
        let mut b = Ssd::new(config(qd), 7).unwrap();
        let done = open_loop(&mut b, &requests);
        assert_eq!(
            done.len(),
            requests.len(),
            "qd {qd}: every command completes once"
        );
        let mut tags: Vec<u64> = done.iter().map(|c| c.tag).collect();
        tags.sort_unstable();
        assert_eq!(tags, (0..requests.len() as u64).collect::<Vec<_>>());
        assert!(done.iter().all(|c| c.status.is_ok()));
        assert_eq!(b.report(), run, "qd {qd}, gap {gap} ns");
        if qd > 1 && gap < 20_000 {
            // several in flight: completions come out of submission order
            assert!(done.windows(2).any(|w| w[0].tag > w[1].tag), "qd {qd}");
        }
    }
}

#[test]
fn advance_to_completion_or_stops_at_the_time_or_the_completion() {
    let mut ssd = Ssd::new(config(4), 1).unwrap();
    ssd.open_loop_begin();
    let page = u64::from(ssd.page_size_bytes());
    ssd.submit(&HostRequest::write(0, page), None).unwrap();
    // a program takes hundreds of us: nothing completes in the first microsecond
    let early = SimTime::from_us(1);
    assert!(!ssd.advance_to_completion_or(early).unwrap());
    assert_eq!(ssd.now(), early);
    assert_eq!(ssd.open_in_flight(), 1);
    // a later bound: it stops at the completion, before the bound
    let late = SimTime::from_ms(100);
    assert!(ssd.advance_to_completion_or(late).unwrap());
    let done = ssd.take_completions();
    assert_eq!(done.len(), 1);
    assert_eq!(ssd.now(), done[0].completed);
    assert!(done[0].completed < late);
    // nothing in flight: the time moves to the bound
    assert!(!ssd.advance_to_completion_or(late).unwrap());
    assert_eq!(ssd.now(), late);
}

#[test]
fn open_loop_is_deterministic_and_returns_written_bytes() {
    let go = || {
        let mut ssd = Ssd::new(config(8), 3).unwrap();
        ssd.open_loop_begin();
        let page = u64::from(ssd.page_size_bytes());
        let bytes: Vec<u8> = (0..page * 2).map(|i| (i % 251) as u8).collect();
        let mut w = HostRequest::new(HostOp::Write, 5 * page, 2 * page);
        w.arrival = Some(SimTime::from_ns(1000));
        ssd.submit(&w, Some(&bytes)).unwrap();
        let mut r = HostRequest::new(HostOp::Read, 5 * page + 100, page);
        r.arrival = Some(SimTime::from_ns(1000));
        ssd.submit(&r, None).unwrap();
        let mut done = Vec::new();
        while ssd.advance_to_completion().unwrap() {
            ssd.take_completions_into(&mut done);
        }
        // the read arrived with the write in flight; after both, the bytes are there
        let mut later = HostRequest::new(HostOp::Read, 5 * page + 100, page);
        later.arrival = Some(ssd.now() + SimTime::from_ns(10));
        let tag = ssd.submit(&later, None).unwrap();
        while ssd.advance_to_completion().unwrap() {
            ssd.take_completions_into(&mut done);
        }
        let last = done.iter().find(|c| c.tag == tag).unwrap();
        assert_eq!(last.data, bytes[100..100 + page as usize]);
        done
    };
    assert_eq!(go(), go());
}

#[test]
fn execute_equals_open_loop_one_at_a_time() {
    let mut a = Ssd::new(config(4), 9).unwrap();
    let requests = stream(&a, 400, 30_000);
    let mut b = Ssd::new(config(4), 9).unwrap();
    b.open_loop_begin();
    for r in &requests {
        let e = a.execute(r, None).unwrap();
        // execute: at the arrival, or now if that is later
        let mut r = *r;
        r.arrival = r.arrival.map(|t| t.max(b.now()));
        let tag = b.submit(&r, None).unwrap();
        assert!(b.advance_to_completion().unwrap());
        let c = b.take_completions();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].tag, tag);
        assert_eq!(
            (c[0].completed, c[0].latency(), &c[0].data),
            (e.completed, e.latency, &e.data)
        );
    }
}

#[test]
fn advance_to_moves_time_and_refuses_the_past() {
    let mut ssd = Ssd::new(config(2), 1).unwrap();
    assert!(
        ssd.submit(&HostRequest::new(HostOp::Flush, 0, 0), None)
            .is_err()
    );
    ssd.open_loop_begin();
    ssd.advance_to(SimTime::from_ns(5000)).unwrap();
    assert_eq!(ssd.now(), SimTime::from_ns(5000));
    let mut r = HostRequest::new(HostOp::Read, 0, 4096);
    r.arrival = Some(SimTime::from_ns(10));
    assert!(ssd.submit(&r, None).is_err());
    let beyond = HostRequest::new(HostOp::Read, ssd.logical_capacity_bytes(), 4096);
    assert!(matches!(
        ssd.submit(&beyond, None),
        Err(FtlError::OutOfRange { .. })
    ));
    assert_eq!(ssd.open_in_flight(), 0);
}

/// `execute` runs on the open-loop interface: after it, `run` posts no completions (its slots
/// carry no tag), and an `execute` among open-loop commands takes only its own completion.
#[test]
fn execute_mixes_with_run_and_open_loop_commands() {
    let mut ssd = Ssd::new(config(8), 4).unwrap();
    let requests = stream(&ssd, 300, 5_000);
    ssd.execute(&requests[0], None).unwrap();
    ssd.run(requests[1..200].to_vec()).unwrap();
    assert!(ssd.take_completions().is_empty(), "run posts nothing");

    ssd.open_loop_begin();
    let mut tags = Vec::new();
    for r in &requests[200..210] {
        let mut r = *r;
        r.arrival = Some(ssd.now());
        tags.push(ssd.submit(&r, None).unwrap());
    }
    let page = u64::from(ssd.page_size_bytes());
    let read = HostRequest::new(HostOp::Read, 3 * page, page);
    let e = ssd.execute(&read, None).unwrap();
    assert_eq!(e.data.len(), page as usize);
    // the ten submitted commands completed (they were ahead of the read) and wait to be taken
    let mut done = ssd.take_completions();
    while ssd.advance_to_completion().unwrap() {
        ssd.take_completions_into(&mut done);
    }
    let mut got: Vec<u64> = done.iter().map(|c| c.tag).collect();
    got.sort_unstable();
    assert_eq!(got, tags);
}

/// A bad `execute` leaves nothing behind: the next command in its slot is served normally.
#[test]
fn a_refused_execute_leaves_no_tag_behind() {
    let mut ssd = Ssd::new(config(1), 2).unwrap();
    let beyond = HostRequest::new(HostOp::Read, ssd.logical_capacity_bytes(), 4096);
    assert!(matches!(
        ssd.execute(&beyond, None),
        Err(FtlError::OutOfRange { .. })
    ));
    let write = HostRequest::new(HostOp::Write, 0, 4096);
    ssd.execute(&write, None).unwrap();
    ssd.run(vec![write]).unwrap();
    assert!(ssd.take_completions().is_empty());
}
