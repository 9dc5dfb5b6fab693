//! Functional Search-in-Memory calls on [`NandSim`] (paper 004 §III, §IV-B): each submits the
//! op's timing through the transaction interface (the completion arrives like any other) and
//! returns at once what the chip sends back, computed from the bytes in its latches: the
//! verification window on page-open, match bitmaps, gathered chunks.

use super::NandSim;
use crate::error::{NandError, NandResult};
use crate::geometry::PageAddress;
use crate::op::FlashOp;
use crate::search::format::{self, CHUNK_BYTES, CHUNKS_PER_PAGE};
use crate::search::state::LatchPage;
use crate::search::{BlockMode, ChunkMask, MatchBitmap, SearchConfig, SearchKey};
use nandlab_core::SimTime;

/// A full-page read through the controller's page ECC (with read-retry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRead {
    /// The page and spare bytes after ECC; `None` when even the last read-retry failed.
    pub bytes: Option<Vec<u8>>,
    pub read_retries: u32,
}

impl NandSim {
    /// The `[search]` parameters of a SiM device.
    pub fn search_config(&self) -> Option<&SearchConfig> {
        self.search.as_ref().map(|s| &s.config)
    }

    fn search_state(&self) -> NandResult<&crate::search::state::SearchState> {
        self.search.as_ref().ok_or_else(|| NandError::SearchRule {
            message: "the device has no SiM commands (no [search] config section)".into(),
        })
    }

    /// Mode of the block of `address`.
    pub fn block_mode(&self, address: &PageAddress) -> NandResult<BlockMode> {
        self.geometry.check(address)?;
        Ok(self
            .search
            .as_ref()
            .map_or(BlockMode::Storage, |s| s.mode(address)))
    }

    /// Switches the block of `block` to `mode` (only while erased and out of the latches).
    pub fn set_block_mode(&mut self, block: &PageAddress, mode: BlockMode) -> NandResult<()> {
        self.search_state()?;
        let search = self.search.as_mut().expect("checked");
        search.set_mode(block, mode, &self.blocks)
    }

    /// Prefetch hint (speed only): the stored page of `address` will be looked up soon.
    #[inline]
    pub fn prefetch_stored_entry(&self, address: &PageAddress) {
        if let Some(s) = &self.search
            && self.geometry.check(address).is_ok()
        {
            s.prefetch_entry(address);
        }
    }

    /// Prefetch hint (speed only): `address` will be opened (`chunk` `None`) or one chunk of it
    /// gathered soon; best after [`NandSim::prefetch_stored_entry`] had time to land.
    #[inline]
    pub fn prefetch_stored_bytes(&self, address: &PageAddress, chunk: Option<u32>) {
        if let Some(s) = &self.search
            && self.geometry.check(address).is_ok()
        {
            s.prefetch_bytes(address, chunk);
        }
    }

    /// Bits flipped by SiM senses so far (the raw bit errors the latches saw).
    pub fn search_bit_errors(&self) -> u64 {
        self.search.as_ref().map_or(0, |s| s.bit_errors_injected)
    }

    /// The active page (Latch 2) of `address`'s plane.
    pub fn active_page(&self, address: &PageAddress) -> Option<PageAddress> {
        self.geometry.check(address).ok()?;
        self.search.as_ref()?.active(address).map(|p| p.address)
    }

    /// The page waiting in Latch 1 of `address`'s plane (after a page-open-cache).
    pub fn cached_page(&self, address: &PageAddress) -> Option<PageAddress> {
        self.geometry.check(address).ok()?;
        self.search.as_ref()?.cached(address).map(|p| p.address)
    }

    /// Raw bit errors the sense of the active page of `address`'s plane left in Latch 2.
    pub fn active_page_bit_errors(&self, address: &PageAddress) -> Option<u32> {
        self.geometry.check(address).ok()?;
        self.search.as_ref()?.active(address).map(|p| p.bit_errors)
    }

    /// The bytes programmed at `address` (page, then spare area), if it was programmed with data.
    pub fn stored_page(&self, address: &PageAddress) -> Option<&[u8]> {
        self.geometry.check(address).ok()?;
        self.search.as_ref()?.stored(address)
    }

    /// Programs a match-mode page with `data`: the page's bytes, optionally followed by its
    /// spare area (the rest of the spare area is zero).
    pub fn program_page(
        &mut self,
        now: SimTime,
        address: PageAddress,
        data: &[u8],
        tag: u64,
    ) -> NandResult<()> {
        let search = self.search_state()?;
        self.geometry.check(&address)?;
        if search.mode(&address) != BlockMode::Match {
            return Err(NandError::SearchRule {
                message: format!("program with data of {address}: its block is in storage mode"),
            });
        }
        let page = self.geometry.page_size_bytes as usize;
        let physical = search.physical_page_bytes();
        if data.len() < page || data.len() > physical {
            return Err(NandError::SearchRule {
                message: format!(
                    "program with data of {address}: {} bytes; give {page} to {physical}",
                    data.len()
                ),
            });
        }
        self.submit_with_data(now, &FlashOp::program(address).with_tag(tag), Some(data))
    }

    /// Page-open: `address` becomes the active page; returns the verification window the chip
    /// sends (the first `page_open_transfer_bytes` of the sensed page, raw).
    pub fn page_open(
        &mut self,
        now: SimTime,
        address: PageAddress,
        tag: u64,
    ) -> NandResult<Vec<u8>> {
        self.submit(now, &FlashOp::page_open(address).with_tag(tag))?;
        Ok(self.window_of_active(&address))
    }

