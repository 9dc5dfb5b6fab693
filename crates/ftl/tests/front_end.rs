//! The front-end chain seam (issue 10 item 2/3): a stage with its own device timing plugs in
//! through `Ssd::with_front_ends`, becomes an event source of the world loop, holds host
//! writes until its device completes and releases pages to flash later, without any change to
//! the controller. Checked: latency includes the stage's device time, reads see the stage's
//! copy then the flash copy, a Flush drains the stage, and runs are deterministic.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{
    FrontEnd, FtlCounters, HostOp, HostRequest, Lpa, PageWrite, PageWrites, PayloadMode, Ssd,
    WriteState,
};
use std::collections::VecDeque;

const PAGE: u32 = 512;

/// A non-volatile staging memory with one write port: each page write occupies the port for
/// `write_ns`; a page is released to flash `release_after` writes later (FIFO).
#[derive(Debug)]
struct StagingMemory {
    write_ns: u64,
    release_after: usize,
    /// Pages held, oldest first, with their bytes.
    held: VecDeque<(Lpa, u64, Vec<u8>)>,
    /// Write-port completions pending: (time, request).
    port: VecDeque<(SimTime, u64)>,
    port_free: SimTime,
}

impl StagingMemory {
    fn new(write_ns: u64, release_after: usize) -> Self {
        StagingMemory {
            write_ns,
            release_after,
            held: VecDeque::new(),
            port: VecDeque::new(),
            port_free: SimTime::ZERO,
        }
    }
}

impl FrontEnd for StagingMemory {
    fn name(&self) -> &'static str {
        "staging memory"
    }
    fn volatile(&self) -> bool {
        false
    }
    fn contains(&self, lpa: Lpa) -> bool {
        self.held.iter().any(|(l, _, _)| *l == lpa)
    }
    fn page(&self, lpa: Lpa) -> Option<&[u8]> {
        self.held
            .iter()
            .rev()
            .find(|(l, _, _)| *l == lpa)
            .map(|(_, _, b)| &b[..])
    }
    fn read(&mut self, lpa: Lpa, _counters: &mut FtlCounters) -> bool {
        self.contains(lpa)
    }
    fn write(
        &mut self,
        now: SimTime,
        page: PageWrite<'_>,
        out: &mut PageWrites,
        _counters: &mut FtlCounters,
    ) -> u32 {
        self.held.retain(|(l, _, _)| *l != page.lpa);
        let bytes = page
            .data
            .map_or_else(|| vec![0; PAGE as usize], <[u8]>::to_vec);
        self.held.push_back((page.lpa, page.sequence, bytes));
        while self.held.len() > self.release_after {
            let (lpa, sequence, bytes) = self.held.pop_front().unwrap();
            out.push(lpa, sequence, Some(&bytes));
        }
        let start = self.port_free.max(now);
        self.port_free = start + SimTime::from_ns(self.write_ns);
        self.port.push_back((self.port_free, page.request));
        1
    }
    fn trim(&mut self, lpa: Lpa) {
        self.held.retain(|(l, _, _)| *l != lpa);
    }
    fn flush(&mut self, out: &mut PageWrites) {
        for (lpa, sequence, bytes) in self.held.drain(..) {
            out.push(lpa, sequence, Some(&bytes));
        }
    }
    fn has_events(&self) -> bool {
        true
    }
    fn next_event_time(&self) -> Option<SimTime> {
        self.port.front().map(|&(t, _)| t)
    }
    fn process_next(&mut self, done: &mut Vec<u64>, _out: &mut PageWrites) -> Option<SimTime> {
        let (time, request) = self.port.pop_front()?;
        done.push(request);
        Some(time)
    }
}

fn ssd(write_ns: u64, release_after: usize) -> Ssd {
    let mut c = common::slc(1, 2, 16, 8, PAGE);
    c.ftl.payload = PayloadMode::Full;
    c.ftl.op_fraction = 0.5;
    let stage: Box<dyn FrontEnd> = Box::new(StagingMemory::new(write_ns, release_after));
    Ssd::with_front_ends(c, 1, vec![stage]).unwrap()
}

fn write(lpa: u32, fill: u8) -> (HostRequest, Vec<u8>) {
    (
        HostRequest::new(HostOp::Write, u64::from(lpa * PAGE), u64::from(PAGE)),
        vec![fill; PAGE as usize],
    )
}

#[test]
fn a_timed_stage_is_an_event_source_that_holds_writes() {
    let mut s = ssd(40_000, 2);
    // the first two writes stay in the stage: each costs exactly the port time, no flash
    let (r, d) = write(3, 0xA1);
    let e = s.execute(&r, Some(&d)).unwrap();
    assert_eq!(e.latency, SimTime::from_ns(40_000));
    assert_eq!(s.write_state(Lpa(3)), Some(WriteState::Durable));
    let (r, d) = write(4, 0xA2);
    s.execute(&r, Some(&d)).unwrap();
    assert_eq!(
        s.nand().stats().ops_completed(),
        0,
        "nothing reached flash yet"
    );
    // the third write releases lpa 3 to flash: the request waits for its program too
    let (r, d) = write(5, 0xA3);
    let e = s.execute(&r, Some(&d)).unwrap();
    assert!(e.latency > SimTime::from_us(250), "{}", e.latency);
    assert_eq!(s.nand().stats().ops_completed(), 1);
    // reads see the stage's copies and the flash copy alike
    for (lpa, fill) in [(3, 0xA1), (4, 0xA2), (5, 0xA3)] {
        let read = HostRequest::new(HostOp::Read, u64::from(lpa * PAGE), u64::from(PAGE));
        assert_eq!(
            s.execute(&read, None).unwrap().data,
            vec![fill; PAGE as usize]
        );
    }
    // a flush drains the stage to flash
    s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
        .unwrap();
    assert_eq!(
        s.nand().stats().ops_completed(),
        3 + 1,
        "two more programs and the read of lpa 3"
    );
    assert_eq!(s.read_bytes(u64::from(4 * PAGE), 4).unwrap(), vec![0xA2; 4]);
    s.check_consistency().unwrap();
}

#[test]
fn runs_with_a_timed_stage_are_deterministic() {
    let run = || {
        let mut s = ssd(15_000, 3);
        let requests: Vec<HostRequest> = (0..400u64)
            .map(|i| {
                HostRequest::new(
                    HostOp::Write,
                    (i * 7 % 48) * u64::from(PAGE),
                    u64::from(PAGE),
                )
            })
            .collect();
        let report = s.run(requests).unwrap();
        (format!("{report:?}"), s.now())
    };
    let (a, ta) = run();
    let (b, tb) = run();
    assert_eq!(ta, tb);
    assert_eq!(a, b);
}
