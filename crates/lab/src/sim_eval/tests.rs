//! Harness runs at small scale: results stay correct, and the two read paths differ the way
//! paper 004 §VII describes (shape only; the figures are the experiments' job).

use super::*;
use nandlab_nand::preset;

fn small(mode: EvalMode, read: f64, coverage: f64, distribution: YcsbDistribution) -> EvalResult {
    let config = EvalConfig {
        leaves: 200,
        fill_slots: 100,
        queries: 3000,
        ..EvalConfig::new(mode, read, coverage, distribution)
    };
    run_eval(&preset("sim2024").unwrap(), &config).unwrap()
}

#[test]
fn sim_reads_are_correct_and_move_less_than_full_pages() {
    let sim = small(EvalMode::Sim, 1.0, 0.0, YcsbDistribution::Uniform);
    let base = small(EvalMode::Baseline, 1.0, 0.0, YcsbDistribution::Uniform);
    assert_eq!(sim.wrong_values, 0);
    assert_eq!(sim.chip_lookups, sim.queries_measured);
    assert_eq!(base.full_page_reads, 2 * base.queries_measured);
    // 64 B bitmap + 64 B chunk per read against two 4 KiB pages
    assert_eq!(sim.host_bus_bytes, 128 * sim.queries_measured);
    assert_eq!(base.host_bus_bytes, 8192 * base.queries_measured);
    assert!(sim.internal_bus_bytes * 8 < base.internal_bus_bytes);
    assert!(sim.read_latency_ns[1] < base.read_latency_ns[1]);
    assert!(sim.read_latency_ns.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn write_heavy_mixes_favour_sim_and_cached_read_only_favours_the_baseline() {
    let sim = small(EvalMode::Sim, 0.2, 0.25, YcsbDistribution::Uniform);
    let base = small(EvalMode::Baseline, 0.2, 0.25, YcsbDistribution::Uniform);
    assert!(
        sim.write_backs < base.write_backs,
        "{} vs {}",
        sim.write_backs,
        base.write_backs
    );
    assert!(sim.qps > base.qps, "{} vs {}", sim.qps, base.qps);
    let sim = small(
        EvalMode::Sim,
        1.0,
        0.5,
        YcsbDistribution::Zipf { alpha: 0.9 },
    );
    let base = small(
        EvalMode::Baseline,
        1.0,
        0.5,
        YcsbDistribution::Zipf { alpha: 0.9 },
    );
    assert!(base.cache_served_reads > 0);
    assert!(base.qps > sim.qps, "{} vs {}", base.qps, sim.qps);
}

#[test]
fn same_config_same_result() {
    let a = small(
        EvalMode::Sim,
        0.6,
        0.1,
        YcsbDistribution::Zipf { alpha: 0.5 },
    );
    let b = small(
        EvalMode::Sim,
        0.6,
        0.1,
        YcsbDistribution::Zipf { alpha: 0.5 },
    );
    assert_eq!(a, b);
}

#[test]
fn bad_configs_name_their_argument() {
    let mut config = EvalConfig::new(EvalMode::Sim, 1.5, 0.0, YcsbDistribution::Uniform);
    let err = run_eval(&preset("sim2024").unwrap(), &config).unwrap_err();
    assert!(err.to_string().contains("read_share"), "{err}");
    config.read_share = 1.0;
    config.fill_slots = 600;
    let err = run_eval(&preset("sim2024").unwrap(), &config).unwrap_err();
    assert!(err.to_string().contains("fill_slots"), "{err}");
}

#[test]
fn full_page_reads_in_sim_mode_behave_like_the_baseline() {
    let run = |share: f64| {
        let config = EvalConfig {
            leaves: 200,
            fill_slots: 100,
            queries: 3000,
            sim_read_share: share,
            ..EvalConfig::new(EvalMode::Sim, 0.5, 0.25, YcsbDistribution::Uniform)
        };
        run_eval(&preset("sim2024").unwrap(), &config).unwrap()
    };
    let base = small(EvalMode::Baseline, 0.5, 0.25, YcsbDistribution::Uniform);
    let none = run(0.0);
    assert_eq!(
        (none.qps, none.write_backs, none.chip_lookups),
        (base.qps, base.write_backs, 0)
    );
    let half = run(0.5);
    assert!(half.chip_lookups > 0 && half.full_page_reads > 0);
    assert!(none.qps < half.qps && half.qps < run(1.0).qps);
}
