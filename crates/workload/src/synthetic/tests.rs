//! Statistical and property tests of the synthetic generator.

use super::address::scatter_permutation;
use super::*;
use crate::{BlockRequest, IoOp};
use nandlab_core::SimTime;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const PAGE: u64 = 4096;

fn random_spec(slots: u64, count: u64) -> SyntheticSpec {
    SyntheticSpec::new(Pattern::Random, 0.5, PAGE, slots * PAGE, count)
}

fn collect(spec: &SyntheticSpec) -> Vec<BlockRequest> {
    spec.generator().expect("valid spec").collect()
}

/// Requests per slot index.
fn slot_counts(requests: &[BlockRequest]) -> HashMap<u64, u64> {
    let mut counts = HashMap::new();
    for r in requests {
        *counts.entry(r.offset_bytes / PAGE).or_insert(0) += 1;
    }
    counts
}

#[test]
fn sequential_steps_and_wraps_at_the_end_of_the_span() {
    let spec = SyntheticSpec {
        offset_bytes: 1 << 20,
        ..SyntheticSpec::new(Pattern::Sequential, 0.0, PAGE, 3 * PAGE + 100, 7)
    };
    let offsets: Vec<u64> = collect(&spec)
        .iter()
        .map(|r| (r.offset_bytes - (1 << 20)) / PAGE)
        .collect();
    assert_eq!(offsets, [0, 1, 2, 0, 1, 2, 0]);
}

#[test]
fn sequential_stride_is_rounded_up_to_the_alignment() {
    let spec = SyntheticSpec {
        alignment_bytes: Some(4096),
        ..SyntheticSpec::new(Pattern::Sequential, 1.0, 6000, 5 * 4096, 4)
    };
    let offsets: Vec<u64> = collect(&spec).iter().map(|r| r.offset_bytes).collect();
    assert_eq!(offsets, [0, 8192, 0, 8192]);
}

#[test]
fn same_seed_same_stream_and_different_seed_different_stream() {
    let spec = SyntheticSpec {
        distribution: AddressDistribution::Zipf { theta: 0.9 },
        arrival: ArrivalProcess::Poisson { rate_iops: 1e5 },
        seed: 11,
        ..random_spec(1 << 20, 1000)
    };
    assert_eq!(collect(&spec), collect(&spec));
    let other = SyntheticSpec {
        seed: 12,
        ..spec.clone()
    };
    assert_ne!(collect(&spec), collect(&other));
}

#[test]
fn changing_the_mix_does_not_move_the_addresses() {
    let a = random_spec(1000, 500);
    let b = SyntheticSpec {
        read_fraction: 0.9,
        ..a.clone()
    };
    let offsets =
        |s: &SyntheticSpec| -> Vec<u64> { collect(s).iter().map(|r| r.offset_bytes).collect() };
    assert_eq!(offsets(&a), offsets(&b));
}

#[test]
fn read_and_trim_fractions_are_respected() {
    let spec = SyntheticSpec {
        read_fraction: 0.3,
        trim_fraction: 0.1,
        ..random_spec(1000, 100_000)
    };
    let requests = collect(&spec);
    let share = |op: IoOp| requests.iter().filter(|r| r.op == op).count() as f64 / 1e5;
    assert!((share(IoOp::Read) - 0.3).abs() < 0.01);
    assert!((share(IoOp::Trim) - 0.1).abs() < 0.01);
    assert!((share(IoOp::Write) - 0.6).abs() < 0.01);
}

