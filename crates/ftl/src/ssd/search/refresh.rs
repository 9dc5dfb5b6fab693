//! The integrity layer's SSD side: the fallback full read and the refresh of queued pages
//! through the FTL (see [`crate::search::integrity`]).

use super::super::Ssd;
use crate::address::Lpa;
use crate::error::FtlResult;
use crate::flash::emit::Tag;
use crate::flash::{HostWrite, PageData};
use crate::mapping::Mapping;
use crate::search::integrity::SIM_MAGIC;
use nandlab_nand::PageAddress;
use nandlab_nand::search::format::SIM_PAGE_BYTES;
use nandlab_nand::search::header;
use nandlab_nand::search::randomize;

impl Ssd {
    /// The fallback: a full read of the page at `address` (chip page `chip_ppa`) through the
    /// chip's page ECC with read-retry (its completion is decoded by the controller's ECC as a
    /// host read's), de-randomized into the region's corrected copy. Whether the page ECC
    /// decoded it (an uncorrectable page leaves the copy empty).
    pub(super) fn search_full_read(
        &mut self,
        address: PageAddress,
        chip_ppa: u64,
        tag: u64,
    ) -> FtlResult<bool> {
        let read = self.chip.nand.read_page_data(self.now, address, tag)?;
        let search = self.stages.search.as_mut().expect("SiM region");
        search.counters.fallback_reads += 1;
        search.counters.fallback_read_retries += u64::from(read.read_retries);
        search.corrected.clear();
        let Some(bytes) = read.bytes else {
            search.counters.uncorrectable_reads += 1;
            return Ok(false);
        };
        search
            .corrected
            .extend_from_slice(&bytes[..SIM_PAGE_BYTES as usize]);
        randomize::randomize_page(chip_ppa, &mut search.corrected);
        debug_assert!(
            header::verify_window(&search.corrected, chip_ppa, false, SIM_MAGIC).is_some()
        );
        Ok(true)
    }

    /// Pages of the SiM region waiting to be refreshed (`ftl.sim_integrity`).
    pub fn search_refresh_queue_len(&self) -> usize {
        self.stages
            .search
            .as_ref()
            .and_then(|s| s.integrity.as_ref())
            .map_or(0, |i| i.refresh.len())
    }

    /// Rewrites up to `pages_max` pages of the refresh queue through the FTL (each to a new
    /// pool page, randomized for its address, with a new header time) and simulates until the
    /// device is idle; returns how many were rewritten. A queued page rewritten by the host or
    /// trimmed meanwhile is dropped from the queue without a write.
    pub fn search_refresh(&mut self, pages_max: usize) -> FtlResult<usize> {
        let Some(search) = self.stages.search.as_mut() else {
            return Ok(0);
        };
        let pool = search.pool;
        let mut page = std::mem::take(&mut search.page);
        let mut done = 0;
        let mut result = Ok(());
        while done < pages_max {
            let search = self.stages.search.as_mut().expect("SiM region");
            let Some(integrity) = search.integrity.as_mut() else {
                break;
            };
            let Some(index) = integrity.refresh.pop() else {
                break;
            };
            let lpa = Lpa(search.first_lpa + index);
            if !self.front.is_empty() && self.front.contains(lpa) {
                continue;
            }
            let Some(ppa) = self.mapper.locate(lpa) else {
                continue;
            };
            page.clear();
            match self.flash.payload.read(ppa) {
                Some(bytes) => page.extend_from_slice(bytes),
                None => page.resize(self.layout.page_size_bytes as usize, 0),
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
            self.stages
                .search
                .as_mut()
                .expect("SiM region")
                .counters
                .refreshes_done += 1;
            done += 1;
        }
        self.stages.search.as_mut().expect("SiM region").page = page;
        result?;
        self.drain()?;
        Ok(done)
    }
}
