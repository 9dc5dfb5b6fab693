//! The synthetic workload description and its validation.

use crate::WorkloadError;
use serde::{Deserialize, Serialize};

/// How successive request offsets relate to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Back to back from `offset_bytes`, wrapping to the start at the end of the span.
    Sequential,
    /// Independent draws from the address distribution (with replacement, like fio's
    /// `norandommap`).
    Random,
    /// Every aligned slot exactly once per pass, in a seeded pseudo-random order that changes
    /// each pass (fio's default random map for uniform random I/O). Uniform distribution only.
    Shuffled,
}

/// Which aligned slots a random pattern picks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AddressDistribution {
    /// Every slot equally likely.
    #[default]
    Uniform,
    /// Slot of popularity rank `k` (from 1) drawn with probability ∝ `1 / k^theta`.
    Zipf {
        /// Skew: 0 is uniform, 0.99 is the YCSB default, larger is more skewed.
        theta: f64,
    },
    /// A hot set of `hot_space_fraction` of the slots receives `hot_access_fraction` of the
    /// accesses, uniformly within it; the rest go uniformly to the cold slots.
    HotCold {
        /// Fraction of the slots that are hot, in (0, 1).
        hot_space_fraction: f64,
        /// Fraction of the accesses that go to the hot slots, in [0, 1].
        hot_access_fraction: f64,
    },
}

/// When requests arrive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalProcess {
    /// No arrival times (`arrival: None`): the host issues the next request as soon as its
    /// queue has room, so the queue depth sets the load.
    #[default]
    ClosedLoop,
    /// Open loop, one request every `interarrival_ns`, the first at time 0.
    Fixed {
        /// Gap between consecutive arrivals (> 0).
        interarrival_ns: u64,
    },
    /// Open loop, Poisson arrivals at `rate_iops` requests per second, the first at time 0.
    Poisson {
        /// Mean arrival rate (> 0).
        rate_iops: f64,
    },
}

impl ArrivalProcess {
    /// Whether arrivals carry times.
    pub fn is_open_loop(&self) -> bool {
        !matches!(self, ArrivalProcess::ClosedLoop)
    }
}

/// A synthetic block-I/O workload (SPEC W1). Deserializes from a config table, e.g. in TOML:
///
/// ```toml
/// pattern = "random"
/// read_fraction = 0.7
/// request_size_bytes = 4096
/// span_bytes = 1073741824
/// distribution = { kind = "zipf", theta = 0.99 }
/// request_count = 100000
/// seed = 7
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSpec {
    /// Sequential, random or shuffled.
    pub pattern: Pattern,
    /// Probability that a request is a read, in [0, 1].
    pub read_fraction: f64,
    /// Probability that a request is a trim, in [0, 1]; the rest are writes. Default 0.
    #[serde(default)]
    pub trim_fraction: f64,
    /// Size of every request (> 0).
    pub request_size_bytes: u64,
    /// Random offsets are `offset_bytes + k * alignment_bytes`; sequential requests step by
    /// the request size rounded up to a multiple of it. Default: the request size.
    #[serde(default)]
    pub alignment_bytes: Option<u64>,
    /// Start of the address space the workload touches. Default 0.
    #[serde(default)]
    pub offset_bytes: u64,
    /// Length of that address space; every request lies entirely inside it.
    pub span_bytes: u64,
    /// Address distribution of the random pattern. Default uniform.
    #[serde(default)]
    pub distribution: AddressDistribution,
    /// Whether popular slots (Zipf ranks, the hot set) are scattered over the span by a fixed
    /// bijective permutation, as fio does, instead of packed at its start. Default true.
    #[serde(default = "default_true")]
    pub scatter_hot_addresses: bool,
    /// Number of requests to generate (give this or `duration_ns`).
    #[serde(default)]
    pub request_count: Option<u64>,
    /// Generate requests arriving before this time (open-loop arrivals only).
    #[serde(default)]
    pub duration_ns: Option<u64>,
    /// Arrival process. Default closed loop.
    #[serde(default)]
    pub arrival: ArrivalProcess,
    /// Seed of the generator's random streams. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// Placement id the writes carry (NVMe FDP reclaim-unit handle; the SSD needs
    /// `ssd.mapping.placement_ids` above it). Default 0 (not written out when 0).
    #[serde(default, skip_serializing_if = "is_zero_u16")]
    pub placement_id: u16,
}

