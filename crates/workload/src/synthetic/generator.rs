//! The request stream of a [`SyntheticSpec`].

use super::address::AddressSampler;
use super::spec::{ArrivalProcess, Pattern, SyntheticSpec};
use crate::{BlockRequest, IoOp, WorkloadError};
use nandlab_core::time::{PS_PER_NS, PS_PER_S};
use nandlab_core::{SimRng, SimTime};

/// When the stream ends.
#[derive(Clone, Copy, Debug)]
enum StreamEnd {
    AfterCount { remaining: u64 },
    Before(SimTime),
}

/// Generates the requests of a validated [`SyntheticSpec`]; deterministic for a given spec
/// (seed included) and allocation-free per request.
///
/// Offsets, operations and arrival gaps come from three independent random streams derived
/// from the seed, so changing `read_fraction` leaves the address sequence unchanged (and vice
/// versa).
#[derive(Clone, Debug)]
pub struct SyntheticGenerator {
    offset_bytes: u64,
    request_size_bytes: u64,
    slot_stride_bytes: u64,
    slot_count: u64,
    read_fraction: f64,
    trim_fraction: f64,
    address: AddressSampler,
    arrival: ArrivalProcess,
    next_arrival: Option<SimTime>,
    end: StreamEnd,
    address_rng: SimRng,
    op_rng: SimRng,
    arrival_rng: SimRng,
}

impl SyntheticGenerator {
    /// Validates `spec` and prepares its stream.
    pub fn new(spec: &SyntheticSpec) -> Result<Self, WorkloadError> {
        spec.validate()?;
        let alignment_bytes = spec.effective_alignment_bytes();
        let slot_stride_bytes = match spec.pattern {
            Pattern::Sequential => spec
                .request_size_bytes
                .checked_next_multiple_of(alignment_bytes)
                .unwrap_or(u64::MAX),
            Pattern::Random | Pattern::Shuffled => alignment_bytes,
        };
        let slot_count = (spec.span_bytes - spec.request_size_bytes) / slot_stride_bytes + 1;
        let end = match (spec.request_count, spec.duration_ns) {
            (Some(count), _) => StreamEnd::AfterCount { remaining: count },
            // Validation guarantees one of the two and that the product fits.
            (None, duration_ns) => {
                StreamEnd::Before(SimTime::from_ps(duration_ns.unwrap_or(0) * PS_PER_NS))
            }
        };
        let next_arrival = spec.arrival.is_open_loop().then_some(SimTime::ZERO);
        Ok(SyntheticGenerator {
            offset_bytes: spec.offset_bytes,
            request_size_bytes: spec.request_size_bytes,
            slot_stride_bytes,
            slot_count,
            read_fraction: spec.read_fraction,
            trim_fraction: spec.trim_fraction,
            address: AddressSampler::new(
                spec.pattern,
                spec.distribution,
                slot_count,
                spec.scatter_hot_addresses,
                spec.seed,
            ),
            arrival: spec.arrival,
            next_arrival,
            end,
            address_rng: SimRng::stream(spec.seed, "workload.synthetic.address"),
            op_rng: SimRng::stream(spec.seed, "workload.synthetic.op"),
            arrival_rng: SimRng::stream(spec.seed, "workload.synthetic.arrival"),
        })
    }

    /// Number of distinct request positions in the span.
    pub fn slot_count(&self) -> u64 {
        self.slot_count
    }

    /// Distance between consecutive request positions.
    pub fn slot_stride_bytes(&self) -> u64 {
        self.slot_stride_bytes
    }

    fn next_op(&mut self) -> IoOp {
        let u = self.op_rng.unit_f64();
        if u < self.read_fraction {
            IoOp::Read
        } else if u < self.read_fraction + self.trim_fraction {
            IoOp::Trim
        } else {
            IoOp::Write
        }
    }

    /// The arrival after `current`. Past the end of simulated time (2^64 ps) it saturates at
    /// [`SimTime::MAX`]: the request is still produced (never silently dropped) and the
    /// controller refuses it with an error naming the request.
    fn arrival_after(&mut self, current: SimTime) -> SimTime {
        let gap = match self.arrival {
            ArrivalProcess::ClosedLoop => return current,
            ArrivalProcess::Fixed { interarrival_ns } => {
                SimTime::from_ps(interarrival_ns.saturating_mul(PS_PER_NS))
            }
            ArrivalProcess::Poisson { rate_iops } => {
                let mean_ps = PS_PER_S as f64 / rate_iops;
                let u = self.arrival_rng.unit_f64();
                // Inverse CDF of the exponential; 1 - u is in (0, 1], so ln is finite.
                SimTime::from_ps((-(1.0 - u).ln() * mean_ps).round() as u64)
            }
        };
        current.saturating_add(gap)
    }
}

impl Iterator for SyntheticGenerator {
    type Item = BlockRequest;

    fn next(&mut self) -> Option<BlockRequest> {
        match &mut self.end {
            StreamEnd::AfterCount { remaining } => {
                if *remaining == 0 {
                    return None;
                }
                *remaining -= 1;
            }
            StreamEnd::Before(end) => match self.next_arrival {
                Some(arrival) if arrival < *end => {}
                _ => return None,
            },
        }
        let arrival = self.next_arrival;
        if let Some(current) = arrival {
            self.next_arrival = Some(self.arrival_after(current));
        }
        let op = self.next_op();
        let slot = self
            .address
            .next_slot(self.slot_count, &mut self.address_rng);
        debug_assert!(slot < self.slot_count);
        let request = BlockRequest {
            arrival,
            op,
            offset_bytes: self.offset_bytes + slot * self.slot_stride_bytes,
            size_bytes: self.request_size_bytes,
            placement_id: 0,
        };
        Some(request)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.end {
            StreamEnd::AfterCount { remaining } => {
                let n = usize::try_from(remaining).unwrap_or(usize::MAX);
                (n, Some(n))
            }
            StreamEnd::Before(_) => (0, None),
        }
    }
}

impl SyntheticSpec {
    /// Validates the spec and returns its request stream.
    pub fn generator(&self) -> Result<SyntheticGenerator, WorkloadError> {
        SyntheticGenerator::new(self)
    }
}
