//! Merging the streams of concurrent fio jobs into one request stream.

use super::extras::StreamShape;
use super::phases::JobStream;
use crate::synthetic::SyntheticSpec;
use crate::{BlockRequest, WorkloadError};
use nandlab_core::{SimClock, SimTime};

/// One independent request stream: a clone of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct FioStream {
    /// Name of the job it is a clone of.
    pub job_name: String,
    /// 0-based clone index within the job (`numjobs`).
    pub clone_index: u32,
    /// 0-based stonewall group: groups run one after the other.
    pub group_index: u32,
    /// The job's `iodepth`: the stream's share of the merged stream.
    pub iodepth: u32,
    /// The synthetic workload of this stream (`request_count`: the requests of its size,
    /// what it issues without a clock).
    pub spec: SyntheticSpec,
    /// What the job adds to the spec: time limits, verify, per-direction offsets.
    pub plan: StreamPlan,
    /// Offsets and sizes beyond the spec: `bssplit`, `rw=read:N`, zoned distributions.
    pub shape: StreamShape,
    /// `flow`: the merge weight instead of `iodepth` (fio keeps the jobs of a flow at
    /// this ratio of I/Os).
    pub flow: Option<u32>,
}

/// The parts of a job that a [`SyntheticSpec`] does not express.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamPlan {
    /// `time_based`: with a clock, the stream repeats its region until the deadline.
    pub time_based: bool,
    /// `runtime` in ns: with a clock, the stream stops this long after `ramp_time`.
    pub runtime_ns: Option<u64>,
    /// `ramp_time` in ns: with a clock, requests before it do not count toward the size.
    pub ramp_time_ns: Option<u64>,
    /// `number_ios`: the most requests, also for a time-based job.
    pub number_ios: Option<u64>,
    /// `verify`: after the stream, its writes are read back in the order written.
    pub verify: bool,
    /// `rw=rw`: reads and writes keep separate sequential positions, as in fio.
    pub per_direction: bool,
    /// `exitall`: the stream's group ends when it does.
    pub exitall: bool,
    /// `verify_backlog` (with `verify`): after every N writes they are read back.
    pub verify_backlog: Option<u64>,
    /// `trimwrite`/`randtrimwrite`: each write is preceded by a trim of its range (fio
    /// counts the writes' bytes toward the size).
    pub trim_before_write: bool,
    /// `startdelay` in ns: the stream's arrivals (`rate`) are this much later.
    pub start_delay_ns: u64,
    /// `trimwrite` with its own trim size (`bs=r,w,t`): trims of this size, each before the
    /// writes it covers.
    pub trim_bytes: Option<u64>,
}

/// A stream in the merge with its smooth weighted round-robin credit.
#[derive(Debug)]
struct Member {
    generator: JobStream,
    /// Index of the stream in the file (for the zoned state).
    stream: usize,
    exitall: bool,
    /// The stream stops at a simulated time (`runtime`): its writes may not all happen.
    timed: bool,
    weight: i64,
    credit: i64,
    exhausted: bool,
    /// `startdelay`: added to the stream's arrivals.
    delay: SimTime,
    /// The next request, drawn ahead when the group merges by arrival.
    pending: Option<BlockRequest>,
}

/// The merged request stream of an fio job file.
///
/// Within a stonewall group, streams interleave by smooth weighted round-robin with weight =
/// `iodepth`: a closed-loop job keeps `iodepth` requests in flight, so with similar latencies
/// it completes (and issues) requests in proportion to its depth. Groups follow each other.
/// Allocation-free per request.
#[derive(Debug)]
pub struct FioGenerator {
    groups: Vec<Vec<Member>>,
    /// Per group: every stream is open-loop (`rate`), so the group merges by arrival time.
    by_arrival: Vec<bool>,
    current_group: usize,
    queue_depth: u64,
    /// The simulated time the streams read (time limits apply only with one).
    clock: Option<SimClock>,
    /// When the current group took its first request.
    group_start: Option<SimTime>,
    /// Device capacity: offsets beyond it fold into it (`u64::MAX`: none).
    capacity_bytes: u64,
    /// Leave out the writes of streams with a `runtime` (see [`FioGenerator::for_footprint`]).
    skip_timed_writes: bool,
    /// `zonemode=zbd` and placement-id lists (see `zoned.rs`).
    zones: Option<Box<super::zoned::ZoneHost>>,
}

