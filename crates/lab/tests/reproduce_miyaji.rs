//! Shape of paper 000's reference results (SPEC R-E1 … R-E5) in quick mode, on the full stack:
//! storage engine → FTL → NAND chip model.

use nandlab_lab::experiments::{self, ExperimentResult, RunOptions, Scale};

fn quick(id: &str) -> ExperimentResult {
    let dir = std::env::temp_dir().join(format!("nandlab-test-{id}-{}", std::process::id()));
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        ..RunOptions::default()
    };
    let result = experiments::reproduce(id, &options, &dir).unwrap();
    assert!(dir.join("summary.json").exists());
    std::fs::remove_dir_all(&dir).ok();
    result
}

/// R-E1 (paper 000 Fig. 12 at 20 % free: 3.8x q/s, -46 % energy, -62 % W/E) on the emulator
/// path (buffered host writes striped over four dies, reads suspending programs and erases,
/// foreground GC, per-request controller energy) of the paper's four 2-plane chips: all three
/// within 15 % of the paper's (3.31x, 13 % low; on 1-plane dies it was 3.16x, 17 % low:
/// docs/experiments.md); the curves meet at 80 %
/// free as the paper's do; on the pure-chip path all three follow the same flash-op counts.
#[test]
fn r_e1_codesign_is_ahead_at_20_percent_free_space_and_the_gap_closes() {
    let r = quick("miyaji-freespace");
    for (key, paper, within) in [
        ("speedup_at_20pct", 3.8, 0.15),
        ("energy_reduction_at_20pct", 0.46, 0.15),
        ("we_reduction_at_20pct", 0.62, 0.15),
    ] {
        let v = r.get(key);
        assert!(
            (v / paper - 1.0).abs() < within,
            "{key} = {v}: {:?}",
            r.metrics
        );
    }
    // the gap closes as free space grows: at 80 % the engines run within 10 % of each other
    assert!(r.get("speedup_at_80pct") < r.get("speedup_at_50pct"));
    assert!(r.get("speedup_at_50pct") < r.get("speedup_at_20pct"));
    assert!(r.get("speedup_at_80pct") < 1.1, "{:?}", r.metrics);
    // the paper's protocol is already the steady state (first-fit conventional insert): the
    // point warmed up until the WAF changes < 5 % per window gives the same gain within 5 %
    let steady = r.get("speedup_at_20pct_steady");
    assert!(
        (steady / r.get("speedup_at_20pct") - 1.0).abs() < 0.05,
        "{:?}",
        r.metrics
    );
    // pure-chip path: speed-up, energy and W/E ratios all come from the flash-op counts
    let speedup = r.get("speedup_at_20pct_pure_chip");
    for key in [
        "energy_reduction_at_20pct_pure_chip",
        "we_reduction_at_20pct_pure_chip",
    ] {
        let as_ratio = 1.0 / (1.0 - r.get(key));
        assert!(
            (as_ratio / speedup - 1.0).abs() < 0.05,
            "{key}: {:?}",
            r.metrics
        );
    }
    // page-copy-less GC: the co-designed engine copies (nearly) nothing, the conventional a lot
    let co = r.get("page_copies_codesign_20pct");
    let conv = r.get("page_copies_conventional_20pct");
    assert!(
        co * 20.0 < conv,
        "co-design {co} vs conventional {conv} page copies"
    );
    // labelled extra: the §4.1 spread layout on the emulator path copies nothing either and
    // keeps the W/E gain
    assert_eq!(r.get("page_copies_codesign_20pct_rotate_pages"), 0.0);
    let we = r.get("we_reduction_at_20pct_rotate_pages");
    assert!((we / 0.62 - 1.0).abs() < 0.15, "{:?}", r.metrics);
}

