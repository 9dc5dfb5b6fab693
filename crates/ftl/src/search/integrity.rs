//! The search controller's integrity layer (paper 004 §IV-C, SPEC S4), over the page formats
//! of `nandlab_nand::search`. The checks ([`header_verdict`], [`decode_chunks`]) and the refresh
//! queue ([`RefreshQueue`]) are shared by the chip-attached [`super::SearchStore`] and the SSD's
//! region (`ftl.sim_integrity`); on the SSD:
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
//! - **Refresh** ([`crate::Ssd::search_refresh`]): queued pages are rewritten through the FTL (a new pool
//!   page, re-randomized for its address, new header time).

use super::region::SearchRegion;
use crate::address::Lpa;
use nandlab_core::SimTime;
use nandlab_nand::ChunkMask;
use nandlab_nand::search::chunk_ecc::{self, CHUNK_ECC_BYTES, Decoded};
use nandlab_nand::search::format::CHUNK_BYTES;
use nandlab_nand::search::header::{self, Header};
use nandlab_nand::search::randomize;
use std::collections::VecDeque;

/// The header's magic number ("SIM-HDR!"; the store's default too).
pub const SIM_MAGIC: u64 = 0x2152_4448_2D4D_4953;

/// Bits of the header chunk's slots in the first bitmap word.
pub(crate) const HEADER_SLOTS: u64 = 0xFF;

/// What the header check on page-open found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Searched on the chip.
    OnChip,
    /// Read out in full: the CRC (or magic, or page number) failed.
    CrcFailed,
    /// Read out in full: older than the refresh age.
    Aged,
}

/// The verdict on a page-open of logical page `page` at `now` from the header the window
/// decoded to (`None`: the CRC or magic number failed).
pub fn header_verdict(
    header: Option<Header>,
    page: u32,
    now: SimTime,
    refresh_age: SimTime,
) -> Verdict {
    match header {
        Some(h) if h.page == page => {
            if now.saturating_sub(h.written_at) <= refresh_age {
                Verdict::OnChip
            } else {
                Verdict::Aged
            }
        }
        _ => Verdict::CrcFailed,
    }
}

/// What [`decode_chunks`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkCheck {
    /// Chunks checked (up to and with the first uncorrectable one).
    pub checked: u64,
    /// Chunks with one bit corrected.
    pub corrected: u64,
    /// A chunk was uncorrectable: the page must be read in full.
    pub failed: bool,
}

/// Checks each chunk a gather of chip page `chip_ppa` returned (`raw`: each chunk's 64 bytes
/// then its ECC bytes) with its chunk ECC and appends it to `out`, de-randomized if
/// `randomized`; stops at the first uncorrectable chunk (then `out` holds a partial result).
pub fn decode_chunks(
    raw: &[u8],
    chunks: ChunkMask,
    chip_ppa: u64,
    randomized: bool,
    out: &mut Vec<u8>,
) -> ChunkCheck {
    let mut check = ChunkCheck::default();
    let stride = CHUNK_BYTES as usize + CHUNK_ECC_BYTES;
    for (chunk, bytes) in chunks.chunks().zip(raw.chunks_exact(stride)) {
        let at = out.len();
        out.extend_from_slice(&bytes[..CHUNK_BYTES as usize]);
        check.checked += 1;
        match chunk_ecc::decode(&mut out[at..], &bytes[CHUNK_BYTES as usize..]) {
            Decoded::Clean => {}
            Decoded::Corrected { .. } => check.corrected += 1,
            Decoded::Uncorrectable => {
                check.failed = true;
                return check;
            }
        }
        if randomized {
            randomize::randomize_chunk(randomize::chunk_address(chip_ppa, chunk), &mut out[at..]);
        }
    }
    check
}

/// Pages waiting to be rewritten, each at most once (indices `0..pages`).
#[derive(Clone, Debug)]
pub struct RefreshQueue {
    queue: VecDeque<u32>,
    queued: Vec<bool>,
}

impl RefreshQueue {
    /// An empty queue over `pages` pages.
    pub fn new(pages: u32) -> Self {
        RefreshQueue {
            queue: VecDeque::new(),
            queued: vec![false; pages as usize],
        }
    }

    /// Whether page `index` is queued.
    pub fn contains(&self, index: u32) -> bool {
        self.queued[index as usize]
    }

    /// Queues page `index` unless it is queued already; whether it was added.
    pub fn push(&mut self, index: u32) -> bool {
        if self.queued[index as usize] {
            return false;
        }
        self.queued[index as usize] = true;
        self.queue.push_back(index);
        true
    }

    /// The oldest queued page, taken off the queue.
    pub fn pop(&mut self) -> Option<u32> {
        let index = self.queue.pop_front()?;
        self.queued[index as usize] = false;
        Some(index)
    }

