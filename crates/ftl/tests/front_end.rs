//! The front-end chain seam (issue 10 item 2/3): a stage with its own device timing plugs in
//! through `Ssd::with_front_ends`, becomes an event source of the world loop, holds host
//! writes until its device completes and releases pages to flash later, without any change to
//! the controller. Checked: latency includes the stage's device time, reads see the stage's
//! copy then the flash copy, a Flush drains a volatile stage and leaves a non-volatile one's
//! pages where they are (durable there), and runs are deterministic.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{
    FrontEnd, FtlCounters, HostOp, HostRequest, Lpa, PageWrite, PageWrites, PayloadMode, Ssd,
    StagePort, WriteState,
};
use std::collections::VecDeque;

const PAGE: u32 = 512;

/// A staging memory (non-volatile unless `volatile`) with one write port: each page write
/// occupies the port for `write_ns`; a page is released to flash `release_after` writes later
/// (FIFO).
#[derive(Debug)]
struct StagingMemory {
    volatile: bool,
    write_ns: u64,
    release_after: usize,
    /// Pages held, oldest first, with their bytes.
    held: VecDeque<(Lpa, u64, Vec<u8>)>,
    port: StagePort,
}

impl StagingMemory {
    fn new(write_ns: u64, release_after: usize) -> Self {
        StagingMemory {
            volatile: false,
            write_ns,
            release_after,
            held: VecDeque::new(),
            port: StagePort::default(),
        }
    }
}

impl FrontEnd for StagingMemory {
    fn name(&self) -> &'static str {
        "staging memory"
    }
    fn volatile(&self) -> bool {
        self.volatile
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
        self.port
            .occupy_for(now, SimTime::from_ns(self.write_ns), page.request);
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
        self.port.next_event_time()
    }
    fn process_next(&mut self, done: &mut Vec<u64>, _out: &mut PageWrites) -> Option<SimTime> {
        self.port.process_next(done)
    }
}

fn ssd(write_ns: u64, release_after: usize) -> Ssd {
    ssd_with(StagingMemory::new(write_ns, release_after))
}

fn ssd_with(stage: StagingMemory) -> Ssd {
    let mut c = common::slc(1, 2, 16, 8, PAGE);
    c.ftl.payload = PayloadMode::Full;
    c.ftl.op_fraction = 0.5;
    let stage: Box<dyn FrontEnd> = Box::new(stage);
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
    // a flush leaves the non-volatile stage's pages in it: they are durable there
    s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
        .unwrap();
    assert_eq!(
        s.nand().stats().ops_completed(),
        1 + 1,
        "the program of lpa 3 and its read"
    );
    assert_eq!(s.read_bytes(u64::from(4 * PAGE), 4).unwrap(), vec![0xA2; 4]);
    s.check_consistency().unwrap();
}

