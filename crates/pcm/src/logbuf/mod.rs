//! Log buffers for flash pages: small updates are kept as byte-range deltas and merged with
//! the flash copy later. The thesis's PCM log region (SPEC P3, [`PcmLogRegion`]) and the two
//! baselines it is compared with (SPEC P4: In-Page Logging, [`InPageLog`]; dPRAM,
//! [`DpramLog`]) sit behind one [`LogBuffer`] trait.
//!
//! ## Contract with the caller (an FTL front end)
//! Pages are logical pages ([`PageNo`]); page `p` belongs to flash block `p / pages_per_block`.
//! The caller owns the flash contents and shows them through [`FlashPages`]. A call may need
//! flash work, which it appends to a caller-owned [`FlashWork`]: flash pages to read (for a
//! delta or a merge) and whole merged pages to write, block by block in page order (a
//! sequential flush). **The caller applies the work's writes before its next call.** Then:
//! - [`WriteOutcome::Logged`]: the update is in the log (or changed nothing);
//! - [`WriteOutcome::ToFlash`]: the page has no log now; the caller writes the update itself
//!   over the page's flash copy (zeros when it has none).

mod dpram;
mod ipl;
mod region;
mod region_config;
pub mod sector;
mod stats;
#[cfg(test)]
mod tests;

pub use dpram::{DpramConfig, DpramLog};
pub use ipl::{InPageLog, IplConfig};
pub use region::PcmLogRegion;
pub use region_config::{LogRegionConfig, SectorOverflow, TABLE_ROW_BYTES};
pub use stats::LogStats;

use crate::device::{AccessCost, PcmDevice};
use crate::error::{PcmResult, argument_error};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A logical page number (an LPA for a page-mapped FTL).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct PageNo(pub u32);

impl fmt::Display for PageNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The flash shape a log buffer mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlashShape {
    /// Bytes of a flash page (at most 32 KiB).
    pub page_size_bytes: u32,
    /// Pages of a flash block (m).
    pub pages_per_block: u32,
    /// Logical pages the caller addresses (`0..pages`).
    pub pages: u32,
}

/// The caller's flash contents.
pub trait FlashPages {
    /// The bytes of `page` in flash (`page_size_bytes` long), `None` if it holds none.
    fn page(&self, page: PageNo) -> Option<&[u8]>;
}

/// Flash work a log-buffer call asks of the caller, appended in order. Reused across calls
/// (clear it after applying), so steady state allocates nothing.
#[derive(Debug, Default)]
pub struct FlashWork {
    /// Flash pages the call read (for a delta or a merge).
    pub reads: Vec<PageNo>,
    /// Each write's page and where its bytes are: a page of `data`, or [`FLASH_COPY`] (the
    /// page's flash copy, unchanged; only when [`FlashWork::keep_flash_copies`] is on).
    writes: Vec<(PageNo, u32)>,
    data: Vec<u8>,
    page_size_bytes: usize,
    /// Whether writes of unchanged flash copies are recorded without their bytes.
    flash_copies_by_reference: bool,
    /// Whole blocks flushed sequentially (each a run of `writes`).
    pub blocks_flushed: u32,
    /// Log sectors to program into flash (In-Page Logging's in-flash log area).
    pub log_sector_writes: u32,
    /// Flash log pages to read (In-Page Logging).
    pub log_page_reads: u32,
    /// Erase units merged, in order (In-Page Logging: their log sectors are dead; the call's
    /// `log_sector_writes` come after these merges).
    pub units_merged: Vec<u32>,
}