/// R-E5 (paper 000 Fig. 14) on the paper's FTL (one GC stream, the one block erased next as the
/// hint): IAA alone gains nothing (with the §4.1 spread fill every logical page is valid and
/// in-place updates scatter invalid pages: it loses), U2DI alone loses a little, both together
/// give the gain.
#[test]
fn r_e5_iaa_and_u2di_are_needed_together() {
    let r = quick("miyaji-ablation");
    let both = r.get("speedup_both");
    assert!((2.0..3.0).contains(&both), "{:?}", r.metrics);
    assert!(r.get("speedup_iaa_only") < 1.1, "{:?}", r.metrics);
    assert!(r.get("speedup_u2di_only") < 1.0, "{:?}", r.metrics);
    // page-copy-less GC only with both
    assert_eq!(r.get("page_copies_both"), 0.0, "{:?}", r.metrics);
    // the labelled extra FTL (GC per plane, every plane's victim in the hint) still needs both
    assert!(
        r.get("speedup_both_plane_gc_all_planes_hint")
            > 1.5 * r.get("speedup_iaa_only_plane_gc_all_planes_hint"),
        "{:?}",
        r.metrics
    );
}

/// R-E2 (paper 000 Table I: 429 -> 558 q/s, 412 -> 293 W/E) on the paper's FTL: with the §4.1
/// layout (rows spread over every page, the LPA rotation as the fallback) the co-designed
/// engine's GC copies nothing (WAF 1.00) and both engines' q/s and W/E cycles are within 15 %
/// of the paper's; the co-design is ahead on every measure.
#[test]
fn r_e2_drifting_free_space_favours_codesign() {
    let r = quick("miyaji-table1");
    assert!(r.get("qps_gain") > 0.0, "{:?}", r.metrics);
    assert!(r.get("energy_reduction") > 0.0, "{:?}", r.metrics);
    assert!(r.get("we_reduction") > 0.0, "{:?}", r.metrics);
    assert_eq!(r.get("queries_codesign"), r.get("queries_conventional"));
    for (key, paper) in [
        ("qps_conventional", 429.0),
        ("qps_codesign", 558.0),
        ("we_cycles_conventional", 412.0),
        ("we_cycles_codesign", 293.0),
    ] {
        let v = r.get(key);
        assert!(
            (v / paper - 1.0).abs() < 0.15,
            "{key} = {v}: {:?}",
            r.metrics
        );
    }
}

#[test]
fn r_e3_and_r_e4_codesign_ahead_at_every_block_size_and_worse_with_big_rows() {
    // R-E3 at constant capacity (128 MB, device-wide GC reserve): the gain grows with the
    // block size, 256 KB -> 512 KB -> 1 MB, in speed and in wear
    let b = quick("miyaji-blocksize");
    assert!(b.get("speedup_smallest_block") > 2.0, "{:?}", b.metrics);
    for key in ["speedup", "we_reduction", "energy_reduction"] {
        let at = |pages: u32| b.get(&format!("{key}_{pages}_pages"));
        assert!(at(16) < at(32) && at(32) < at(64), "{key}: {:?}", b.metrics);
    }
    let r = quick("miyaji-rowsize");
    assert!(
        r.get("speedup_119b") > r.get("speedup_2048b"),
        "{:?}",
        r.metrics
    );
    assert!(r.get("speedup_119b") > 1.0, "{:?}", r.metrics);
}

#[test]
fn r_e6_gc_takes_over_100_ms_beyond_100_valid_pages_and_follows_the_formula() {
    let r = quick("miyaji-gc-latency");
    assert!(r.get("t_gc_ms_at_100_valid") > 100.0, "{:?}", r.metrics);
    // the chip model adds bus transfers and command cycles to N(t_r + t_w) + t_e
    assert!(
        r.get("max_relative_gap_to_formula") < 0.15,
        "{:?}",
        r.metrics
    );
}

#[test]
fn fig_13_codesign_concentrates_invalid_pages_conventional_scatters_them() {
    let r = quick("miyaji-validmap");
    assert!(
        r.get("fully_valid_block_fraction_codesign") > 0.5,
        "{:?}",
        r.metrics
    );
    assert!(
        r.get("partly_valid_block_fraction_conventional") > 0.5,
        "{:?}",
        r.metrics
    );
    assert!(
        r.get("partly_valid_block_fraction_codesign")
            < r.get("partly_valid_block_fraction_conventional")
    );
}
