//! [`SearchStore`]: logical SiM pages in match-mode blocks of a [`NandSim`], with the integrity
//! protocol of paper 004 §IV-C (see the crate docs). Every call submits its chip ops at `now`
//! (not before the chip model's own time); the caller runs the chip model's events.
//!
//! Page path: write builds chunk 0 (header) + 63 data chunks, randomizes each chunk with its
//! chunk address, appends the 4-byte ECC of each stored chunk (spare area), and programs the next
//! free page. Open checks the header CRC from the window the chip sends; search and gather use
//! the chip while the page is verified, the controller's corrected copy after a fallback.

use super::error::{StoreError, StoreResult};
use super::integrity::{self, RefreshQueue, Verdict};
use nandlab_core::SimTime;
use nandlab_nand::search::chunk_ecc::CHUNK_ECC_BYTES;
use nandlab_nand::search::format::{self, CHUNK_BYTES, SIM_PAGE_BYTES};
use nandlab_nand::search::header::{self, DATA_BYTES, Header};
use nandlab_nand::search::randomize;
use nandlab_nand::{BlockMode, ChunkMask, MatchBitmap, NandSim, PageAddress, SearchKey};

/// Number of a logical SiM page of a store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogicalPage(pub u32);

impl std::fmt::Display for LogicalPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Store settings.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreConfig {
    /// Logical pages the store addresses (`0..logical_pages`).
    pub logical_pages: u32,
    /// The header's magic number (paper: an 8-byte predetermined value).
    pub magic: u64,
    /// Safety margin: a page older than this is read out in full on page-open and queued for
    /// refresh (paper §IV-C2).
    pub refresh_age: SimTime,
    /// Bound of the refresh queue.
    pub refresh_queue_pages_max: usize,
    /// Blocks written in turn (1: fill one block after the other). With the blocks listed die
    /// by die, a stripe of one block per die spreads consecutive pages over the dies.
    pub stripe_blocks: u32,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            logical_pages: 1024,
            magic: integrity::SIM_MAGIC, // "SIM-HDR!", as the SSD region's
            refresh_age: SimTime::from_ms(30 * 86_400_000),
            refresh_queue_pages_max: 1024,
            stripe_blocks: 1,
        }
    }
}

/// What the integrity layer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntegrityStats {
    /// Pages written (host writes and refreshes).
    pub pages_written: u64,
    /// Page-opens.
    pub opens: u64,
    /// Opens whose header CRC matched and whose page was young enough: served on chip.
    pub opens_on_chip: u64,
    /// Opens whose header CRC (or magic number, or page) failed.
    pub crc_failures: u64,
    /// Opens of pages older than the refresh age.
    pub aged_opens: u64,
    /// Fallback full-page reads through the page ECC.
    pub full_reads: u64,
    /// Read-retries of the fallback reads.
    pub read_retries: u64,
    /// Searches answered by the controller from a corrected copy.
    pub controller_searches: u64,
    /// Chunks gathered and checked by their chunk ECC.
    pub chunks_gathered: u64,
    /// Gathered chunks with one bit corrected.
    pub chunk_bits_corrected: u64,
    /// Gathered chunks the chunk ECC could not correct.
    pub chunks_uncorrectable: u64,
    /// Search hits that the ECC-checked chunk showed not to match (bit errors in the latch).
    pub false_hits_removed: u64,
    /// Pages queued for refresh.
    pub refreshes_queued: u64,
    /// Pages rewritten by the refresh.
    pub refreshes_done: u64,
}

/// A page made searchable by [`SearchStore::open`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenPage {
    /// The logical page.
    pub page: LogicalPage,
    /// Its physical page.
    pub address: PageAddress,
    /// The corrected, de-randomized page after a fallback; `None` while the chip serves it.
    corrected: Option<Box<[u8]>>,
    /// The page is active in the chip's Latch 2 (opened, not fallen back, not closed).
    latched: bool,
}