#[test]
fn a_flush_drains_a_volatile_stage_and_keeps_a_non_volatile_one() {
    for volatile in [true, false] {
        let mut s = ssd_with(StagingMemory {
            volatile,
            ..StagingMemory::new(1_000, 8)
        });
        for (lpa, fill) in [(3, 0xB1), (4, 0xB2), (5, 0xB3)] {
            let (r, d) = write(lpa, fill);
            s.execute(&r, Some(&d)).unwrap();
            let state = s.write_state(Lpa(lpa));
            let expected = if volatile {
                WriteState::Acknowledged
            } else {
                WriteState::Durable
            };
            assert_eq!(state, Some(expected), "volatile {volatile}");
        }
        assert_eq!(s.nand().stats().ops_completed(), 0);
        s.execute(&HostRequest::new(HostOp::Flush, 0, 0), None)
            .unwrap();
        let programs = if volatile { 3 } else { 0 };
        assert_eq!(
            s.nand().stats().ops_completed(),
            programs,
            "volatile {volatile}"
        );
        for (lpa, fill) in [(3, 0xB1), (4, 0xB2), (5, 0xB3)] {
            assert_eq!(
                s.read_bytes(u64::from(lpa * PAGE), 4).unwrap(),
                vec![fill; 4]
            );
            assert_eq!(s.write_state(Lpa(lpa)), Some(WriteState::Durable));
        }
        s.check_consistency().unwrap();
    }
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

/// A dedup stage by exact content (the last stage): a page whose bytes equal what another
/// logical page holds now is passed on as a duplicate of it.
#[derive(Debug, Default)]
struct ExactDedup {
    holder_of: std::collections::HashMap<Vec<u8>, Lpa>,
    content_of: std::collections::HashMap<Lpa, Vec<u8>>,
}

impl ExactDedup {
    fn forget(&mut self, lpa: Lpa) {
        if let Some(old) = self.content_of.remove(&lpa)
            && self.holder_of.get(&old) == Some(&lpa)
        {
            // another LPA with the same content may hold the page on
            match self.content_of.iter().find(|(_, c)| **c == old) {
                Some((&other, _)) => self.holder_of.insert(old, other),
                None => self.holder_of.remove(&old),
            };
        }
    }
}

impl FrontEnd for ExactDedup {
    fn name(&self) -> &'static str {
        "exact dedup"
    }
    fn volatile(&self) -> bool {
        false
    }
    fn contains(&self, _lpa: Lpa) -> bool {
        false
    }
    fn page(&self, _lpa: Lpa) -> Option<&[u8]> {
        None
    }
    fn read(&mut self, _lpa: Lpa, _counters: &mut FtlCounters) -> bool {
        false
    }
    fn write(
        &mut self,
        _now: SimTime,
        page: PageWrite<'_>,
        out: &mut PageWrites,
        _counters: &mut FtlCounters,
    ) -> u32 {
        let bytes = page.data.expect("full payload mode").to_vec();
        self.forget(page.lpa);
        match self.holder_of.get(&bytes) {
            Some(&same_as) => out.push_duplicate(page.lpa, page.sequence, same_as),
            None => {
                out.push(page.lpa, page.sequence, page.data);
                self.holder_of.insert(bytes.clone(), page.lpa);
            }
        }
        self.content_of.insert(page.lpa, bytes);
        0
    }
    fn trim(&mut self, lpa: Lpa) {
        self.forget(lpa);
    }
    fn flush(&mut self, _out: &mut PageWrites) {}
}

/// Shared physical pages through the whole controller: writes of a few distinct contents over
/// a small device (GC, wear-leveling, TRIM and a DRAM buffer in front) keep returning each
/// page's last bytes, and far fewer pages are programmed than written.
#[test]
fn duplicate_writes_share_physical_pages_across_gc_and_trim() {
    for buffer_pages in [0, 4] {
        let mut c = common::slc(1, 2, 16, 8, PAGE);
        c.ftl.payload = PayloadMode::Full;
        c.ftl.op_fraction = 0.5;
        c.ftl.buffer.pages = buffer_pages;
        c.ftl.wear.leveling = nandlab_ftl::WearLeveling::Static;
        c.ftl.wear.erase_gap_threshold = 2;
        let stage: Box<dyn FrontEnd> = Box::<ExactDedup>::default();
        let mut s = Ssd::with_front_ends(c, 7, vec![stage]).unwrap();
        let lpas = s.logical_pages() as u32;
        let mut rng = nandlab_core::SimRng::seed_from_u64(11);
        let mut model: Vec<Option<u8>> = vec![None; lpas as usize];
        let mut shared_seen = false;
        for step in 0..3000 {
            let lpa = rng.below(u64::from(lpas)) as u32;
            let offset = u64::from(lpa * PAGE);
            if rng.below(10) == 0 {
                let trim = HostRequest::new(HostOp::Trim, offset, u64::from(PAGE));
                s.execute(&trim, None).unwrap();
                model[lpa as usize] = None;
            } else {
                let fill = 1 + rng.below(4) as u8;
                let (r, d) = write(lpa, fill);
                s.execute(&r, Some(&d)).unwrap();
                model[lpa as usize] = Some(fill);
            }
            if step % 97 == 0 {
                s.check_consistency().unwrap();
                for (l, m) in model.iter().enumerate() {
                    let got = s.read_bytes(u64::from(l as u32 * PAGE), 2).unwrap();
                    assert_eq!(got, vec![m.unwrap_or(0); 2], "lpa {l} at step {step}");
                }
                shared_seen |=
                    (0..s.physical_pages() as u32).any(|p| s.refcount(nandlab_ftl::Ppa(p)) > 1);
            }
        }
        s.check_consistency().unwrap();
        let report = s.run(std::iter::empty::<HostRequest>()).unwrap();
        drop(report);
        assert!(shared_seen, "some physical page was shared");
        let programs = s.nand().stats().kind(nandlab_nand::OpKind::Program).ops;
        assert!(
            programs < 1500,
            "{programs} programs for ~2700 writes of 4 contents"
        );
    }
}
