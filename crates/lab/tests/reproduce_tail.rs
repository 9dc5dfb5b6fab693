//! `ctrl-tail`, `ctrl-slc-cliff` and `ctrl-dftl` at quick scale (issue 34 items 5, 3 and 2):
//! the shapes their docs (docs/experiments.md) claim.

use nandlab_lab::experiments::{ExperimentResult, RunOptions, Scale, reproduce};

fn run(id: &str) -> (ExperimentResult, String) {
    let out = std::env::temp_dir().join(format!("nandlab-tail6-{id}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let options = RunOptions {
        scale: Scale::Quick,
        ..RunOptions::default()
    };
    let r = reproduce(id, &options, &out).unwrap();
    assert!(!r.interrupted);
    // shown when a test fails
    eprintln!("{id}: {:#?}", r.metrics);
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
fn tail6_interleaved_gc_and_suspension_bound_the_tails_blocking_gc_leaves() {
    let (r, _) = run("ctrl-tail");
    let m = |name: &str| metric(&r, name);
    // blocking GC: the host queue waits behind whole GC rounds (seconds)
    assert!(m("read_p99_blocking_over_interleaved") > 100.0);
    assert!(m("write_p99_blocking_over_interleaved") > 100.0);
    // interleaved GC and suspension keep both tails within milliseconds
    for point in ["interleaved", "suspend", "slc", "slc_idle"] {
        assert!(m(&format!("read_p999_us_{point}")) < 20_000.0, "{point}");
        assert!(m(&format!("write_p999_us_{point}")) < 30_000.0, "{point}");
    }
    // suspension does not lengthen the read tail
    assert!(m("read_p99_us_suspend") <= m("read_p99_us_interleaved") * 1.05);
    // the SLC cache, full in steady state, folds a block inside host writes: its write tail is
    // longer; folding in idle time takes some of that out of the host's way
    assert!(m("write_p99_us_slc") > 2.0 * m("write_p99_us_suspend"));
    assert!(m("write_mean_us_slc_idle") < m("write_mean_us_slc"));
    assert!(m("write_p99_us_slc_idle") < m("write_p99_us_slc"));
    assert_eq!(r.curves[0].rows.len(), 5);
}

#[test]
fn tail6_slc_cache_write_bandwidth_falls_off_a_cliff_when_the_cache_is_full() {
    let (r, summary) = run("ctrl-slc-cliff");
    let m = |name: &str| metric(&r, name);
    for p in ["sequential", "random"] {
        // the cliff: after the cache fills, bandwidth drops by more than half
        assert!(
            m(&format!("write_after_over_before_{p}")) < 0.5,
            "{p}: {}",
            m(&format!("write_after_over_before_{p}"))
        );
        // before the cliff the cache writes faster than TLC alone
        assert!(
            m(&format!("write_mib_s_before_{p}")) > 2.0 * m(&format!("write_mib_s_tlc_only_{p}"))
        );
        // folding rewrites every page once more
        assert!(m(&format!("waf_slc_{p}")) > 1.5);
    }
    assert!(summary.contains("\"paper_seq_write_after_over_before\""));
    let bandwidth = r.curves.iter().find(|c| c.name == "bandwidth").unwrap();
    assert!(bandwidth.rows.len() > 40);
}

#[test]
fn tail6_dftl_response_time_falls_as_the_mapping_cache_grows() {
    let (r, _) = run("ctrl-dftl");
    let m = |name: &str| metric(&r, name);
    let sizes = [256, 512, 1024, 2048, 4096, 8192, 16384];
    for w in sizes.windows(2) {
        // a larger cache hits more and answers sooner (a small tolerance for noise)
        assert!(m(&format!("hit_ratio_{}", w[1])) > m(&format!("hit_ratio_{}", w[0])));
        assert!(m(&format!("mean_us_{}", w[1])) < m(&format!("mean_us_{}", w[0])) * 1.02);
    }
    // the smallest cache pays for translation I/O; the largest is near the all-in-DRAM table
    assert!(m("mean_over_all_in_dram_256") > 1.3);
    assert!(m("mean_over_all_in_dram_16384") < 1.1);
    assert_eq!(m("hit_ratio_all"), 1.0);
}
