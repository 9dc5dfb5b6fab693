//! One clone of an fio job over time: its I/O phase (bounded by size, `number_ios`, and with a
//! clock by `runtime`/`time_based`/`ramp_time`), then its verify phase.

use super::extras::{Shaped, StreamShape};
use super::sprandom::SpRandom;
use super::stream::StreamPlan;
use crate::synthetic::{ArrivalProcess, Pattern, SyntheticGenerator, SyntheticSpec};
use crate::{BlockRequest, IoOp, WorkloadError};
use nandlab_core::SimRng;
use nandlab_core::time::PS_PER_NS;

/// Where a job's offsets come from.
#[derive(Clone, Debug)]
enum Offsets {
    /// The synthetic generator of the spec: one sequence of offsets for every direction.
    Shared(SyntheticGenerator),
    /// `rw=rw`: the direction is drawn per request (probability `read_fraction`, from the
    /// same random stream as a synthetic generator's), and reads and writes each advance
    /// their own sequential position, as fio's `last_pos[ddir]`.
    PerDirection {
        reads: SyntheticGenerator,
        // boxed: keeps this variant near the size of `Shared`
        writes: Box<SyntheticGenerator>,
        read_fraction: f64,
        op_rng: SimRng,
    },
    /// `bssplit`, `rw=read:N` or a zoned distribution (see `extras.rs`).
    Shaped(Box<Shaped>),
    /// `sprandom=1` (see `sprandom.rs`).
    SpRandom(Box<SpRandom>),
}

impl Offsets {
    fn new(
        spec: &SyntheticSpec,
        per_direction: bool,
        shape: &StreamShape,
    ) -> Result<Self, WorkloadError> {
        // unbounded here: the job stream counts
        let unbounded_count = match spec.arrival {
            // as many as fit in simulated time (2^64 ps)
            ArrivalProcess::Fixed { interarrival_ns } => {
                (u64::MAX / PS_PER_NS / interarrival_ns.max(1))
                    .saturating_sub(1)
                    .max(1)
            }
            // 100 simulated days on average, well inside simulated time
            ArrivalProcess::Poisson { rate_iops } => (rate_iops * 8.64e6) as u64,
            ArrivalProcess::ClosedLoop => u64::MAX,
        };
        let unbounded = SyntheticSpec {
            request_count: Some(unbounded_count.max(spec.request_count.unwrap_or(1))),
            ..spec.clone()
        };
        if let Some(options) = &shape.sprandom {
            return Ok(Offsets::SpRandom(Box::new(SpRandom::new(
                unbounded.generator()?,
                options,
                spec.offset_bytes,
                spec.span_bytes,
                spec.request_size_bytes,
                spec.seed,
            ))));
        }
        if !shape.is_plain() {
            // per-direction positions are the shaped stream's own (fio's last_pos[ddir])
            return Ok(Offsets::Shaped(Box::new(Shaped::new(
                unbounded.generator()?,
                shape.clone(),
                spec,
            ))));
        }
        if !per_direction {
            return Ok(Offsets::Shared(unbounded.generator()?));
        }
        debug_assert_eq!(spec.pattern, Pattern::Sequential);
        let only = |read_fraction: f64| SyntheticSpec {
            read_fraction,
            trim_fraction: 0.0,
            ..unbounded.clone()
        };
        Ok(Offsets::PerDirection {
            reads: only(1.0).generator()?,
            writes: Box::new(only(0.0).generator()?),
            read_fraction: spec.read_fraction,
            op_rng: SimRng::stream(spec.seed, "workload.synthetic.op"),
        })
    }

