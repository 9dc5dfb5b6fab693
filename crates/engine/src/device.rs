//! What the engine needs from a block device, and the co-design hints an FTL may offer.
//!
//! The engine talks to storage only through [`BlockDevice`] (a page-granular logical block
//! device, like redb's `StorageBackend`) and, for Insert Address Assist, [`CoDesignHints`]
//! (paper 000 Fig. 10, SPEC F7). Calls are synchronous: each call completes before it returns
//! and advances the device's own simulated clock (queue depth 1, the paper's query-at-a-time
//! model). Test doubles live in [`crate::mem`]; the runner adapts the real FTL to these traits.

use crate::error::EngineError;
use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};

/// A logical page address (paper 000 Fig. 4): the workspace's one [`nandlab_core::Lpa`],
/// shared with the SSD controller.
pub use nandlab_core::Lpa;

/// Cumulative device-side counters. Devices that do not track a counter leave it at zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCounters {
    /// Page reads issued by the host.
    pub host_reads: u64,
    /// Page writes issued by the host.
    pub host_writes: u64,
    /// Trims issued by the host.
    pub host_trims: u64,
    /// Pages copied by garbage collection (read + program of a still-valid page).
    pub page_copies: u64,
    /// Blocks erased.
    pub erases: u64,
    /// Garbage-collection invocations (one per victim block).
    pub gc_count: u64,
    /// Simulated time spent in garbage collection.
    pub gc_time: SimTime,
}

impl DeviceCounters {
    /// Counter-wise difference `self - earlier` (for a measurement window).
    pub fn since(&self, earlier: &DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            host_reads: self.host_reads - earlier.host_reads,
            host_writes: self.host_writes - earlier.host_writes,
            host_trims: self.host_trims - earlier.host_trims,
            page_copies: self.page_copies - earlier.page_copies,
            erases: self.erases - earlier.erases,
            gc_count: self.gc_count - earlier.gc_count,
            gc_time: self.gc_time - earlier.gc_time,
        }
    }
}

/// A logical block device of fixed-size pages.
///
/// Contract, for every implementation:
/// - `page_size_bytes()` and `logical_page_count()` never change over the device's life.
/// - `read_page` fills `buf` (exactly one page long) with the bytes of the last completed
///   `write_page` of that LPA, or zeros if the LPA was never written or was trimmed since.
/// - `write_page` stores a whole page (`data` exactly one page long) out of place as far as the
///   caller can tell: a later read returns exactly `data`.
/// - `trim_page` declares the page's contents dead; later reads return zeros.
/// - An LPA at or beyond `logical_page_count()` or a buffer of the wrong length is an error
///   ([`EngineError::LpaOutOfRange`], [`EngineError::BufferSize`]), never a panic.
/// - Power loss (devices that model it): a completed write or trim may be lost until a later
///   `flush` has returned; then it is kept. A page reads after a power loss as one of the
///   whole pages written to it (its last durable one or a later one), never a mix.
/// - `now()` is the device's simulated clock. It never goes backwards, and each call above
///   returns only after advancing it by the operation's latency, including any garbage
///   collection the operation triggered.
pub trait BlockDevice {
    /// Size of one logical page in bytes.
    fn page_size_bytes(&self) -> usize;
    /// Number of logical pages; valid LPAs are `0..logical_page_count()`.
    fn logical_page_count(&self) -> u64;
    /// Reads logical page `lpa` into `buf`.
    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError>;
    /// [`BlockDevice::read_page`] for a caller whose `buf` already holds the bytes it expects
    /// there: `Ok(true)` when the page equals `buf` (left as it is), `Ok(false)` after filling
    /// `buf` with the page like `read_page` (equal or not: the caller checks). Same simulated
    /// time, energy and counters as `read_page`. The default reads; a device that can compare
    /// its stored bytes in place saves the copy (and the caller its check).
    fn read_page_expecting(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<bool, EngineError> {
        self.read_page(lpa, buf)?;
        Ok(false)
    }
    /// Writes the whole logical page `lpa`.
    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError>;
    /// Trims logical page `lpa` (its contents become dead; reads return zeros).
    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError>;
    /// Makes every write and trim completed so far durable (an NVMe Flush): after it returns,
    /// a power loss keeps them. The default is for devices without volatile state (nothing to
    /// do).
    fn flush(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// The device's current simulated time.
    fn now(&self) -> SimTime;
    /// Energy consumed by the device so far, in millijoules (0 if not modelled).
    fn energy_mj(&self) -> f64 {
        0.0
    }
    /// Cumulative counters (all zero if not tracked).
    fn counters(&self) -> DeviceCounters {
        DeviceCounters::default()
    }
    /// Write/erase cycles per physical block so far (empty if not tracked).
    fn erase_counts(&self) -> Vec<u32> {
        Vec::new()
    }
}

/// Physical knowledge an FTL shares with the engine (paper 000 §3, Fig. 10; SPEC F7).
///
/// The FTL keeps its abstraction: it only tells which logical pages still have valid copies in
/// the block its garbage collector will erase next, so that writes to them leave that block
/// without valid pages. Wear-leveling and GC stay inside the FTL.
pub trait CoDesignHints {
    /// Clears `lpas_out` and fills it with the LPAs whose pages are still valid in the block the
    /// FTL will erase next (from its valid-page table and P2L table, in physical page order).
    /// Empty when the FTL has no erase candidate yet or has no such notion. Costs no simulated
    /// time.
    fn next_erase_block_valid_lpas(&self, lpas_out: &mut Vec<Lpa>);
}

/// Checks the arguments of a page access against the device shape (for implementations).
pub fn check_page_access(
    lpa: Lpa,
    len_bytes: usize,
    page_size_bytes: usize,
    page_count: u64,
) -> Result<(), EngineError> {
    if u64::from(lpa.0) >= page_count {
        return Err(EngineError::LpaOutOfRange { lpa, page_count });
    }
    if len_bytes != page_size_bytes {
        return Err(EngineError::BufferSize {
            lpa,
            len_bytes,
            page_size_bytes,
        });
    }
    Ok(())
}

impl<D: BlockDevice + ?Sized> BlockDevice for &mut D {
    fn page_size_bytes(&self) -> usize {
        (**self).page_size_bytes()
    }
    fn logical_page_count(&self) -> u64 {
        (**self).logical_page_count()
    }
    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        (**self).read_page(lpa, buf)
    }
    fn read_page_expecting(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<bool, EngineError> {
        (**self).read_page_expecting(lpa, buf)
    }
    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        (**self).write_page(lpa, data)
    }
    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        (**self).trim_page(lpa)
    }
    fn flush(&mut self) -> Result<(), EngineError> {
        (**self).flush()
    }
    fn now(&self) -> SimTime {
        (**self).now()
    }
    fn energy_mj(&self) -> f64 {
        (**self).energy_mj()
    }
    fn counters(&self) -> DeviceCounters {
        (**self).counters()
    }
    fn erase_counts(&self) -> Vec<u32> {
        (**self).erase_counts()
    }
}

impl<D: CoDesignHints + ?Sized> CoDesignHints for &mut D {
    fn next_erase_block_valid_lpas(&self, lpas_out: &mut Vec<Lpa>) {
        (**self).next_erase_block_valid_lpas(lpas_out)
    }
}
