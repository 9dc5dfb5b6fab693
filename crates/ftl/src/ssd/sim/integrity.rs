//! The controller's integrity layer on the SiM region (paper 004 §IV-C, SPEC S4;
//! `ftl.sim_integrity`), with the page formats of `nandlab_nand::search` that
//! `nandlab-search`'s store uses too:
//!
//! - **On flash**: chunk 0 of every region page is the verification header (CRC-64 over the
//!   header and the first data chunk, the program time, the magic number, the LPA), the page is
//!   randomized by chunk address and the spare area holds a 4-byte ECC per stored chunk
//!   ([`header::seal_page`]). The host's bytes 0..64 of a region page are kept for its reads
//!   (the payload store) but are not searchable: the header chunk is cleared from every bitmap
//!   and a gather of chunk 0 is refused.
//! - **Page-open** (a search): the controller checks the header in the window the chip sends.
//!   A match with a young page: the search runs on the chip. A failed CRC, a wrong LPA or a page
//!   older than `ftl.sim_refresh_age_s`: page-close, a full read of the page (a read op on the
//!   die, through the chip's ECC and read-retry model, decoded by the controller's ECC like any
//!   host read), the search answered from the corrected copy, and the page queued for refresh.
//! - **Gather**: each chunk checked by its chunk ECC (one flipped bit corrected); an
//!   uncorrectable chunk falls back to the full read and queues the page.
//! - **Refresh** ([`Ssd::sim_refresh`]): queued pages are rewritten through the FTL (a new pool
//!   page, re-randomized for its address, new header time).

use super::super::Ssd;
use super::SimRegion;
use crate::address::Lpa;
use crate::error::FtlResult;
use crate::flash::emit::Tag;
use crate::flash::{HostWrite, PageData};
use crate::mapping::Mapping;
use nandlab_core::SimTime;
use nandlab_nand::PageAddress;
use nandlab_nand::search::chunk_ecc::{self, CHUNK_ECC_BYTES, Decoded};
use nandlab_nand::search::format::{CHUNK_BYTES, SIM_PAGE_BYTES};
use nandlab_nand::search::header;
use nandlab_nand::search::randomize;
use std::collections::VecDeque;

/// The header's magic number ("SIM-HDR!", as `nandlab-search`'s store).
pub const SIM_MAGIC: u64 = 0x2152_4448_2D4D_4953;

/// Bits of the header chunk's slots in the first bitmap word.
pub(super) const HEADER_SLOTS: u64 = 0xFF;

/// The integrity layer's state.
#[derive(Debug)]
pub(crate) struct Integrity {
    pub refresh_age: SimTime,
    /// LPAs waiting to be rewritten, each once.
    refresh: VecDeque<u32>,
    /// Per region page: queued for refresh.
    queued: Vec<bool>,
}

impl Integrity {
    pub fn new(refresh_age_s: u64, pages: u32) -> Self {
        Integrity {
            refresh_age: SimTime::from_ms(refresh_age_s.saturating_mul(1000)),
            refresh: VecDeque::new(),
            queued: vec![false; pages as usize],
        }
    }
}

/// What the header check on page-open found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Searched on the chip.
    OnChip,
    /// Read out in full: the CRC (or magic, or LPA) failed.
    CrcFailed,
    /// Read out in full: older than the refresh age.
    Aged,
}

impl SimRegion {
    /// The header check of a page-open of `lpa` at chip page `chip_ppa` at `now`.
    pub(super) fn check_window(
        &mut self,
        window: &[u8],
        chip_ppa: u64,
        lpa: Lpa,
        now: SimTime,
    ) -> Verdict {
        let Some(integrity) = &self.integrity else {
            return Verdict::OnChip;
        };
        let verdict = match header::verify_window(window, chip_ppa, true, SIM_MAGIC) {
            Some(h) if h.page == lpa.0 => {
                if now.saturating_sub(h.written_at) <= integrity.refresh_age {
                    Verdict::OnChip
                } else {
                    Verdict::Aged
                }
            }
            _ => Verdict::CrcFailed,
        };
        let c = &mut self.counters;
        c.opens_checked += 1;
        match verdict {
            Verdict::OnChip => {}
            Verdict::CrcFailed => c.crc_failures += 1,
            Verdict::Aged => c.aged_opens += 1,
        }
        verdict
    }

    /// Queues `lpa` for refresh (once).
    pub(super) fn queue_refresh(&mut self, lpa: Lpa) {
        let index = (lpa.0 - self.first_lpa) as usize;
        let integrity = self.integrity.as_mut().expect("integrity layer on");
        if !integrity.queued[index] {
            integrity.queued[index] = true;
            integrity.refresh.push_back(lpa.0);
            self.counters.refreshes_queued += 1;
        }
    }

