//! [`SearchDevice`]: what the index structures of this crate need of a Search-in-Memory device,
//! and its two implementations, both the controller's search component (`nandlab_ftl::search`):
//!
//! - [`ChipDevice`]: the component's store straight on a chip model (no FTL): calls submit at
//!   the time given, [`SearchDevice::settle`] runs the chip's events until it is idle;
//! - [`Ssd`]: the SSD's SiM region (`ftl.sim_pages`): logical page `n` is LPA `first + n` of
//!   the region, every call is one synchronous command ([`Ssd::execute_search`],
//!   [`Ssd::execute`]) at the device's time or `now`, whichever is later.
//!
//! A logical page holds [`DATA_BYTES`] (63 chunks of data); on the device it is chunk 1..64 of a
//! SiM page whose chunk 0 belongs to the controller (the verification header, or zeros without
//! the integrity layer). Bitmaps never report the slots of chunk 0, and chunk 0 cannot be
//! gathered.

use crate::error::{SearchError, SearchResult};
use nandlab_core::SimTime;
use nandlab_ftl::search::{LogicalPage, OpenPage, SearchStore};
use nandlab_ftl::{HostRequest, Lpa, SearchRequest, Ssd};
use nandlab_nand::search::format::{CHUNK_BYTES, SIM_PAGE_BYTES};
use nandlab_nand::search::header::DATA_BYTES;
use nandlab_nand::{ChunkMask, MatchBitmap, NandSim, SearchKey};

/// A Search-in-Memory device of logical pages (see the module docs). Each call takes the
/// simulated time it is issued at; a device may serve it later (when it is busy).
pub trait SearchDevice {
    /// A page made the search operand by [`SearchDevice::open`].
    type Open;

    /// Logical pages the device addresses (`0..page_count`).
    fn page_count(&self) -> u32;

    /// The device's simulated time.
    fn now(&self) -> SimTime;

    /// The chip model behind the device (its `[search]` parameters, counters and energy).
    fn nand(&self) -> &NandSim;

    /// Writes `data` ([`DATA_BYTES`]) as logical page `page`.
    fn write(&mut self, now: SimTime, page: LogicalPage, data: &[u8]) -> SearchResult<()>;

    /// Whether `page` holds data (written and not trimmed; an SSD answers every page).
    fn written(&self, page: LogicalPage) -> bool;

