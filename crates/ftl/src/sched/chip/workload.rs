//! Chip-level workloads (paper 003 Table II): the synthesized flash-friendly `swr` (sequential
//! 2 KB writes) and `srd` (sequential 2 KB reads), and synthetic stand-ins for the paper's
//! disk-friendly enterprise traces built from the request mix that Table II gives for each
//! (write share, mean write and read sizes) with uniformly random offsets.

use nandlab_core::SimRng;
use serde::{Deserialize, Serialize};

/// One host request to the chip-level scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipRequest {
    /// A write (else a read).
    pub write: bool,
    /// Logical byte offset (page-aligned for the synthesized workloads).
    pub offset_bytes: u64,
    /// Length in bytes.
    pub size_bytes: u32,
}

/// A chip-level workload of paper 003 Table II.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChipWorkloadKind {
    /// Synthesized write intensive: 100 % writes, sequential within blocks.
    Swr,
    /// Synthesized read intensive: 100 % reads, sequential within blocks.
    Srd,
    /// MSN file storage server mix (93.9 % writes, 20.7 KB writes, 47.1 KB reads).
    Msnfs,
    /// Online transaction mix (84.6 % writes, 3.7 KB writes, 0.4 KB reads).
    Fin,
    /// Search engine mix (0.01 % writes, 99.1 KB writes, 15.1 KB reads).
    Web,
    /// Shared home directories mix (2.6 % writes, 96.2 KB writes, 52.6 KB reads).
    Usr,
    /// Printing server mix (14.5 % writes, 97.1 KB writes, 15.1 KB reads).
    Prn,
}

impl ChipWorkloadKind {
    /// Every workload, in report order.
    pub const ALL: [ChipWorkloadKind; 7] = [
        ChipWorkloadKind::Swr,
        ChipWorkloadKind::Srd,
        ChipWorkloadKind::Msnfs,
        ChipWorkloadKind::Fin,
        ChipWorkloadKind::Web,
        ChipWorkloadKind::Usr,
        ChipWorkloadKind::Prn,
    ];
    /// The workload's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ChipWorkloadKind::Swr => "swr",
            ChipWorkloadKind::Srd => "srd",
            ChipWorkloadKind::Msnfs => "msnfs",
            ChipWorkloadKind::Fin => "fin",
            ChipWorkloadKind::Web => "web",
            ChipWorkloadKind::Usr => "usr",
            ChipWorkloadKind::Prn => "prn",
        }
    }

    /// (write fraction, mean write size KB, mean read size KB) from Table II.
    fn mix(self) -> (f64, f64, f64) {
        match self {
            ChipWorkloadKind::Swr => (1.0, 2.0, 2.0),
            ChipWorkloadKind::Srd => (0.0, 2.0, 2.0),
            ChipWorkloadKind::Msnfs => (0.939, 20.7, 47.1),
            ChipWorkloadKind::Fin => (0.846, 3.7, 0.4),
            ChipWorkloadKind::Web => (0.0001, 99.1, 15.1),
            ChipWorkloadKind::Usr => (0.026, 96.2, 52.6),
            ChipWorkloadKind::Prn => (0.145, 97.1, 15.1),
        }
    }
}

impl std::str::FromStr for ChipWorkloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown chip workload `{s}` (expected one of {})",
                    Self::ALL.map(|k| k.name()).join(", ")
                )
            })
    }
}

/// A deterministic stream of chip requests.
#[derive(Clone, Debug)]
pub struct ChipWorkload {
    kind: ChipWorkloadKind,
    remaining: u64,
    request_bytes: u32,
    span_bytes: u64,
    next_offset_bytes: u64,
    rng: SimRng,
}

impl ChipWorkload {
    /// `request_bytes` overrides the sizes of `swr`/`srd` (2 KB in the paper); `span_bytes` is
    /// the logical space random offsets fall in.
    pub fn new(
        kind: ChipWorkloadKind,
        requests: u64,
        request_bytes: u32,
        span_bytes: u64,
        seed: u64,
    ) -> Self {
        ChipWorkload {
            kind,
            remaining: requests,
            request_bytes: request_bytes.max(1),
            span_bytes: span_bytes.max(1),
            next_offset_bytes: 0,
            rng: SimRng::stream(seed, "nand.chip-workload"),
        }
    }
}

impl Iterator for ChipWorkload {
    type Item = ChipRequest;
    fn next(&mut self) -> Option<ChipRequest> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match self.kind {
            ChipWorkloadKind::Swr | ChipWorkloadKind::Srd => {
                let offset = self.next_offset_bytes;
                self.next_offset_bytes = (offset + u64::from(self.request_bytes)) % self.span_bytes;
                Some(ChipRequest {
                    write: self.kind == ChipWorkloadKind::Swr,
                    offset_bytes: offset,
                    size_bytes: self.request_bytes,
                })
            }
            _ => {
                let (write_fraction, write_kb, read_kb) = self.kind.mix();
                let write = self.rng.chance(write_fraction);
                let size_bytes = ((if write { write_kb } else { read_kb }) * 1024.0).round() as u32;
                let sectors = (self.span_bytes / 512).max(1);
                Some(ChipRequest {
                    write,
                    offset_bytes: self.rng.below(sectors) * 512,
                    size_bytes: size_bytes.max(512),
                })
            }
        }
    }
}
