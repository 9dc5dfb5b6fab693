//! The generators' first values for fixed draws and seeds equal values computed independently
//! from the reference algorithms' definitions (a separate Python transcription of YCSB's Java
//! code, kept in the comments of each test: `fnv`, `Tlr`, `zipf_vals` as written there).

use super::generators::{Discrete, SCRAMBLED_ZETAN};
use super::*;

/// Feeds a fixed list of `nextDouble` draws (and `nextLong` draws, if given).
struct FixedDraws {
    doubles: Vec<f64>,
    longs: Vec<i64>,
}

impl FixedDraws {
    fn doubles(doubles: &[f64]) -> Self {
        FixedDraws {
            doubles: doubles.iter().rev().copied().collect(),
            longs: Vec::new(),
        }
    }
}

impl UniformSource for FixedDraws {
    fn next_i64(&mut self) -> i64 {
        self.longs.pop().expect("test ran out of long draws")
    }
    fn next_f64(&mut self) -> f64 {
        self.doubles.pop().expect("test ran out of double draws")
    }
}

#[test]
fn fnvhash64_matches_an_independent_fnv1a_over_the_eight_little_endian_bytes() {
    // Python: h = 0xCBF29CE484222325; for each byte: h ^= b; h = h * 1099511628211 mod 2^64;
    // then Java's abs of the signed value.
    let expected = [
        (0, 6_284_781_860_667_377_211),
        (1, 8_517_097_267_634_966_620),
        (42, 55_488_592_825_689_361),
        (-1, 8_289_690_350_564_177_859),
        (123_456_789, 2_350_796_791_908_741_607),
    ];
    for (value, hash) in expected {
        assert_eq!(fnvhash64(value), hash, "fnvhash64({value})");
    }
}

#[test]
fn key_names_follow_build_key_name() {
    assert_eq!(key_name(0, 1, true), "user6284781860667377211");
    assert_eq!(key_name(42, 1, false), "user42");
    assert_eq!(key_name(42, 6, false), "user000042");
    assert_eq!(key_value(1, true), 8_517_097_267_634_966_620);
}

#[test]
fn java_tlr_first_draws_for_seed_42() {
    let mut rng = JavaTlr::new(42);
    let longs: Vec<i64> = (0..3).map(|_| rng.next_i64()).collect();
    assert_eq!(
        longs,
        [
            3_250_621_881_602_310_087,
            540_350_159_304_224_772,
            8_614_243_093_142_228_113
        ]
    );
    let mut rng = JavaTlr::new(42);
    let doubles: Vec<f64> = (0..3).map(|_| rng.next_f64()).collect();
    assert_eq!(
        doubles,
        [
            0.176_216_565_298_107_03,
            0.029_292_440_831_026_445,
            0.466_979_053_795_152_7
        ]
    );
}

#[test]
fn zipfian_values_for_fixed_draws() {
    // The constructor consumes the first draw (0.5), as the reference's does.
    let mut draws = FixedDraws::doubles(&[0.5, 0.01, 0.03, 0.2, 0.7, 0.999]);
    let mut zipf = Zipfian::new(0, 999, 0.99, &mut draws);
    let values: Vec<i64> = (0..5).map(|_| zipf.next_value(&mut draws)).collect();
    assert_eq!(values, [0, 0, 2, 103, 992]);
}

#[test]
fn scrambled_zipfian_first_values_for_tlr_seed_7() {
    let mut rng = JavaTlr::new(7);
    let mut scrambled = ScrambledZipfian::new(0, 999, &mut rng);
    let values: Vec<i64> = (0..5).map(|_| scrambled.next_value(&mut rng)).collect();
    assert_eq!(values, [896, 772, 801, 387, 645]);
    assert_eq!(SCRAMBLED_ZETAN, 26.469_028_201_783_02);
}