fn is_zero_u16(n: &u16) -> bool {
    *n == 0
}

fn default_true() -> bool {
    true
}

fn fraction_error(key: &str, value: f64, range: &str) -> WorkloadError {
    WorkloadError::invalid(key, format!("must be within {range}, got {value}"))
}

impl SyntheticSpec {
    /// A closed-loop spec with uniform addresses over `[0, span_bytes)`, no trims, scattered
    /// hot addresses, seed 0: a starting point for struct-update syntax.
    pub fn new(
        pattern: Pattern,
        read_fraction: f64,
        request_size_bytes: u64,
        span_bytes: u64,
        request_count: u64,
    ) -> Self {
        SyntheticSpec {
            pattern,
            read_fraction,
            trim_fraction: 0.0,
            request_size_bytes,
            alignment_bytes: None,
            offset_bytes: 0,
            span_bytes,
            distribution: AddressDistribution::Uniform,
            scatter_hot_addresses: true,
            request_count: Some(request_count),
            duration_ns: None,
            arrival: ArrivalProcess::ClosedLoop,
            seed: 0,
            placement_id: 0,
        }
    }

    /// The alignment in force: `alignment_bytes`, or the request size when unset.
    pub fn effective_alignment_bytes(&self) -> u64 {
        self.alignment_bytes.unwrap_or(self.request_size_bytes)
    }