impl FioGenerator {
    /// Builds the generators of `streams` (grouped by `group_index`, which must be
    /// non-decreasing as produced by [`super::FioJobFile::streams`]).
    pub fn new(streams: &[FioStream]) -> Result<Self, WorkloadError> {
        let mut groups: Vec<Vec<Member>> = Vec::new();
        let mut depths: Vec<u64> = Vec::new();
        for stream in streams {
            let group = stream.group_index as usize;
            while groups.len() <= group {
                groups.push(Vec::new());
                depths.push(0);
            }
            let index = groups.iter().map(Vec::len).sum();
            groups[group].push(Member {
                generator: JobStream::new(&stream.spec, &stream.plan, &stream.shape)?,
                stream: index,
                exitall: stream.plan.exitall,
                timed: stream.plan.runtime_ns.is_some(),
                weight: i64::from(stream.flow.unwrap_or(stream.iodepth).max(1)),
                credit: 0,
                exhausted: false,
                delay: SimTime::from_ns(stream.plan.start_delay_ns),
                pending: None,
            });
            depths[group] += u64::from(stream.iodepth);
        }
        let by_arrival = streams_by_group(streams, groups.len());
        Ok(FioGenerator {
            groups,
            by_arrival,
            current_group: 0,
            queue_depth: depths.into_iter().max().unwrap_or(0),
            clock: None,
            group_start: None,
            capacity_bytes: u64::MAX,
            skip_timed_writes: false,
            zones: None,
        })
    }

    /// Reads simulated time from `clock` (published by the SSD's run loop), which makes
    /// `runtime`, `time_based` and `ramp_time` take effect; without a clock every stream
    /// issues the requests of its size (one pass of a time-based job).
    pub fn with_clock(mut self, clock: SimClock) -> Self {
        for member in self.groups.iter_mut().flatten() {
            member.generator.set_clocked(true);
        }
        self.clock = Some(clock);
        self
    }

    /// The stream for finding the pages read before they are written (no clock): the writes
    /// of streams that stop at a simulated time are left out, since how many of them happen
    /// is known only when simulating; their reads and every other request stay.
    pub fn for_footprint(mut self) -> Self {
        self.skip_timed_writes = true;
        self
    }

    /// Rewrites each stream's requests through `zones` (fio's `zonemode=zbd`).
    pub(crate) fn with_zones(mut self, zones: super::zoned::ZoneHost) -> Self {
        self.zones = Some(Box::new(zones));
        self
    }

    /// Folds offsets beyond `capacity_bytes` into the device (offset modulo capacity; a
    /// request that would straddle the end is moved to end there), as trace replay does.
    pub fn folded_into(mut self, capacity_bytes: u64) -> Self {
        self.capacity_bytes = capacity_bytes;
        self
    }

    fn fold_request(&self, mut request: BlockRequest) -> BlockRequest {
        let capacity = self.capacity_bytes;
        if request.offset_bytes.saturating_add(request.size_bytes) > capacity {
            request.offset_bytes %= capacity;
            if request.offset_bytes + request.size_bytes > capacity {
                request.offset_bytes = capacity - request.size_bytes;
            }
        }
        request
    }

    /// Sum of the `iodepth`s of the largest group: the host queue depth that reproduces fio's
    /// concurrency for this job file.
    pub fn queue_depth(&self) -> u64 {
        self.queue_depth
    }