impl FlashWork {
    /// Empties the work, keeping its buffers.
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.data.clear();
        self.blocks_flushed = 0;
        self.log_sector_writes = 0;
        self.log_page_reads = 0;
        self.units_merged.clear();
    }

    /// Number of page writes.
    pub fn writes_len(&self) -> usize {
        self.writes.len()
    }

    /// Records a write of a page's unchanged flash copy (a whole-block flush's page without a
    /// delta) by reference, without copying its bytes: the caller reads them from its own
    /// flash ([`FlashWork::entries`]). Off by default (every write carries its bytes and
    /// [`FlashWork::writes`] works); the simulated work is the same either way.
    pub fn keep_flash_copies(&mut self, by_reference: bool) {
        self.flash_copies_by_reference = by_reference;
    }

    /// The page writes, in the order to issue them. Panics if a write is a flash copy kept by
    /// reference (use [`FlashWork::entries`] then).
    pub fn writes(&self) -> impl Iterator<Item = (PageNo, &[u8])> {
        self.entries().map(|(p, d)| {
            (
                p,
                d.expect("a flash copy kept by reference: use FlashWork::entries"),
            )
        })
    }

    /// The page writes, in the order to issue them, as `(page, bytes)`; `None` for a page's
    /// unchanged flash copy kept by reference (its bytes are the caller's flash copy as it was
    /// when the call was made, before any of this work is applied).
    pub fn entries(&self) -> impl Iterator<Item = (PageNo, Option<&[u8]>)> {
        let size = self.page_size_bytes;
        self.writes.iter().map(move |&(p, at)| {
            let bytes = (at != FLASH_COPY)
                .then(|| &self.data[at as usize * size..(at as usize + 1) * size]);
            (p, bytes)
        })
    }

    /// Replaces the bytes of the latest write of `page`; `false` if there is none.
    pub(crate) fn overwrite_last(&mut self, page: PageNo, bytes: &[u8]) -> bool {
        match self.writes.iter().rposition(|(p, _)| *p == page) {
            Some(i) => {
                let size = bytes.len();
                if self.writes[i].1 == FLASH_COPY {
                    self.page_size_bytes = size;
                    self.writes[i].1 = (self.data.len() / size) as u32;
                    self.data.extend_from_slice(bytes);
                } else {
                    let at = self.writes[i].1 as usize * size;
                    self.data[at..at + size].copy_from_slice(bytes);
                }
                true
            }
            None => false,
        }
    }

    pub(crate) fn push_write(&mut self, page: PageNo, bytes: &[u8]) {
        debug_assert!(self.page_size_bytes == 0 || self.page_size_bytes == bytes.len());
        self.page_size_bytes = bytes.len();
        self.writes
            .push((page, (self.data.len() / bytes.len()) as u32));
        self.data.extend_from_slice(bytes);
    }

    /// A write of `page` with `bytes`, returned for changing in place (a merge's delta).
    pub(crate) fn push_write_mut(&mut self, page: PageNo, bytes: &[u8]) -> &mut [u8] {
        self.push_write(page, bytes);
        let start = self.data.len() - bytes.len();
        &mut self.data[start..]
    }

    /// A write of `page`'s flash copy `bytes`, unchanged: by reference when the caller asked
    /// for it, else copied like any write.
    pub(crate) fn push_flash_copy(&mut self, page: PageNo, bytes: &[u8]) {
        if self.flash_copies_by_reference {
            self.writes.push((page, FLASH_COPY));
        } else {
            self.push_write(page, bytes);
        }
    }
}

/// A write in a [`FlashWork`] whose bytes are the page's unchanged flash copy.
const FLASH_COPY: u32 = u32::MAX;

/// What became of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WriteOutcome {
    /// Absorbed by the log (or it changed nothing).
    Logged,
    /// Not logged: the caller writes it to the flash page (which has no log now).
    ToFlash,
}

/// A write's outcome and its cost in the log's own medium.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WriteResult {
    /// Logged or for the caller to write.
    pub outcome: WriteOutcome,
    /// PCM cost of the call (zero for flash-resident logs).
    pub cost: AccessCost,
}

/// A log buffer for flash pages (the PCM log region; the IPL and dPRAM baselines).
pub trait LogBuffer {
    /// An update of `bytes` at byte `offset` of `page`.
    fn write(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        offset: u32,
        bytes: &[u8],
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<WriteResult>;

    /// The up-to-date bytes of `page` into `out`: its flash copy (`flash`, zeros when `None`)
    /// merged with its log.
    fn read(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        flash: Option<&[u8]>,
        out: &mut [u8],
    ) -> PcmResult<AccessCost>;

    /// `page` was trimmed: its log is dropped.
    fn trim(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost>;

    /// Merges and flushes every logged block (e.g. at the end of a run or before power-off).
    fn flush_all(
        &mut self,
        device: &mut PcmDevice,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<AccessCost>;

    /// Running totals.
    fn stats(&self) -> LogStats;
}

/// The checks every log buffer's `write` makes: `bytes` is a non-empty range inside a page of
/// `page_bytes` at `offset`. Returns the offset as an index.
pub(crate) fn check_update(offset: u32, bytes: &[u8], page_bytes: usize) -> PcmResult<usize> {
    let offset = offset as usize;
    if bytes.is_empty() || offset + bytes.len() > page_bytes {
        return Err(argument_error(
            "bytes",
            format!(
                "{} B at offset {offset} do not fit a {page_bytes} B page (or are empty)",
                bytes.len()
            ),
        ));
    }
    Ok(offset)
}

/// The start of every log buffer's `read`: checks the page buffers' sizes and fills `out` with
/// the flash page (zeros when there is none), onto which the buffer applies its log.
pub(crate) fn start_read(flash: Option<&[u8]>, out: &mut [u8], page_bytes: usize) -> PcmResult<()> {
    if out.len() != page_bytes || flash.is_some_and(|f| f.len() != page_bytes) {
        return Err(argument_error(
            "out",
            format!("page buffers must be {page_bytes} B"),
        ));
    }
    match flash {
        Some(f) => out.copy_from_slice(f),
        None => out.fill(0),
    }
    Ok(())
}
