//! Power cuts on a device with an SLC cache (issue 34): what a mount reads back of the
//! cache's blocks (`frontend/slc.rs`, `flash/slc_area.rs`).

use crate::HostRequest;
use crate::address::Lpa;
use crate::config::PayloadMode;
use crate::power::{CutConfig, RecoveryVariant};
use crate::ssd::Ssd;
use crate::ssd::test_device::small_slc;

const PAGE: u64 = 512;

fn bytes(step: u32) -> Vec<u8> {
    (0..PAGE as u32)
        .map(|i| (step as u8).wrapping_mul(31) ^ (i as u8).wrapping_mul(7))
        .collect()
}

/// Issue 34: a power cut while the cache folds its block must keep every durable write.
/// The fold passes the block's pages down to the main area and erases the block; a mount
/// after a cut at any instant of it finds each page in the SLC block (its OOB names the
/// LPA) or in the main area (its program completed before the SLC erase ran). Before the
/// fix the SLC pages carried no LPA (and were not traced), so a cut before the folded
/// programs completed lost the writes. Two dies, the cache block on die 0, slow main-area
/// programs (5 ms) and a quick erase (50 us): the SLC erase is held at its gate for the
/// folded programs on die 1 (like a GC erase, `Flash::erase`).
#[test]
fn a_cut_during_a_fold_keeps_every_durable_write() {
    let device = || {
        let mut c = small_slc(2, 1, 8);
        let overrides = c.device.overrides.as_mut().unwrap();
        overrides.insert(
            "timing".into(),
            toml::from_str(
                "slc_read_us = 10\nslc_program_us = 100\nprogram_us = 5000\nerase_us = 50\n",
            )
            .unwrap(),
        );
        c.ftl.payload = PayloadMode::Full;
        c.ftl.slc_cache.blocks = 1;
        let mut s = Ssd::new(c, 1).unwrap();
        s.start_power_trace().unwrap();
        // lpas 0..8 fill the block's 8 SLC pages (the slc preset: one bit per cell anyway)
        for lpa in 0..8u32 {
            let w = HostRequest::write(u64::from(lpa) * PAGE, PAGE);
            assert!(s.power_admit(&w, Some(&bytes(lpa))).unwrap());
            while s.power_step().unwrap().is_some() {}
        }
        assert!(s.power_admit(&HostRequest::flush(), None).unwrap());
        while s.power_step().unwrap().is_some() {}
        // lpa 8 folds lpas 0..8 out of the full block
        let w = HostRequest::write(8 * PAGE, PAGE);
        assert!(s.power_admit(&w, Some(&bytes(8))).unwrap());
        s
    };
    let mut steps = 0;
    let mut held = 0;
    loop {
        let mut s = device();
        let mut done = false;
        for _ in 0..steps {
            if s.power_step().unwrap().is_none() {
                done = true;
                break;
            }
        }
        held += s.erases_held();
        let cut = s.power_cut(&CutConfig::default()).unwrap();
        let r = s.recover_cut(&cut, RecoveryVariant::Correct);
        for lpa in 0..8u32 {
            assert_eq!(
                r.read(&cut, Lpa(lpa)),
                Some(&bytes(lpa)[..]),
                "lpa {lpa} after a cut {steps} steps into the fold"
            );
        }
        if done {
            break;
        }
        steps += 1;
        assert!(steps < 200, "the fold does not end");
    }
    assert!(steps > 5, "{steps} steps");
    // the SLC erase waited for the folded pages' programs on the other die
    assert!(held > 0);
}

/// Issue 34 (cases 35, 210 and 360 of seed 3 of `tail6_slc_cache_devices_keep_the_contract`):
/// a host write of an LPA the full cache block holds folds that block to make room, and the
/// new copy's SLC program comes after the block's erase (here into the same block: one cache
/// block, one die). The LPA's older copy in the block may be its last durable one, so the
/// fold must pass it down too and the erase wait for it. Before the fix the write forgot the
/// older copy first, the fold left it out, and a cut between the erase and the new program
/// lost the durable write (case 35; with an older main-area copy it came back instead: cases
/// 210 and 360).
#[test]
fn a_cut_after_a_fold_made_room_for_an_overwrite_keeps_the_old_copy() {
    let device = || {
        let mut c = small_slc(1, 1, 8);
        let overrides = c.device.overrides.as_mut().unwrap();
        overrides.insert(
            "timing".into(),
            toml::from_str("slc_read_us = 10\nslc_program_us = 100\n").unwrap(),
        );
        c.ftl.payload = PayloadMode::Full;
        c.ftl.slc_cache.blocks = 1;
        let mut s = Ssd::new(c, 1).unwrap();
        s.start_power_trace().unwrap();
        for lpa in 0..8u32 {
            let w = HostRequest::write(u64::from(lpa) * PAGE, PAGE);
            assert!(s.power_admit(&w, Some(&bytes(lpa))).unwrap());
            while s.power_step().unwrap().is_some() {}
        }
        assert!(s.power_admit(&HostRequest::flush(), None).unwrap());
        while s.power_step().unwrap().is_some() {}
        // lpa 3 again: the block is full, so the write folds it and takes its page 0
        let w = HostRequest::write(3 * PAGE, PAGE);
        assert!(s.power_admit(&w, Some(&bytes(100))).unwrap());
        s
    };
    let mut steps = 0;
    loop {
        let mut s = device();
        let mut done = false;
        for _ in 0..steps {
            if s.power_step().unwrap().is_none() {
                done = true;
                break;
            }
        }
        let cut = s.power_cut(&CutConfig::default()).unwrap();
        let r = s.recover_cut(&cut, RecoveryVariant::Correct);
        for lpa in 0..8u32 {
            let got = r.read(&cut, Lpa(lpa));
            let ok = got == Some(&bytes(lpa)[..]) || (lpa == 3 && got == Some(&bytes(100)[..]));
            assert!(ok, "lpa {lpa} after a cut {steps} steps into the write");
        }
        if done {
            break;
        }
        steps += 1;
        assert!(steps < 200, "the write does not end");
    }
    assert!(steps > 5, "{steps} steps");
}

