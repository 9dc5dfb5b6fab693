//! Page payloads in `full` mode: the bytes of every programmed physical page, moved by GC and
//! dropped by erases. In `timing-only` mode nothing is stored.

use crate::address::Ppa;

/// Bytes per physical page, or nothing.
#[derive(Debug)]
pub(crate) struct Payload {
    pages: Vec<Option<Box<[u8]>>>,
    /// Page buffers of erased pages, reused by later writes (no allocation per write in
    /// steady state).
    spare: Vec<Box<[u8]>>,
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
            spare: Vec::new(),
            page_size_bytes,
            enabled,
        }
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// Stores `data` (a whole page; `None` stores zeros) at `ppa`.
    pub fn write(&mut self, ppa: Ppa, data: Option<&[u8]>) {
        if !self.enabled {
            return;
        }
        let mut page = self
            .spare
            .pop()
            .unwrap_or_else(|| vec![0; self.page_size_bytes].into_boxed_slice());
        match data {
            Some(d) => {
                debug_assert_eq!(d.len(), self.page_size_bytes);
                page.copy_from_slice(d);
            }
            None => page.fill(0),
        }
        let slot = &mut self.pages[ppa.index()];
        debug_assert!(slot.is_none(), "payload written twice at ppa {ppa}");
        *slot = Some(page);
    }
    pub fn read(&self, ppa: Ppa) -> Option<&[u8]> {
        if !self.enabled {
            return None;
        }
        self.pages[ppa.index()].as_deref()
    }
    pub fn relocate(&mut self, source: Ppa, target: Ppa) {
        if !self.enabled {
            return;
        }
        let page = self.pages[source.index()].take();
        debug_assert!(
            page.is_some(),
            "moving a page with no payload (ppa {source})"
        );
        self.pages[target.index()] = page;
    }
    /// Drops the pages of the block whose first page is `first`.
    pub fn clear_block(&mut self, first: Ppa, pages_per_block: u32) {
        if !self.enabled {
            return;
        }
        let first = first.index();
        for page in &mut self.pages[first..first + pages_per_block as usize] {
            if let Some(buffer) = page.take() {
                self.spare.push(buffer);
            }
        }
    }
}