impl OpenPage {
    /// Whether searches run on the chip (the page passed its check on open).
    pub fn on_chip(&self) -> bool {
        self.corrected.is_none()
    }
}

/// Logical SiM pages over match-mode blocks (see the module docs).
#[derive(Debug)]
pub struct SearchStore {
    config: StoreConfig,
    blocks: Vec<PageAddress>,
    pages_per_block: u32,
    map: Vec<Option<PageAddress>>,
    /// The blocks being filled (indices into `blocks`, `stripe_blocks` of them) and the next
    /// free page of each; `next_stripe` is the one written next.
    open_blocks: Vec<(usize, u32)>,
    next_stripe: usize,
    /// The next unused block.
    next_block: usize,
    randomized: bool,
    refresh: RefreshQueue,
    stats: IntegrityStats,
}

impl SearchStore {
    /// A store over `blocks` (erased blocks of `sim`, switched to match mode here).
    pub fn new(
        sim: &mut NandSim,
        blocks: Vec<PageAddress>,
        config: StoreConfig,
    ) -> StoreResult<Self> {
        let Some(search) = sim.search_config() else {
            return Err(StoreError::Argument {
                argument: "sim",
                message: "the chip model has no [search] section".into(),
            });
        };
        if search.chunk_ecc_bytes as usize != CHUNK_ECC_BYTES {
            return Err(StoreError::Argument {
                argument: "sim",
                message: format!(
                    "search.chunk_ecc_bytes is {}; the store's chunk ECC has {CHUNK_ECC_BYTES}",
                    search.chunk_ecc_bytes
                ),
            });
        }
        let randomized = search.randomized_chunks;
        if blocks.is_empty() {
            return Err(StoreError::Argument {
                argument: "blocks",
                message: "no block given".into(),
            });
        }
        if config.logical_pages == 0 || config.logical_pages > 1 << 24 {
            return Err(StoreError::Argument {
                argument: "config.logical_pages",
                message: format!("{} must be between 1 and 2^24", config.logical_pages),
            });
        }
        if config.stripe_blocks == 0 {
            return Err(StoreError::Argument {
                argument: "config.stripe_blocks",
                message: "must be at least 1".into(),
            });
        }
        if config.refresh_queue_pages_max == 0 {
            return Err(StoreError::Argument {
                argument: "config.refresh_queue_pages_max",
                message: "must be at least 1".into(),
            });
        }
        for block in &blocks {
            sim.set_block_mode(block, BlockMode::Match)?;
        }
        Ok(SearchStore {
            pages_per_block: sim.geometry().pages_per_block,
            map: vec![None; config.logical_pages as usize],
            refresh: RefreshQueue::new(config.logical_pages),
            config,
            blocks,
            open_blocks: Vec::new(),
            next_stripe: 0,
            next_block: 0,
            randomized,
            stats: IntegrityStats::default(),
        })
    }

    /// What the integrity layer did so far.
    pub fn stats(&self) -> &IntegrityStats {
        &self.stats
    }

    /// Logical pages the store addresses.
    pub fn logical_page_count(&self) -> u32 {
        self.map.len() as u32
    }

    /// Where logical page `page` is stored.
    pub fn address_of(&self, page: LogicalPage) -> Option<PageAddress> {
        self.map.get(page.0 as usize).copied().flatten()
    }

    /// Forgets logical page `page` (its physical page becomes dead; garbage collection is not
    /// modelled) and drops it from the refresh queue.
    pub fn trim(&mut self, page: LogicalPage) -> StoreResult<()> {
        self.check_page(page)?;
        self.map[page.0 as usize] = None;
        self.refresh.remove(page.0);
        Ok(())
    }

    /// Pages waiting to be rewritten.
    pub fn refresh_queue_len(&self) -> usize {
        self.refresh.len()
    }

