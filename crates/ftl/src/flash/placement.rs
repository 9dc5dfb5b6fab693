//! Placement ids (issue 12 item 4; NVMe Flexible Data Placement's reclaim-unit handles): host
//! writes may carry an id below `ftl.placement_ids`; the page mapping keeps a host and a GC
//! write frontier per id and plane, so each flash block holds the data of one id only, and GC
//! moves a block's valid pages into a block of the same id. Per id the controller counts host
//! pages and flash pages programmed (so a WAF per id), and the report gives each id's
//! valid-page distribution over its blocks.

use crate::address::{BlockId, Ppa};
pub use crate::stats::PlacementReport;

/// Which id each block holds, and the per-id counters.
#[derive(Debug)]
pub(crate) struct Placement {
    /// Number of ids (1: placement off, every block id 0).
    pub ids: u16,
    /// Id of the data in each block (set when the block is opened as a write frontier).
    pub block_id: Vec<u16>,
    pub host_pages: Vec<u64>,
    pub flash_pages: Vec<u64>,
    pages_per_block: u32,
}

impl Placement {
    pub fn new(ids: u16, blocks: u32, pages_per_block: u32) -> Self {
        let n = ids as usize;
        Placement {
            ids,
            // one id: no table to keep
            block_id: if ids > 1 {
                vec![0; blocks as usize]
            } else {
                Vec::new()
            },
            host_pages: vec![0; n],
            flash_pages: vec![0; n],
            pages_per_block,
        }
    }

    /// Whether more than one id is in use (the tables are kept).
    #[inline]
    pub fn active(&self) -> bool {
        self.ids > 1
    }

    /// The id whose data `block` holds (0 when placement is off).
    #[inline]
    pub fn of_block(&self, block: BlockId) -> u16 {
        if self.active() {
            self.block_id[block.index()]
        } else {
            0
        }
    }

    /// `block` is opened as a write frontier of `id`.
    #[inline]
    pub fn open(&mut self, block: BlockId, id: u16) {
        if self.active() {
            self.block_id[block.index()] = id;
        }
    }

    /// A page was programmed at `ppa` (a host write or a GC move into it).
    #[inline]
    pub fn programmed(&mut self, ppa: Ppa) {
        if self.active() {
            let id = self.block_id[(ppa.0 / self.pages_per_block) as usize];
            self.flash_pages[id as usize] += 1;
        }
    }
}

impl Placement {
    /// Per-id figures: counters since `start` (host, flash pages per id), and the valid-page
    /// histogram of the blocks in use now (`in_use(block)`, `valid(block)`).
    pub fn report(
        &self,
        start: &(Vec<u64>, Vec<u64>),
        in_use: impl Fn(usize) -> bool,
        valid: impl Fn(usize) -> u32,
    ) -> Vec<PlacementReport> {
        if !self.active() {
            return Vec::new();
        }
        let mut out: Vec<PlacementReport> = (0..self.ids)
            .map(|id| {
                let i = usize::from(id);
                // (no snapshot yet: a report before any run counts from the device's start)
                let host = self.host_pages[i] - start.0.get(i).copied().unwrap_or(0);
                let flash = self.flash_pages[i] - start.1.get(i).copied().unwrap_or(0);
                PlacementReport {
                    id,
                    host_pages_written: host,
                    flash_pages_programmed: flash,
                    waf: if host > 0 {
                        flash as f64 / host as f64
                    } else {
                        0.0
                    },
                    blocks: 0,
                    valid_pages_histogram: vec![0; self.pages_per_block as usize + 1],
                }
            })
            .collect();
        for (block, &id) in self.block_id.iter().enumerate() {
            if in_use(block) {
                let r = &mut out[usize::from(id)];
                r.blocks += 1;
                r.valid_pages_histogram[valid(block) as usize] += 1;
            }
        }
        out
    }

    /// The per-id counters now (a report's starting point).
    pub fn snapshot(&self) -> (Vec<u64>, Vec<u64>) {
        (self.host_pages.clone(), self.flash_pages.clone())
    }
}
