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
//! - **Refresh** ([`Ssd::search_refresh`]): queued pages are rewritten through the FTL (a new pool
//!   page, re-randomized for its address, new header time).

use super::region::SearchRegion;
use crate::address::Lpa;
use nandlab_core::SimTime;
use nandlab_nand::search::chunk_ecc::{self, CHUNK_ECC_BYTES, Decoded};
use nandlab_nand::search::format::CHUNK_BYTES;
use nandlab_nand::search::header;
use nandlab_nand::search::randomize;
use std::collections::VecDeque;

/// The header's magic number ("SIM-HDR!", as `nandlab-search`'s store).
pub const SIM_MAGIC: u64 = 0x2152_4448_2D4D_4953;

/// Bits of the header chunk's slots in the first bitmap word.
pub(crate) const HEADER_SLOTS: u64 = 0xFF;

/// The integrity layer's state.
#[derive(Debug)]
pub(crate) struct Integrity {
    pub refresh_age: SimTime,
    /// LPAs waiting to be rewritten, each once.
    pub(crate) refresh: VecDeque<u32>,
    /// Per region page: queued for refresh.
    pub(crate) queued: Vec<bool>,
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
pub(crate) enum Verdict {
    /// Searched on the chip.
    OnChip,
    /// Read out in full: the CRC (or magic, or LPA) failed.
    CrcFailed,
    /// Read out in full: older than the refresh age.
    Aged,
}

impl SearchRegion {
    /// The header check of a page-open of `lpa` at chip page `chip_ppa` at `now`.
    pub(crate) fn check_window(
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
    pub(crate) fn queue_refresh(&mut self, lpa: Lpa) {
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
    pub(crate) fn check_chunks(
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