    /// Forgets `page`.
    fn trim(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<()>;

    /// The [`DATA_BYTES`] of `page` by a full read through the page ECC.
    fn read(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<Vec<u8>>;

    /// Makes `page` the search operand (page-open, with the integrity check).
    fn open(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<Self::Open>;

    /// A batched search of an open page: one bitmap per key, chunk 0's slots cleared.
    fn search(
        &mut self,
        now: SimTime,
        open: &Self::Open,
        keys: &[SearchKey],
    ) -> SearchResult<Vec<MatchBitmap>>;

    /// The chunks `chunks` (1 to 63) of an open page, 64 bytes each in chunk order.
    fn gather(
        &mut self,
        now: SimTime,
        open: &mut Self::Open,
        chunks: ChunkMask,
    ) -> SearchResult<Vec<u8>>;

    /// The chunks `chunks` of a page that is not opened (the value page of a leaf).
    fn gather_page(
        &mut self,
        now: SimTime,
        page: LogicalPage,
        chunks: ChunkMask,
    ) -> SearchResult<Vec<u8>>;

    /// Releases an open page (page-close).
    fn close(&mut self, now: SimTime, open: Self::Open) -> SearchResult<()>;

    /// Runs the device until everything submitted so far is done.
    fn settle(&mut self);
}

/// The search store on its chip model (see the module docs).
#[derive(Debug)]
pub struct ChipDevice {
    /// The chip model.
    pub nand: NandSim,
    /// The store over match-mode blocks of `nand`.
    pub store: SearchStore,
}

impl ChipDevice {
    /// The store `store` over `nand`'s blocks.
    pub fn new(nand: NandSim, store: SearchStore) -> Self {
        ChipDevice { nand, store }
    }
}

impl SearchDevice for ChipDevice {
    type Open = OpenPage;

    fn page_count(&self) -> u32 {
        self.store.logical_page_count()
    }

    fn now(&self) -> SimTime {
        self.nand.now()
    }

    fn nand(&self) -> &NandSim {
        &self.nand
    }

    fn write(&mut self, now: SimTime, page: LogicalPage, data: &[u8]) -> SearchResult<()> {
        self.store.write(&mut self.nand, now, page, data)?;
        Ok(())
    }

    fn written(&self, page: LogicalPage) -> bool {
        self.store.address_of(page).is_some()
    }

    fn trim(&mut self, _now: SimTime, page: LogicalPage) -> SearchResult<()> {
        Ok(self.store.trim(page)?)
    }

    fn read(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<Vec<u8>> {
        Ok(self.store.read(&mut self.nand, now, page)?)
    }

    fn open(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<OpenPage> {
        Ok(self.store.open(&mut self.nand, now, page)?)
    }

    fn search(
        &mut self,
        now: SimTime,
        open: &OpenPage,
        keys: &[SearchKey],
    ) -> SearchResult<Vec<MatchBitmap>> {
        Ok(self.store.search(&mut self.nand, now, open, keys)?)
    }

    fn gather(
        &mut self,
        now: SimTime,
        open: &mut OpenPage,
        chunks: ChunkMask,
    ) -> SearchResult<Vec<u8>> {
        Ok(self.store.gather(&mut self.nand, now, open, chunks)?)
    }

    fn gather_page(
        &mut self,
        now: SimTime,
        page: LogicalPage,
        chunks: ChunkMask,
    ) -> SearchResult<Vec<u8>> {
        Ok(self.store.gather_page(&mut self.nand, now, page, chunks)?)
    }

    fn close(&mut self, now: SimTime, open: OpenPage) -> SearchResult<()> {
        Ok(self.store.close(&mut self.nand, now, open)?)
    }

    fn settle(&mut self) {
        let mut done = Vec::new();
        self.nand.run_until_idle(&mut done);
    }
}

/// A page of the SSD's region opened for search: its LPA (the SSD opens and closes the page
/// around each search command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SsdOpen(pub Lpa);

fn ssd_error(what: &str, lpa: Lpa, e: nandlab_ftl::FtlError) -> SearchError {
    SearchError::Argument {
        argument: "page",
        message: format!("{what} of lpa {} on the SSD: {e}", lpa.0),
    }
}

/// The SSD's region: its first LPA and page count.
fn region(ssd: &Ssd) -> (u64, u32) {
    ssd.search_region()
        .map_or((0, 0), |r| (r.start, (r.end - r.start) as u32))
}

fn lpa_of(ssd: &Ssd, page: LogicalPage) -> SearchResult<Lpa> {
    let (first, pages) = region(ssd);
    if page.0 >= pages {
        return Err(SearchError::Argument {
            argument: "page",
            message: format!("{page} is beyond the SSD's SiM region of {pages} pages"),
        });
    }
    Ok(Lpa((first + u64::from(page.0)) as u32))
}

fn check_chunks(chunks: ChunkMask) -> SearchResult<()> {
    if chunks.contains(0) || chunks.count() == 0 {
        return Err(SearchError::Argument {
            argument: "chunks",
            message: format!(
                "{:#x}: give data chunks 1 to 63 (chunk 0 belongs to the controller)",
                chunks.0
            ),
        });
    }
    Ok(())
}

impl SearchDevice for Ssd {
    type Open = SsdOpen;

    fn page_count(&self) -> u32 {
        region(self).1
    }

    fn now(&self) -> SimTime {
        Ssd::now(self)
    }

    fn nand(&self) -> &NandSim {
        Ssd::nand(self)
    }

    fn write(&mut self, now: SimTime, page: LogicalPage, data: &[u8]) -> SearchResult<()> {
        let lpa = lpa_of(self, page)?;
        if data.len() != DATA_BYTES {
            return Err(SearchError::Argument {
                argument: "data",
                message: format!("{} bytes; a SiM page holds {DATA_BYTES}", data.len()),
            });
        }
        let bytes = u64::from(SIM_PAGE_BYTES);
        let mut full = vec![0u8; SIM_PAGE_BYTES as usize];
        full[CHUNK_BYTES as usize..].copy_from_slice(data);
        let request = HostRequest::write(u64::from(lpa.0) * bytes, bytes).at(now);
        self.execute(&request, Some(&full))
            .map_err(|e| ssd_error("write", lpa, e))?;
        Ok(())
    }

    fn written(&self, page: LogicalPage) -> bool {
        page.0 < region(self).1
    }

    fn trim(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<()> {
        let lpa = lpa_of(self, page)?;
        let bytes = u64::from(SIM_PAGE_BYTES);
        let request = HostRequest::trim(u64::from(lpa.0) * bytes, bytes).at(now);
        self.execute(&request, None)
            .map_err(|e| ssd_error("trim", lpa, e))?;
        Ok(())
    }

    fn read(&mut self, now: SimTime, page: LogicalPage) -> SearchResult<Vec<u8>> {
        let lpa = lpa_of(self, page)?;
        let bytes = u64::from(SIM_PAGE_BYTES);
        let request = HostRequest::read(u64::from(lpa.0) * bytes, bytes).at(now);
        let done = self
            .execute(&request, None)
            .map_err(|e| ssd_error("read", lpa, e))?;
        let mut data = done.data;
        data.resize(SIM_PAGE_BYTES as usize, 0);
        Ok(data[CHUNK_BYTES as usize..].to_vec())
    }

    fn open(&mut self, _now: SimTime, page: LogicalPage) -> SearchResult<SsdOpen> {
        Ok(SsdOpen(lpa_of(self, page)?))
    }

    fn search(
        &mut self,
        now: SimTime,
        open: &SsdOpen,
        keys: &[SearchKey],
    ) -> SearchResult<Vec<MatchBitmap>> {
        let request = SearchRequest::search_batch(open.0, keys).at(now);
        let done = self
            .execute_search(&request)
            .map_err(|e| ssd_error("search", open.0, e))?;
        let mut bitmaps = Ssd::bitmaps_of(&done);
        bitmaps.resize(keys.len(), MatchBitmap::default());
        for bitmap in &mut bitmaps {
            bitmap.0[0] &= !0xFF;
        }
        Ok(bitmaps)
    }

    fn gather(
        &mut self,
        now: SimTime,
        open: &mut SsdOpen,
        chunks: ChunkMask,
    ) -> SearchResult<Vec<u8>> {
        check_chunks(chunks)?;
        let request = SearchRequest::gather(open.0, chunks).at(now);
        let done = self
            .execute_search(&request)
            .map_err(|e| ssd_error("gather", open.0, e))?;
        Ok(done.data)
    }

    fn gather_page(
        &mut self,
        now: SimTime,
        page: LogicalPage,
        chunks: ChunkMask,
    ) -> SearchResult<Vec<u8>> {
        let mut open = self.open(now, page)?;
        self.gather(now, &mut open, chunks)
    }

    fn close(&mut self, _now: SimTime, _open: SsdOpen) -> SearchResult<()> {
        Ok(())
    }

    fn settle(&mut self) {}
}
