//! `examples/ssd-read-reclaim.toml` (issue 34 item 4): read disturb triggers read reclaim, and
//! the reads that cross the ECC limit first are reported as uncorrectable, never returned as
//! good data.

use super::*;
use crate::control::Control;
use nandlab_ftl::{FtlError, HostRequest, PayloadMode, Ssd};

fn example() -> Stack {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ssd-read-reclaim.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    Stack::from_toml("ssd-read-reclaim.toml", &text, Path::new("."), &[]).unwrap()
}

/// The example's run: blocks are reclaimed, and uncorrectable reads are counted.
#[test]
fn the_read_reclaim_example_reclaims_and_reports_uncorrectable_reads() {
    let run = example().run(None, &Control::new()).unwrap();
    let StackOutcome::Ssd { run, .. } = &run.outcome else {
        panic!("not an SSD run");
    };
    let r = &run.report;
    let reclaim = r.read_reclaim.expect("read reclaim is on");
    assert!(
        reclaim.reclaims >= 2 && reclaim.pages_moved > 0,
        "{reclaim:?}"
    );
    assert!(r.counters.uncorrectable_host_reads > 0, "{:?}", r.counters);
}

/// The example's device with full payloads, its hot 2 MiB written and read 12,000 times: every
/// read returns the bytes last written or fails as uncorrectable (no read-retry), never other
/// bytes; blocks are reclaimed along the way and the reads after a reclaim succeed again.
#[test]
fn no_uncorrectable_read_of_the_example_device_is_returned_as_data() {
    let mut config = example().ssd_config();
    config.ftl.payload = PayloadMode::Full;
    let mut ssd = Ssd::new(config, 1).unwrap();
    let page = ssd.page_size_bytes() as u64;
    let pages = 256;
    let data = |p: u64| vec![(p as u8).wrapping_mul(37) ^ 0x5a; page as usize];
    for p in 0..pages {
        ssd.execute(&HostRequest::write(p * page, page), Some(&data(p)))
            .unwrap();
    }
    let mut rng = nandlab_core::SimRng::stream(1, "reclaim-example");
    let (mut good, mut failed) = (0, 0);
    for _ in 0..12_000 {
        let p = rng.below(pages);
        match ssd.execute(&HostRequest::read(p * page, page), None) {
            Ok(done) => {
                assert_eq!(done.data, data(p), "page {p}");
                good += 1;
            }
            Err(FtlError::Uncorrectable { .. }) => failed += 1,
            Err(e) => panic!("{e}"),
        }
    }
    let r = ssd.report();
    assert!(r.read_reclaim.unwrap().reclaims > 0, "{:?}", r.read_reclaim);
    assert!(failed > 0 && good > failed, "{good} good, {failed} failed");
    assert_eq!(r.counters.uncorrectable_host_reads, failed);
}
