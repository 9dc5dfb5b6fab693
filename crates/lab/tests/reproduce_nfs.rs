//! Shape of the NANDFlashSim reference results (SPEC R-N1 … R-N6) in quick mode.

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
    for (k, v) in &result.metrics {
        assert_eq!(json[k].as_f64(), Some(*v), "{k} in summary.json");
    }
    for curve in &result.curves {
        assert!(dir.join(format!("{}.csv", curve.name)).exists());
    }
    std::fs::remove_dir_all(&dir).ok();
    result
}

#[test]
fn r_n1_reads_barely_scale_with_dies_writes_do() {
    let r = quick("nfs-dies");
    assert!(r.get("read_gain_4_to_8_dies") < 0.25, "{:?}", r.metrics);
    assert!(r.get("write_gain_4_to_8_dies") > 0.60, "{:?}", r.metrics);
    assert!(r.get("write_gain_1_to_8_dies") > 3.0 * r.get("read_gain_1_to_8_dies"));
}

#[test]
fn r_n1_reads_barely_scale_with_planes_or_page_size() {
    let p = quick("nfs-planes");
    assert!(p.get("read_gain_4_to_8_planes") < 0.25, "{:?}", p.metrics);
    assert!(p.get("write_gain_4_to_8_planes") > 0.5, "{:?}", p.metrics);
    let s = quick("nfs-pagesize");
    assert!(s.get("read_gain_4_to_8_kb") < 0.25, "{:?}", s.metrics);
    assert!(s.get("write_gain_4_to_8_kb") > s.get("read_gain_4_to_8_kb"));
}

#[test]
fn r_n2_writes_live_in_cell_stages_reads_on_the_bus() {
    let r = quick("nfs-breakdown");
    let w = r.get("write_cell_stage_fraction");
    assert!((0.93..=0.97).contains(&w), "{w}");
    assert!(r.get("read_tor_fraction") >= 0.50, "{:?}", r.metrics);
}

#[test]
fn r_n3_many_dies_beat_many_planes_on_disk_friendly_mixes() {
    let r = quick("nfs-scheduler");
    assert!(
        r.get("many_die_over_many_plane_iops_gain") > 0.2,
        "{:?}",
        r.metrics
    );
    // plane-first serves large sequential writes better than die-first (paper Fig. 22)
    assert!(
        r.get("plane_first_over_die_first_write_16kb") > 0.0,
        "{:?}",
        r.metrics
    );
}

#[test]
fn r_n4_table_iii_energies_within_five_percent() {
    let r = quick("nfs-energy");
    for (metric, paper) in [
        ("read_page_uj", 3.35),
        ("program_page_uj", 16.9),
        ("erase_block_uj", 132.2),
    ] {
        let v = r.get(metric);
        assert!(
            (v / paper - 1.0).abs() <= 0.05,
            "{metric} = {v}, paper {paper}"
        );
    }
    // reads split their energy between TON and TOR; TIR is about a tenth of a program
    assert!((0.4..0.6).contains(&r.get("read_tor_energy_fraction")));
    assert!((0.05..0.15).contains(&r.get("program_tir_energy_fraction")));
}

#[test]
fn r_n5_two_plane_cache_and_internal_moves_halve_migration_time_at_equal_energy() {
    let r = quick("nfs-migration");
    assert!(r.get("twox_internal_speedup") > 1.8, "{:?}", r.metrics);
    assert!(r.get("twox_cache_speedup") > 1.8, "{:?}", r.metrics);
    assert!(r.get("internal_speedup") > 1.0, "{:?}", r.metrics);
    assert!(r.get("twox_internal_speedup") >= r.get("twox_speedup"));
    assert!(r.get("energy_max_over_min") < 1.15, "{:?}", r.metrics);
}

#[test]
fn r_n6_slc_contends_more_than_mlc_and_contention_grows_with_dies() {
    let r = quick("nfs-contention");
    assert!(r.get("slc_contention_8_dies") > r.get("mlc_contention_8_dies"));
    assert!(r.get("slc_contention_8_dies") > r.get("slc_contention_1_die"));
    assert!(r.get("mlc_contention_8_dies") > r.get("mlc_contention_1_die"));
}

#[test]
fn experiments_are_deterministic() {
    let a = quick("nfs-contention");
    let b = quick("nfs-contention");
    assert_eq!(a.summary_json("x"), b.summary_json("x"));
}

#[test]
fn unknown_experiment_is_a_clear_error() {
    let err = experiments::find("nfs-nope").unwrap_err().to_string();
    assert!(err.contains("nfs-nope") && err.contains("--list"), "{err}");
}
