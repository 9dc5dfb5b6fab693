//! `zns-block-tax` and `fdp-cachelib` at quick scale (issue 29 item 5): the shape of Bjørling
//! et al. (ATC'21, Fig. 1) and of Allison et al. (EuroSys'25), with the paper values beside.

use nandlab_lab::experiments::{ExperimentResult, RunOptions, Scale, reproduce};

fn quick(id: &str) -> (ExperimentResult, String) {
    let out = std::env::temp_dir().join(format!("nandlab-{id}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let options = RunOptions {
        scale: Scale::Quick,
        ..RunOptions::default()
    };
    let r = reproduce(id, &options, &out).unwrap();
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    (r, summary)
}

fn metric(r: &ExperimentResult, name: &str) -> f64 {
    *r.metrics
        .get(name)
        .unwrap_or_else(|| panic!("metric {name} missing"))
}

#[test]
fn zns_writes_without_gc_and_outruns_the_block_interface() {
    let (r, summary) = quick("zns-block-tax");
    let m = |name: &str| metric(&r, name);
    // no device GC on zones: every page programmed once; the block SSDs pay for GC, more
    // with less over-provisioning
    assert_eq!(m("waf_zns"), 1.0);
    assert!(m("waf_block28") > 1.1, "{}", m("waf_block28"));
    assert!(m("waf_block7") > m("waf_block28") + 0.2);
    // write throughput: ZNS > block 28 % OP > block 7 % OP (Fig. 1's order)
    assert!(m("write_mib_s_zns") > m("write_mib_s_block28"));
    assert!(m("write_mib_s_block28") > m("write_mib_s_block7"));
    assert!(m("write_throughput_x_zns_vs_block7") > 1.3);
    assert!(summary.contains("\"paper_write_throughput_zns_over_block\": 2.0"));
    // the zones were rewritten: every zone reset at least once, each erase a reset's
    let rows = &r.curves[0].rows;
    assert_eq!(rows.len(), 3);
    let zns = rows.iter().find(|row| row[0] == "zns".into()).unwrap();
    let (erases, resets) = (&zns[8], &zns[9]);
    let n = |v: &nandlab_lab::experiments::CurveValue| match v {
        nandlab_lab::experiments::CurveValue::Number(x) => *x,
        other => panic!("{other:?}"),
    };
    // 128 zones of 4 blocks; 2 passes: every zone reset once, 4 erases a reset
    assert_eq!(n(resets), 128.0);
    assert_eq!(n(erases), 4.0 * n(resets));
}

#[test]
fn fdp_separates_the_small_object_cache_and_keeps_waf_near_one() {
    let (r, summary) = quick("fdp-cachelib");
    let m = |name: &str| metric(&r, name);
    // with half the device unused, no point needs GC
    assert_eq!(m("waf_nofdp_util50"), 1.0);
    assert_eq!(m("waf_fdp_util50"), 1.0);
    // at high utilization the intermixed streams cost GC; FDP keeps most of it away
    for util in ["90", "100"] {
        let (off, on) = (
            m(&format!("waf_nofdp_util{util}")),
            m(&format!("waf_fdp_util{util}")),
        );
        assert!(off > on + 0.2, "util {util}: {off} without FDP, {on} with");
    }
    assert!(m("waf_fdp_util90") < 1.15, "{}", m("waf_fdp_util90"));
    assert!(m("waf_nofdp_util100") > m("waf_nofdp_util90"));
    assert!(summary.contains("\"paper_dlwa_fdp\": 1.0"));
}