#[test]
fn skewed_latest_values_for_fixed_draws() {
    // Two constructor draws (the inner Zipfian's, then its own nextValue()).
    let mut draws = FixedDraws::doubles(&[0.3, 0.4, 0.01, 0.05, 0.6, 0.95]);
    let mut latest = SkewedLatest::new(999, &mut draws);
    let values: Vec<i64> = (0..4).map(|_| latest.next_value(999, &mut draws)).collect();
    assert_eq!(values, [999, 999, 952, 313]);
}

#[test]
fn hotspot_and_uniform_first_values_for_tlr_seeds() {
    let hotspot = Hotspot::new(0, 999, 0.2, 0.8);
    let mut rng = JavaTlr::new(3);
    let values: Vec<i64> = (0..5).map(|_| hotspot.next_value(&mut rng)).collect();
    assert_eq!(values, [91, 34, 61, 16, 129]);
    let uniform = UniformLong::new(10, 109);
    let mut rng = JavaTlr::new(5);
    let values: Vec<i64> = (0..5).map(|_| uniform.next_value(&mut rng)).collect();
    assert_eq!(values, [37, 98, 35, 56, 62]);
}

#[test]
fn uniform_long_takes_java_abs_and_remainder_of_i64_min() {
    // |Long.MIN_VALUE| stays negative in Java, so the remainder is negative too.
    let mut draws = FixedDraws {
        doubles: Vec::new(),
        longs: vec![i64::MIN],
    };
    assert_eq!(UniformLong::new(0, 9).next_value(&mut draws), i64::MIN % 10);
}

#[test]
fn plain_zipf_ranks_for_fixed_draws_and_its_top_probabilities() {
    let zipf = PlainZipf::new(100, 0.9);
    let ranks: Vec<u64> = [0.5, 0.01, 0.03, 0.2, 0.7, 0.999]
        .iter()
        .map(|&u| zipf.rank_of(u))
        .collect();
    assert_eq!(ranks, [9, 0, 0, 1, 26, 99]);
    for (alpha, p0) in [
        (0.5, 0.053_793_507_888_897_22),
        (0.9, 0.155_600_114_614_909_75),
        (1.3, 0.323_007_123_273_667_7),
    ] {
        let p = PlainZipf::new(100, alpha).probability(0);
        assert!((p - p0).abs() < 1e-12, "alpha {alpha}: {p} vs {p0}");
    }
}

#[test]
fn discrete_walks_normalized_weights() {
    let chooser = Discrete::new(vec![(0.5, 'r'), (0.25, 'u'), (0.25, 'i')]);
    let mut draws = FixedDraws::doubles(&[0.49, 0.5, 0.74, 0.75, 0.999_999]);
    let picks: Vec<char> = (0..5).map(|_| chooser.next_value(&mut draws)).collect();
    assert_eq!(picks, ['r', 'u', 'u', 'i', 'i']);
}

#[test]
fn core_workloads_have_the_reference_mixes() {
    for (letter, read, update, insert, scan, rmw) in [
        ('a', 0.5, 0.5, 0.0, 0.0, 0.0),
        ('B', 0.95, 0.05, 0.0, 0.0, 0.0),
        ('c', 1.0, 0.0, 0.0, 0.0, 0.0),
        ('d', 0.95, 0.0, 0.05, 0.0, 0.0),
        ('e', 0.0, 0.0, 0.05, 0.95, 0.0),
        ('f', 0.5, 0.0, 0.0, 0.0, 0.5),
    ] {
        let spec = YcsbSpec::core(letter, 1000, 10_000).expect("core workload");
        let mut generator = spec.generator(1).expect("valid");
        let n = 20_000;
        let mut counts = [0u32; 5];
        for op in generator.by_ref().take(n) {
            let i = match op {
                YcsbOp::Read { .. } => 0,
                YcsbOp::Update { .. } => 1,
                YcsbOp::Insert { .. } => 2,
                YcsbOp::Scan { length, .. } => {
                    assert!((1..=100).contains(&length));
                    3
                }
                YcsbOp::ReadModifyWrite { .. } => 4,
            };
            counts[i] += 1;
        }
        for (count, share) in counts.iter().zip([read, update, insert, scan, rmw]) {
            let measured = f64::from(*count) / n as f64;
            assert!(
                (measured - share).abs() < 0.015,
                "workload {letter}: {measured} vs {share}"
            );
        }
    }
    assert!(
        YcsbSpec::core('g', 1000, 0)
            .unwrap_err()
            .to_string()
            .starts_with("ycsb.workload:")
    );
}