    /// Page-open-cache: with a page active, `address` waits in Latch 1 (returns `None`; its
    /// window comes with page-close); otherwise as page-open.
    pub fn page_open_cache(
        &mut self,
        now: SimTime,
        address: PageAddress,
        tag: u64,
    ) -> NandResult<Option<Vec<u8>>> {
        self.geometry.check(&address)?;
        let was_active = self.search_state()?.active(&address).is_some();
        self.submit(now, &FlashOp::page_open_cache(address).with_tag(tag))?;
        Ok((!was_active).then(|| self.window_of_active(&address)))
    }

    /// Page-close of the active page `address`; returns the window of the page that moved up
    /// from Latch 1, if one waited there.
    pub fn page_close(
        &mut self,
        now: SimTime,
        address: PageAddress,
        tag: u64,
    ) -> NandResult<Option<(PageAddress, Vec<u8>)>> {
        self.submit(now, &FlashOp::page_close(address).with_tag(tag))?;
        let search = self.search.as_ref().expect("accepted");
        Ok(search.active(&address).map(|p| (p.address, self.window(p))))
    }

    /// A batched search of the active page `address`: one bitmap per key, matched against the
    /// bytes in Latch 2 (with whatever bit errors the sense left there).
    pub fn search_page(
        &mut self,
        now: SimTime,
        address: PageAddress,
        keys: &[SearchKey],
        tag: u64,
    ) -> NandResult<Vec<MatchBitmap>> {
        let count = u32::try_from(keys.len()).unwrap_or(u32::MAX);
        self.geometry.check(&address)?;
        self.check_bytes(self.search_state()?.active(&address), &address)?;
        self.submit(now, &FlashOp::search(address, count).with_tag(tag))?;
        let search = self.search.as_ref().expect("accepted");
        // the latch's bytes de-randomized once at program time (with the sense's bit errors):
        // the same bitmaps as `format::match_randomized_page` of the raw latch (test
        // `randomized_matching_equals_plain_matching_with_bit_errors`)
        let page = search.active(&address);
        let bytes = page.and_then(|p| p.match_bytes()).expect("checked");
        Ok(keys.iter().map(|k| format::match_page(bytes, *k)).collect())
    }

    /// Gather: the chunks of `chunks` of `address`, in chunk order, each followed by its
    /// `chunk_ecc_bytes` of ECC from the spare area (raw, as the chip sends them). The active
    /// page is read from Latch 2; another page is sensed first.
    pub fn gather_chunks(
        &mut self,
        now: SimTime,
        address: PageAddress,
        chunks: ChunkMask,
        tag: u64,
    ) -> NandResult<Vec<u8>> {
        self.geometry.check(&address)?;
        let search = self.search_state()?;
        let from_active = search
            .active(&address)
            .is_some_and(|p| p.address == address);
        if from_active {
            self.check_bytes(search.active(&address), &address)?;
        } else if search.stored(&address).is_none() {
            return Err(self.no_bytes(&address));
        }
        self.submit(now, &FlashOp::gather(address, chunks.0).with_tag(tag))?;
        let search = self.search.as_ref().expect("accepted");
        let page = if from_active {
            search.active(&address)
        } else {
            search.one_shot()
        };
        let bytes = page.and_then(|p| p.bytes.as_deref()).expect("checked");
        let ecc = search.config.chunk_ecc_bytes as usize;
        let page_bytes = self.geometry.page_size_bytes as usize;
        let mut out = Vec::with_capacity(chunks.count() as usize * (CHUNK_BYTES as usize + ecc));
        for chunk in chunks.chunks() {
            out.extend_from_slice(format::chunk_bytes(bytes, chunk));
            let at = page_bytes + chunk as usize * ecc;
            out.extend_from_slice(&bytes[at..at + ecc]);
        }
        debug_assert!(chunks.chunks().all(|c| c < CHUNKS_PER_PAGE));
        Ok(out)
    }

    /// A full-page read of a match-mode page through the page ECC with read-retry (the
    /// reliability model decides how many retries it takes and whether it decodes).
    pub fn read_page_data(
        &mut self,
        now: SimTime,
        address: PageAddress,
        tag: u64,
    ) -> NandResult<PageRead> {
        self.search_state()?;
        self.geometry.check(&address)?;
        if self.stored_page(&address).is_none() {
            return Err(self.no_bytes(&address));
        }
        let retries_before = self.stats.read_retries;
        let failed_before = self.stats.uncorrectable_reads;
        self.submit(now, &FlashOp::read(address).with_tag(tag))?;
        let decoded = self.stats.uncorrectable_reads == failed_before;
        Ok(PageRead {
            bytes: decoded.then(|| self.stored_page(&address).expect("checked").to_vec()),
            read_retries: (self.stats.read_retries - retries_before) as u32,
        })
    }

    fn window_of_active(&self, address: &PageAddress) -> Vec<u8> {
        let search = self.search.as_ref().expect("accepted");
        search
            .active(address)
            .map(|p| self.window(p))
            .unwrap_or_default()
    }

    /// The verification window of a latched page (empty for a page without bytes).
    fn window(&self, page: &LatchPage) -> Vec<u8> {
        let n = self
            .search_config()
            .map_or(0, |c| c.page_open_transfer_bytes) as usize;
        page.bytes
            .as_deref()
            .map(|b| b[..n.min(b.len())].to_vec())
            .unwrap_or_default()
    }

    fn check_bytes(&self, page: Option<&LatchPage>, address: &PageAddress) -> NandResult<()> {
        match page {
            Some(p) if p.address == *address && p.bytes.is_none() => Err(self.no_bytes(address)),
            _ => Ok(()),
        }
    }

    fn no_bytes(&self, address: &PageAddress) -> NandError {
        NandError::SearchRule {
            message: format!(
                "{address} was programmed without data (use NandSim::program_page): nothing to match"
            ),
        }
    }
}
