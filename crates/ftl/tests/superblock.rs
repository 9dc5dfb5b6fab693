//! Superblock write frontiers (issue 12 item 1, `ftl.superpage_planes`): host pages and GC
//! moves fill one block per plane of a die in lockstep, so pages decided in different requests
//! (and GC moves) sit at one page offset on the planes of a die and the scheduler merges them,
//! also when they were already queued on the die, into multiplane programs (and reads).

mod common;

use nandlab_ftl::{HostOp, HostRequest, PayloadMode, Ssd, SsdConfig};

/// The `slc` preset (2 KiB pages here) on one die of `planes` planes, superpages of `w` planes.
fn superblock_device(planes: u32, w: u32, queue_depth: u32) -> SsdConfig {
    let mut c = common::slc(1, planes, 32, 16, 2048);
    c.ftl.scheduler.multiplane = w > 1;
    c.ftl.gc.copyback = false;
    c.ftl.scheduler.superpage_planes = w;
    c.ftl.host.queue_depth = queue_depth;
    c
}

#[test]
fn queued_one_page_writes_form_a_two_plane_program_in_the_hand_computed_time() {
    // SLC preset: a program's setup is CLE 80h (25 ns) + 5 address cycles (125 ns) + 2,048 B x
    // 25 ns (51.2 us) + a confirm cycle (25 ns) = 51.375 us, then TIN 250 us and a status read
    // (50 ns). A 2-plane program sets up both planes (the first confirm, 11h, leaves the die
    // ready at once: tDBSY is not modelled) and runs one TIN.
    let (setup_us, tin_us, status_us) = (51.375, 250.0, 0.05);
    let single_us = setup_us + tin_us + status_us;
    let two_plane_us = 2.0 * setup_us + tin_us + status_us;
    // four one-page writes at time 0 (four requests, four decisions): the superblock puts them
    // at (plane 0, page 0), (1, 0), (0, 1), (1, 1). The first goes to the idle die at once; the
    // second waits for it, alone at its offset (the third is at page 1); the third and fourth
    // wait together and leave as one 2-plane program.
    let run = |w: u32| {
        let mut ssd = Ssd::new(superblock_device(2, w, 4), 1).unwrap();
        let writes = (0..4u64).map(|i| HostRequest::new(HostOp::Write, i * 2048, 2048));
        ssd.run(writes).unwrap()
    };
    let on = run(2);
    let expected = 2.0 * single_us + two_plane_us;
    assert!(
        (on.sim_time_us - expected).abs() < 1e-6,
        "{} vs {expected}",
        on.sim_time_us
    );
    assert_eq!(on.chip_ops.legacy, 2, "{:?}", on.chip_ops);
    assert_eq!(on.chip_ops.multiplane, 1);
    assert_eq!(on.chip_ops.multiplane_programs, 1);
    assert_eq!(on.chip_ops.multiplane_plane_ops, 2);
    assert_eq!(on.chip_ops.multiplane_from_queue, 1);
    // without superpages: four single-plane programs back to back
    let off = run(1);
    assert!((off.sim_time_us - 4.0 * single_us).abs() < 1e-6);
    assert_eq!(off.chip_ops.multiplane, 0);
}

#[test]
fn sequential_writes_and_reads_form_multiplane_ops() {
    let mut c = superblock_device(2, 2, 8);
    c.ftl.payload = PayloadMode::TimingOnly;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let pages = 200u64;
    let writes: Vec<HostRequest> = (0..pages)
        .map(|i| HostRequest::new(HostOp::Write, i * 2048, 2048))
        .collect();
    let w = ssd.run(writes).unwrap();
    let reads: Vec<HostRequest> = (0..pages)
        .map(|i| HostRequest::new(HostOp::Read, i * 2048, 2048))
        .collect();
    let r = ssd.run(reads).unwrap();
    eprintln!("writes {:?}\nreads {:?}", w.chip_ops, r.chip_ops);
    // consecutive pages sit at one offset on the two planes: most queued ones pair up
    assert!(
        w.chip_ops.multiplane_programs * 2 >= pages / 2,
        "{:?}",
        w.chip_ops
    );
    assert!(
        r.chip_ops.multiplane_reads * 2 >= pages / 2,
        "{:?}",
        r.chip_ops
    );
    assert_eq!(r.chip_ops.multiplane_programs, 0);
}

