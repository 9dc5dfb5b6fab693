//! The dPRAM baseline (Sun et al., HPCA'10, as the thesis compares against it, §5.1.2): the
//! log region in PCM with *dynamic* log-sector assignment. Log sectors form one pool; a page
//! that is updated takes as many sectors as its delta needs (a page's delta against its flash
//! copy, encoded as in [`super::sector`], spread over its sectors in order). When the pool runs
//! out, the page whose log is oldest is merged: its flash copy and log are combined and written
//! back as a single page (a random flash write, not a block flush).
//!
//! Choices the thesis does not pin down, ours: the victim is the page logged longest ago
//! (first in, first out); a page may hold at most `max_sectors_per_page` sectors (beyond that
//! its update goes to flash); the page → sectors map is in controller DRAM (not charged).

use super::sector::{self, SECTOR_HEADER_BYTES};
use super::{
    FlashPages, FlashShape, FlashWork, LogBuffer, LogStats, PageNo, WriteOutcome, WriteResult,
};
use crate::device::{AccessCost, PcmAddr, PcmDevice, WearSummary};
use crate::error::{PcmResult, argument_error, config_error};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// Configuration of the dPRAM log (TOML section `dpram`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpramConfig {
    /// PCM given to the log sectors, bytes.
    pub region_size_bytes: u64,
    /// One log sector, bytes.
    #[serde(default = "default_sector_size_bytes")]
    pub sector_size_bytes: u64,
    /// Most sectors one page may hold (0: a page's worth, `page / sector`).
    #[serde(default)]
    pub max_sectors_per_page: u32,
}

fn default_sector_size_bytes() -> u64 {
    512
}

impl DpramConfig {
    /// Validates against `shape`; errors name the key.
    pub fn validate(&self, shape: &FlashShape) -> PcmResult<()> {
        let page = u64::from(shape.page_size_bytes);
        let sector = self.sector_size_bytes;
        if !(8..=page).contains(&sector) {
            return Err(config_error(
                "dpram.sector_size_bytes",
                format!("{sector} B must be at least 8 B and at most the {page} B page"),
            ));
        }
        let sectors = self.region_size_bytes / sector;
        if sectors == 0 || sectors >= u64::from(NONE) {
            return Err(config_error(
                "dpram.region_size_bytes",
                format!(
                    "{} B holds {sectors} sectors of {sector} B",
                    self.region_size_bytes
                ),
            ));
        }
        Ok(())
    }
}

/// The dPRAM log.
#[derive(Debug)]
pub struct DpramLog {
    shape: FlashShape,
    base: PcmAddr,
    sector_bytes: usize,
    page_bytes: usize,
    max_sectors: usize,
    /// Host copy of the sectors.
    sectors: Vec<u8>,
    /// Next sector of the same page.
    next: Vec<u32>,
    /// First sector of each page's log.
    head: Vec<u32>,
    /// Sectors held by each page.
    held: Vec<u16>,
    /// When each page's log began (to skip stale queue entries).
    since: Vec<u64>,
    free: Vec<u32>,
    /// Pages in the order their logs began: (page, since).
    order: VecDeque<(u32, u64)>,
    clock: u64,
    stream: Vec<u8>,
    current: Vec<u8>,
    merged: Vec<u8>,
    dirty: sector::DirtyBytes,
    stats: LogStats,
}

impl DpramLog {
    /// A dPRAM log from `base` of `device` for flash of `shape`.
    pub fn new(
        config: DpramConfig,
        shape: FlashShape,
        base: PcmAddr,
        device: &PcmDevice,
    ) -> PcmResult<Self> {
        config.validate(&shape)?;
        let sectors = config.region_size_bytes / config.sector_size_bytes;
        let bytes = sectors * config.sector_size_bytes;
        if base
            .0
            .checked_add(bytes)
            .is_none_or(|e| e > device.capacity_bytes())
        {
            return Err(config_error(
                "dpram.region_size_bytes",
                format!(
                    "{bytes} B from {base} do not fit the {} B PCM device",
                    device.capacity_bytes()
                ),
            ));
        }
        crate::memory::check_host_memory(
            "dpram.region_size_bytes",
            bytes + sectors * 4 + u64::from(shape.pages) * 14,
        )?;
        let page_bytes = shape.page_size_bytes as usize;
        let sector_bytes = config.sector_size_bytes as usize;
        let max_sectors = match config.max_sectors_per_page {
            0 => page_bytes / sector_bytes,
            n => n as usize,
        }
        .min(u16::MAX as usize);
        let pages = shape.pages as usize;
        Ok(DpramLog {
            shape,
            base,
            sector_bytes,
            page_bytes,
            max_sectors,
            sectors: vec![0; bytes as usize],
            next: vec![NONE; sectors as usize],
            head: vec![NONE; pages],
            held: vec![0; pages],
            since: vec![0; pages],
            free: (0..sectors as u32).rev().collect(),
            order: VecDeque::new(),
            clock: 0,
            stream: Vec::with_capacity(page_bytes * 2),
            current: vec![0; page_bytes],
            merged: vec![0; page_bytes],
            dirty: sector::DirtyBytes::new(page_bytes),
            stats: LogStats::default(),
        })
    }

