//! In-memory devices for unit tests (test doubles, not the real SSD).
//!
//! - [`MemDevice`]: pages in a `Vec`, a fixed latency per operation, no FTL.
//! - [`MemFtl`]: a small but functional page-mapped, log-structured FTL over in-memory flash
//!   blocks (out-of-place writes, FIFO victim selection as in paper 000, GC copying valid pages,
//!   erase counts), so that Insert Address Assist can be tested against real "next erase block"
//!   contents. The simulated SSD with the chip model lives in `nandlab-ftl`.

mod device;
mod ftl;

pub use device::MemDevice;
pub use ftl::{MemFtl, MemFtlConfig};