#[test]
fn zipf_concentrates_on_few_slots_scattered_over_the_span() {
    let slots = 10_000;
    let spec = SyntheticSpec {
        distribution: AddressDistribution::Zipf { theta: 0.99 },
        ..random_spec(slots, 200_000)
    };
    let counts = slot_counts(&collect(&spec));
    let mut by_count: Vec<(u64, u64)> = counts.into_iter().map(|(s, c)| (c, s)).collect();
    by_count.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<(u64, u64)> = by_count.into_iter().take((slots / 100) as usize).collect();
    let top_share = top.iter().map(|(c, _)| c).sum::<u64>() as f64 / 200_000.0;
    // For theta 0.99 and n = 10^4 the top 1% of ranks carry about 54% of accesses.
    assert!(top_share > 0.4, "top 1% of slots got only {top_share}");
    // The hottest slot is rank 0 of the scatter permutation, not slot 0.
    let hottest = top[0].1;
    assert_eq!(hottest, scatter_permutation(slots).apply(0));
    assert_ne!(hottest, 0);
    // The hot slots spread over every tenth of the span.
    let tenths: HashSet<u64> = top.iter().map(|(_, s)| s * 10 / slots).collect();
    assert_eq!(tenths.len(), 10, "hot slots clustered in {tenths:?}");
}

#[test]
fn zipf_without_scatter_puts_the_hottest_slots_first() {
    let spec = SyntheticSpec {
        distribution: AddressDistribution::Zipf { theta: 1.2 },
        scatter_hot_addresses: false,
        ..random_spec(10_000, 50_000)
    };
    let counts = slot_counts(&collect(&spec));
    let hottest = counts
        .iter()
        .max_by_key(|(s, c)| (**c, std::cmp::Reverse(**s)));
    assert_eq!(hottest.map(|(s, _)| *s), Some(0));
}

#[test]
fn zipf_works_on_a_billion_pages_without_tables() {
    let slots = 1_000_000_000;
    let spec = SyntheticSpec {
        distribution: AddressDistribution::Zipf { theta: 0.99 },
        ..random_spec(slots, 20_000)
    };
    let requests = collect(&spec);
    assert!(requests.iter().all(|r| r.end_bytes() <= slots * PAGE));
    let counts = slot_counts(&requests);
    let top = counts.values().max().copied().unwrap_or(0);
    assert!(top > 200, "hottest page got {top} of 20000");
}

#[test]
fn hot_cold_fractions_within_tolerance() {
    let slots = 10_000;
    for scatter in [true, false] {
        let spec = SyntheticSpec {
            distribution: AddressDistribution::HotCold {
                hot_space_fraction: 0.2,
                hot_access_fraction: 0.8,
            },
            scatter_hot_addresses: scatter,
            ..random_spec(slots, 100_000)
        };
        let hot: HashSet<u64> = if scatter {
            let p = scatter_permutation(slots);
            (0..2000).map(|r| p.apply(r)).collect()
        } else {
            (0..2000).collect()
        };
        let requests = collect(&spec);
        let hot_hits = requests
            .iter()
            .filter(|r| hot.contains(&(r.offset_bytes / PAGE)))
            .count();
        let share = hot_hits as f64 / requests.len() as f64;
        assert!(
            (share - 0.8).abs() < 0.01,
            "hot share {share} (scatter {scatter})"
        );
    }
}

#[test]
fn closed_loop_has_no_arrivals_and_fixed_arrivals_are_evenly_spaced() {
    assert!(
        collect(&random_spec(10, 5))
            .iter()
            .all(|r| r.arrival.is_none())
    );
    let spec = SyntheticSpec {
        arrival: ArrivalProcess::Fixed {
            interarrival_ns: 250,
        },
        ..random_spec(10, 4)
    };
    let arrivals: Vec<Option<SimTime>> = collect(&spec).iter().map(|r| r.arrival).collect();
    let expected: Vec<Option<SimTime>> = [0, 250, 500, 750]
        .iter()
        .map(|ns| Some(SimTime::from_ns(*ns)))
        .collect();
    assert_eq!(arrivals, expected);
}

#[test]
fn duration_bounds_an_open_loop_stream() {
    let spec = SyntheticSpec {
        request_count: None,
        duration_ns: Some(1_001),
        arrival: ArrivalProcess::Fixed {
            interarrival_ns: 100,
        },
        ..random_spec(10, 1)
    };
    // Arrivals 0, 100, ..., 1000 ns are before 1001 ns.
    assert_eq!(collect(&spec).len(), 11);
}

