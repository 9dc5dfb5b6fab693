//! `MemFtl`: a small page-mapped, log-structured FTL over in-memory flash (a test double).
//!
//! Physical space is `block_count` blocks of `pages_per_block` pages; the logical space is
//! `(block_count - spare_block_count) * pages_per_block` pages (the spare blocks are the
//! over-provisioning). Writes go out of place to the next page of the active block; the old
//! copy becomes invalid. When the active block is full it joins a FIFO of full blocks and a free
//! block is opened (free blocks are reused round-robin, the wear-leveling of paper 000 §4.1).
//! When fewer than `min_free_block_count` blocks are free, garbage collection erases the oldest
//! full block (FIFO / round-robin victim selection, as in paper 000), first copying its valid
//! pages to the active block: t_GC = N_valid * (t_read + t_write) + t_erase (paper 000 §2).
//! The FIFO front is therefore exactly "the block the FTL will erase next" that
//! [`CoDesignHints`] reports.

use crate::device::{BlockDevice, CoDesignHints, DeviceCounters, Lpa, check_page_access};
use crate::error::EngineError;
use nandlab_core::SimTime;
use std::collections::VecDeque;

const UNMAPPED: u32 = u32::MAX;

/// Shape, timing and energy of a [`MemFtl`].
#[derive(Clone, Debug, PartialEq)]
pub struct MemFtlConfig {
    /// Page size in bytes.
    pub page_size_bytes: usize,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Physical blocks.
    pub block_count: u32,
    /// Physical blocks not exposed as logical space (over-provisioning); at least
    /// `min_free_block_count + 1`.
    pub spare_block_count: u32,
    /// Garbage collection runs when fewer blocks than this are free; at least 1.
    pub min_free_block_count: u32,
    /// Page read latency (paper 000 §2: about 100 µs).
    pub read_latency: SimTime,
    /// Page program latency (paper 000 §2: about 1.6 ms).
    pub program_latency: SimTime,
    /// Block erase latency (paper 000 §2: about 8.5 ms).
    pub erase_latency: SimTime,
    /// Energy of one page read in µJ (seed 003 Table III QDP SLC: 3.35 µJ).
    pub read_energy_uj: f64,
    /// Energy of one page program in µJ (seed 003 Table III: 16.9 µJ).
    pub program_energy_uj: f64,
    /// Energy of one block erase in µJ (seed 003 Table III: 132.2 µJ).
    pub erase_energy_uj: f64,
}

impl Default for MemFtlConfig {
    fn default() -> Self {
        MemFtlConfig {
            page_size_bytes: 4096,
            pages_per_block: 64,
            block_count: 64,
            spare_block_count: 4,
            min_free_block_count: 1,
            read_latency: SimTime::from_us(100),
            program_latency: SimTime::from_us(1_600),
            erase_latency: SimTime::from_us(8_500),
            read_energy_uj: 3.35,
            program_energy_uj: 16.9,
            erase_energy_uj: 132.2,
        }
    }
}

impl MemFtlConfig {
    /// Number of logical pages exposed to the host.
    pub fn logical_page_count(&self) -> u64 {
        u64::from(self.block_count.saturating_sub(self.spare_block_count))
            * u64::from(self.pages_per_block)
    }

    fn validate(&self) -> Result<(), EngineError> {
        if self.page_size_bytes == 0 {
            return Err(EngineError::config(
                "page_size_bytes",
                0,
                "must be positive",
            ));
        }
        if self.pages_per_block == 0 {
            return Err(EngineError::config(
                "pages_per_block",
                0,
                "must be positive",
            ));
        }
        if self.min_free_block_count == 0 {
            return Err(EngineError::config(
                "min_free_block_count",
                0,
                "must be at least 1",
            ));
        }
        if self.spare_block_count <= self.min_free_block_count {
            return Err(EngineError::config(
                "spare_block_count",
                self.spare_block_count,
                format!(
                    "must exceed min_free_block_count ({})",
                    self.min_free_block_count
                ),
            ));
        }
        if self.block_count <= self.spare_block_count {
            return Err(EngineError::config(
                "block_count",
                self.block_count,
                "must exceed spare_block_count",
            ));
        }
        let physical_pages = u64::from(self.block_count) * u64::from(self.pages_per_block);
        if physical_pages >= u64::from(UNMAPPED) {
            return Err(EngineError::config(
                "block_count",
                self.block_count,
                "too many pages",
            ));
        }
        Ok(())
    }
}

/// In-memory page-mapped FTL with FIFO garbage collection (a test double).
#[derive(Clone, Debug)]
pub struct MemFtl {
    config: MemFtlConfig,
    data: Vec<u8>,
    /// LPA -> PPA, `UNMAPPED` if never written or trimmed.
    l2p: Vec<u32>,
    /// PPA -> LPA for valid pages, `UNMAPPED` for free or invalid pages.
    p2l: Vec<u32>,
    valid_in_block: Vec<u32>,
    erase_counts: Vec<u32>,
    free_blocks: VecDeque<u32>,
    /// Full blocks, oldest first: the front is the next GC victim.
    full_blocks: VecDeque<u32>,
    active_block: u32,
    active_next_page: u32,
    now: SimTime,
    energy_uj: f64,
    counters: DeviceCounters,
}

