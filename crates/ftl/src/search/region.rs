//! Search-in-Memory through the SSD (paper 004 §VI-A1; issue 16 item 3): search (`81h`) and
//! gather (`82h`) as host commands on the LPAs of a SiM region (`ftl.sim_pages`, the last
//! logical pages), routed by the page mapping to the physical page.
//!
//! - **Pool**: the region's pages are written to blocks of their own placement id (the last
//!   one, after the host's), so GC moves them only into blocks of that id (`relocate_block`,
//!   wear-leveling) and never mixes them with storage data. A block is switched to match mode
//!   (SLC) on the chip when its first program of the pool is submitted, and back to storage
//!   mode when a storage program reuses it (the chip allows a switch only while the block is
//!   erased, and its erase is submitted before any program of the block's next use).
//! - **Randomization** (§IV-C1): the chip matches against bytes XORed with a keystream of the
//!   *chunk address*, `64 × PPA + chunk`. A pool page is programmed with the controller's
//!   randomized copy for its physical page, so a GC move is a read, de-randomization and a
//!   program randomized for the new page; copyback is never used for the pool (it would keep
//!   the old page's keystream, and every later search of the moved page would miss).
//! - **Commands**: a search is one decided op that goes to the chip as page-open, search (its k
//!   keys) and page-close, submitted together so no other op reaches the plane while its page
//!   is in the latches; a gather is one gather op (the chip senses the page into Latch 1).
//!   Both queue per die with the other ops (scheduler, GC ordering) and complete through the
//!   world loop; their timing is the chip model's stage chains. With `ftl.payload = "full"`
//!   the results are what the chip computes from the bytes it stores (the match bitmap; the
//!   gathered chunks, de-randomized by the controller); in timing-only mode they are empty. A
//!   page in the write buffer, or never written (zeros), is answered by the controller from
//!   its own copy, without a flash op.
//!
//! With `ftl.sim_integrity` the controller's integrity layer guards the region
//! (`search/integrity.rs`: verification header, chunk ECC, fallback reads, refresh).

use super::integrity;
use crate::address::Lpa;
use crate::config::SearchRegionConfig;
use crate::host::HostOp;
use nandlab_core::SimTime;
use nandlab_nand::search::format;
use nandlab_nand::{ChunkMask, MatchBitmap, SearchKey};

/// A SiM vendor command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchOp {
    /// Search `81h` with k keys (1 to the chip's `batch_keys_max`, one batched search on the
    /// chip): the slots of the page matching each key; returns k 64-byte bitmaps in key order
    /// (slot `i` = bit `i % 64` of little-endian word `i / 64`).
    Search(Vec<SearchKey>),
    /// Gather `82h`: the page's chunks of the bitmap, 64 bytes each, in chunk order.
    Gather(ChunkMask),
}

/// A SiM command on one logical page of the SiM region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchRequest {
    /// Submission time, or `None`: now.
    pub arrival: Option<SimTime>,
    /// The logical page (inside the SiM region, [`crate::Ssd::search_region`]).
    pub lpa: Lpa,
    /// The command.
    pub op: SearchOp,
}

impl SearchRequest {
    /// A search of `lpa` for `key`.
    pub fn search(lpa: Lpa, key: SearchKey) -> Self {
        SearchRequest {
            arrival: None,
            lpa,
            op: SearchOp::Search(vec![key]),
        }
    }
    /// A batched search of `lpa` for `keys` (k bitmaps back).
    pub fn search_batch(lpa: Lpa, keys: &[SearchKey]) -> Self {
        SearchRequest {
            arrival: None,
            lpa,
            op: SearchOp::Search(keys.to_vec()),
        }
    }
    /// A gather of `chunks` of `lpa`.
    pub fn gather(lpa: Lpa, chunks: ChunkMask) -> Self {
        SearchRequest {
            arrival: None,
            lpa,
            op: SearchOp::Gather(chunks),
        }
    }
    /// The same command submitted at `arrival`.
    pub fn at(mut self, arrival: SimTime) -> Self {
        self.arrival = Some(arrival);
        self
    }
}

/// What the SiM region has done since the SSD was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SearchCounters {
    /// Search commands completed on the chip (page-open, search, page-close).
    pub chip_searches: u64,
    /// Gather commands completed on the chip.
    pub chip_gathers: u64,
    /// Commands answered by the controller from the write buffer or for a never-written page.
    pub controller_answers: u64,
    /// Pool programs submitted with the page's randomized bytes (host writes and GC moves).
    pub pool_programs: u64,
    /// Blocks switched to match mode on the chip.
    pub blocks_to_match: u64,
    /// Blocks switched back to storage mode on the chip.
    pub blocks_to_storage: u64,
    /// Keys searched (a batched search counts each key).
    pub keys_searched: u64,
    /// Integrity layer (`ftl.sim_integrity`): page-opens whose header the controller checked.
    pub opens_checked: u64,
    /// ... of them with a failed CRC (or magic number, or LPA).
    pub crc_failures: u64,
    /// ... of them older than `ftl.sim_refresh_age_s`.
    pub aged_opens: u64,
    /// Fallback full-page reads through the page ECC (failed opens and uncorrectable chunks).
    pub fallback_reads: u64,
    /// Read retries of those reads.
    pub fallback_read_retries: u64,
    /// Fallback reads the page ECC could not decode (the command returns no bytes).
    pub uncorrectable_reads: u64,
    /// Commands answered by the controller from a fallback read's corrected copy.
    pub corrected_answers: u64,
    /// Gathered chunks with one bit corrected by the chunk ECC.
    pub chunk_bits_corrected: u64,
    /// Gathered chunks the chunk ECC could not correct.
    pub chunks_uncorrectable: u64,
    /// Pages queued for refresh.
    pub refreshes_queued: u64,
    /// Pages rewritten by [`crate::Ssd::search_refresh`].
    pub refreshes_done: u64,
    /// Search commands the batch scheduler of [`crate::Ssd::run_search`] dispatched.
    pub batches: u64,
    /// Search requests that joined an earlier request's batch (`ftl.sim_batch_deadline_ns`).
    pub merged_searches: u64,
}

