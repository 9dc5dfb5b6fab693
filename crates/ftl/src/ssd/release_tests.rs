//! Releasing stale pages' payload slots (`Ssd::set_release_stale_payloads`): the simulated
//! run is the same as with the slots kept, memory follows the live pages, and the rule that
//! no recovery scan reads a released page holds (the trace refuses such a device).

use super::Ssd;
use crate::address::{Lpa, Ppa};
use crate::config::PayloadMode;
use crate::host::HostRequest;

const PAGE: u64 = 512;

fn ssd(transactions: bool) -> Ssd {
    let mut c = super::test_device::small_slc(2, 1, 4);
    c.ftl.payload = PayloadMode::Full;
    let mut s = Ssd::new(c, 5).unwrap();
    if transactions {
        s.enable_transactions(16).unwrap();
    }
    s
}

fn bytes(step: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (step as u8).wrapping_mul(31) ^ i as u8)
        .collect()
}

/// Overwrites (whole and partial pages), trims and, on a transactional device, committed and
/// aborted transactions; enough of them for GC to erase blocks many times.
fn workload(s: &mut Ssd, transactions: bool) {
    let logical = s.logical_pages() as u32;
    let mut rng = nandlab_core::SimRng::stream(9, "release");
    for step in 0..3000u32 {
        let lpa = rng.below(u64::from(logical / 2)) as u32;
        let offset = u64::from(lpa) * PAGE;
        if transactions && step % 40 == 0 {
            s.tx_begin().unwrap();
            for k in 0..3 {
                let l = (lpa + k) % logical;
                let r = HostRequest::write(u64::from(l) * PAGE, PAGE);
                s.execute(&r, Some(&bytes(step + k, PAGE as usize)))
                    .unwrap();
            }
            if step % 80 == 0 {
                s.tx_abort().unwrap();
            } else {
                s.tx_commit().unwrap();
            }
            continue;
        }
        match step % 7 {
            0 => {
                s.execute(&HostRequest::trim(offset, PAGE), None).unwrap();
            }
            1 | 2 => {
                let r = HostRequest::write(offset + 100, 60);
                s.execute(&r, Some(&bytes(step, 60))).unwrap();
            }
            _ => {
                let r = HostRequest::write(offset, PAGE);
                s.execute(&r, Some(&bytes(step, PAGE as usize))).unwrap();
            }
        }
    }
    s.drain().unwrap();
}

/// The same run with slots kept and with slots released: the same simulated results (time,
/// mapping, counters, every logical page's bytes); far fewer slots in use when released.
#[test]
fn releasing_stale_slots_changes_nothing_simulated() {
    for transactions in [false, true] {
        let mut kept = ssd(transactions);
        let mut released = ssd(transactions);
        released.set_release_stale_payloads(true).unwrap();
        assert!(released.releases_stale_payloads());
        workload(&mut kept, transactions);
        workload(&mut released, transactions);
        assert_eq!(kept.now(), released.now());
        assert!(kept.report().counters.erases > 10, "GC ran");
        assert_eq!(
            format!("{:?}", kept.report()),
            format!("{:?}", released.report())
        );
        let logical = kept.logical_pages();
        assert_eq!(
            kept.read_bytes(0, logical * PAGE).unwrap(),
            released.read_bytes(0, logical * PAGE).unwrap()
        );
        for lpa in (0..logical as u32).map(Lpa) {
            assert_eq!(kept.locate(lpa), released.locate(lpa));
            if let Some(ppa) = released.locate(lpa) {
                assert_eq!(kept.read_oob(ppa), released.read_oob(ppa));
            }
        }
        released.check_consistency().unwrap();
        let live = (0..logical as u32)
            .filter(|&l| released.locate(Lpa(l)).is_some())
            .count() as u64;
        let in_use = released.flash.payload.slots_in_use();
        assert!(released.flash.payload.released_total() > 1000);
        // live pages, plus pages still in blocks not erased yet whose GC moved them, plus
        // the transactional mode's committed record pages (the record LPA is mapped)
        assert!(
            in_use <= live + 2 * u64::from(kept.geometry().pages_per_block) + 1,
            "{in_use} slots for {live} live pages"
        );
        assert!(kept.flash.payload.slots_in_use() > in_use);
    }
}

