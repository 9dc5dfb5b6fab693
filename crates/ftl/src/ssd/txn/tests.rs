//! The transactional mode: commit and abort on a live device, refusals, and atomicity under
//! power cuts at every event of a run of transactions (the mount shows the state after the
//! last acknowledged commit, or after the one being committed — never a part of one).

use super::*;
use crate::config::{MappingKind, PayloadMode, SsdConfig};
use crate::power::{CutConfig, RecoveryVariant};

const PAGE: u64 = 512;

fn config() -> SsdConfig {
    let mut c = crate::ssd::test_device::small_slc(2, 1, 4);
    c.ftl.payload = PayloadMode::Full;
    c
}

fn ssd() -> Ssd {
    let mut s = Ssd::new(config(), 3).unwrap();
    s.enable_transactions(16).unwrap();
    s
}

fn page_of(tx: u32, lpa: u32) -> Vec<u8> {
    let mut p = vec![(tx as u8) ^ (lpa as u8).rotate_left(3); PAGE as usize];
    p[..4].copy_from_slice(&tx.to_le_bytes());
    p[4..8].copy_from_slice(&lpa.to_le_bytes());
    p
}

fn write(s: &mut Ssd, lpa: u32, bytes: &[u8]) {
    let r = HostRequest::write(u64::from(lpa) * PAGE, bytes.len() as u64);
    s.execute(&r, Some(bytes)).unwrap();
}

fn read(s: &Ssd, lpa: u32) -> Vec<u8> {
    s.read_bytes(u64::from(lpa) * PAGE, PAGE).unwrap()
}

#[test]
fn commit_switches_and_abort_restores() {
    let mut s = ssd();
    write(&mut s, 1, &page_of(0, 1));
    let old = s.locate(Lpa(1));
    s.tx_begin().unwrap();
    write(&mut s, 1, &page_of(1, 1));
    write(&mut s, 2, &page_of(1, 2));
    // a partial write inside the transaction merges with the transaction's own page
    write(&mut s, 2, &[0xAB; 8]);
    assert_eq!(s.tx_pages(), 2);
    let old = old.unwrap();
    assert_ne!(
        s.locate(Lpa(1)),
        Some(old),
        "the transaction reads its own page"
    );
    assert_eq!(
        s.refcount(old),
        1,
        "the old page stays mapped until the commit"
    );
    assert_eq!(
        read(&s, 1),
        page_of(1, 1),
        "the transaction reads its own writes"
    );
    s.check_consistency().unwrap();
    s.tx_commit().unwrap();
    assert_eq!(s.refcount(old), 0, "the commit invalidates the old page");
    assert_eq!(read(&s, 1), page_of(1, 1));
    let mut two = page_of(1, 2);
    two[..8].fill(0xAB);
    assert_eq!(read(&s, 2), two);
    s.check_consistency().unwrap();

    s.tx_begin().unwrap();
    write(&mut s, 1, &page_of(2, 1));
    write(&mut s, 3, &page_of(2, 3));
    s.tx_abort().unwrap();
    assert_eq!(read(&s, 1), page_of(1, 1));
    assert_eq!(read(&s, 3), vec![0; PAGE as usize]);
    s.check_consistency().unwrap();
    let st = s.tx_stats();
    assert_eq!((st.begun, st.commits, st.aborts), (2, 1, 1));
    assert_eq!((st.pages_committed, st.abort_rewrites), (2, 2));
}

#[test]
fn refusals_name_what_is_wrong() {
    let mut plain = Ssd::new(config(), 3).unwrap();
    assert!(
        plain
            .tx_begin()
            .unwrap_err()
            .to_string()
            .contains("transactional mode")
    );
    let mut c = config();
    c.ftl.mapping.kind = MappingKind::Block;
    let mut block = Ssd::new(c, 3).unwrap();
    let e = block.enable_transactions(8).unwrap_err().to_string();
    assert!(e.contains("ftl.mapping"), "{e}");
    let mut c = config();
    c.ftl.buffer.pages = 4;
    let e = Ssd::new(c, 3)
        .unwrap()
        .enable_transactions(8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("buffer"), "{e}");
    let mut s = ssd();
    assert!(
        s.tx_commit()
            .unwrap_err()
            .to_string()
            .contains("none is open")
    );
    s.tx_begin().unwrap();
    assert!(
        s.tx_begin()
            .unwrap_err()
            .to_string()
            .contains("already open")
    );
    // the commit record's LPA is not the host's
    let record = HostRequest::write(u64::from(s.tx_record_lpa().0) * PAGE, PAGE);
    assert!(s.execute(&record, None).is_err());
    // a transaction larger than its shadow pages is refused, not half done
    for lpa in 0..16 {
        write(&mut s, lpa, &page_of(1, lpa));
    }
    let r = HostRequest::write(16 * PAGE, PAGE);
    assert!(s.execute(&r, Some(&page_of(1, 16))).is_err());
}

/// One step of the scripted run.
#[derive(Clone, Debug)]
enum Step {
    Begin,
    Write(u32, Vec<u8>),
    Flush,
    Record,
    Finish,
    Abort,
}