    fn next(&mut self) -> Option<BlockRequest> {
        match self {
            Offsets::Shared(generator) => generator.next(),
            Offsets::Shaped(shaped) => shaped.next(),
            Offsets::SpRandom(sprandom) => sprandom.next(),
            Offsets::PerDirection {
                reads,
                writes,
                read_fraction,
                op_rng,
            } => {
                if op_rng.unit_f64() < *read_fraction {
                    reads.next()
                } else {
                    writes.next()
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Io,
    Verify,
    Done,
}

/// The requests of one stream: its I/O phase, then (with `verify`) its writes read back.
#[derive(Clone, Debug)]
pub(crate) struct JobStream {
    offsets: Offsets,
    /// A second copy of the offsets, replayed for the verify phase.
    replay: Option<Offsets>,
    plan: StreamPlan,
    phase: Phase,
    /// Requests of the job's size (what a pass issues, after any ramp).
    size_count: u64,
    /// Requests (bytes, with `bssplit`) left in the current counting period.
    remaining: u64,
    /// Whether `size_count` and `remaining` count bytes (`bssplit`: fio stops a job after
    /// its bytes, whatever the sizes drawn).
    counts_bytes: bool,
    /// Requests issued in all (for `number_ios`).
    issued: u64,
    /// Writes issued, and writes read back so far in the verify phase.
    writes: u64,
    verified: u64,
    clocked: bool,
    ramped: bool,
    /// `verify_backlog`: writes not yet read back, and whether they are being read back now.
    backlog: std::collections::VecDeque<BlockRequest>,
    draining: bool,
    /// `trimwrite`: the write that follows the trim just issued.
    pending_write: Option<BlockRequest>,
    /// `trimwrite` with a trim size of its own: the range trimmed last, and the region's end.
    trimmed: (u64, u64),
    region_end: u64,
}

impl JobStream {
    pub(crate) fn new(
        spec: &SyntheticSpec,
        plan: &StreamPlan,
        shape: &StreamShape,
    ) -> Result<Self, WorkloadError> {
        let counts_bytes = shape.split.is_some();
        let size_count = if counts_bytes {
            shape.io_bytes
        } else {
            spec.request_count
                .ok_or_else(|| WorkloadError::invalid("request_count", "a fio stream counts"))?
        };
        Ok(JobStream {
            offsets: Offsets::new(spec, plan.per_direction, shape)?,
            replay: if plan.verify && plan.verify_backlog.is_none() {
                Some(Offsets::new(spec, plan.per_direction, shape)?)
            } else {
                None
            },
            counts_bytes,
            plan: *plan,
            phase: Phase::Io,
            size_count,
            remaining: size_count,
            issued: 0,
            writes: 0,
            verified: 0,
            clocked: false,
            ramped: plan.ramp_time_ns.is_none(),
            backlog: std::collections::VecDeque::new(),
            draining: false,
            pending_write: None,
            trimmed: (0, 0),
            region_end: spec.offset_bytes.saturating_add(spec.span_bytes),
        })
    }

    /// With a clock, time limits apply and a time-based job is bounded by its runtime only.
    pub(crate) fn set_clocked(&mut self, clocked: bool) {
        self.clocked = clocked;
        if clocked && (self.plan.time_based || !self.ramped) {
            self.remaining = u64::MAX;
        }
    }

    /// The next request, `elapsed_ns` after the job's group started (`None`: no clock).
    pub(crate) fn next(&mut self, elapsed_ns: Option<u64>) -> Option<BlockRequest> {
        if self.phase == Phase::Io {
            if self.draining {
                match self.backlog.pop_front() {
                    Some(write) => return Some(as_verify_read(write)),
                    None => self.draining = false,
                }
            }
            if let Some(write) = self.pending_write.take() {
                return Some(self.track_backlog(write));
            }
            match self.next_io(elapsed_ns) {
                Some(write) if self.plan.trim_before_write && write.op == IoOp::Write => {
                    let Some(trim) = self.trim_before(&write) else {
                        return Some(self.track_backlog(write));
                    };
                    self.pending_write = Some(write);
                    return Some(trim);
                }
                Some(request) => return Some(self.track_backlog(request)),
                None => self.phase = Phase::Verify,
            }
        }
        self.next_after_io()
    }

    /// The trim `trimwrite` issues before `write`: of the write's range, or with a trim size of
    /// its own (`bs=,512,16k`) of that size once the writes have passed the last trim, as
    /// fio trims when its trim and write positions meet (`last_pos`); `None`: no trim.
    fn trim_before(&mut self, write: &BlockRequest) -> Option<BlockRequest> {
        let trim = BlockRequest {
            op: IoOp::Trim,
            placement_id: 0,
            ..*write
        };
        let Some(trim_bytes) = self.plan.trim_bytes else {
            return Some(trim);
        };
        let (start, end) = self.trimmed;
        if write.offset_bytes >= start && write.offset_bytes < end {
            return None;
        }
        let size = trim_bytes.min(self.region_end.saturating_sub(write.offset_bytes));
        let size = size.max(write.size_bytes);
        self.trimmed = (write.offset_bytes, write.offset_bytes + size);
        Some(BlockRequest {
            size_bytes: size,
            ..trim
        })
    }

    /// A write joins the verify backlog, which starts draining when it is full.
    fn track_backlog(&mut self, request: BlockRequest) -> BlockRequest {
        if let Some(n) = self.plan.verify_backlog
            && request.op == IoOp::Write
        {
            self.backlog.push_back(request);
            self.draining = self.backlog.len() as u64 >= n;
        }
        request
    }

    /// The verify phase after the I/O phase.
    fn next_after_io(&mut self) -> Option<BlockRequest> {
        if self.phase == Phase::Verify {
            if let Some(write) = self.backlog.pop_front() {
                return Some(as_verify_read(write));
            }
            if let Some(request) = self.next_verify() {
                return Some(request);
            }
            self.phase = Phase::Done;
        }
        None
    }

    fn next_io(&mut self, elapsed_ns: Option<u64>) -> Option<BlockRequest> {
        if self.plan.number_ios.is_some_and(|n| self.issued >= n) {
            return None;
        }
        if let (true, Some(elapsed)) = (self.clocked, elapsed_ns) {
            let ramp = self.plan.ramp_time_ns.unwrap_or(0);
            if !self.ramped && elapsed >= ramp {
                // fio resets its counters at the end of the ramp: the size starts over
                self.ramped = true;
                if !self.plan.time_based {
                    self.remaining = self.size_count;
                }
            }
            if let Some(runtime) = self.plan.runtime_ns
                && elapsed >= ramp.saturating_add(runtime)
            {
                return None;
            }
        }
        if self.remaining == 0 {
            return None;
        }
        let request = self.offsets.next()?;
        let cost = if self.counts_bytes {
            request.size_bytes
        } else {
            1
        };
        self.remaining = self.remaining.saturating_sub(cost);
        self.issued += 1;
        if request.op == IoOp::Write {
            self.writes += 1;
        }
        Some(request)
    }

    /// The job's writes again, in the order written, as reads (fio's verify phase after a
    /// job whose writes never overlap: sequential, or random with the random map).
    fn next_verify(&mut self) -> Option<BlockRequest> {
        let replay = self.replay.as_mut()?;
        while self.verified < self.writes {
            let request = replay.next()?;
            if request.op == IoOp::Write {
                self.verified += 1;
                return Some(as_verify_read(request));
            }
        }
        None
    }
}

/// A write read back by fio's verify.
fn as_verify_read(write: BlockRequest) -> BlockRequest {
    BlockRequest {
        op: IoOp::Read,
        placement_id: 0,
        ..write
    }
}
