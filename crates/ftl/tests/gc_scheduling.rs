//! GC scheduling (issue 12 item 2): interleaved GC makes the same decisions as blocking GC
//! (same WAF, same mapping, same bytes), but lets host ops go first on each die, so the write
//! latency tail under steady-state GC shrinks; and reads stay correct while GC work waits.

mod common;

use nandlab_core::SimRng;
use nandlab_ftl::{GcScheduling, HostOp, HostRequest, Lpa, PayloadMode, Ssd};

const PAGE: u64 = 4096;

fn run(mode: GcScheduling) -> (Ssd, nandlab_ftl::SsdReport) {
    let mut c = common::slc(2, 2, 32, 64, PAGE as u32);
    c.ftl.gc.scheduling = mode;
    c.ftl.gc.threshold_blocks = 6;
    c.ftl.op_fraction = 0.5;
    c.ftl.payload = PayloadMode::Full;
    common::steady_mix(c, PAGE, 4)
}

#[test]
fn interleaved_gc_keeps_decisions_and_shortens_the_tail() {
    let (blocking, b) = run(GcScheduling::Blocking);
    let (interleaved, i) = run(GcScheduling::Interleaved);
    assert!(
        b.counters.gc_page_copies > 5_000,
        "steady-state GC: {:?}",
        b.counters
    );
    // the same functional decisions
    assert_eq!(b.waf, i.waf);
    assert_eq!(b.counters, i.counters);
    for lpa in (0..blocking.logical_pages() as u32).map(Lpa) {
        assert_eq!(blocking.locate(lpa), interleaved.locate(lpa), "{lpa}");
    }
    // a much shorter tail for host writes and reads (p99: this small device has few free
    // blocks, so at p99.9 a host write sometimes needs a block GC has not erased yet; the bench
    // device reaches 5.0 vs 1,616 ms at p99.9, examples/ssd-gc-interleaved.toml)
    eprintln!(
        "write p99 {:.0} / {:.0} us, p99.9: blocking {:.0} us, interleaved {:.0} us; read p99: {:.0} / {:.0} us",
        b.write.lat.p99_us,
        i.write.lat.p99_us,
        b.write.lat.p999_us,
        i.write.lat.p999_us,
        b.read.lat.p99_us,
        i.read.lat.p99_us
    );
    // (reads: 4x since GC erases wait for the programs on other dies that superseded their
    // pages, issue 14: read p99 13.8 ms with that ordering, 10.8 ms without, vs 67 ms blocking)
    assert!(i.write.lat.p99_us * 5.0 < b.write.lat.p99_us);
    assert!(i.read.lat.p99_us * 4.0 < b.read.lat.p99_us);
    interleaved.check_consistency().unwrap();
}

/// Full payload mode with GC work waiting behind host ops: every read returns the last write
/// (the data moved by GC and not yet programmed is read only after its move).
#[test]
fn reads_return_the_last_write_under_interleaved_gc() {
    let mut c = common::slc(1, 2, 24, 16, 512);
    c.ftl.gc.scheduling = GcScheduling::Interleaved;
    c.ftl.gc.threshold_blocks = 4;
    c.ftl.op_fraction = 0.6;
    c.ftl.payload = PayloadMode::Full;
    c.ftl.host.queue_depth = 8;
    let mut ssd = Ssd::new(c, 2).unwrap();
    let n = ssd.logical_pages() as u32;
    let mut model = vec![0u8; n as usize];
    let mut rng = SimRng::seed_from_u64(9);
    for step in 0..4000u32 {
        let lpa = rng.below(u64::from(n)) as u32;
        let r = HostRequest::new(HostOp::Write, u64::from(lpa) * 512, 512);
        let fill = (step % 251) as u8 + 1;
        ssd.execute(&r, Some(&[fill; 512])).unwrap();
        model[lpa as usize] = fill;
        let probe = rng.below(u64::from(n)) as u32;
        let read = HostRequest::new(HostOp::Read, u64::from(probe) * 512, 512);
        let got = ssd.execute(&read, None).unwrap().data;
        assert_eq!(
            got,
            vec![model[probe as usize]; 512],
            "lpa {probe} at step {step}"
        );
    }
    ssd.check_consistency().unwrap();
}
