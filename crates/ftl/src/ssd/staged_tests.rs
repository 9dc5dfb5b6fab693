//! Copies the host path leaves out: a one-page write waiting for its controller decision is
//! staged in the payload slot its program takes (`Payload::stage`), and a read run with
//! `Ssd::execute_read_uncopied` gathers no bytes. Neither changes what is simulated or stored.

use super::Ssd;
use crate::address::Lpa;
use crate::config::PayloadMode;
use crate::controller::ControllerCosts;
use crate::host::HostRequest;
use std::collections::HashMap;

const PAGE: u64 = 512;

/// A small SLC device with full payloads and a host link (writes are decided after their data
/// crossed it: the staged path).
fn ssd(release: bool) -> Ssd {
    let mut c = super::test_device::small_slc(2, 1, 4);
    c.ftl.payload = PayloadMode::Full;
    c.ftl.controller = ControllerCosts {
        host_link_pcie_gen: 1,
        host_link_lanes: 1,
        ..ControllerCosts::default()
    };
    let mut s = Ssd::new(c, 3).unwrap();
    s.set_release_stale_payloads(release).unwrap();
    s
}

fn bytes(step: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (step as u8).wrapping_mul(37) ^ (i as u8).wrapping_mul(3))
        .collect()
}

/// Whole-page writes (staged), partial writes (kept in the request) and trims, enough for GC
/// to erase many blocks: every logical page reads back as written, with slots kept or
/// released, and no staged slot is left once the device is idle.
#[test]
fn staged_writes_store_what_was_written_and_leave_no_slot_behind() {
    for release in [false, true] {
        let mut s = ssd(release);
        let logical = s.logical_pages() as u32;
        let mut model: HashMap<u32, Vec<u8>> = HashMap::new();
        // admitted, not yet decided (its data is crossing the host link): staged
        let r = HostRequest::write(0, PAGE);
        assert!(s.power_admit(&r, Some(&bytes(0, PAGE as usize))).unwrap());
        assert_eq!(s.flash.payload.staged_count(), 1);
        s.drain().unwrap();
        assert_eq!(s.flash.payload.staged_count(), 0);
        model.insert(0, bytes(0, PAGE as usize));
        let mut rng = nandlab_core::SimRng::stream(4, "staged");
        for step in 0..2500u32 {
            let lpa = rng.below(u64::from(logical / 2)) as u32;
            let offset = u64::from(lpa) * PAGE;
            match step % 9 {
                0 => {
                    s.execute(&HostRequest::trim(offset, PAGE), None).unwrap();
                    model.remove(&lpa);
                }
                1 => {
                    let data = bytes(step, 40);
                    let r = HostRequest::write(offset + 64, 40);
                    s.execute(&r, Some(&data)).unwrap();
                    let page = model.entry(lpa).or_insert_with(|| vec![0; PAGE as usize]);
                    page[64..104].copy_from_slice(&data);
                }
                _ => {
                    let data = bytes(step, PAGE as usize);
                    let r = HostRequest::write(offset, PAGE);
                    s.execute(&r, Some(&data)).unwrap();
                    model.insert(lpa, data);
                }
            }
        }
        s.drain().unwrap();
        assert!(s.report().counters.erases > 10, "GC ran");
        assert!(
            s.flash.payload.staged_count() == 0,
            "a staged slot was left"
        );
        for lpa in 0..logical {
            let want = model
                .get(&lpa)
                .cloned()
                .unwrap_or_else(|| vec![0; PAGE as usize]);
            let got = s.read_bytes(u64::from(lpa) * PAGE, PAGE).unwrap();
            assert_eq!(got, want, "lpa {lpa} (release {release})");
        }
        s.check_consistency().unwrap();
        if release {
            let live = (0..logical).filter(|&l| s.locate(Lpa(l)).is_some()).count() as u64;
            assert!(s.flash.payload.slots_in_use() <= live + 2 * 4 + 1);
        }
    }
}

/// An uncopied read is timed as a read with its bytes is, returns none, and the bytes are the
/// SSD's; anything but a read is refused.
#[test]
fn an_uncopied_read_is_the_same_read_without_its_bytes() {
    let mut a = ssd(true);
    let mut b = ssd(true);
    for s in [&mut a, &mut b] {
        for lpa in 0..8u32 {
            let r = HostRequest::write(u64::from(lpa) * PAGE, PAGE);
            s.execute(&r, Some(&bytes(lpa, PAGE as usize))).unwrap();
        }
    }
    for lpa in [3u32, 0, 7, 3] {
        let r = HostRequest::read(u64::from(lpa) * PAGE, PAGE);
        let with = a.execute(&r, None).unwrap();
        let without = b.execute_read_uncopied(&r).unwrap();
        assert_eq!(
            (with.latency, with.completed),
            (without.latency, without.completed)
        );
        assert!(without.data.is_empty());
        let mut page = vec![0; PAGE as usize];
        b.read_bytes_into(u64::from(lpa) * PAGE, &mut page).unwrap();
        assert_eq!(page, with.data);
        assert_eq!(page, bytes(lpa, PAGE as usize));
    }
    assert_eq!(format!("{:?}", a.report()), format!("{:?}", b.report()));
    let e = b
        .execute_read_uncopied(&HostRequest::write(0, PAGE))
        .unwrap_err()
        .to_string();
    assert!(e.contains("execute_read_uncopied of a Write"), "{e}");
    // the next plain read gathers its bytes again
    let r = HostRequest::read(0, PAGE);
    assert_eq!(b.execute(&r, None).unwrap().data, bytes(0, PAGE as usize));
}