/// A traced device keeps stale bytes: release is refused while the trace is on, the trace is
/// refused once a page was released, and starting it on a device that released nothing yet
/// turns release off.
#[test]
fn the_power_trace_and_slot_release_exclude_each_other() {
    let mut s = ssd(false);
    s.set_release_stale_payloads(true).unwrap();
    s.start_power_trace().unwrap();
    assert!(!s.releases_stale_payloads(), "the trace turned it off");
    let e = s.set_release_stale_payloads(true).unwrap_err().to_string();
    assert!(e.contains("power trace is on"), "{e}");

    let mut s = ssd(false);
    s.set_release_stale_payloads(true).unwrap();
    for _ in 0..2 {
        let r = HostRequest::write(0, PAGE);
        s.execute(&r, Some(&bytes(1, PAGE as usize))).unwrap();
    }
    let e = s.start_power_trace().unwrap_err().to_string();
    assert!(e.contains("1 stale page payloads were released"), "{e}");
    // timing-only keeps no slots: nothing to release
    let mut c = super::test_device::small_slc(2, 1, 4);
    c.ftl.payload = PayloadMode::TimingOnly;
    let mut t = Ssd::new(c, 5).unwrap();
    t.set_release_stale_payloads(true).unwrap();
    assert!(!t.releases_stale_payloads());
}

/// A released page's bytes are gone: reading them (as a recovery scan would) is a bug and
/// panics rather than returning something.
#[test]
#[should_panic(expected = "stale and its bytes were released")]
fn a_released_page_cannot_be_read() {
    let mut s = ssd(false);
    s.set_release_stale_payloads(true).unwrap();
    let r = HostRequest::write(0, PAGE);
    s.execute(&r, Some(&bytes(1, PAGE as usize))).unwrap();
    let stale = s.locate(Lpa(0)).unwrap();
    s.execute(&r, Some(&bytes(2, PAGE as usize))).unwrap();
    assert_ne!(s.locate(Lpa(0)), Some(stale));
    let _ = s.physical_page(Ppa(stale.0));
}

/// Issue 33: page bytes are stored sparsely under a limit (the memory budget's share). A
/// write that may not fit is refused with a one-line error naming what frees room, nothing
/// is simulated for it, the data already written reads back, and trimming (on a device
/// that releases stale pages) makes room again.
#[test]
fn a_payload_limit_refuses_writes_until_trims_free_room() {
    let mut s = ssd(false);
    s.set_release_stale_payloads(true).unwrap();
    let slot = PAGE + crate::flash::oob::OOB_BYTES as u64;
    s.flash
        .payload
        .set_limit_bytes(10 * slot, "10 slots (a test)".into());
    for lpa in 0..10u64 {
        let r = HostRequest::write(lpa * PAGE, PAGE);
        s.execute(&r, Some(&bytes(lpa as u32, PAGE as usize)))
            .unwrap();
    }
    // an 11th page does not fit
    let before = s.now();
    let e = s
        .execute(&HostRequest::write(10 * PAGE, PAGE), Some(&bytes(10, 512)))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("memory budget") && e.contains("10 slots (a test)"),
        "{e}"
    );
    assert!(e.contains("trim"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    assert_eq!(s.now(), before, "nothing simulated for the refused write");
    for lpa in 0..10u64 {
        let done = s
            .execute(&HostRequest::read(lpa * PAGE, PAGE), None)
            .unwrap();
        assert_eq!(done.data, bytes(lpa as u32, PAGE as usize), "lpa {lpa}");
    }
    // trimming two pages gives their slots back: two more pages fit, a third does not
    s.execute(&HostRequest::trim(0, 2 * PAGE), None).unwrap();
    let r = HostRequest::write(10 * PAGE, 2 * PAGE);
    s.execute(&r, Some(&bytes(11, 2 * PAGE as usize))).unwrap();
    assert!(
        s.execute(&HostRequest::write(12 * PAGE, PAGE), Some(&bytes(12, 512)))
            .is_err()
    );
    assert!(s.payload_allocated_bytes() >= 10 * slot);
}