    /// The next request of the current group, or `None` when all its streams are done.
    /// `elapsed_ns`: simulated time since the group started, if there is a clock.
    fn next_in_group(
        members: &mut [Member],
        elapsed_ns: Option<u64>,
        skip_timed_writes: bool,
        zones: &mut Option<Box<super::zoned::ZoneHost>>,
    ) -> Option<BlockRequest> {
        loop {
            let total: i64 = members
                .iter()
                .filter(|m| !m.exhausted)
                .map(|m| m.weight)
                .sum();
            if total == 0 {
                return None;
            }
            for member in members.iter_mut().filter(|m| !m.exhausted) {
                member.credit += member.weight;
            }
            let mut chosen: Option<usize> = None;
            for (i, member) in members.iter().enumerate() {
                let better = chosen.is_none_or(|c| member.credit > members[c].credit);
                if !member.exhausted && better {
                    chosen = Some(i);
                }
            }
            let chosen = chosen?;
            members[chosen].credit -= total;
            let next = members[chosen].generator.next(elapsed_ns);
            match members[chosen].through_zones(next, zones) {
                Some(request) if members[chosen].skips(&request, skip_timed_writes) => {}
                Some(request) => return Some(request),
                None if members[chosen].exitall => {
                    members.iter_mut().for_each(|m| m.exhausted = true);
                    return None;
                }
                None => members[chosen].exhausted = true,
            }
        }
    }
}

impl Member {
    /// `next` as the zoned host places it (`zonemode=zbd`; `None`: nothing to issue).
    fn through_zones(
        &self,
        next: Option<BlockRequest>,
        zones: &mut Option<Box<super::zoned::ZoneHost>>,
    ) -> Option<BlockRequest> {
        match (next, zones.as_mut()) {
            (Some(request), Some(zones)) => zones.adjust(self.stream, request),
            (next, _) => next,
        }
    }

    /// Whether `request` is dropped: a timed stream's write when the caller skips those.
    fn skips(&self, request: &BlockRequest, skip_timed_writes: bool) -> bool {
        skip_timed_writes && self.timed && request.op == crate::IoOp::Write
    }
}

/// Per group, whether all its streams are open-loop (they then merge by arrival time).
fn streams_by_group(streams: &[FioStream], groups: usize) -> Vec<bool> {
    (0..groups)
        .map(|g| {
            streams
                .iter()
                .filter(|s| s.group_index as usize == g)
                .all(|s| s.spec.arrival != crate::synthetic::ArrivalProcess::ClosedLoop)
        })
        .collect()
}

impl FioGenerator {
    /// The next request of a group of open-loop streams: the earliest arrival of their next
    /// requests (ties: the earlier stream), each stream's arrivals shifted by its `startdelay`.
    fn next_by_arrival(
        members: &mut [Member],
        elapsed_ns: Option<u64>,
        skip_timed_writes: bool,
        zones: &mut Option<Box<super::zoned::ZoneHost>>,
    ) -> Option<BlockRequest> {
        loop {
            for member in members.iter_mut() {
                if member.exhausted || member.pending.is_some() {
                    continue;
                }
                match member.generator.next(elapsed_ns) {
                    Some(mut request) => {
                        request.arrival = request.arrival.map(|a| a.saturating_add(member.delay));
                        member.pending = Some(request);
                    }
                    // this stream's last request went first: the group ends (exitall)
                    None if member.exitall => {
                        members.iter_mut().for_each(|m| m.exhausted = true);
                        return None;
                    }
                    None => member.exhausted = true,
                }
            }
            let chosen = members
                .iter()
                .enumerate()
                .filter_map(|(i, m)| m.pending.map(|r| (r.arrival, i)))
                .min()?
                .1;
            let member = &mut members[chosen];
            let next = member.pending.take();
            if let Some(request) = member.through_zones(next, zones)
                && !member.skips(&request, skip_timed_writes)
            {
                return Some(request);
            }
        }
    }
}

impl Iterator for FioGenerator {
    type Item = BlockRequest;

    fn next(&mut self) -> Option<BlockRequest> {
        while self.current_group < self.groups.len() {
            let elapsed_ns = self.clock.as_ref().map(|clock| {
                let now = clock.now();
                let start = *self.group_start.get_or_insert(now);
                now.saturating_sub(start).as_ps() / nandlab_core::time::PS_PER_NS
            });
            let group = &mut self.groups[self.current_group];
            let next = if self.by_arrival[self.current_group] {
                Self::next_by_arrival(group, elapsed_ns, self.skip_timed_writes, &mut self.zones)
            } else {
                Self::next_in_group(group, elapsed_ns, self.skip_timed_writes, &mut self.zones)
            };
            if let Some(request) = next {
                return Some(self.fold_request(request));
            }
            self.current_group += 1;
            self.group_start = None;
        }
        None
    }
}
