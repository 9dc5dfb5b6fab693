//! The request every layer speaks: a byte range and an operation, as produced by workload
//! generators and trace readers and consumed by the SSD controller. It lives here, below both,
//! so that the controller does not depend on the workload crate.

use crate::SimTime;
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
    /// Placement id of a write (NVMe Flexible Data Placement's reclaim-unit handle): writes
    /// with different ids go to different flash blocks. 0 by default.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub placement_id: u16,
}

fn is_zero(id: &u16) -> bool {
    *id == 0
}

impl BlockRequest {
    /// One past the last byte of the range (`offset_bytes + size_bytes`); readers and
    /// generators guarantee it does not overflow.
    pub const fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.size_bytes
    }
}
