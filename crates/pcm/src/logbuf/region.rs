//! The thesis's PCM log region (SPEC P3; thesis §3.2.3–3.2.4).
//!
//! PCM holds `n` P-blocks of `m` log sectors (m = pages per flash block), and a table of `n`
//! rows `<F-block, P-block, popularity>`. Page `i` of F-block `f` logs into sector `i` of the
//! P-block mapped to `f`. Write cases:
//! 1. the page has no flash copy → the caller writes it to flash;
//! 2. its F-block has no P-block → take a free P-block, or flush the least popular one
//!    (replacement), and log into it;
//! 3. its sector holds a delta → compare, and record the combined delta;
//! 4. its F-block has a P-block but the sector is empty → record the delta.
//!
//! A P-block's popularity counts the updates logged into it and resets when it is flushed.
//! Merging (§3.2.4) reads the P-block's sectors and its F-block's flash pages, and writes the
//! block's pages back in page order: one sequential flush. A block is merged when it is chosen
//! as a victim, when a page's delta outgrows its sector, and (by default) when all its sectors
//! hold a delta ("when the log sectors in a block region are all altered").

use super::region_config::{LogRegionConfig, NONE, SectorOverflow, TABLE_ROW_BYTES};
use super::sector::{self, SECTOR_HEADER_BYTES};
use super::{
    FlashPages, FlashShape, FlashWork, LogBuffer, LogStats, PageNo, WriteOutcome, WriteResult,
};
use crate::device::{AccessCost, PcmAddr, PcmDevice, WearSummary};
use crate::error::{PcmResult, argument_error, config_error};
#[derive(Clone, Copy, Debug)]
struct PBlock {
    fblock: u32,
    popularity: u32,
    sectors_used: u32,
    /// Sector writes over the run (wear, never reset).
    sector_writes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MergeReason {
    Replacement,
    Overflow,
    Full,
    FlushAll,
}

/// The thesis's PCM log region.
#[derive(Debug)]
pub struct PcmLogRegion {
    config: LogRegionConfig,
    shape: FlashShape,
    table_base: PcmAddr,
    sectors_base: PcmAddr,
    sector_bytes: usize,
    page_bytes: usize,
    m: u32,
    fblock_to_pblock: Vec<u32>,
    pblocks: Vec<PBlock>,
    free: Vec<u32>,
    /// Host copy of every sector (the PCM holds the same bytes).
    sectors: Vec<u8>,
    /// The page being updated (scratch).
    current: Vec<u8>,
    dirty: sector::DirtyBytes,
    encoded: Vec<u8>,
    stats: LogStats,
}

impl PcmLogRegion {
    /// A log region from `base` of `device` for flash of `shape`.
    pub fn new(
        config: LogRegionConfig,
        shape: FlashShape,
        base: PcmAddr,
        device: &PcmDevice,
    ) -> PcmResult<Self> {
        config.validate(&shape)?;
        let end = base.0.checked_add(config.region_size_bytes);
        if end.is_none_or(|end| end > device.capacity_bytes()) {
            return Err(config_error(
                "log.region_size_bytes",
                format!(
                    "{} B from {base} do not fit the {} B PCM device",
                    config.region_size_bytes,
                    device.capacity_bytes()
                ),
            ));
        }
        crate::memory::check_host_memory(
            "log.region_size_bytes",
            config.region_size_bytes + u64::from(shape.pages / shape.pages_per_block) * 4,
        )?;
        let n = config.pblocks(&shape) as u32;
        let m = shape.pages_per_block;
        let sector_bytes = config.sector_size_bytes as usize;
        let table_bytes = (u64::from(n) * TABLE_ROW_BYTES).next_multiple_of(64);
        let fblocks = shape.pages.div_ceil(m) as usize;
        Ok(PcmLogRegion {
            table_base: base,
            sectors_base: base.offset(table_bytes),
            sector_bytes,
            page_bytes: shape.page_size_bytes as usize,
            m,
            fblock_to_pblock: vec![NONE; fblocks],
            pblocks: vec![
                PBlock {
                    fblock: NONE,
                    popularity: 0,
                    sectors_used: 0,
                    sector_writes: 0,
                };
                n as usize
            ],
            free: (0..n).rev().collect(),
            sectors: vec![0; n as usize * m as usize * sector_bytes],
            current: vec![0; shape.page_size_bytes as usize],
            dirty: sector::DirtyBytes::new(shape.page_size_bytes as usize),
            encoded: Vec::with_capacity(shape.page_size_bytes as usize + 64),
            stats: LogStats::default(),
            config,
            shape,
        })
    }

    /// Number of P-blocks.
    pub fn pblocks(&self) -> u32 {
        self.pblocks.len() as u32
    }

