//! Merging the streams of concurrent fio jobs into one request stream.

use crate::synthetic::{SyntheticGenerator, SyntheticSpec};
use crate::{BlockRequest, WorkloadError};

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
    /// The synthetic workload of this stream.
    pub spec: SyntheticSpec,
}

/// A stream in the merge with its smooth weighted round-robin credit.
#[derive(Debug)]
struct Member {
    generator: SyntheticGenerator,
    weight: i64,
    credit: i64,
    exhausted: bool,
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
    current_group: usize,
    queue_depth: u64,
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
            groups[group].push(Member {
                generator: stream.spec.generator()?,
                weight: i64::from(stream.iodepth.max(1)),
                credit: 0,
                exhausted: false,
            });
            depths[group] += u64::from(stream.iodepth);
        }
        Ok(FioGenerator {
            groups,
            current_group: 0,
            queue_depth: depths.into_iter().max().unwrap_or(0),
        })
    }

    /// Sum of the `iodepth`s of the largest group: the host queue depth that reproduces fio's
    /// concurrency for this job file.
    pub fn queue_depth(&self) -> u64 {
        self.queue_depth
    }

    /// The next request of the current group, or `None` when all its streams are done.
    fn next_in_group(members: &mut [Member]) -> Option<BlockRequest> {
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
            match members[chosen].generator.next() {
                Some(request) => return Some(request),
                None => members[chosen].exhausted = true,
            }
        }
    }
}

impl Iterator for FioGenerator {
    type Item = BlockRequest;

    fn next(&mut self) -> Option<BlockRequest> {
        while let Some(group) = self.groups.get_mut(self.current_group) {
            if let Some(request) = Self::next_in_group(group) {
                return Some(request);
            }
            self.current_group += 1;
        }
        None
    }
}
