//! Read scheduling against programs and erases (issue 34 item 1, SPEC C1): `ftl.read_scheduling`
//! = `priority` sends a host read of a programmed page to the chip ahead of the ops waiting in
//! its die's queue; `suspend` also lets it suspend a program or erase under way (the chip's
//! `[suspend]` timing). The FTL's decisions are the same under every policy; only the order
//! the chip runs the ops, hence the read tail, changes.

mod common;

use nandlab_ftl::{GcScheduling, Lpa, PayloadMode, ReadScheduling, Ssd, SsdReport};

const PAGE: u64 = 4096;

/// The slc preset (25 µs read, 250 µs program, 1.5 ms erase) with suspend timing: 5 µs to
/// suspend a program, 20 µs an erase, 10 µs resume penalty, 4 reads per suspended op.
fn device(reads: ReadScheduling) -> nandlab_ftl::SsdConfig {
    let mut c = common::slc(2, 2, 32, 64, PAGE as u32);
    let overrides = c.device.overrides.as_mut().unwrap();
    overrides.insert(
        "suspend".into(),
        toml::from_str::<toml::Table>(
            "program_suspend_us = 5.0\nerase_suspend_us = 20.0\nresume_penalty_us = 10.0\n\
             max_suspended_reads = 4\nsource = \"test values\"\n",
        )
        .unwrap()
        .into(),
    );
    c.ftl.scheduler.reads = reads;
    c.ftl.gc.scheduling = GcScheduling::Interleaved;
    c.ftl.gc.threshold_blocks = 6;
    c.ftl.op_fraction = 0.5;
    c.ftl.payload = PayloadMode::Full;
    c
}

fn run(reads: ReadScheduling) -> (Ssd, SsdReport) {
    // write-heavy: one read in three
    common::steady_mix(device(reads), PAGE, 3)
}

#[test]
fn reads_go_first_and_suspend_programs_and_erases() {
    let (fifo, f) = run(ReadScheduling::Fifo);
    let (priority, p) = run(ReadScheduling::Priority);
    let (suspend, s) = run(ReadScheduling::Suspend);
    assert!(f.counters.erases > 200, "steady-state GC: {:?}", f.counters);
    // the same functional decisions
    assert_eq!(f.counters, p.counters);
    assert_eq!(f.counters, s.counters);
    for lpa in (0..fifo.logical_pages() as u32).map(Lpa) {
        assert_eq!(fifo.locate(lpa), priority.locate(lpa), "{lpa}");
        assert_eq!(fifo.locate(lpa), suspend.locate(lpa), "{lpa}");
    }
    eprintln!(
        "read p50/p99/p99.9/max us: fifo {:.0}/{:.0}/{:.0}/{:.0}, priority {:.0}/{:.0}/{:.0}/{:.0}, \
         suspend {:.0}/{:.0}/{:.0}/{:.0}; write p99 {:.0}/{:.0}/{:.0}; reads ahead {} / {}, suspended {}",
        f.read.lat.p50_us,
        f.read.lat.p99_us,
        f.read.lat.p999_us,
        f.read.lat.max_us,
        p.read.lat.p50_us,
        p.read.lat.p99_us,
        p.read.lat.p999_us,
        p.read.lat.max_us,
        s.read.lat.p50_us,
        s.read.lat.p99_us,
        s.read.lat.p999_us,
        s.read.lat.max_us,
        f.write.lat.p99_us,
        p.write.lat.p99_us,
        s.write.lat.p99_us,
        p.chip_ops.reads_ahead,
        s.chip_ops.reads_ahead,
        s.chip_ops.suspended_reads,
    );
    assert_eq!(f.chip_ops.reads_ahead, 0);
    assert_eq!(f.chip_ops.suspended_reads + p.chip_ops.suspended_reads, 0);
    assert!(p.chip_ops.reads_ahead > 0 && s.chip_ops.suspended_reads > 0);
    assert!(p.read.lat.p99_us <= f.read.lat.p99_us);
    assert!(s.read.lat.p99_us < p.read.lat.p99_us);
    // reads of pages whose GC move had not run are served from the move's source, so no read
    // waits behind a queue of GC work: p99.9 1.9 ms under every policy (45 / 42 / 42 ms when
    // such a read waited for its page's move and everything queued before it)
    assert!(f.chip_ops.reads_of_moving_pages > 0);
    for r in [&f, &p, &s] {
        assert!(
            r.read.lat.p999_us < 5_000.0,
            "read p99.9 {}",
            r.read.lat.p999_us
        );
    }
    suspend.check_consistency().unwrap();
}
