//! The In-Page Logging baseline (Lee & Moon, SIGMOD'07; SPEC P4): each flash erase unit keeps
//! a small log area of its own (the paper's layout: 15 data pages and one log page of 16 log
//! sectors of 512 B per 128 KB unit). An update's changes are written as log sectors into its
//! unit's log area (the paper's in-memory log sector of a buffered page is flushed when the
//! page leaves the buffer, which is when the storage sees the write). When a unit's log area
//! is full, the unit is merged: its data pages and log sectors are combined and the pages are
//! written to a fresh unit in page order, and the old unit is erased.
//!
//! Everything here is flash: no PCM is used (costs are zero; the flash work is reported as
//! log sectors to program, log pages to read, merged pages to write and erases). The log area
//! is outside the caller's data pages; an FTL using IPL reserves it (one page in 16 in the
//! paper's layout).

use super::sector;
use super::{
    FlashPages, FlashShape, FlashWork, LogBuffer, LogStats, PageNo, WriteOutcome, WriteResult,
};
use crate::device::{AccessCost, PcmDevice};
use crate::error::{PcmResult, argument_error, config_error};
use serde::{Deserialize, Serialize};

/// Configuration of In-Page Logging (TOML section `ipl`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IplConfig {
    /// Log sectors in each erase unit's log area (paper: 16).
    #[serde(default = "default_log_sectors_per_block")]
    pub log_sectors_per_block: u32,
    /// One log sector, bytes (paper: 512).
    #[serde(default = "default_sector_size_bytes")]
    pub sector_size_bytes: u64,
}

fn default_log_sectors_per_block() -> u32 {
    16
}
fn default_sector_size_bytes() -> u64 {
    512
}

impl Default for IplConfig {
    fn default() -> Self {
        IplConfig {
            log_sectors_per_block: default_log_sectors_per_block(),
            sector_size_bytes: default_sector_size_bytes(),
        }
    }
}

#[derive(Debug, Default)]
struct UnitLog {
    sectors_used: u32,
    /// (page, start in `bytes`, length) of each logged change, oldest first.
    entries: Vec<(u32, u32, u32)>,
    bytes: Vec<u8>,
}

/// In-Page Logging.
#[derive(Debug)]
pub struct InPageLog {
    config: IplConfig,
    shape: FlashShape,
    page_bytes: usize,
    units: Vec<UnitLog>,
    stream: Vec<u8>,
    current: Vec<u8>,
    dirty: sector::DirtyBytes,
    stats: LogStats,
}

impl InPageLog {
    /// The configuration.
    pub fn config(&self) -> &IplConfig {
        &self.config
    }

    /// In-Page Logging over flash of `shape`.
    pub fn new(config: IplConfig, shape: FlashShape) -> PcmResult<Self> {
        let page = u64::from(shape.page_size_bytes);
        if !(8..=page).contains(&config.sector_size_bytes) {
            return Err(config_error(
                "ipl.sector_size_bytes",
                format!(
                    "{} B must be at least 8 B and at most the {page} B page",
                    config.sector_size_bytes
                ),
            ));
        }
        if config.log_sectors_per_block == 0 {
            return Err(config_error(
                "ipl.log_sectors_per_block",
                "must be at least 1",
            ));
        }
        if shape.pages_per_block == 0 || shape.pages == 0 {
            return Err(argument_error(
                "shape",
                "pages_per_block and pages must be at least 1",
            ));
        }
        let units = shape.pages.div_ceil(shape.pages_per_block) as usize;
        crate::memory::check_host_memory("shape.pages", units as u64 * 64)?;
        Ok(InPageLog {
            page_bytes: page as usize,
            units: (0..units).map(|_| UnitLog::default()).collect(),
            stream: Vec::new(),
            current: vec![0; page as usize],
            dirty: sector::DirtyBytes::new(page as usize),
            stats: LogStats::default(),
            config,
            shape,
        })
    }

    fn check_page(&self, page: PageNo) -> PcmResult<()> {
        if page.0 < self.shape.pages {
            Ok(())
        } else {
            Err(argument_error(
                "page",
                format!("{page} is beyond the {} pages", self.shape.pages),
            ))
        }
    }

    /// Applies a page's logged changes, oldest first; whether it had any.
    fn apply(&self, page: PageNo, out: &mut [u8]) -> bool {
        let unit = &self.units[(page.0 / self.shape.pages_per_block) as usize];
        let mut any = false;
        for &(p, start, len) in &unit.entries {
            if p == page.0 {
                sector::apply(&unit.bytes[start as usize..(start + len) as usize], out);
                any = true;
            }
        }
        any
    }