/// Issue 34 (`nandlab crash --controller` cases 1432, 6014 and 7010 of seed 1): the same
/// overwrite as above on two dies. The write takes page 0 of the block it folds, so the LPA's
/// newest copy is named by a slot of the block being erased; the erase must still wait for
/// the copy the fold passed down, whose main-area program may run on the other die (slow
/// programs here: 5 ms against a 50 us erase). Before the fix the erase waited for nothing
/// (the slot is on its own die), ran first, and a cut between the erase and the new copy's
/// SLC program lost the durable write (or brought back an older main-area copy: case 1432).
/// The block's only live page is lpa 3's (lpa 9's are trimmed), so the fold passes one page
/// down; an earlier fold of one page (`shift`) sends it to the other die.
#[test]
fn a_fold_for_an_overwrite_waits_for_the_old_copy_on_another_die() {
    let step = |s: &mut Ssd, r: HostRequest, data: Option<Vec<u8>>| {
        assert!(s.power_admit(&r, data.as_deref()).unwrap());
        while s.power_step().unwrap().is_some() {}
    };
    let fill = |s: &mut Ssd, first: u32, nines: u32| {
        let w = |lpa: u64| HostRequest::write(lpa * PAGE, PAGE);
        step(s, w(u64::from(first)), Some(bytes(first)));
        for i in 0..nines {
            step(s, w(9), Some(bytes(20 + i)));
        }
        step(s, HostRequest::trim(9 * PAGE, PAGE), None);
        step(s, HostRequest::flush(), None);
    };
    let device = |shift: bool| {
        let mut c = small_slc(2, 1, 8);
        let overrides = c.device.overrides.as_mut().unwrap();
        overrides.insert(
            "timing".into(),
            toml::from_str(
                "slc_read_us = 10\nslc_program_us = 100\nprogram_us = 5000\nerase_us = 50\n",
            )
            .unwrap(),
        );
        c.ftl.payload = PayloadMode::Full;
        c.ftl.slc_cache.blocks = 1;
        let mut s = Ssd::new(c, 1).unwrap();
        s.start_power_trace().unwrap();
        if shift {
            // lpa 5 alone live in the full block: the next write folds it to the main area
            fill(&mut s, 5, 7);
        }
        fill(&mut s, 3, 7);
        // lpa 3 again: the block is full, so the write folds it and takes its page 0
        let w = HostRequest::write(3 * PAGE, PAGE);
        assert!(s.power_admit(&w, Some(&bytes(100))).unwrap());
        s
    };
    let mut held = 0;
    for shift in [false, true] {
        let mut steps = 0;
        loop {
            let mut s = device(shift);
            let mut done = false;
            for _ in 0..steps {
                if s.power_step().unwrap().is_none() {
                    done = true;
                    break;
                }
            }
            held += s.erases_held();
            let cut = s.power_cut(&CutConfig::default()).unwrap();
            let r = s.recover_cut(&cut, RecoveryVariant::Correct);
            let three = r.read(&cut, Lpa(3));
            assert!(
                three == Some(&bytes(3)[..]) || three == Some(&bytes(100)[..]),
                "lpa 3 after a cut {steps} steps into the write (shift {shift})"
            );
            if shift {
                assert_eq!(r.read(&cut, Lpa(5)), Some(&bytes(5)[..]), "{steps} steps");
            }
            if done {
                break;
            }
            steps += 1;
            assert!(steps < 200, "the write does not end");
        }
    }
    // the SLC erase waited for the folded page on the other die
    assert!(held > 0);
}
