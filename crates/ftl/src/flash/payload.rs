//! Page payloads in `full` mode: the bytes of every programmed physical page and its spare area
//! (the OOB record, [`super::oob`]), moved by GC and dropped by erases. In `timing-only` mode
//! nothing is stored.

use super::oob::{OOB_BYTES, PageOob, oob_crc};
use crate::address::{Lpa, Ppa};

/// Bytes (data, then the spare area's OOB record) per physical page, or nothing.
#[derive(Debug)]
pub(crate) struct Payload {
    pages: Vec<Option<Box<[u8]>>>,
    /// Page buffers of erased pages, reused by later writes (no allocation per write in
    /// steady state).
    recycled: Vec<Box<[u8]>>,
    page_size_bytes: usize,
    enabled: bool,
}

impl Payload {
    pub fn new(enabled: bool, total_pages: usize, page_size_bytes: usize) -> Self {
        Payload {
            pages: if enabled {
                (0..total_pages).map(|_| None).collect()
            } else {
                Vec::new()
            },
            recycled: Vec::new(),
            page_size_bytes,
            enabled,
        }
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// Stores `data` (a whole page; `None` stores zeros) at `ppa`, with its OOB record (LPA,
    /// sequence number, CRC of both and the data) in the spare area.
    #[inline]
    pub fn write(&mut self, ppa: Ppa, data: Option<&[u8]>, lpa: Option<Lpa>, sequence: u64) {
        if self.enabled {
            self.write_full(ppa, data, lpa, sequence);
        }
    }

    #[inline(never)]
    fn write_full(&mut self, ppa: Ppa, data: Option<&[u8]>, lpa: Option<Lpa>, sequence: u64) {
        let size = self.page_size_bytes;
        let mut page = self
            .recycled
            .pop()
            .unwrap_or_else(|| vec![0; size + OOB_BYTES].into_boxed_slice());
        let (bytes, spare) = page.split_at_mut(size);
        match data {
            Some(d) => {
                debug_assert_eq!(d.len(), size);
                bytes.copy_from_slice(d);
            }
            None => bytes.fill(0),
        }
        let oob = PageOob {
            lpa,
            sequence,
            crc: oob_crc(lpa, sequence, Some(bytes)),
        };
        spare.copy_from_slice(&oob.to_bytes());
        let slot = &mut self.pages[ppa.index()];
        debug_assert!(slot.is_none(), "payload written twice at ppa {ppa}");
        *slot = Some(page);
    }
    pub fn read(&self, ppa: Ppa) -> Option<&[u8]> {
        if !self.enabled {
            return None;
        }
        self.pages[ppa.index()]
            .as_deref()
            .map(|page| &page[..self.page_size_bytes])
    }
    /// The OOB record in the spare area of `ppa` (full mode, programmed pages).
    pub fn oob(&self, ppa: Ppa) -> Option<PageOob> {
        let page = self.pages.get(ppa.index())?.as_deref()?;
        let spare = page[self.page_size_bytes..].try_into().expect("spare area");
        Some(PageOob::from_bytes(spare))
    }
    /// Copies the bytes and spare area of `source` to `target` (a GC move). The source keeps
    /// them until its block is erased, as on flash: a recovery scan after a power cut between
    /// the copy and the erase finds both.
    #[inline]
    pub fn relocate(&mut self, source: Ppa, target: Ppa) {
        if self.enabled {
            self.relocate_full(source, target);
        }
    }

    #[inline(never)]
    fn relocate_full(&mut self, source: Ppa, target: Ppa) {
        let mut page = self
            .recycled
            .pop()
            .unwrap_or_else(|| vec![0; self.page_size_bytes + OOB_BYTES].into_boxed_slice());
        let from = self.pages[source.index()]
            .as_deref()
            .unwrap_or_else(|| panic!("moving a page with no payload (ppa {source})"));
        page.copy_from_slice(from);
        let slot = &mut self.pages[target.index()];
        debug_assert!(slot.is_none(), "payload written twice at ppa {target}");
        *slot = Some(page);
    }
    /// Drops the pages of the block whose first page is `first`.
    pub fn clear_block(&mut self, first: Ppa, pages_per_block: u32) {
        if !self.enabled {
            return;
        }
        let first = first.index();
        for page in &mut self.pages[first..first + pages_per_block as usize] {
            if let Some(buffer) = page.take() {
                self.recycled.push(buffer);
            }
        }
    }
}