impl SearchCounters {
    /// What happened since `start` (an earlier reading of the same device's counters).
    pub fn since(&self, start: &SearchCounters) -> SearchCounters {
        SearchCounters {
            chip_searches: self.chip_searches - start.chip_searches,
            chip_gathers: self.chip_gathers - start.chip_gathers,
            controller_answers: self.controller_answers - start.controller_answers,
            pool_programs: self.pool_programs - start.pool_programs,
            blocks_to_match: self.blocks_to_match - start.blocks_to_match,
            blocks_to_storage: self.blocks_to_storage - start.blocks_to_storage,
            keys_searched: self.keys_searched - start.keys_searched,
            opens_checked: self.opens_checked - start.opens_checked,
            crc_failures: self.crc_failures - start.crc_failures,
            aged_opens: self.aged_opens - start.aged_opens,
            fallback_reads: self.fallback_reads - start.fallback_reads,
            fallback_read_retries: self.fallback_read_retries - start.fallback_read_retries,
            uncorrectable_reads: self.uncorrectable_reads - start.uncorrectable_reads,
            corrected_answers: self.corrected_answers - start.corrected_answers,
            chunk_bits_corrected: self.chunk_bits_corrected - start.chunk_bits_corrected,
            chunks_uncorrectable: self.chunks_uncorrectable - start.chunks_uncorrectable,
            refreshes_queued: self.refreshes_queued - start.refreshes_queued,
            refreshes_done: self.refreshes_done - start.refreshes_done,
            batches: self.batches - start.batches,
            merged_searches: self.merged_searches - start.merged_searches,
        }
    }
}

/// The SiM region and pool of an SSD.
#[derive(Debug)]
pub(crate) struct SearchRegion {
    /// First LPA of the region (it runs to the end of the logical space).
    pub(crate) first_lpa: u32,
    pub(crate) pages: u32,
    /// Placement id of the pool.
    pub(crate) pool: u16,
    /// How long a search waits for others to join its batch (`ftl.sim_batch_deadline_ns`).
    pub(crate) batch_deadline: SimTime,
    /// Scratch: a page's randomized bytes for a program.
    pub(crate) page: Vec<u8>,
    /// Scratch: a search command's keys.
    pub(crate) keys: Vec<SearchKey>,
    /// A fallback read's corrected, de-randomized page.
    pub(crate) corrected: Vec<u8>,
    /// The integrity layer (`ftl.sim_integrity`).
    pub(crate) integrity: Option<integrity::Integrity>,
    /// [`crate::Ssd::run_search`]'s commands in flight (request slot, batch) and finished (batch,
    /// completion time, data).
    pub(crate) in_flight: Vec<(u32, usize)>,
    pub(crate) finished: Vec<(usize, SimTime, Vec<u8>)>,
    pub(crate) counters: SearchCounters,
}

impl SearchRegion {
    /// The region of `config` on a device with `logical` logical pages, its blocks in placement
    /// pool `pool` (`None`: no region).
    pub fn new(config: &SearchRegionConfig, pool: u16, logical: u32) -> Option<Box<Self>> {
        (config.pages > 0).then(|| {
            Box::new(SearchRegion {
                first_lpa: logical - config.pages,
                pages: config.pages,
                pool,
                batch_deadline: SimTime::from_ps(config.batch_deadline_ns.saturating_mul(1000)),
                page: Vec::new(),
                keys: Vec::new(),
                corrected: Vec::new(),
                in_flight: Vec::new(),
                finished: Vec::new(),
                integrity: config
                    .integrity
                    .then(|| integrity::Integrity::new(config.refresh_age_s, config.pages)),
                counters: SearchCounters::default(),
            })
        })
    }

    #[inline]
    pub fn contains(&self, lpa: Lpa) -> bool {
        lpa.0 >= self.first_lpa && lpa.0 - self.first_lpa < self.pages
    }
}

pub(crate) const KEY_BYTES: u64 = 16;
/// Bytes of a gather command's argument on the host link (the chunk bitmap).
pub(crate) const GATHER_ARGUMENT_BYTES: u64 = 8;

/// Appends `bitmap`'s 64 bytes to `out`, without the header chunk's slots if `clear_header`.
pub(crate) fn push_bitmap(out: &mut Vec<u8>, mut bitmap: MatchBitmap, clear_header: bool) {
    if clear_header {
        bitmap.0[0] &= !integrity::HEADER_SLOTS;
    }
    out.extend(bitmap.0.iter().flat_map(|w| w.to_le_bytes()));
}

/// The controller's answer to a command from a page's plain bytes (`search.keys`: a search's
/// keys) into `out`.
pub(crate) fn answer(
    search: &SearchRegion,
    page: &[u8],
    op: HostOp,
    args: (u64, u64),
    out: &mut Vec<u8>,
) {
    out.clear();
    if op == HostOp::Search {
        for k in &search.keys {
            push_bitmap(
                out,
                format::match_page(page, *k),
                search.integrity.is_some(),
            );
        }
    } else {
        for chunk in ChunkMask(args.0).chunks() {
            out.extend_from_slice(format::chunk_bytes(page, chunk));
        }
    }
}
