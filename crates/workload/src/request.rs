//! What every workload produces: a stream of block requests.

use crate::WorkloadError;
use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The operation of a block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoOp {
    /// Read `size_bytes` starting at `offset_bytes`.
    Read,
    /// Write `size_bytes` starting at `offset_bytes`.
    Write,
    /// Discard (TRIM / UNMAP / deallocate) the range.
    Trim,
}

impl IoOp {
    /// The lowercase name used by the native trace format (`read`, `write`, `trim`).
    pub const fn name(self) -> &'static str {
        match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Trim => "trim",
        }
    }
}

impl fmt::Display for IoOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One host request to a block device: a byte range and an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockRequest {
    /// When the host submits the request, or `None` for closed-loop issue: as soon as the
    /// host queue has room (the queue depth then sets the load).
    pub arrival: Option<SimTime>,
    /// Read, write or trim.
    pub op: IoOp,
    /// First byte of the range.
    pub offset_bytes: u64,
    /// Length of the range; readers and generators never produce 0.
    pub size_bytes: u64,
}

impl BlockRequest {
    /// One past the last byte of the range (`offset_bytes + size_bytes`); readers and
    /// generators guarantee it does not overflow.
    pub const fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.size_bytes
    }
}

/// A fallible, streaming source of requests: trace readers yield an error for a bad line (and
/// then stop). Implemented for every iterator with that item type.
///
/// An infallible generator becomes a source with `.map(Ok)`.
pub trait RequestSource: Iterator<Item = Result<BlockRequest, WorkloadError>> {}

impl<I> RequestSource for I where I: Iterator<Item = Result<BlockRequest, WorkloadError>> + ?Sized {}

#[cfg(test)]
mod tests {
    use super::*;

    fn takes_source(source: impl RequestSource) -> usize {
        source.count()
    }

    #[test]
    fn generators_become_sources_with_map_ok() {
        let request = BlockRequest {
            arrival: None,
            op: IoOp::Write,
            offset_bytes: 4096,
            size_bytes: 512,
        };
        assert_eq!(request.end_bytes(), 4608);
        assert_eq!(takes_source(std::iter::repeat_n(request, 3).map(Ok)), 3);
        assert_eq!(IoOp::Trim.to_string(), "trim");
    }
}