    /// Drops page `index` from the queue.
    pub fn remove(&mut self, index: u32) {
        if self.queued[index as usize] {
            self.queued[index as usize] = false;
            self.queue.retain(|p| *p != index);
        }
    }

    /// Pages queued.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no page is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// The integrity layer's state on the SSD's region.
#[derive(Debug)]
pub(crate) struct Integrity {
    pub refresh_age: SimTime,
    /// Region pages (index from the region's first LPA) waiting to be rewritten.
    pub refresh: RefreshQueue,
}

impl Integrity {
    pub fn new(refresh_age_s: u64, pages: u32) -> Self {
        Integrity {
            refresh_age: SimTime::from_ms(refresh_age_s.saturating_mul(1000)),
            refresh: RefreshQueue::new(pages),
        }
    }
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
        let header = header::verify_window(window, chip_ppa, true, SIM_MAGIC);
        let verdict = header_verdict(header, lpa.0, now, integrity.refresh_age);
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
        let index = lpa.0 - self.first_lpa;
        let integrity = self.integrity.as_mut().expect("integrity layer on");
        if integrity.refresh.push(index) {
            self.counters.refreshes_queued += 1;
        }
    }

    /// Checks and de-randomizes the chunks a gather of chip page `chip_ppa` returned into `out`
    /// ([`decode_chunks`]); `false` when a chunk is uncorrectable (the page must be read in full).
    pub(crate) fn check_chunks(
        &mut self,
        raw: &[u8],
        chunks: ChunkMask,
        chip_ppa: u64,
        out: &mut Vec<u8>,
    ) -> bool {
        let check = decode_chunks(raw, chunks, chip_ppa, true, out);
        self.counters.chunk_bits_corrected += check.corrected;
        self.counters.chunks_uncorrectable += u64::from(check.failed);
        !check.failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict both attachments act on: the page number and the age decide, a header that
    /// did not decode is a CRC failure.
    #[test]
    fn the_header_verdict_checks_page_and_age() {
        let age = SimTime::from_ms(1000);
        let header = |page, written_ms| {
            Some(Header {
                written_at: SimTime::from_ms(written_ms),
                magic: SIM_MAGIC,
                page,
            })
        };
        let now = SimTime::from_ms(5000);
        assert_eq!(
            header_verdict(header(7, 4000), 7, now, age),
            Verdict::OnChip
        );
        assert_eq!(header_verdict(header(7, 3999), 7, now, age), Verdict::Aged);
        assert_eq!(
            header_verdict(header(8, 4000), 7, now, age),
            Verdict::CrcFailed
        );
        assert_eq!(header_verdict(None, 7, now, age), Verdict::CrcFailed);
    }

    #[test]
    fn a_page_is_queued_for_refresh_once_and_leaves_in_order() {
        let mut queue = RefreshQueue::new(8);
        assert!(queue.push(5) && queue.push(2) && !queue.push(5));
        assert!(queue.push(7));
        queue.remove(2);
        assert_eq!((queue.len(), queue.contains(2)), (2, false));
        assert_eq!(queue.pop(), Some(5));
        assert!(queue.push(5), "a popped page may be queued again");
        assert_eq!(
            (queue.pop(), queue.pop(), queue.pop()),
            (Some(7), Some(5), None)
        );
        assert!(queue.is_empty());
    }

    /// A flipped bit in a gathered chunk is corrected and the chunk de-randomized; a chunk with
    /// its ECC bytes destroyed stops the decode.
    #[test]
    fn gathered_chunks_are_corrected_and_an_uncorrectable_one_stops_the_decode() {
        let data: Vec<u8> = (0..128u32).map(|i| i as u8).collect();
        let ppa = 42;
        let mut raw = Vec::new();
        for (i, chunk) in data.chunks_exact(64).enumerate() {
            let mut stored = chunk.to_vec();
            randomize::randomize_chunk(randomize::chunk_address(ppa, 1 + i as u32), &mut stored);
            let ecc = chunk_ecc::encode(&stored);
            raw.extend_from_slice(&stored);
            raw.extend_from_slice(&ecc);
        }
        raw[3] ^= 0x10; // one bit of chunk 1
        let mut out = Vec::new();
        let check = decode_chunks(&raw, ChunkMask(0b110), ppa, true, &mut out);
        assert_eq!(
            (check.checked, check.corrected, check.failed),
            (2, 1, false)
        );
        assert_eq!(out, data);
        raw[64..68].fill(0xFF); // chunk 1's ECC bytes
        raw[0] ^= 0x03;
        let mut out = Vec::new();
        let check = decode_chunks(&raw, ChunkMask(0b110), ppa, true, &mut out);
        assert!(check.failed && check.checked == 1, "{check:?}");
    }
}