    /// PCM bytes the region uses (table and sectors).
    pub fn pcm_bytes(&self) -> u64 {
        self.sectors_base.0 - self.table_base.0 + self.sectors.len() as u64
    }

    /// Wear of the region's sectors in the PCM device (cell-level evenness).
    pub fn wear(&self, device: &PcmDevice) -> PcmResult<WearSummary> {
        device.wear(self.sectors_base, self.sectors.len() as u64)
    }

    /// Coefficient of variation of sector writes per P-block (0 = perfectly even).
    pub fn pblock_wear_cov(&self) -> f64 {
        let n = self.pblocks.len() as f64;
        let mean = self
            .pblocks
            .iter()
            .map(|p| p.sector_writes as f64)
            .sum::<f64>()
            / n;
        if mean == 0.0 {
            return 0.0;
        }
        let var = self
            .pblocks
            .iter()
            .map(|p| (p.sector_writes as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        var.sqrt() / mean
    }

    /// Popularity of each P-block (tests and reports).
    pub fn popularity(&self) -> Vec<u32> {
        self.pblocks.iter().map(|p| p.popularity).collect()
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

    fn sector_index(&self, pblock: u32, page: PageNo) -> usize {
        pblock as usize * self.m as usize + (page.0 % self.m) as usize
    }

    fn sector(&self, index: usize) -> &[u8] {
        &self.sectors[index * self.sector_bytes..(index + 1) * self.sector_bytes]
    }

    fn sector_addr(&self, index: usize) -> PcmAddr {
        self.sectors_base.offset((index * self.sector_bytes) as u64)
    }

    fn row_addr(&self, pblock: u32) -> PcmAddr {
        self.table_base.offset(u64::from(pblock) * TABLE_ROW_BYTES)
    }

    /// Looks the page's F-block up in the table (one row read).
    fn lookup(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<(u32, AccessCost)> {
        let fblock = page.0 / self.m;
        let pblock = self.fblock_to_pblock[fblock as usize];
        let row = if pblock == NONE { 0 } else { pblock };
        let cost = device.charge_read(self.row_addr(row), TABLE_ROW_BYTES)?;
        Ok((pblock, cost))
    }

    fn write_row(&mut self, device: &mut PcmDevice, pblock: u32) -> PcmResult<AccessCost> {
        let p = self.pblocks[pblock as usize];
        let mut row = [0u8; TABLE_ROW_BYTES as usize];
        row[..4].copy_from_slice(&p.fblock.to_le_bytes());
        row[4..8].copy_from_slice(&pblock.to_le_bytes());
        row[8..].copy_from_slice(&p.popularity.to_le_bytes());
        device.write(self.row_addr(pblock), &row)
    }

    /// Stores `self.encoded` as the sector's delta.
    fn store_sector(&mut self, device: &mut PcmDevice, index: usize) -> PcmResult<AccessCost> {
        let len = self.encoded.len();
        debug_assert!(len > SECTOR_HEADER_BYTES && len <= self.sector_bytes);
        let at = index * self.sector_bytes;
        self.sectors[at..at + len].copy_from_slice(&self.encoded[..len]);
        device.write(self.sector_addr(index), &self.encoded[..len])
    }

    /// Empties a sector (its header says no delta).
    fn clear_sector(&mut self, device: &mut PcmDevice, index: usize) -> PcmResult<AccessCost> {
        let at = index * self.sector_bytes;
        self.sectors[at..at + SECTOR_HEADER_BYTES].fill(0);
        device.write(self.sector_addr(index), &[0; SECTOR_HEADER_BYTES])
    }

    /// Drops one page's delta; a P-block left with none is free again.
    fn release_sector(
        &mut self,
        device: &mut PcmDevice,
        pblock: u32,
        index: usize,
    ) -> PcmResult<AccessCost> {
        let mut cost = self.clear_sector(device, index)?;
        let p = &mut self.pblocks[pblock as usize];
        p.sectors_used -= 1;
        if p.sectors_used == 0 {
            let fblock = p.fblock;
            p.fblock = NONE;
            p.popularity = 0;
            self.fblock_to_pblock[fblock as usize] = NONE;
            self.free.push(pblock);
            cost += self.write_row(device, pblock)?;
        }
        Ok(cost)
    }

    /// A P-block for `fblock`: a free one, or the least popular one after flushing it.
    fn take_pblock(
        &mut self,
        device: &mut PcmDevice,
        fblock: u32,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<(u32, AccessCost)> {
        let mut cost = AccessCost::default();
        let pblock = match self.free.pop() {
            Some(p) => p,
            None => {
                let victim = self.least_popular();
                cost += self.merge(device, victim, MergeReason::Replacement, flash, work)?;
                self.free.pop().expect("a merged P-block is free")
            }
        };
        self.pblocks[pblock as usize].fblock = fblock;
        self.fblock_to_pblock[fblock as usize] = pblock;
        cost += self.write_row(device, pblock)?;
        Ok((pblock, cost))
    }

    /// The occupied P-block of least popularity (ties: the lowest number).
    fn least_popular(&self) -> u32 {
        let mut best = (u32::MAX, NONE);
        for (i, p) in self.pblocks.iter().enumerate() {
            if p.fblock != NONE && p.popularity < best.0 {
                best = (p.popularity, i as u32);
            }
        }
        debug_assert_ne!(best.1, NONE, "no occupied P-block to replace");
        best.1
    }

    /// Merges a P-block with its F-block's flash pages and flushes the block in page order.
    fn merge(
        &mut self,
        device: &mut PcmDevice,
        pblock: u32,
        reason: MergeReason,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<AccessCost> {
        let fblock = self.pblocks[pblock as usize].fblock;
        let mut cost = AccessCost::default();
        let first = fblock * self.m;
        let last = (first + self.m).min(self.shape.pages);
        for p in first..last {
            let page = PageNo(p);
            let index = self.sector_index(pblock, page);
            let used = sector::used_bytes(self.sector(index));
            let Some(bytes) = flash.page(page) else {
                debug_assert_eq!(used, 0, "a log for a page with no flash copy");
                continue;
            };
            if used == 0 && !self.config.flush_whole_block {
                continue;
            }
            work.reads.push(page);
            self.stats.flash_page_reads += 1;
            if used > 0 {
                cost += device.charge_read(self.sector_addr(index), used as u64)?;
                let at = index * self.sector_bytes;
                // the flash copy with the sector's delta, merged in place in the work
                let merged = work.push_write_mut(page, bytes);
                sector::apply(&self.sectors[at..at + self.sector_bytes], merged);
                cost += self.clear_sector(device, index)?;
            } else {
                // a whole-block flush rewrites the page's flash copy as it is
                work.push_flash_copy(page, bytes);
            }
            self.stats.pages_flushed += 1;
        }
        work.blocks_flushed += 1;
        let p = &mut self.pblocks[pblock as usize];
        p.fblock = NONE;
        p.popularity = 0;
        p.sectors_used = 0;
        self.fblock_to_pblock[fblock as usize] = NONE;
        self.free.push(pblock);
        cost += self.write_row(device, pblock)?;
        self.stats.merges += 1;
        match reason {
            MergeReason::Replacement => self.stats.merges_replacement += 1,
            MergeReason::Overflow => self.stats.merges_overflow += 1,
            MergeReason::Full => self.stats.merges_full += 1,
            MergeReason::FlushAll => self.stats.merges_flush_all += 1,
        }
        Ok(cost)
    }

    fn write_inner(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        offset: usize,
        bytes: &[u8],
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<WriteResult> {
        self.stats.writes += 1;
        let logged = |cost| WriteResult {
            outcome: WriteOutcome::Logged,
            cost,
        };
        // case 1: nothing in flash yet
        let Some(flash_bytes) = flash.page(page) else {
            self.stats.direct_new_page += 1;
            return Ok(WriteResult {
                outcome: WriteOutcome::ToFlash,
                cost: AccessCost::default(),
            });
        };
        if flash_bytes.len() != self.page_bytes {
            return Err(argument_error(
                "flash",
                format!(
                    "page {page} has {} B in flash, not {}",
                    flash_bytes.len(),
                    self.page_bytes
                ),
            ));
        }
        work.reads.push(page);
        self.stats.flash_page_reads += 1;
        self.dirty.clear();
        let (mut pblock, mut cost) = self.lookup(device, page)?;
        let used = if pblock == NONE {
            0
        } else {
            sector::used_bytes(self.sector(self.sector_index(pblock, page)))
        };
        let flash_range = &flash_bytes[offset..offset + bytes.len()];
        if used == 0 && sector::differ_in_more_than(flash_range, bytes, self.sector_bytes) {
            // nothing logged for the page and more bytes changed than a sector holds: the
            // delta outgrows a sector whatever its runs (the caller writes the update; the
            // same as below, without building the delta)
            self.stats.direct_large_delta += 1;
            return Ok(WriteResult {
                outcome: WriteOutcome::ToFlash,
                cost,
            });
        }
        self.current.copy_from_slice(flash_bytes);
        if pblock != NONE {
            let index = self.sector_index(pblock, page);
            if used > 0 {
                // case 3: compare with the logged delta
                cost += device.charge_read(self.sector_addr(index), used as u64)?;
                let at = index * self.sector_bytes;
                let s = &self.sectors[at..at + self.sector_bytes];
                sector::apply(s, &mut self.current);
                sector::mark(s, &mut self.dirty);
            }
        }
        let changed = sector::overlay(
            &mut self.current[offset..offset + bytes.len()],
            bytes,
            offset,
            &mut self.dirty,
        );
        if !changed {
            self.stats.unchanged += 1;
            return Ok(logged(cost));
        }
        // (the delta's size first: a delta outgrowing its sector is not encoded)
        if sector::encoded_size(&self.dirty) > self.sector_bytes {
            // the delta outgrows a sector
            if used == 0 {
                // nothing logged for the page: the caller writes the update
                self.stats.direct_large_delta += 1;
                return Ok(WriteResult {
                    outcome: WriteOutcome::ToFlash,
                    cost,
                });
            }
            // fold the page's log and the update into one flash write of the page
            match self.config.on_sector_overflow {
                SectorOverflow::MergeBlock => {
                    cost += self.merge(device, pblock, MergeReason::Overflow, flash, work)?;
                    let replaced = work.overwrite_last(page, &self.current);
                    debug_assert!(replaced, "the merge wrote the page");
                }
                SectorOverflow::WritePage => {
                    let index = self.sector_index(pblock, page);
                    work.push_write(page, &self.current);
                    self.stats.pages_merged_single += 1;
                    cost += self.release_sector(device, pblock, index)?;
                }
            }
            return Ok(logged(cost));
        }
        // merges below do not touch `encoded`
        sector::encode(&self.current, &self.dirty, &mut self.encoded);
        debug_assert_eq!(self.encoded.len(), sector::encoded_size(&self.dirty));
        if pblock == NONE {
            // case 2
            let (taken, c) = self.take_pblock(device, page.0 / self.m, flash, work)?;
            pblock = taken;
            cost += c;
            self.stats.new_log_block += 1;
        } else if used > 0 {
            self.stats.existing_sector += 1;
        } else {
            self.stats.new_sector += 1;
        }
        let index = self.sector_index(pblock, page);
        self.stats.log_bytes_written += self.encoded.len() as u64;
        cost += self.store_sector(device, index)?;
        let p = &mut self.pblocks[pblock as usize];
        p.popularity = p.popularity.saturating_add(1);
        p.sector_writes += 1;
        if used == 0 {
            p.sectors_used += 1;
        }
        let full = p.sectors_used == self.m;
        cost += self.write_row(device, pblock)?;
        if full && self.config.merge_when_all_sectors_used {
            cost += self.merge(device, pblock, MergeReason::Full, flash, work)?;
        }
        Ok(logged(cost))
    }
}

impl LogBuffer for PcmLogRegion {
    fn write(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        offset: u32,
        bytes: &[u8],
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<WriteResult> {
        self.check_page(page)?;
        let offset = super::check_update(offset, bytes, self.page_bytes)?;
        let result = self.write_inner(device, page, offset, bytes, flash, work)?;
        self.stats.pcm += result.cost;
        Ok(result)
    }

    fn read(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        flash: Option<&[u8]>,
        out: &mut [u8],
    ) -> PcmResult<AccessCost> {
        self.check_page(page)?;
        super::start_read(flash, out, self.page_bytes)?;
        self.stats.reads += 1;
        let (pblock, mut cost) = self.lookup(device, page)?;
        if pblock != NONE {
            let index = self.sector_index(pblock, page);
            let used = sector::used_bytes(self.sector(index));
            if used > 0 {
                cost += device.charge_read(self.sector_addr(index), used as u64)?;
                sector::apply(self.sector(index), out);
                self.stats.reads_merged += 1;
            }
        }
        self.stats.pcm += cost;
        Ok(cost)
    }

    fn trim(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost> {
        self.check_page(page)?;
        self.stats.trims += 1;
        let (pblock, mut cost) = self.lookup(device, page)?;
        if pblock != NONE {
            let index = self.sector_index(pblock, page);
            if sector::used_bytes(self.sector(index)) > 0 {
                cost += self.release_sector(device, pblock, index)?;
            }
        }
        self.stats.pcm += cost;
        Ok(cost)
    }

    fn flush_all(
        &mut self,
        device: &mut PcmDevice,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<AccessCost> {
        let mut cost = AccessCost::default();
        for pblock in 0..self.pblocks.len() as u32 {
            if self.pblocks[pblock as usize].fblock != NONE {
                cost += self.merge(device, pblock, MergeReason::FlushAll, flash, work)?;
            }
        }
        self.stats.pcm += cost;
        Ok(cost)
    }

    fn stats(&self) -> LogStats {
        self.stats.clone()
    }
}