#[test]
fn workload_d_reads_the_latest_inserts_most() {
    let spec = YcsbSpec::core('d', 1000, 10_000).expect("valid");
    let mut generator = spec.generator(9).expect("valid");
    let mut reads_of_new = 0;
    let mut inserts = 0;
    for op in generator.by_ref().take(10_000) {
        match op {
            YcsbOp::Read { keynum } => {
                assert!(keynum >= 0);
                if keynum >= 1000 {
                    reads_of_new += 1;
                }
            }
            YcsbOp::Insert { keynum } => {
                inserts += 1;
                assert_eq!(keynum, 999 + inserts, "inserts count up from recordcount");
            }
            other => panic!("workload D produced {other:?}"),
        }
    }
    assert_eq!(generator.last_inserted(), 999 + inserts);
    assert!(
        reads_of_new > 5_000,
        "latest skews reads to new records: {reads_of_new}"
    );
}

#[test]
fn same_seed_same_stream_and_keys_stay_in_the_loaded_range() {
    for distribution in [
        YcsbDistribution::Uniform,
        YcsbDistribution::Zipfian,
        YcsbDistribution::HOTSPOT,
        YcsbDistribution::Zipf { alpha: 1.3 },
    ] {
        let spec = YcsbSpec::read_update(0.5, distribution, 5000);
        let a: Vec<YcsbOp> = spec.generator(3).expect("valid").take(2000).collect();
        let b: Vec<YcsbOp> = spec.generator(3).expect("valid").take(2000).collect();
        assert_eq!(a, b);
        for op in a {
            let (YcsbOp::Read { keynum } | YcsbOp::Update { keynum }) = op else {
                panic!("{op:?}")
            };
            assert!((0..5000).contains(&keynum), "{distribution:?}: {keynum}");
        }
    }
}

#[test]
fn concentration_grows_with_skew() {
    let mut rows = Vec::new();
    let mut firsts = Vec::new();
    for distribution in [
        YcsbDistribution::Uniform,
        YcsbDistribution::Zipf { alpha: 0.5 },
        YcsbDistribution::Zipf { alpha: 0.9 },
        YcsbDistribution::Zipf { alpha: 1.3 },
    ] {
        let spec = YcsbSpec::read_update(1.0, distribution, 10_000);
        let shares = query_concentration(&spec, 1, 100_000).expect("valid");
        assert!(shares.windows(2).all(|w| w[0] >= w[1]));
        firsts.push(shares[0]);
        rows.push((distribution.label(), shares));
    }
    assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{firsts:?}");
    let table = concentration_table(&rows);
    assert!(
        table.lines().count() == 5 && table.contains("zipf0.9"),
        "{table}"
    );
}

#[test]
fn bad_specs_name_their_key() {
    let mut spec = YcsbSpec::read_update(0.5, YcsbDistribution::Zipf { alpha: -1.0 }, 100);
    assert!(
        spec.validate()
            .unwrap_err()
            .to_string()
            .starts_with("ycsb.zipf.alpha:")
    );
    spec.distribution = YcsbDistribution::Uniform;
    spec.read = 1.5;
    assert!(
        spec.validate()
            .unwrap_err()
            .to_string()
            .starts_with("ycsb.readproportion:")
    );
    spec.read = 0.5;
    spec.record_count = 1;
    assert!(
        spec.validate()
            .unwrap_err()
            .to_string()
            .starts_with("ycsb.recordcount:")
    );
}
