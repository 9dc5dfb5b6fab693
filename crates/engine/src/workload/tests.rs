use super::*;
use crate::engine::EngineConfig;
use crate::mem::MemDevice;
use nandlab_core::SimTime;

fn engine() -> Engine<MemDevice> {
    let device = MemDevice::new(512, 16, SimTime::from_us(100), SimTime::from_us(1_600)).unwrap();
    Engine::new(device, EngineConfig::conventional()).unwrap()
}

#[test]
fn mixes_are_validated() {
    assert!(QueryMix::new(0.5, 0.5, 0.1).is_err());
    assert!(QueryMix::new(-0.1, 0.6, 0.5).is_err());
    assert!(QueryMix::new(f64::NAN, 0.5, 0.5).is_err());
    let mix = QueryMix::constant_free_space(0.4).unwrap();
    assert_eq!((mix.insert, mix.delete), (0.3, 0.3));
    assert!(QueryMix::constant_free_space(1.5).is_err());
}

#[test]
fn fill_stops_at_the_target_free_space() {
    let mut engine = engine();
    let inserted = fill_to_free_space(&mut engine, 0.25).unwrap();
    // 16 pages * 4 rows of 119 B in 512 B pages = 64 slots; 75 % of them hold rows.
    assert_eq!(engine.slot_count(), 64);
    assert_eq!(inserted, 48);
    assert_eq!(engine.free_space_fraction(), 0.25);
    assert!(fill_to_free_space(&mut engine, 1.0).is_err());
}

#[test]
fn generated_deletes_and_updates_name_live_rows() {
    let mut engine = engine();
    let mut generator = QueryGenerator::new(QueryMix::new(0.0, 0.5, 0.5).unwrap(), 9).unwrap();
    // No live row yet: Delete and Update turn into Insert.
    assert_eq!(generator.next_query(&engine), Query::Insert);
    fill_to_free_space(&mut engine, 0.5).unwrap();
    for _ in 0..200 {
        let query = generator.next_query(&engine);
        match query {
            Query::Delete(row) | Query::Update(row) => assert!(engine.is_live(row)),
            Query::Insert => {}
        }
        engine.execute(query).unwrap();
    }
}

#[test]
fn run_metrics_cover_only_the_window() {
    let mut engine = engine();
    fill_to_free_space(&mut engine, 0.5).unwrap();
    let mut generator = QueryGenerator::new(QueryMix::table_i(), 4).unwrap();
    let metrics = run_queries(&mut engine, &mut generator, 10).unwrap();
    assert_eq!(metrics.queries.total().count, 10);
    assert_eq!(metrics.queries.total().time_total, metrics.elapsed);
    assert!(metrics.queries_per_s() > 0.0);
    assert_eq!(metrics.free_space_fraction_start, 0.5);
    assert!(metrics.erases_per_block.is_empty());
}

#[test]
fn drifting_protocol_refuses_a_mix_that_cannot_drift() {
    let mut engine = engine();
    let protocol = DriftingFreeSpace {
        free_space_fraction_start: 0.8,
        free_space_fraction_end: 0.2,
        mix: QueryMix::fig_17(),
        query_count_max: 100,
        seed: 1,
    };
    let error = protocol.run(&mut engine).unwrap_err();
    assert!(error.to_string().contains("mix.insert"), "{error}");
}

#[test]
fn a_hand_built_invalid_mix_is_refused_by_the_generator() {
    let mix = QueryMix {
        insert: 0.9,
        delete: 0.9,
        update: 0.0,
    };
    assert!(QueryGenerator::new(mix, 1).is_err());
}

#[test]
fn a_run_stops_when_keep_going_says_no_and_measures_what_ran() {
    let mut engine = engine();
    let protocol = ConstantFreeSpace {
        free_space_fraction: 0.5,
        update_fraction: 0.4,
        warmup_query_count: 10,
        query_count: 1_000,
        warmup_until_stationary: false,
        seed: 2,
    };
    // 32 fill inserts and 10 warm-up queries, then 5 measured queries
    let mut asked = 0;
    let metrics = protocol
        .run_while(&mut engine, &mut || {
            asked += 1;
            asked <= 32 + 10 + 5
        })
        .unwrap();
    assert_eq!(metrics.queries.total().count, 5);
    assert_eq!(asked, 32 + 10 + 5 + 1);
}

/// The steady-state warm-up runs whole windows, at least two (one WAF change needs two), and
/// then measures exactly as a plain warm-up of that many queries would.
#[test]
fn stationary_warm_up_runs_whole_windows_until_the_waf_settles() {
    use crate::mem::{MemFtl, MemFtlConfig};
    let ftl = || {
        let device = MemFtl::new(MemFtlConfig {
            page_size_bytes: 512,
            pages_per_block: 4,
            block_count: 24,
            spare_block_count: 4,
            ..MemFtlConfig::default()
        })
        .unwrap();
        Engine::new(device, EngineConfig::conventional()).unwrap()
    };
    let base = ConstantFreeSpace {
        free_space_fraction: 0.2,
        update_fraction: 0.4,
        warmup_query_count: 50,
        query_count: 200,
        warmup_until_stationary: true,
        seed: 3,
    };
    let steady = base.run(&mut ftl()).unwrap();
    let windows = (2..=protocol::MAX_WARMUP_WINDOWS).find(|&k| {
        let plain = ConstantFreeSpace {
            warmup_query_count: 50 * u64::from(k),
            warmup_until_stationary: false,
            ..base.clone()
        };
        plain.run(&mut ftl()).unwrap() == steady
    });
    assert!(windows.is_some(), "no whole number of windows matches");
}