impl MemFtl {
    /// An erased device.
    pub fn new(config: MemFtlConfig) -> Result<Self, EngineError> {
        config.validate()?;
        let physical_pages = config.block_count as usize * config.pages_per_block as usize;
        let data_bytes = physical_pages
            .checked_mul(config.page_size_bytes)
            .ok_or_else(|| EngineError::config("block_count", config.block_count, "too large"))?;
        Ok(MemFtl {
            data: vec![0; data_bytes],
            l2p: vec![UNMAPPED; config.logical_page_count() as usize],
            p2l: vec![UNMAPPED; physical_pages],
            valid_in_block: vec![0; config.block_count as usize],
            erase_counts: vec![0; config.block_count as usize],
            free_blocks: (1..config.block_count).collect(),
            full_blocks: VecDeque::new(),
            active_block: 0,
            active_next_page: 0,
            now: SimTime::ZERO,
            energy_uj: 0.0,
            counters: DeviceCounters::default(),
            config,
        })
    }

    /// The configuration this device was built with.
    pub fn config(&self) -> &MemFtlConfig {
        &self.config
    }

    /// The block garbage collection will erase next, if any block is full.
    pub fn next_victim_block(&self) -> Option<u32> {
        self.full_blocks.front().copied()
    }

    /// The physical block currently holding the valid copy of `lpa`.
    pub fn block_of_lpa(&self, lpa: Lpa) -> Option<u32> {
        let ppa = *self.l2p.get(usize::try_from(lpa.0).ok()?)?;
        (ppa != UNMAPPED).then(|| ppa / self.config.pages_per_block)
    }