#[test]
fn poisson_mean_interarrival_matches_the_rate() {
    let spec = SyntheticSpec {
        request_count: None,
        duration_ns: Some(1_000_000_000),
        arrival: ArrivalProcess::Poisson {
            rate_iops: 100_000.0,
        },
        ..random_spec(10, 1)
    };
    let requests = collect(&spec);
    // 1 s at 100k IOPS: about 100,000 requests (standard deviation about 316).
    let n = requests.len() as f64;
    assert!((n - 100_000.0).abs() < 2_000.0, "{n} requests");
    let arrivals: Vec<SimTime> = requests.iter().filter_map(|r| r.arrival).collect();
    assert!(arrivals.windows(2).all(|w| w[0] <= w[1]));
}

/// Regression (issue 11): Poisson arrivals at a tiny rate ran past the end of simulated time
/// (2^64 ps); the generator then silently ended the stream, dropping most of the requests
/// asked for. A rate whose mean span does not fit is now refused with the key named.
#[test]
fn a_poisson_rate_too_small_for_the_request_count_is_refused() {
    let spec = SyntheticSpec {
        arrival: ArrivalProcess::Poisson { rate_iops: 1e-9 },
        ..random_spec(10, 1_000)
    };
    let message = spec.validate().unwrap_err().to_string();
    assert!(message.starts_with("arrival.rate_iops:"), "{message}");
    assert!(message.contains("213 days"), "{message}");
    // the same rate for one request has no gap to wait for: fine
    let spec = SyntheticSpec {
        arrival: ArrivalProcess::Poisson { rate_iops: 1e-9 },
        ..random_spec(10, 1)
    };
    assert_eq!(collect(&spec).len(), 1);
    // a slow but fitting rate (20,000 requests over 23 days) is still accepted
    let spec = SyntheticSpec {
        arrival: ArrivalProcess::Poisson { rate_iops: 0.01 },
        ..random_spec(10, 20_000)
    };
    spec.validate().expect("23 days fit");
}

#[test]
fn size_hint_is_exact_for_counted_streams() {
    let mut generator = random_spec(10, 3).generator().expect("valid");
    assert_eq!(generator.size_hint(), (3, Some(3)));
    generator.next();
    assert_eq!(generator.size_hint(), (2, Some(2)));
}

fn any_pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        Just(Pattern::Sequential),
        Just(Pattern::Random),
        Just(Pattern::Shuffled)
    ]
}

fn any_distribution() -> impl Strategy<Value = AddressDistribution> {
    prop_oneof![
        Just(AddressDistribution::Uniform),
        (0.0..2.0f64).prop_map(|theta| AddressDistribution::Zipf { theta }),
        (0.01..0.99f64, 0.0..=1.0f64).prop_map(|(s, a)| AddressDistribution::HotCold {
            hot_space_fraction: s,
            hot_access_fraction: a,
        }),
    ]
}

proptest! {
    #[test]
    fn requests_lie_inside_the_span_and_are_aligned(
        pattern in any_pattern(),
        distribution in any_distribution(),
        request_size_bytes in 1u64..100_000,
        alignment_bytes in 1u64..100_000,
        offset_bytes in 0u64..(1 << 50),
        extra_span_bytes in 0u64..(1 << 40),
        seed in any::<u64>(),
    ) {
        let distribution = if pattern == Pattern::Random { distribution } else { AddressDistribution::Uniform };
        let spec = SyntheticSpec {
            alignment_bytes: Some(alignment_bytes),
            offset_bytes,
            distribution,
            seed,
            ..SyntheticSpec::new(pattern, 0.5, request_size_bytes, request_size_bytes + extra_span_bytes, 64)
        };
        let generator = spec.generator().expect("valid spec");
        let stride = generator.slot_stride_bytes();
        prop_assert_eq!(stride % alignment_bytes, 0);
        for r in generator {
            prop_assert!(r.offset_bytes >= offset_bytes);
            prop_assert!(r.end_bytes() <= offset_bytes + spec.span_bytes);
            prop_assert_eq!((r.offset_bytes - offset_bytes) % alignment_bytes, 0);
            prop_assert_eq!(r.size_bytes, request_size_bytes);
        }
    }
}