    fn check_page(&self, page: LogicalPage) -> StoreResult<PageAddress> {
        match self.map.get(page.0 as usize) {
            None => Err(StoreError::Argument {
                argument: "page",
                message: format!("{page} is beyond the store's {} pages", self.map.len()),
            }),
            Some(None) => Err(StoreError::Unwritten { page: page.0 }),
            Some(Some(address)) => Ok(*address),
        }
    }

    fn allocate(&mut self) -> StoreResult<PageAddress> {
        let full = || StoreError::Full {
            pages: self.blocks.len() as u64 * u64::from(self.pages_per_block),
        };
        if self.open_blocks.len() < self.config.stripe_blocks as usize
            && self.next_block < self.blocks.len()
        {
            self.open_blocks.push((self.next_block, 0));
            self.next_block += 1;
            self.next_stripe = self.open_blocks.len() - 1;
        }
        if self.open_blocks.is_empty() {
            return Err(full());
        }
        let stripe = self.next_stripe % self.open_blocks.len();
        let (block, page) = self.open_blocks[stripe];
        let address = self.blocks[block].with_page(page);
        if page + 1 < self.pages_per_block {
            self.open_blocks[stripe].1 = page + 1;
            self.next_stripe = stripe + 1;
        } else if self.next_block < self.blocks.len() {
            self.open_blocks[stripe] = (self.next_block, 0);
            self.next_block += 1;
            self.next_stripe = stripe + 1;
        } else {
            self.open_blocks.remove(stripe);
            self.next_stripe = stripe;
        }
        Ok(address)
    }

    /// Writes `data` (63 chunks, 4,032 bytes) as logical page `page` with a header stamped `now`.
    pub fn write(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        page: LogicalPage,
        data: &[u8],
    ) -> StoreResult<PageAddress> {
        if page.0 as usize >= self.map.len() {
            return Err(StoreError::Argument {
                argument: "page",
                message: format!("{page} is beyond the store's {} pages", self.map.len()),
            });
        }
        if data.len() != DATA_BYTES {
            return Err(StoreError::Argument {
                argument: "data",
                message: format!("{} bytes; a SiM page holds {DATA_BYTES}", data.len()),
            });
        }
        let address = self.allocate()?;
        let ppa = sim.geometry().ppa(&address).0;
        let mut physical = vec![0u8; SIM_PAGE_BYTES as usize];
        physical[CHUNK_BYTES as usize..].copy_from_slice(data);
        let header = Header {
            written_at: now,
            magic: self.config.magic,
            page: page.0,
        };
        header::seal_page(&mut physical, &header, ppa, self.randomized);
        sim.program_page(now, address, &physical, u64::from(page.0))?;
        self.map[page.0 as usize] = Some(address);
        self.stats.pages_written += 1;
        Ok(address)
    }

    /// De-randomizes chunks `first..first + count` of `bytes` (stored at `ppa`) in place.
    fn derandomize(&self, ppa: u64, bytes: &mut [u8], first: u32) {
        if !self.randomized {
            return;
        }
        for (i, chunk) in bytes.chunks_exact_mut(CHUNK_BYTES as usize).enumerate() {
            randomize::randomize_chunk(randomize::chunk_address(ppa, first + i as u32), chunk);
        }
    }

    /// Page-open with the optimistic check: the header CRC over the window the chip sends, and
    /// the page's age. A failed check or an old page falls back to a full read (and a refresh).
    pub fn open(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        page: LogicalPage,
    ) -> StoreResult<OpenPage> {
        let address = self.check_page(page)?;
        let window = sim.page_open(now, address, u64::from(page.0))?;
        self.stats.opens += 1;
        let ppa = sim.geometry().ppa(&address).0;
        let header = header::verify_window(&window, ppa, self.randomized, self.config.magic);
        let mut open = OpenPage {
            page,
            address,
            corrected: None,
            latched: true,
        };
        match integrity::header_verdict(header, page.0, now, self.config.refresh_age) {
            Verdict::OnChip => {
                self.stats.opens_on_chip += 1;
                return Ok(open);
            }
            Verdict::Aged => self.stats.aged_opens += 1,
            Verdict::CrcFailed => self.stats.crc_failures += 1,
        }
        self.queue_refresh(page)?;
        self.fall_back(sim, now, &mut open)?;
        Ok(open)
    }

