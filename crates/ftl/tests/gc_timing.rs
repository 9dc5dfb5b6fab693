//! GC latency emerges from the chip model: t_GC = N_valid · (t_read + t_write) + t_erase
//! (paper 000 §2), checked on a one-plane device with hand-computed `slc` numbers.

mod common;

use nandlab_core::SimTime;
use nandlab_ftl::{GcPolicy, HostRequest, Ssd};

/// `slc` preset, 2 KiB pages, tWC 25 ns, 25 ns per byte:
/// read    = CLE + 5 ALE + CLE (175 ns) + tR 25 µs + 2,048 B × 25 ns (51.2 µs)   =   76.375 µs
/// program = CLE + 5 ALE (150 ns) + 51.2 µs + CLE (25 ns) + tPROG 250 µs + status 50 ns
///                                                                              =  301.425 µs
/// erase   = CLE + 3 ALE + CLE (125 ns) + tBERS 1,500 µs + status 50 ns          = 1500.175 µs
const READ_NS: u64 = 76_375;
const PROGRAM_NS: u64 = 301_425;
const ERASE_NS: u64 = 1_500_175;

/// One plane, 10 blocks of 4 pages, 20 logical pages, FIFO GC with threshold 3.
/// Fill 20 pages (blocks 0–4), then 8 overwrites of LPA 0 (blocks 5, 6) and 4 more (block 7):
/// the 13th overwrite finds 2 free blocks (< 3), so GC collects block 0 (oldest, 3 valid
/// pages left) and then block 5 (no valid page).
fn run(copyback: bool) -> nandlab_ftl::SsdReport {
    let mut c = common::slc(1, 1, 10, 4, 2048);
    c.ftl.op_fraction = 1.0;
    c.ftl.gc.policy = GcPolicy::Fifo;
    c.ftl.gc.threshold_blocks = 3;
    c.ftl.gc.copyback = copyback;
    let mut ssd = Ssd::new(c, 1).unwrap();
    assert_eq!(ssd.logical_pages(), 20);
    for lpa in 0..20 {
        ssd.execute(&HostRequest::write(lpa * 2048, 2048), None)
            .unwrap();
    }
    ssd.reset_measurement();
    for _ in 0..13 {
        ssd.execute(&HostRequest::write(0, 2048), None).unwrap();
        ssd.drain().unwrap();
    }
    ssd.check_consistency().unwrap();
    ssd.report()
}

#[test]
fn gc_latency_is_n_valid_times_read_plus_write_plus_erase() {
    let r = run(false);
    assert_eq!(r.counters.gc_runs, 2);
    assert_eq!(r.counters.gc_page_copies, 3);
    assert_eq!(r.counters.erases, 2);
    let t_gc = 3 * (READ_NS + PROGRAM_NS) + ERASE_NS;
    assert_eq!(r.gc_latency.count, 2);
    assert_eq!(r.gc_latency.min_us, t_gc as f64 / 1e3);
    // the second victim has no valid page: its erase waits behind the first job on the die
    assert_eq!(r.gc_latency.max_us, (t_gc + ERASE_NS) as f64 / 1e3);
    // paper 000 §2 at its own numbers: N_valid > ~100 gives t_GC over 100 ms
    let paper = |n: u64| SimTime::from_us(n * (100 + 1_600) + 8_500);
    assert!(paper(100) > SimTime::from_ms(100));
}

#[test]
fn copyback_gc_moves_no_data_over_the_bus_and_is_faster() {
    let legacy = run(false);
    let cb = run(true);
    assert_eq!(cb.counters.copybacks, 3);
    assert_eq!(legacy.counters.copybacks, 0);
    // copyback: 00h-addr-35h, tR, 85h-addr-10h, tPROG, status: no 2 × 51.2 µs transfers
    assert!(cb.gc_latency.min_us < legacy.gc_latency.min_us - 3.0 * 2.0 * 51.2 + 1.0);
    assert!(cb.energy.copyback_mj > 0.0);
}