/// Random one-page overwrites on a full device: GC moves fill the GC superblock across the
/// planes, reads first, so their programs go out as 2-plane programs; every page still reads
/// back what was last written to it (full payload).
#[test]
fn gc_moves_form_multiplane_programs_and_keep_the_data() {
    let mut c = superblock_device(2, 2, 1);
    c.ftl.payload = PayloadMode::Full;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let pages = ssd.logical_capacity_bytes() / 2048;
    let content = |lpa: u64, version: u64| {
        let mut d = vec![0u8; 2048];
        d[..8].copy_from_slice(&lpa.to_le_bytes());
        d[8..16].copy_from_slice(&version.to_le_bytes());
        d
    };
    let mut version = vec![0u64; pages as usize];
    for lpa in 0..pages {
        let r = HostRequest::new(HostOp::Write, lpa * 2048, 2048);
        ssd.execute(&r, Some(&content(lpa, 0))).unwrap();
    }
    let scattered = |i: u64| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % pages;
    ssd.run(std::iter::empty::<HostRequest>()).unwrap();
    for i in 0..pages * 3 {
        let lpa = scattered(i);
        version[lpa as usize] += 1;
        let r = HostRequest::new(HostOp::Write, lpa * 2048, 2048);
        ssd.execute(&r, Some(&content(lpa, version[lpa as usize])))
            .unwrap();
    }
    let report = ssd.run(std::iter::empty::<HostRequest>()).unwrap();
    drop(report);
    let stats = ssd.nand().stats();
    assert_eq!(stats.kind(nandlab_nand::OpKind::Copyback).ops, 0);
    for lpa in 0..pages {
        let r = HostRequest::new(HostOp::Read, lpa * 2048, 2048);
        let e = ssd.execute(&r, None).unwrap();
        assert_eq!(e.data, content(lpa, version[lpa as usize]), "lpa {lpa}");
    }
    ssd.check_consistency().unwrap();
}

#[test]
fn gc_programs_merge_in_steady_state() {
    let mut c = superblock_device(4, 2, 8);
    c.ftl.payload = PayloadMode::TimingOnly;
    let mut ssd = Ssd::new(c, 1).unwrap();
    let pages = ssd.logical_capacity_bytes() / 2048;
    let scattered = |i: u64| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % pages;
    let requests: Vec<HostRequest> = (0..pages)
        .chain((0..pages * 4).map(scattered))
        .map(|lpa| HostRequest::new(HostOp::Write, lpa * 2048, 2048))
        .collect();
    let r = ssd.run(requests).unwrap();
    let gc_programs = r.counters.gc_page_copies;
    eprintln!("{:?}; {gc_programs} GC copies, WAF {}", r.chip_ops, r.waf);
    assert!(gc_programs > 0);
    assert_eq!(r.counters.copybacks, 0);
    // most GC programs (and some host programs) went out two planes at a time
    assert!(
        r.chip_ops.multiplane_programs * 2 > gc_programs * 3 / 4,
        "{:?}",
        r.chip_ops
    );
    ssd.check_consistency().unwrap();
}

#[test]
fn superpage_errors_name_the_key() {
    let bad = |edit: &dyn Fn(&mut SsdConfig)| {
        let mut c = superblock_device(2, 2, 1);
        edit(&mut c);
        let e = match Ssd::new(c, 1) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("ftl.superpage_planes"), "{e}");
        e
    };
    bad(&|c| c.ftl.scheduler.superpage_planes = 3);
    bad(&|c| c.ftl.scheduler.superpage_planes = 0);
    assert!(bad(&|c| c.ftl.gc.copyback = true).contains("copyback"));
    assert!(bad(&|c| c.ftl.scheduler.multiplane = false).contains("multiplane"));
    assert!(
        bad(&|c| c.ftl.mapping.kind = nandlab_ftl::MappingKind::Block).contains("page mapping")
    );
}