    /// Merges a unit: every page with a flash copy, combined with its log, rewritten in order.
    fn merge(&mut self, unit: u32, flash: &dyn FlashPages, work: &mut FlashWork) {
        let first = unit * self.shape.pages_per_block;
        let last = (first + self.shape.pages_per_block).min(self.shape.pages);
        work.log_page_reads += 1;
        self.stats.flash_log_page_reads += 1;
        let mut merged = std::mem::take(&mut self.current);
        for p in first..last {
            let Some(bytes) = flash.page(PageNo(p)) else {
                continue;
            };
            merged.copy_from_slice(bytes);
            self.apply(PageNo(p), &mut merged);
            work.reads.push(PageNo(p));
            self.stats.flash_page_reads += 1;
            work.push_write(PageNo(p), &merged);
            self.stats.pages_flushed += 1;
        }
        self.current = merged;
        work.blocks_flushed += 1;
        work.units_merged.push(unit);
        self.stats.flash_erases += 1;
        self.stats.merges += 1;
        let u = &mut self.units[unit as usize];
        u.sectors_used = 0;
        u.entries.clear();
        u.bytes.clear();
    }

    fn write_inner(
        &mut self,
        page: PageNo,
        offset: usize,
        bytes: &[u8],
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> WriteOutcome {
        self.stats.writes += 1;
        let Some(flash_bytes) = flash.page(page) else {
            self.stats.direct_new_page += 1;
            return WriteOutcome::ToFlash;
        };
        let mut current = std::mem::take(&mut self.current);
        current.copy_from_slice(flash_bytes);
        let had = self.apply(page, &mut current);
        self.dirty.clear();
        let changed = sector::overlay(
            &mut current[offset..offset + bytes.len()],
            bytes,
            offset,
            &mut self.dirty,
        );
        // only this update's changes are logged (the in-memory log sector)
        sector::encode(&current, &self.dirty, &mut self.stream);
        self.current = current;
        if !changed {
            self.stats.unchanged += 1;
            return WriteOutcome::Logged;
        }
        let unit = page.0 / self.shape.pages_per_block;
        let sector_bytes = self.config.sector_size_bytes as usize;
        let needed = self.stream.len().div_ceil(sector_bytes) as u32;
        if needed > self.config.log_sectors_per_block {
            if self.units[unit as usize].sectors_used > 0 {
                self.merge(unit, flash, work);
                self.stats.merges_overflow += 1;
            }
            self.stats.direct_large_delta += 1;
            return WriteOutcome::ToFlash;
        }
        if self.units[unit as usize].sectors_used + needed > self.config.log_sectors_per_block {
            self.merge(unit, flash, work);
            self.stats.merges_full += 1;
            // the merge wrote this page's older changes; this update is logged in the fresh unit
        }
        if had {
            self.stats.existing_sector += 1;
        } else {
            self.stats.new_sector += 1;
        }
        let u = &mut self.units[unit as usize];
        u.entries
            .push((page.0, u.bytes.len() as u32, self.stream.len() as u32));
        u.bytes.extend_from_slice(&self.stream);
        u.sectors_used += needed;
        work.log_sector_writes += needed;
        self.stats.flash_log_sector_writes += u64::from(needed);
        self.stats.log_bytes_written += self.stream.len() as u64;
        WriteOutcome::Logged
    }
}

impl LogBuffer for InPageLog {
    fn write(
        &mut self,
        _device: &mut PcmDevice,
        page: PageNo,
        offset: u32,
        bytes: &[u8],
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<WriteResult> {
        self.check_page(page)?;
        let offset = super::check_update(offset, bytes, self.page_bytes)?;
        if flash.page(page).is_some_and(|f| f.len() != self.page_bytes) {
            return Err(argument_error(
                "flash",
                format!("page {page} in flash is not {} B", self.page_bytes),
            ));
        }
        Ok(WriteResult {
            outcome: self.write_inner(page, offset, bytes, flash, work),
            cost: AccessCost::default(),
        })
    }

    fn read(
        &mut self,
        _device: &mut PcmDevice,
        page: PageNo,
        flash: Option<&[u8]>,
        out: &mut [u8],
    ) -> PcmResult<AccessCost> {
        self.check_page(page)?;
        super::start_read(flash, out, self.page_bytes)?;
        self.stats.reads += 1;
        if self.apply(page, out) {
            self.stats.reads_merged += 1;
            self.stats.flash_log_page_reads += 1;
        }
        Ok(AccessCost::default())
    }

    fn trim(&mut self, _device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost> {
        self.check_page(page)?;
        self.stats.trims += 1;
        // the sectors stay programmed until the unit is merged; the changes are void
        let unit = &mut self.units[(page.0 / self.shape.pages_per_block) as usize];
        unit.entries.retain(|e| e.0 != page.0);
        Ok(AccessCost::default())
    }

    fn flush_all(
        &mut self,
        _device: &mut PcmDevice,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<AccessCost> {
        for unit in 0..self.units.len() as u32 {
            if self.units[unit as usize].sectors_used > 0 {
                self.merge(unit, flash, work);
                self.stats.merges_flush_all += 1;
            }
        }
        Ok(AccessCost::default())
    }

    fn stats(&self) -> LogStats {
        self.stats.clone()
    }
}