/// Transactions of 1–5 pages over 20 LPAs, every fifth aborted.
fn script(txs: u32, seed: u64) -> Vec<Step> {
    let mut state = seed;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut steps = Vec::new();
    for tx in 1..=txs {
        steps.push(Step::Begin);
        for _ in 0..1 + next(5) {
            let lpa = next(20) as u32;
            steps.push(Step::Write(lpa, page_of(tx, lpa)));
        }
        if tx % 5 == 0 {
            steps.push(Step::Abort);
        } else {
            steps.extend([Step::Flush, Step::Record, Step::Finish]);
        }
    }
    steps
}

/// Runs `steps` on a traced device until `budget` events have run (then cuts) or the end;
/// returns the cut, the commits finished and whether a commit record had been admitted.
fn run_until(steps: &[Step], budget: u64) -> (Ssd, crate::power::PowerCut, u32, bool) {
    let mut s = ssd();
    s.start_power_trace().unwrap();
    let mut events = 0u64;
    let (mut finished, mut committing) = (0u32, false);
    'run: for step in steps {
        let request = match step {
            Step::Begin => {
                s.tx_begin().unwrap();
                None
            }
            Step::Write(lpa, bytes) => Some((
                HostRequest::write(u64::from(*lpa) * PAGE, PAGE),
                Some(bytes.clone()),
            )),
            Step::Flush => Some((HostRequest::new(HostOp::Flush, 0, 0), None)),
            Step::Record => {
                committing = true;
                Some(s.tx_record_request().unwrap())
            }
            Step::Finish => {
                s.tx_finish_commit().unwrap();
                finished += 1;
                committing = false;
                None
            }
            Step::Abort => {
                s.tx_abort().unwrap();
                None
            }
        };
        if let Some((r, data)) = request {
            assert!(s.power_admit(&r, data.as_deref()).unwrap());
            while s.requests_in_flight() > 0 {
                if events == budget {
                    break 'run;
                }
                s.power_step().unwrap();
                events += 1;
            }
        }
    }
    let cut = s
        .power_cut(&CutConfig {
            seed: budget,
            ..CutConfig::default()
        })
        .unwrap();
    (s, cut, finished, committing)
}

/// The content of every LPA after the first `k` committed transactions of `steps`.
fn state_after(steps: &[Step], k: u32, lpas: u32) -> Vec<Vec<u8>> {
    let mut state = vec![vec![0u8; PAGE as usize]; lpas as usize];
    let mut pending = Vec::new();
    let mut done = 0;
    for step in steps {
        if done == k {
            break;
        }
        match step {
            Step::Begin => pending.clear(),
            Step::Write(lpa, bytes) => pending.push((*lpa, bytes.clone())),
            Step::Abort => pending.clear(),
            Step::Finish => {
                for (lpa, bytes) in pending.drain(..) {
                    state[lpa as usize] = bytes;
                }
                done += 1;
            }
            Step::Flush | Step::Record => {}
        }
    }
    state
}

#[test]
fn a_cut_at_any_event_leaves_whole_transactions() {
    let steps = script(40, 7);
    let (full, _, commits, _) = run_until(&steps, u64::MAX);
    assert_eq!(commits, 32);
    assert_eq!(full.tx_stats().aborts, 8);
    let mut cuts = 0;
    let mut uncommitted_seen = 0;
    let mut budget = 0;
    loop {
        let (s, cut, finished, committing) = run_until(&steps, budget);
        let r = s.recover_cut(&cut, RecoveryVariant::Correct);
        uncommitted_seen += r.report.pages_uncommitted;
        let mounted: Vec<Vec<u8>> = (0..20)
            .map(|l| {
                r.read(&cut, Lpa(l))
                    .map_or_else(|| vec![0; PAGE as usize], <[u8]>::to_vec)
            })
            .collect();
        let before = state_after(&steps, finished, 20);
        let after = state_after(&steps, finished + 1, 20);
        assert!(
            mounted == before || (committing && mounted == after),
            "cut after {budget} events: the mount is not the state after {finished} commits{}",
            if committing {
                " nor after the next"
            } else {
                ""
            }
        );
        cuts += 1;
        if finished == commits {
            break;
        }
        budget += 1;
    }
    assert!(cuts > 100, "{cuts} cuts");
    eprintln!("{cuts} cuts, {uncommitted_seen} uncommitted pages discarded");
    assert!(uncommitted_seen > 0, "some cut fell inside a transaction");
}

/// The mutation check: a mount that ignores the commit watermark (takes transactional pages
/// as plain writes) shows half transactions.
#[test]
fn without_the_commit_record_half_transactions_show() {
    let steps = script(40, 7);
    let mut broken = 0;
    for budget in 0..400 {
        let (_, cut, finished, committing) = run_until(&steps, budget);
        let mut newest = [0u64; 20];
        let mut mounted = vec![vec![0u8; PAGE as usize]; 20];
        // the broken scan: newest intact page per host LPA, transactional or not
        for ppa in (0..cut.image.physical_pages()).map(crate::address::Ppa) {
            if let Some(crate::power::PageImage::Programmed(c)) = cut.image.page(ppa)
                && c.crc_ok()
                && let Some(l) = c.lpa.map(crate::mapping::txn::host_lpa)
                && l.0 < 20
                && c.sequence > newest[l.index()]
            {
                newest[l.index()] = c.sequence;
                mounted[l.index()] = c.data.as_deref().unwrap().to_vec();
            }
        }
        let before = state_after(&steps, finished, 20);
        let after = state_after(&steps, finished + 1, 20);
        if !(mounted == before || (committing && mounted == after)) {
            broken += 1;
        }
    }
    assert!(broken > 0);
}
