//! Shape of the Search-in-Memory reference results (SPEC R-S1 … R-S4, paper 004) in quick
//! mode; R-S3 (Table I) exactly.

use nandlab_lab::experiments::{self, RunOptions, Scale};

fn quick(id: &str) -> experiments::ExperimentResult {
    let dir = std::env::temp_dir().join(format!("nandlab-test-{id}-{}", std::process::id()));
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        ..RunOptions::default()
    };
    let result = experiments::reproduce(id, &options, &dir).unwrap();
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(json["experiment"], id);
    for curve in &result.curves {
        assert!(dir.join(format!("{}.csv", curve.name)).exists());
    }
    std::fs::remove_dir_all(&dir).ok();
    result
}

#[test]
fn r_s3_table1_exactly_from_bus_rates_and_currents() {
    let r = quick("sim-table1");
    assert_eq!(r.get("io_bytes_sim"), 128.0);
    assert_eq!(r.get("io_bytes_full"), 8192.0);
    assert_eq!(r.get("energy_nj_sim").round(), 63.0);
    assert_eq!((r.get("energy_nj_full") / 10.0).round() * 10.0, 1400.0);
    assert!((r.get("latency_us_sim") - 3.2).abs() < 1e-9);
    assert_eq!((r.get("latency_us_full") * 10.0).round() / 10.0, 5.1);
    assert_eq!(r.get("host_bytes_reduction"), 64.0);
    assert_eq!(r.get("internal_bytes_reduction").floor(), 21.0);
    // the chip model moves the same host bytes; internally it adds command, address and ECC bytes
    assert_eq!(r.get("model_host_bytes_sim"), 128.0);
    assert_eq!(r.get("model_host_bytes_baseline"), 8192.0);
    assert!(r.get("model_internal_bytes_sim") * 15.0 < r.get("model_internal_bytes_baseline"));
}

#[test]
fn r_s1_write_heavy_mixes_gain_read_only_with_cache_loses() {
    let r = quick("sim-speedup");
    assert!(
        r.get("speedup_most_writes_cached_max") >= 3.0,
        "{:?}",
        r.metrics
    );
    assert!(
        r.get("readonly_cached_baseline_lead_max") > 0.08,
        "{:?}",
        r.metrics
    );
    // without a cache locality does not matter: both distributions give the same speed-up
    assert!(
        r.get("speedup_no_cache_max") - r.get("speedup_no_cache_min") < 0.2,
        "{:?}",
        r.metrics
    );
    assert!(r.get("speedup_no_cache_min") > 0.95, "{:?}", r.metrics);
}

#[test]
fn r_s2_energy_and_latency_fall_where_writes_meet_a_cache() {
    let e = quick("sim-energy");
    assert!(
        e.get("energy_saving_coverage_10_50_max") > 0.45,
        "{:?}",
        e.metrics
    );
    assert!(
        e.get("energy_saving_coverage_10_50_with_writes_min") > 0.0,
        "{:?}",
        e.metrics
    );
    let l = quick("sim-latency");
    assert!(l.get("median_reduction_max") > 0.3, "{:?}", l.metrics);
    assert!(l.get("p99_reduction_max") > 0.5, "{:?}", l.metrics);
    assert!(
        l.get("median_reduction_no_cache_min") > 0.0,
        "{:?}",
        l.metrics
    );
}

#[test]
fn r_s4_deadline_batching_pays_only_at_steep_zipf() {
    let r = quick("sim-batch");
    assert!(r.get("speedup_zipf1_3") > 2.0, "{:?}", r.metrics);
    assert!(r.get("speedup_uniform") < 1.1, "{:?}", r.metrics);
    assert!(r.get("speedup_zipf0_5") < 1.2, "{:?}", r.metrics);
    let merges: Vec<f64> = ["uniform", "zipf0_9", "zipf1_3"]
        .iter()
        .map(|d| r.get(&format!("merge_probability_{d}")))
        .collect();
    assert!(merges.windows(2).all(|w| w[0] < w[1]), "{merges:?}");
}

#[test]
fn r_s5_speedup_grows_with_the_share_of_sim_reads() {
    let r = quick("sim-fullpage");
    for label in [
        "write_dominant_uniform",
        "write_dominant_zipf0_9",
        "read_dominant_uniform",
        "read_dominant_zipf0_9",
    ] {
        assert_eq!(
            r.get(&format!("speedup_no_sim_{label}")),
            1.0,
            "all full-page reads = the baseline"
        );
        assert!(
            r.get(&format!("speedup_all_sim_{label}")) > 1.05,
            "{label}: {:?}",
            r.metrics
        );
    }
    assert_eq!(
        r.get("rising_write_dominant_uniform"),
        1.0,
        "{:?}",
        r.metrics
    );
    assert_eq!(
        r.get("rising_write_dominant_zipf0_9"),
        1.0,
        "{:?}",
        r.metrics
    );
}
