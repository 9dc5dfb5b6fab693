//! Host interface (SPEC F1, Z1): host requests, the submission queue with its bounded table of
//! requests in flight, the table of deferred read-modify-write steps, NVMe completion
//! statuses ([`status`]), a zoned namespace's zones ([`zns`]), Flexible Data Placement
//! ([`fdp`]) and the NVMe host interface tying them to an SSD ([`nvme`]: namespaces, queue
//! pairs, arbitration).

pub mod fdp;
pub(crate) mod queue;
pub mod status;
pub mod zns;

use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};

/// Operation of a host request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostOp {
    /// Read the byte range.
    Read,
    /// Write the byte range.
    Write,
    /// Discard the whole logical pages inside the range (partial pages are left as they are).
    Trim,
    /// Write every page of the write buffer to flash (range ignored).
    Flush,
    /// Search-in-Memory vendor command `81h`: match a key against the slots of one logical
    /// page of the SiM region ([`crate::Ssd::execute_search`] only).
    Search,
    /// Search-in-Memory vendor command `82h`: chunks of one logical page of the SiM region
    /// ([`crate::Ssd::execute_search`] only).
    Gather,
}

impl HostOp {
    /// Number of host ops: per-op tables are `[T; HostOp::COUNT]`, indexed by
    /// [`HostOp::index`].
    pub const COUNT: usize = 6;
    /// Every host op, in index order.
    pub const ALL: [HostOp; HostOp::COUNT] = [
        HostOp::Read,
        HostOp::Write,
        HostOp::Trim,
        HostOp::Flush,
        HostOp::Search,
        HostOp::Gather,
    ];
    /// Whether the op is a SiM vendor command (search, gather).
    #[inline]
    pub const fn is_search(self) -> bool {
        self as u8 >= HostOp::Search as u8
    }
    /// Index of the op in per-op tables.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// One request from the host: a byte range and an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostRequest {
    /// Submission time, or `None` for closed loop (issue as soon as the queue has room).
    pub arrival: Option<SimTime>,
    /// Operation.
    pub op: HostOp,
    /// First byte of the range (logical address).
    pub offset_bytes: u64,
    /// Length of the range in bytes.
    pub size_bytes: u64,
    /// Placement id of a write (below `ftl.placement_ids`): its pages go to blocks of that
    /// id only. 0 by default.
    pub placement_id: u16,
    /// Force unit access (NVMe FUA, writes): the write completes only once it is durable. The
    /// device flushes its write buffer (and pads open word lines) with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fua: bool,
}

impl HostRequest {
    /// A closed-loop request.
    pub fn new(op: HostOp, offset_bytes: u64, size_bytes: u64) -> Self {
        HostRequest {
            arrival: None,
            op,
            offset_bytes,
            size_bytes,
            placement_id: 0,
            fua: false,
        }
    }
    /// A closed-loop read.
    pub fn read(offset_bytes: u64, size_bytes: u64) -> Self {
        Self::new(HostOp::Read, offset_bytes, size_bytes)
    }
    /// A closed-loop write.
    pub fn write(offset_bytes: u64, size_bytes: u64) -> Self {
        Self::new(HostOp::Write, offset_bytes, size_bytes)
    }
    /// A closed-loop TRIM.
    pub fn trim(offset_bytes: u64, size_bytes: u64) -> Self {
        Self::new(HostOp::Trim, offset_bytes, size_bytes)
    }
    /// The same request with force unit access (a write completes only once durable).
    pub fn with_fua(mut self) -> Self {
        self.fua = true;
        self
    }
    /// A closed-loop flush of the write buffer.
    pub fn flush() -> Self {
        Self::new(HostOp::Flush, 0, 0)
    }
    /// The same request with placement id `id`.
    pub fn placed(mut self, id: u16) -> Self {
        self.placement_id = id;
        self
    }
    /// The same request submitted at `arrival`.
    pub fn at(mut self, arrival: SimTime) -> Self {
        self.arrival = Some(arrival);
        self
    }
}

impl From<nandlab_core::IoOp> for HostOp {
    #[inline]
    fn from(op: nandlab_core::IoOp) -> Self {
        match op {
            nandlab_core::IoOp::Read => HostOp::Read,
            nandlab_core::IoOp::Write => HostOp::Write,
            nandlab_core::IoOp::Trim => HostOp::Trim,
        }
    }
}

impl From<nandlab_core::BlockRequest> for HostRequest {
    #[inline]
    fn from(r: nandlab_core::BlockRequest) -> Self {
        HostRequest {
            arrival: r.arrival,
            op: r.op.into(),
            offset_bytes: r.offset_bytes,
            size_bytes: r.size_bytes,
            placement_id: r.placement_id,
            fua: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::{BlockRequest, IoOp};

    #[test]
    fn block_requests_convert() {
        let r = BlockRequest {
            arrival: Some(SimTime::from_us(3)),
            op: IoOp::Trim,
            offset_bytes: 4096,
            size_bytes: 8192,
            placement_id: 0,
        };
        assert_eq!(
            HostRequest::from(r),
            HostRequest::trim(4096, 8192).at(SimTime::from_us(3))
        );
    }
}