    /// Checks and de-randomizes the chunks a gather of chip page `chip_ppa` returned (`raw`:
    /// each chunk's 64 bytes then its ECC bytes) into `out`; `false` when a chunk is
    /// uncorrectable (the page must be read in full).
    pub(super) fn check_chunks(
        &mut self,
        raw: &[u8],
        chunks: nandlab_nand::ChunkMask,
        chip_ppa: u64,
        out: &mut Vec<u8>,
    ) -> bool {
        let stride = CHUNK_BYTES as usize + CHUNK_ECC_BYTES;
        for (chunk, bytes) in chunks.chunks().zip(raw.chunks_exact(stride)) {
            let at = out.len();
            out.extend_from_slice(&bytes[..CHUNK_BYTES as usize]);
            match chunk_ecc::decode(&mut out[at..], &bytes[CHUNK_BYTES as usize..]) {
                Decoded::Clean => {}
                Decoded::Corrected { .. } => self.counters.chunk_bits_corrected += 1,
                Decoded::Uncorrectable => {
                    self.counters.chunks_uncorrectable += 1;
                    return false;
                }
            }
            randomize::randomize_chunk(randomize::chunk_address(chip_ppa, chunk), &mut out[at..]);
        }
        true
    }
}

impl Ssd {
    /// The fallback: a full read of the page at `address` (chip page `chip_ppa`) through the
    /// chip's page ECC with read-retry (its completion is decoded by the controller's ECC as a
    /// host read's), de-randomized into the region's corrected copy. Whether the page ECC
    /// decoded it (an uncorrectable page leaves the copy empty).
    pub(super) fn sim_full_read(
        &mut self,
        address: PageAddress,
        chip_ppa: u64,
        tag: u64,
    ) -> FtlResult<bool> {
        let read = self.nand.read_page_data(self.now, address, tag)?;
        let sim = self.sim.as_mut().expect("SiM region");
        sim.counters.fallback_reads += 1;
        sim.counters.fallback_read_retries += u64::from(read.read_retries);
        sim.corrected.clear();
        let Some(bytes) = read.bytes else {
            sim.counters.uncorrectable_reads += 1;
            return Ok(false);
        };
        sim.corrected
            .extend_from_slice(&bytes[..SIM_PAGE_BYTES as usize]);
        randomize::randomize_page(chip_ppa, &mut sim.corrected);
        debug_assert!(header::verify_window(&sim.corrected, chip_ppa, false, SIM_MAGIC).is_some());
        Ok(true)
    }

    /// Pages of the SiM region waiting to be refreshed (`ftl.sim_integrity`).
    pub fn sim_refresh_queue_len(&self) -> usize {
        self.sim
            .as_ref()
            .and_then(|s| s.integrity.as_ref())
            .map_or(0, |i| i.refresh.len())
    }

    /// Rewrites up to `pages_max` pages of the refresh queue through the FTL (each to a new
    /// pool page, randomized for its address, with a new header time) and simulates until the
    /// device is idle; returns how many were rewritten. A queued page rewritten by the host or
    /// trimmed meanwhile is dropped from the queue without a write.
    pub fn sim_refresh(&mut self, pages_max: usize) -> FtlResult<usize> {
        let Some(sim) = self.sim.as_mut() else {
            return Ok(0);
        };
        let pool = sim.pool;
        let mut page = std::mem::take(&mut sim.page);
        let mut done = 0;
        let mut result = Ok(());
        while done < pages_max {
            let sim = self.sim.as_mut().expect("SiM region");
            let Some(integrity) = sim.integrity.as_mut() else {
                break;
            };
            let Some(lpa) = integrity.refresh.pop_front() else {
                break;
            };
            integrity.queued[(lpa - sim.first_lpa) as usize] = false;
            let lpa = Lpa(lpa);
            if !self.front.is_empty() && self.front.contains(lpa) {
                continue;
            }
            let Some(ppa) = self.mapper.locate(lpa) else {
                continue;
            };
            page.clear();
            match self.flash.payload.read(ppa) {
                Some(bytes) => page.extend_from_slice(bytes),
                None => page.resize(self.page_size_bytes as usize, 0),
            }
            let write = HostWrite {
                lpa,
                sequence: self.flash.next_sequence(),
                data: PageData::Page(&page),
                placement: pool,
            };
            result = self
                .mapper
                .write(&mut self.flash, write, Tag::Internal)
                .and_then(|()| self.submit_pending());
            if result.is_err() {
                break;
            }
            self.sim
                .as_mut()
                .expect("SiM region")
                .counters
                .refreshes_done += 1;
            done += 1;
        }
        self.sim.as_mut().expect("SiM region").page = page;
        result?;
        self.drain()?;
        Ok(done)
    }
}
