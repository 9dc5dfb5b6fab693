//! Placement ids (issue 12 item 4): hot and cold data written under separate ids land in
//! separate blocks, so GC finds hot blocks nearly empty and WAF drops against one id; the
//! report gives WAF and the valid-page distribution per id; a bad id is an error.

mod common;

use nandlab_core::SimRng;
use nandlab_ftl::{HostOp, HostRequest, Lpa, Ssd, SsdConfig};
use std::collections::HashSet;

const PAGE: u64 = 512;

fn config(ids: u16) -> SsdConfig {
    let mut c = common::slc(1, 2, 64, 32, PAGE as u32);
    c.ftl.op_fraction = 0.25;
    c.ftl.gc.threshold_blocks = 3;
    c.ftl.mapping.placement_ids = ids;
    c
}

/// A fill, then 90 % of writes to the hottest 10 % of the logical pages (id 1 when separated),
/// 10 % to the rest (id 0).
fn hot_cold(ssd: &Ssd, separate: bool, writes: usize) -> Vec<HostRequest> {
    let lpas = ssd.logical_pages();
    let hot = lpas / 10;
    let mut out: Vec<HostRequest> = (0..lpas)
        .map(|l| {
            let id = u16::from(separate && l < hot);
            HostRequest::new(HostOp::Write, l * PAGE, PAGE).placed(id)
        })
        .collect();
    let mut rng = SimRng::seed_from_u64(5);
    for _ in 0..writes {
        let (lpa, id) = if rng.below(10) < 9 {
            (rng.below(hot), 1)
        } else {
            (hot + rng.below(lpas - hot), 0)
        };
        out.push(
            HostRequest::new(HostOp::Write, lpa * PAGE, PAGE).placed(if separate { id } else { 0 }),
        );
    }
    out
}

#[test]
fn separating_hot_and_cold_data_lowers_waf() {
    let mut one = Ssd::new(config(1), 1).unwrap();
    let requests = hot_cold(&one, false, 40_000);
    let mixed = one.run(requests).unwrap();
    let mut two = Ssd::new(config(2), 1).unwrap();
    let requests = hot_cold(&two, true, 40_000);
    let split = two.run(requests).unwrap();
    eprintln!(
        "hot/cold WAF: one id {:.3}, two ids {:.3} (hot {:.3}, cold {:.3})",
        mixed.waf, split.waf, split.placement[1].waf, split.placement[0].waf
    );
    assert!(mixed.placement.is_empty(), "no per-id section with one id");
    assert!(
        split.waf < mixed.waf * 0.85,
        "separated WAF {} vs mixed {}",
        split.waf,
        mixed.waf
    );
    // per-id figures add up to the device's
    assert_eq!(split.placement.len(), 2);
    let host: u64 = split.placement.iter().map(|p| p.host_pages_written).sum();
    let flash: u64 = split
        .placement
        .iter()
        .map(|p| p.flash_pages_programmed)
        .sum();
    assert_eq!(host, split.counters.host_pages_written);
    assert_eq!(flash, split.counters.flash_pages_programmed);
    let hot = &split.placement[1];
    assert!(hot.waf >= 1.0 && hot.blocks > 0);
    assert_eq!(hot.valid_pages_histogram.len(), 33);
    assert_eq!(hot.valid_pages_histogram.iter().sum::<u32>(), hot.blocks);
    two.check_consistency().unwrap();
    // every block holds one id's data only
    let hot_lpas = two.logical_pages() / 10;
    let mut kinds: std::collections::HashMap<u32, HashSet<bool>> = Default::default();
    for l in 0..two.logical_pages() as u32 {
        if let Some(ppa) = two.locate(Lpa(l)) {
            kinds
                .entry(ppa.0 / 32)
                .or_default()
                .insert(u64::from(l) < hot_lpas);
        }
    }
    assert!(
        kinds.values().all(|k| k.len() == 1),
        "a block mixes hot and cold data"
    );
}

#[test]
fn placement_errors_name_the_id_or_key() {
    let mut ssd = Ssd::new(config(2), 1).unwrap();
    let bad = HostRequest::new(HostOp::Write, 0, PAGE).placed(2);
    let e = ssd.execute(&bad, None).unwrap_err().to_string();
    assert!(
        e.contains("placement id 2") && e.contains("placement_ids"),
        "{e}"
    );
    let mut c = config(4);
    c.ftl.gc.threshold_blocks = 3;
    let e = Ssd::new(c, 1).unwrap_err().to_string();
    assert!(e.contains("gc_threshold_blocks"), "{e}");
    let mut c = config(2);
    c.ftl.mapping.kind = nandlab_ftl::MappingKind::Hybrid;
    let e = Ssd::new(c, 1).unwrap_err().to_string();
    assert!(e.contains("placement_ids"), "{e}");
}