    /// Closes the page on the chip and reads it in full through the page ECC (with read-retry);
    /// from then on the controller answers for it.
    fn fall_back(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        open: &mut OpenPage,
    ) -> StoreResult<()> {
        if open.corrected.is_some() {
            return Ok(());
        }
        if open.latched {
            sim.page_close(now, open.address, u64::from(open.page.0))?;
            open.latched = false;
        }
        let logical = self.read_corrected(sim, now, open.page, open.address)?;
        open.corrected = Some(logical);
        Ok(())
    }

    /// A full-page read of `address` through the page ECC, de-randomized and checked.
    fn read_corrected(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        page: LogicalPage,
        address: PageAddress,
    ) -> StoreResult<Box<[u8]>> {
        let read = sim.read_page_data(now, address, u64::from(page.0))?;
        self.stats.full_reads += 1;
        self.stats.read_retries += u64::from(read.read_retries);
        let Some(bytes) = read.bytes else {
            return Err(StoreError::Uncorrectable {
                page: page.0,
                retries: read.read_retries,
            });
        };
        let mut logical: Box<[u8]> = bytes[..SIM_PAGE_BYTES as usize].into();
        self.derandomize(sim.geometry().ppa(&address).0, &mut logical, 0);
        // the page ECC returns what was written: the header must check
        debug_assert!(Header::verify(&logical, self.config.magic).is_some());
        Ok(logical)
    }

    fn queue_refresh(&mut self, page: LogicalPage) -> StoreResult<()> {
        if self.refresh.contains(page.0) {
            return Ok(());
        }
        if self.refresh.len() >= self.config.refresh_queue_pages_max {
            return Err(StoreError::RefreshQueueFull {
                page: page.0,
                limit: self.config.refresh_queue_pages_max,
            });
        }
        self.refresh.push(page.0);
        self.stats.refreshes_queued += 1;
        Ok(())
    }

    /// A batched search of an open page; the header chunk's slots are never results.
    pub fn search(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        open: &OpenPage,
        keys: &[SearchKey],
    ) -> StoreResult<Vec<MatchBitmap>> {
        let mut bitmaps = match &open.corrected {
            None => sim.search_page(now, open.address, keys, u64::from(open.page.0))?,
            Some(logical) => {
                self.stats.controller_searches += 1;
                keys.iter()
                    .map(|k| format::match_page(logical, *k))
                    .collect()
            }
        };
        for bitmap in &mut bitmaps {
            bitmap.0[0] &= !0xFF;
        }
        Ok(bitmaps)
    }

    /// The de-randomized data chunks of `chunks` (chunk 0, the header, is refused), each checked
    /// with its chunk ECC; an uncorrectable chunk makes the page fall back to a full read.
    pub fn gather(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        open: &mut OpenPage,
        chunks: ChunkMask,
    ) -> StoreResult<Vec<u8>> {
        if chunks.contains(0) || chunks.count() == 0 {
            return Err(StoreError::Argument {
                argument: "chunks",
                message: format!(
                    "{:#x}: give data chunks 1 to 63 (chunk 0 is the verification header)",
                    chunks.0
                ),
            });
        }
        if open.corrected.is_none() {
            let raw = sim.gather_chunks(now, open.address, chunks, u64::from(open.page.0))?;
            let ppa = sim.geometry().ppa(&open.address).0;
            let mut out = Vec::with_capacity(chunks.count() as usize * CHUNK_BYTES as usize);
            let check = integrity::decode_chunks(&raw, chunks, ppa, self.randomized, &mut out);
            self.stats.chunks_gathered += check.checked;
            self.stats.chunk_bits_corrected += check.corrected;
            self.stats.chunks_uncorrectable += u64::from(check.failed);
            if !check.failed {
                return Ok(out);
            }
            self.queue_refresh(open.page)?;
            self.fall_back(sim, now, open)?;
        }
        let logical = open.corrected.as_deref().expect("fell back");
        let mut out = Vec::with_capacity(chunks.count() as usize * CHUNK_BYTES as usize);
        for chunk in chunks.chunks() {
            out.extend_from_slice(format::chunk_bytes(logical, chunk));
        }
        Ok(out)
    }