    /// Checks every value and their combinations; the error names the offending key.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if !(0.0..=1.0).contains(&self.read_fraction) {
            return Err(fraction_error("read_fraction", self.read_fraction, "0..=1"));
        }
        if !(0.0..=1.0).contains(&self.trim_fraction) {
            return Err(fraction_error("trim_fraction", self.trim_fraction, "0..=1"));
        }
        if self.read_fraction + self.trim_fraction > 1.0 + 1e-9 {
            return Err(WorkloadError::invalid(
                "trim_fraction",
                format!(
                    "read_fraction + trim_fraction must be at most 1, got {} + {}",
                    self.read_fraction, self.trim_fraction
                ),
            ));
        }
        if self.request_size_bytes == 0 {
            return Err(WorkloadError::invalid("request_size_bytes", "must be > 0"));
        }
        if self.alignment_bytes == Some(0) {
            return Err(WorkloadError::invalid("alignment_bytes", "must be > 0"));
        }
        if self.span_bytes < self.request_size_bytes {
            return Err(WorkloadError::invalid(
                "span_bytes",
                format!(
                    "{} is smaller than one request ({} bytes)",
                    self.span_bytes, self.request_size_bytes
                ),
            ));
        }
        if self.offset_bytes.checked_add(self.span_bytes).is_none() {
            return Err(WorkloadError::invalid(
                "span_bytes",
                "offset_bytes + span_bytes overflows 64 bits",
            ));
        }
        self.validate_distribution()?;
        self.validate_length()
    }

    fn validate_distribution(&self) -> Result<(), WorkloadError> {
        match self.distribution {
            AddressDistribution::Uniform => {}
            AddressDistribution::Zipf { theta } => {
                if !(theta.is_finite() && theta >= 0.0) {
                    return Err(WorkloadError::invalid(
                        "distribution.theta",
                        format!("must be a finite number >= 0, got {theta}"),
                    ));
                }
            }
            AddressDistribution::HotCold {
                hot_space_fraction,
                hot_access_fraction,
            } => {
                if !(hot_space_fraction > 0.0 && hot_space_fraction < 1.0) {
                    let key = "distribution.hot_space_fraction";
                    return Err(fraction_error(key, hot_space_fraction, "(0, 1)"));
                }
                if !(0.0..=1.0).contains(&hot_access_fraction) {
                    let key = "distribution.hot_access_fraction";
                    return Err(fraction_error(key, hot_access_fraction, "0..=1"));
                }
            }
        }
        let uniform = matches!(self.distribution, AddressDistribution::Uniform);
        if !uniform && self.pattern != Pattern::Random {
            return Err(WorkloadError::invalid(
                "distribution",
                "a skewed distribution needs pattern = \"random\"",
            ));
        }
        Ok(())
    }

    fn validate_length(&self) -> Result<(), WorkloadError> {
        match (self.request_count, self.duration_ns) {
            (Some(_), Some(_)) => {
                return Err(WorkloadError::invalid(
                    "duration_ns",
                    "give request_count or duration_ns, not both",
                ));
            }
            (None, None) => {
                return Err(WorkloadError::invalid(
                    "request_count",
                    "missing: give request_count or duration_ns",
                ));
            }
            (Some(0), None) => {
                return Err(WorkloadError::invalid("request_count", "must be > 0"));
            }
            (None, Some(_)) if !self.arrival.is_open_loop() => {
                return Err(WorkloadError::invalid(
                    "duration_ns",
                    "needs an open-loop arrival (fixed or poisson); bound a closed loop with request_count",
                ));
            }
            _ => {}
        }
        if let Some(duration_ns) = self.duration_ns
            && duration_ns
                .checked_mul(nandlab_core::time::PS_PER_NS)
                .is_none()
        {
            return Err(WorkloadError::invalid("duration_ns", "too large"));
        }
        match self.arrival {
            ArrivalProcess::ClosedLoop => Ok(()),
            ArrivalProcess::Fixed { interarrival_ns } => {
                if interarrival_ns == 0 {
                    return Err(WorkloadError::invalid(
                        "arrival.interarrival_ns",
                        "must be > 0",
                    ));
                }
                let last_arrival_ns = interarrival_ns
                    .checked_mul(self.request_count.unwrap_or(1))
                    .and_then(|ns| ns.checked_mul(nandlab_core::time::PS_PER_NS));
                if last_arrival_ns.is_none() {
                    return Err(WorkloadError::invalid(
                        "arrival.interarrival_ns",
                        "interarrival_ns * request_count overflows simulated time",
                    ));
                }
                Ok(())
            }
            ArrivalProcess::Poisson { rate_iops } => {
                if !(rate_iops.is_finite() && rate_iops > 0.0) {
                    return Err(WorkloadError::invalid(
                        "arrival.rate_iops",
                        format!("must be a finite number > 0, got {rate_iops}"),
                    ));
                }
                // The last of n arrivals comes after n - 1 exponential gaps. When their mean
                // alone passes half of the time range (2^63 ps, about 107 days) the run cannot
                // fit: refuse it here, naming the key. (A run whose random arrivals still pass
                // the end of time gets an error naming the request from the controller; no
                // request is ever dropped.)
                let gaps = self.request_count.unwrap_or(1).saturating_sub(1) as f64;
                let mean_span_ps = gaps * nandlab_core::time::PS_PER_S as f64 / rate_iops;
                let limit_ps = u64::MAX as f64 / 2.0;
                if mean_span_ps > limit_ps {
                    return Err(WorkloadError::invalid(
                        "arrival.rate_iops",
                        format!(
                            "{rate_iops} requests per second spread {} requests over {:.1} simulated days on average; \
                             at most {:.1} days fit (simulated time ends at 2^64 ps, about 213 days): \
                             raise rate_iops or lower request_count",
                            self.request_count.unwrap_or(1),
                            mean_span_ps / (86_400.0 * nandlab_core::time::PS_PER_S as f64),
                            limit_ps / (86_400.0 * nandlab_core::time::PS_PER_S as f64),
                        ),
                    ));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> SyntheticSpec {
        SyntheticSpec::new(Pattern::Random, 0.5, 4096, 1 << 30, 100)
    }

    fn key_of(spec: &SyntheticSpec) -> String {
        match spec.validate() {
            Err(WorkloadError::Invalid { key, .. }) => key,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn deserializes_toml_with_defaults() {
        let spec: SyntheticSpec = toml::from_str(
            r#"
            pattern = "random"
            read_fraction = 0.7
            request_size_bytes = 4096
            span_bytes = 1073741824
            distribution = { kind = "zipf", theta = 0.99 }
            arrival = { kind = "poisson", rate_iops = 50000.0 }
            duration_ns = 1000000
            "#,
        )
        .expect("valid spec");
        assert_eq!(spec.distribution, AddressDistribution::Zipf { theta: 0.99 });
        assert_eq!(spec.effective_alignment_bytes(), 4096);
        assert!(spec.scatter_hot_addresses);
        assert_eq!(spec.seed, 0);
        spec.validate().expect("valid");
    }

    #[test]
    fn unknown_keys_are_rejected_at_every_level() {
        let top = r#"{"pattern":"random","read_fraction":1,"request_size_bytes":1,
                      "span_bytes":1,"request_count":1,"bogus":1}"#;
        let err = serde_json::from_str::<SyntheticSpec>(top).unwrap_err();
        assert!(err.to_string().contains("bogus"), "{err}");
        let nested = r#"{"pattern":"random","read_fraction":1,"request_size_bytes":1,
                 "span_bytes":1,"request_count":1,"distribution":{"kind":"zipf","theta":1,"x":2}}"#;
        let err = serde_json::from_str::<SyntheticSpec>(nested).unwrap_err();
        assert!(err.to_string().contains('x'), "{err}");
    }

    #[test]
    fn validation_names_the_key() {
        assert!(base().validate().is_ok());
        let cases: Vec<(SyntheticSpec, &str)> = vec![
            (
                SyntheticSpec {
                    read_fraction: 1.5,
                    ..base()
                },
                "read_fraction",
            ),
            (
                SyntheticSpec {
                    read_fraction: f64::NAN,
                    ..base()
                },
                "read_fraction",
            ),
            (
                SyntheticSpec {
                    trim_fraction: 0.6,
                    ..base()
                },
                "trim_fraction",
            ),
            (
                SyntheticSpec {
                    request_size_bytes: 0,
                    ..base()
                },
                "request_size_bytes",
            ),
            (
                SyntheticSpec {
                    alignment_bytes: Some(0),
                    ..base()
                },
                "alignment_bytes",
            ),
            (
                SyntheticSpec {
                    span_bytes: 100,
                    ..base()
                },
                "span_bytes",
            ),
            (
                SyntheticSpec {
                    offset_bytes: u64::MAX,
                    ..base()
                },
                "span_bytes",
            ),
            (
                SyntheticSpec {
                    distribution: AddressDistribution::Zipf { theta: -1.0 },
                    ..base()
                },
                "distribution.theta",
            ),
            (
                SyntheticSpec {
                    distribution: AddressDistribution::HotCold {
                        hot_space_fraction: 1.0,
                        hot_access_fraction: 0.9,
                    },
                    ..base()
                },
                "distribution.hot_space_fraction",
            ),
            (
                SyntheticSpec {
                    pattern: Pattern::Sequential,
                    distribution: AddressDistribution::Zipf { theta: 0.9 },
                    ..base()
                },
                "distribution",
            ),
            (
                SyntheticSpec {
                    request_count: None,
                    ..base()
                },
                "request_count",
            ),
            (
                SyntheticSpec {
                    request_count: Some(0),
                    ..base()
                },
                "request_count",
            ),
            (
                SyntheticSpec {
                    duration_ns: Some(5),
                    ..base()
                },
                "duration_ns",
            ),
            (
                SyntheticSpec {
                    request_count: None,
                    duration_ns: Some(5),
                    ..base()
                },
                "duration_ns",
            ),
            (
                SyntheticSpec {
                    arrival: ArrivalProcess::Poisson { rate_iops: 0.0 },
                    ..base()
                },
                "arrival.rate_iops",
            ),
            (
                SyntheticSpec {
                    arrival: ArrivalProcess::Fixed { interarrival_ns: 0 },
                    ..base()
                },
                "arrival.interarrival_ns",
            ),
        ];
        for (spec, key) in cases {
            assert_eq!(key_of(&spec), key, "{spec:?}");
        }
    }
}