    /// Wear of the log sectors in the PCM device.
    pub fn wear(&self, device: &PcmDevice) -> PcmResult<WearSummary> {
        device.wear(self.base, self.sectors.len() as u64)
    }

    fn sector_addr(&self, sector: u32) -> PcmAddr {
        self.base.offset(sector as u64 * self.sector_bytes as u64)
    }

    /// Gathers a page's log into `self.stream` (charging the sector reads).
    fn gather(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost> {
        self.stream.clear();
        let mut cost = AccessCost::default();
        let mut s = self.head[page.0 as usize];
        let mut left = usize::MAX;
        while s != NONE && left > 0 {
            let at = s as usize * self.sector_bytes;
            let chunk = &self.sectors[at..at + self.sector_bytes];
            if left == usize::MAX {
                left = sector::used_bytes(chunk);
            }
            let take = left.min(self.sector_bytes);
            self.stream.extend_from_slice(&chunk[..take]);
            cost += device.charge_read(self.sector_addr(s), take as u64)?;
            left -= take;
            s = self.next[s as usize];
        }
        Ok(cost)
    }

    /// Frees every sector of a page's log (its first sector's header is cleared).
    fn release(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost> {
        let p = page.0 as usize;
        let first = self.head[p];
        if first == NONE {
            return Ok(AccessCost::default());
        }
        let at = first as usize * self.sector_bytes;
        self.sectors[at..at + SECTOR_HEADER_BYTES].fill(0);
        let cost = device.write(self.sector_addr(first), &[0; SECTOR_HEADER_BYTES])?;
        let mut s = first;
        while s != NONE {
            let n = self.next[s as usize];
            self.next[s as usize] = NONE;
            self.free.push(s);
            s = n;
        }
        self.head[p] = NONE;
        self.held[p] = 0;
        Ok(cost)
    }

    /// Merges one page: flash copy + log, written back as a single page.
    fn merge_page(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
    ) -> PcmResult<AccessCost> {
        let mut cost = self.gather(device, page)?;
        match flash.page(page) {
            Some(bytes) => self.merged.copy_from_slice(bytes),
            None => self.merged.fill(0),
        }
        work.reads.push(page);
        self.stats.flash_page_reads += 1;
        sector::apply(&self.stream, &mut self.merged);
        work.push_write(page, &self.merged);
        cost += self.release(device, page)?;
        self.stats.merges += 1;
        self.stats.pages_merged_single += 1;
        Ok(cost)
    }

    /// Makes `page` hold exactly `needed` sectors, merging the oldest other logs if the pool
    /// runs short; `false` if it cannot.
    fn resize(
        &mut self,
        device: &mut PcmDevice,
        page: PageNo,
        needed: usize,
        flash: &dyn FlashPages,
        work: &mut FlashWork,
        cost: &mut AccessCost,
    ) -> PcmResult<bool> {
        let p = page.0 as usize;
        let mut own: Option<(u32, u64)> = None;
        let mut enough = true;
        while usize::from(self.held[p]) + self.free.len() < needed {
            let Some((victim, since)) = self.order.pop_front() else {
                enough = false;
                break;
            };
            let live = self.held[victim as usize] > 0 && self.since[victim as usize] == since;
            if !live {
                continue;
            }
            if victim == page.0 {
                own = Some((victim, since));
                continue;
            }
            *cost += self.merge_page(device, PageNo(victim), flash, work)?;
            self.stats.merges_replacement += 1;
        }
        if let Some(entry) = own {
            self.order.push_front(entry);
        }
        if !enough {
            return Ok(false);
        }
        // grow: append sectors at the end of the chain; shrink: cut the tail
        let mut held = usize::from(self.held[p]);
        if held < needed {
            let mut tail = self.head[p];
            while tail != NONE && self.next[tail as usize] != NONE {
                tail = self.next[tail as usize];
            }
            while held < needed {
                let s = self.free.pop().expect("enough free sectors were made");
                if tail == NONE {
                    self.head[p] = s;
                } else {
                    self.next[tail as usize] = s;
                }
                tail = s;
                held += 1;
            }
        } else if held > needed {
            let mut s = self.head[p];
            for _ in 1..needed {
                s = self.next[s as usize];
            }
            let mut cut = self.next[s as usize];
            self.next[s as usize] = NONE;
            while cut != NONE {
                let n = self.next[cut as usize];
                self.next[cut as usize] = NONE;
                self.free.push(cut);
                cut = n;
            }
            held = needed;
        }
        self.held[p] = held as u16;
        Ok(true)
    }

    /// Writes `self.stream` over the page's sectors, in order.
    fn store(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost> {
        let mut cost = AccessCost::default();
        let mut s = self.head[page.0 as usize];
        let mut from = 0;
        while from < self.stream.len() {
            let take = (self.stream.len() - from).min(self.sector_bytes);
            let at = s as usize * self.sector_bytes;
            self.sectors[at..at + take].copy_from_slice(&self.stream[from..from + take]);
            cost += device.write(self.sector_addr(s), &self.stream[from..from + take])?;
            from += take;
            s = self.next[s as usize];
        }
        Ok(cost)
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
        let to_flash = |cost| WriteResult {
            outcome: WriteOutcome::ToFlash,
            cost,
        };
        let Some(flash_bytes) = flash.page(page) else {
            self.stats.direct_new_page += 1;
            return Ok(to_flash(AccessCost::default()));
        };
        work.reads.push(page);
        self.stats.flash_page_reads += 1;
        self.current.copy_from_slice(flash_bytes);
        self.dirty.clear();
        let p = page.0 as usize;
        let had = self.held[p] > 0;
        let mut cost = AccessCost::default();
        if had {
            cost += self.gather(device, page)?;
            sector::apply(&self.stream, &mut self.current);
            sector::mark(&self.stream, &mut self.dirty);
        }
        let changed = sector::overlay(
            &mut self.current[offset..offset + bytes.len()],
            bytes,
            offset,
            &mut self.dirty,
        );
        if !changed {
            self.stats.unchanged += 1;
            return Ok(WriteResult {
                outcome: WriteOutcome::Logged,
                cost,
            });
        }
        sector::encode(&self.current, &self.dirty, &mut self.stream);
        let needed = self.stream.len().div_ceil(self.sector_bytes);
        if needed > self.max_sectors
            || !self.resize(device, page, needed, flash, work, &mut cost)?
        {
            if had {
                cost += self.merge_page(device, page, flash, work)?;
                self.stats.merges_overflow += 1;
            }
            self.stats.direct_large_delta += 1;
            return Ok(to_flash(cost));
        }
        // merges inside `resize` gather into `stream`: encode again
        sector::encode(&self.current, &self.dirty, &mut self.stream);
        if had {
            self.stats.existing_sector += 1;
        } else {
            self.stats.new_sector += 1;
            self.clock += 1;
            self.since[p] = self.clock;
            self.order.push_back((page.0, self.clock));
        }
        self.stats.log_bytes_written += self.stream.len() as u64;
        cost += self.store(device, page)?;
        Ok(WriteResult {
            outcome: WriteOutcome::Logged,
            cost,
        })
    }
}

impl LogBuffer for DpramLog {
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
        let r = self.write_inner(device, page, offset, bytes, flash, work)?;
        self.stats.pcm += r.cost;
        Ok(r)
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
        let mut cost = AccessCost::default();
        if self.held[page.0 as usize] > 0 {
            cost = self.gather(device, page)?;
            sector::apply(&self.stream, out);
            self.stats.reads_merged += 1;
        }
        self.stats.pcm += cost;
        Ok(cost)
    }

    fn trim(&mut self, device: &mut PcmDevice, page: PageNo) -> PcmResult<AccessCost> {
        self.check_page(page)?;
        self.stats.trims += 1;
        let cost = self.release(device, page)?;
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
        while let Some((page, since)) = self.order.pop_front() {
            if self.held[page as usize] > 0 && self.since[page as usize] == since {
                cost += self.merge_page(device, PageNo(page), flash, work)?;
                self.stats.merges_flush_all += 1;
            }
        }
        self.stats.pcm += cost;
        Ok(cost)
    }

    fn stats(&self) -> LogStats {
        self.stats.clone()
    }
}