    /// Gather from a page that is not opened (paper §V-A: the value page of a B+tree leaf after
    /// a search of its key page): the chip senses it into Latch 1 and sends the chunks; each is
    /// checked by its chunk ECC (the concatenated code needs no page-open); an uncorrectable
    /// chunk falls back to a full read of the page, which is queued for refresh.
    pub fn gather_page(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        page: LogicalPage,
        chunks: ChunkMask,
    ) -> StoreResult<Vec<u8>> {
        let address = self.check_page(page)?;
        let mut unopened = OpenPage {
            page,
            address,
            corrected: None,
            latched: false,
        };
        let bytes = self.gather(sim, now, &mut unopened, chunks)?;
        Ok(bytes)
    }

    /// The 4,032 data bytes of `page` by a full read through the page ECC (the path a host
    /// without SiM takes).
    pub fn read(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        page: LogicalPage,
    ) -> StoreResult<Vec<u8>> {
        let address = self.check_page(page)?;
        let logical = self.read_corrected(sim, now, page, address)?;
        Ok(logical[CHUNK_BYTES as usize..].to_vec())
    }

    /// Releases an open page (page-close on the chip when it served the page).
    pub fn close(&mut self, sim: &mut NandSim, now: SimTime, open: OpenPage) -> StoreResult<()> {
        if open.latched {
            sim.page_close(now, open.address, u64::from(open.page.0))?;
        }
        Ok(())
    }

    /// Point lookup: open, search `key`, gather the chunks of the hits, keep the slots whose
    /// ECC-checked value matches, close. Returns `(slot, value)` with slots counted from the
    /// page's first data slot (slot 8 of the page is data slot 0).
    pub fn lookup(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        page: LogicalPage,
        key: SearchKey,
    ) -> StoreResult<Vec<(u32, u64)>> {
        let mut open = self.open(sim, now, page)?;
        let bitmap = self.search(sim, now, &open, &[key])?[0];
        let mut hits = Vec::new();
        let chunks = bitmap.chunks();
        if chunks.count() > 0 {
            let bytes = self.gather(sim, now, &mut open, chunks)?;
            for (i, chunk) in chunks.chunks().enumerate() {
                let chunk_bytes = &bytes[i * CHUNK_BYTES as usize..(i + 1) * CHUNK_BYTES as usize];
                for s in 0..8u32 {
                    let slot = chunk * 8 + s;
                    if !bitmap.is_set(slot) {
                        continue;
                    }
                    let value = format::slot(chunk_bytes, s);
                    if key.matches(value) {
                        hits.push((slot - 8, value));
                    } else {
                        self.stats.false_hits_removed += 1;
                    }
                }
            }
        }
        self.close(sim, now, open)?;
        Ok(hits)
    }

    /// Rewrites up to `pages_max` queued pages (full read through the page ECC, then a new
    /// write stamped `now`); returns how many were rewritten.
    pub fn run_refresh(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        pages_max: usize,
    ) -> StoreResult<usize> {
        let mut done = 0;
        while done < pages_max {
            let Some(page) = self.refresh.pop().map(LogicalPage) else {
                break;
            };
            let address = self.check_page(page)?;
            let logical = self.read_corrected(sim, now, page, address)?;
            self.write(sim, now, page, &logical[CHUNK_BYTES as usize..])?;
            self.stats.refreshes_done += 1;
            done += 1;
        }
        Ok(done)
    }
}