    /// Valid pages in `block` (0 for a block out of range).
    pub fn valid_page_count(&self, block: u32) -> u32 {
        self.valid_in_block
            .get(block as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Number of erased blocks waiting to be opened.
    pub fn free_block_count(&self) -> usize {
        self.free_blocks.len()
    }

    /// Checks that the mapping and its reverse agree and the valid counts match them.
    pub fn check_invariants(&self) -> Result<(), String> {
        let ppb = self.config.pages_per_block;
        let mut valid = vec![0u32; self.valid_in_block.len()];
        for (lpa, &ppa) in self.l2p.iter().enumerate() {
            if ppa == UNMAPPED {
                continue;
            }
            if self.p2l[ppa as usize] as usize != lpa {
                return Err(format!(
                    "LPA {lpa} maps to PPA {ppa}, whose reverse entry differs"
                ));
            }
            valid[(ppa / ppb) as usize] += 1;
        }
        let mapped_pages = self.p2l.iter().filter(|&&l| l != UNMAPPED).count();
        let mapped_lpas = self.l2p.iter().filter(|&&p| p != UNMAPPED).count();
        if mapped_pages != mapped_lpas {
            return Err(format!(
                "{mapped_pages} valid pages but {mapped_lpas} mapped LPAs"
            ));
        }
        if valid != self.valid_in_block {
            return Err("per-block valid counts disagree with the mapping".to_string());
        }
        Ok(())
    }

    fn page_bytes(&self, ppa: u32) -> std::ops::Range<usize> {
        let start = ppa as usize * self.config.page_size_bytes;
        start..start + self.config.page_size_bytes
    }

    fn invalidate(&mut self, ppa: u32) {
        debug_assert_ne!(
            self.p2l[ppa as usize], UNMAPPED,
            "PPA {ppa} already invalid"
        );
        self.p2l[ppa as usize] = UNMAPPED;
        self.valid_in_block[(ppa / self.config.pages_per_block) as usize] -= 1;
    }

    fn map(&mut self, lpa: u32, ppa: u32) {
        self.l2p[lpa as usize] = ppa;
        self.p2l[ppa as usize] = lpa;
        self.valid_in_block[(ppa / self.config.pages_per_block) as usize] += 1;
    }

    /// Retires the full active block and opens the oldest free one (no GC).
    fn open_next_block(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        let next = self
            .free_blocks
            .pop_front()
            .ok_or_else(|| EngineError::Device {
                op: "write",
                lpa,
                reason: "no free block left".to_string(),
            })?;
        self.full_blocks.push_back(self.active_block);
        self.active_block = next;
        self.active_next_page = 0;
        Ok(())
    }

    /// A page in the active block, running GC first if the active block is full.
    fn allocate_host_page(&mut self, lpa: Lpa) -> Result<u32, EngineError> {
        // Each round opens a block and reclaims at least the free-block reserve; a victim that
        // is fully valid reclaims nothing, so bound the rounds by the number of blocks.
        for _ in 0..=self.config.block_count {
            if self.active_next_page < self.config.pages_per_block {
                let ppa = self.active_block * self.config.pages_per_block + self.active_next_page;
                self.active_next_page += 1;
                return Ok(ppa);
            }
            self.open_next_block(lpa)?;
            while self.free_blocks.len() < self.config.min_free_block_count as usize {
                self.collect_one(lpa)?;
            }
        }
        Err(EngineError::Device {
            op: "write",
            lpa,
            reason: "garbage collection found no reclaimable block".to_string(),
        })
    }

    /// Erases the FIFO victim after copying its valid pages to the active block.
    fn collect_one(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        let victim = self
            .full_blocks
            .pop_front()
            .ok_or_else(|| EngineError::Device {
                op: "write",
                lpa,
                reason: "garbage collection needed but no full block exists".to_string(),
            })?;
        let started = self.now;
        let ppb = self.config.pages_per_block;
        for source in victim * ppb..(victim + 1) * ppb {
            let owner = self.p2l[source as usize];
            if owner == UNMAPPED {
                continue;
            }
            if self.active_next_page == ppb {
                self.open_next_block(lpa)?;
            }
            let target = self.active_block * ppb + self.active_next_page;
            self.active_next_page += 1;
            let (source_bytes, target_bytes) = (self.page_bytes(source), self.page_bytes(target));
            self.data.copy_within(source_bytes, target_bytes.start);
            self.invalidate(source);
            self.map(owner, target);
            self.counters.page_copies += 1;
            self.now += self.config.read_latency + self.config.program_latency;
            self.energy_uj += self.config.read_energy_uj + self.config.program_energy_uj;
        }
        assert_eq!(
            self.valid_in_block[victim as usize], 0,
            "victim {victim} still valid"
        );
        self.erase_counts[victim as usize] += 1;
        self.counters.erases += 1;
        self.counters.gc_count += 1;
        self.now += self.config.erase_latency;
        self.energy_uj += self.config.erase_energy_uj;
        self.counters.gc_time += self.now - started;
        self.free_blocks.push_back(victim);
        Ok(())
    }
}

impl BlockDevice for MemFtl {
    fn page_size_bytes(&self) -> usize {
        self.config.page_size_bytes
    }
    fn logical_page_count(&self) -> u64 {
        self.l2p.len() as u64
    }
    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        check_page_access(
            lpa,
            buf.len(),
            self.page_size_bytes(),
            self.logical_page_count(),
        )?;
        self.counters.host_reads += 1;
        let ppa = self.l2p[lpa.0 as usize];
        if ppa == UNMAPPED {
            // The FTL knows the page holds nothing: no flash access.
            buf.fill(0);
            return Ok(());
        }
        buf.copy_from_slice(&self.data[self.page_bytes(ppa)]);
        self.now += self.config.read_latency;
        self.energy_uj += self.config.read_energy_uj;
        Ok(())
    }
    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        check_page_access(
            lpa,
            data.len(),
            self.page_size_bytes(),
            self.logical_page_count(),
        )?;
        self.counters.host_writes += 1;
        let old = self.l2p[lpa.0 as usize];
        if old != UNMAPPED {
            self.invalidate(old);
            self.l2p[lpa.0 as usize] = UNMAPPED;
        }
        let ppa = self.allocate_host_page(lpa)?;
        let range = self.page_bytes(ppa);
        self.data[range].copy_from_slice(data);
        self.map(lpa.0, ppa);
        self.now += self.config.program_latency;
        self.energy_uj += self.config.program_energy_uj;
        Ok(())
    }
    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        let page_size_bytes = self.page_size_bytes();
        check_page_access(
            lpa,
            page_size_bytes,
            page_size_bytes,
            self.logical_page_count(),
        )?;
        self.counters.host_trims += 1;
        let old = self.l2p[lpa.0 as usize];
        if old != UNMAPPED {
            self.invalidate(old);
            self.l2p[lpa.0 as usize] = UNMAPPED;
        }
        Ok(())
    }
    fn now(&self) -> SimTime {
        self.now
    }
    fn energy_mj(&self) -> f64 {
        self.energy_uj / 1_000.0
    }
    fn counters(&self) -> DeviceCounters {
        self.counters
    }
    fn erase_counts(&self) -> Vec<u32> {
        self.erase_counts.clone()
    }
}

impl CoDesignHints for MemFtl {
    fn next_erase_block_valid_lpas(&self, lpas_out: &mut Vec<Lpa>) {
        lpas_out.clear();
        let Some(victim) = self.next_victim_block() else {
            return;
        };
        let ppb = self.config.pages_per_block;
        let pages = &self.p2l[(victim * ppb) as usize..((victim + 1) * ppb) as usize];
        lpas_out.extend(
            pages
                .iter()
                .filter(|&&lpa| lpa != UNMAPPED)
                .map(|&lpa| Lpa(lpa)),
        );
    }
}

#[cfg(test)]
mod tests;
