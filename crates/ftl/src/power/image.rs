//! The flash array as a power cut leaves it: per physical page erased, programmed (with the
//! content the program wrote) or damaged, and per block whether an erase was interrupted.
//!
//! Built from the FTL's durable state when the trace starts, then kept up to date by folding
//! in every op the chip model has completed (in per-die order); a cut then applies what the
//! ops in flight at that instant do to the array ([`super::cut`]).

use super::checkpoint::MapCheckpoint;
use super::trace::{PageContent, Trace};
use super::trim_log::TrimRecord;
use crate::address::{Lpa, Ppa};
use nandlab_core::SimRng;
use nandlab_nand::OpKind;

/// One physical page as a scan reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageImage {
    /// Erased (never programmed since its block's last completed erase).
    Erased,
    /// Programmed: the content as written, or damaged (`crc_ok()` false) by a cut.
    Programmed(PageContent),
}

/// The array's pages and blocks.
#[derive(Clone, Debug)]
pub struct FlashImage {
    pub(crate) pages: Vec<PageImage>,
    /// Per block: an erase was interrupted; every page reads as garbage until erased again.
    pub(crate) unreliable: Vec<bool>,
    pub(crate) pages_per_block: u32,
    /// Per block: erases completed since the trace started (with the metadata area's erase
    /// counts: a map checkpoint compares them with the erases it knew of).
    pub(crate) erases: Vec<u32>,
    /// The newest committed map checkpoint in the metadata area ([`super::checkpoint`]).
    pub(crate) checkpoint: Option<std::sync::Arc<MapCheckpoint>>,
    /// The trim log's committed records not covered by that checkpoint, oldest first
    /// ([`super::trim_log`]).
    pub(crate) trim_log: Vec<std::sync::Arc<TrimRecord>>,
    /// Per die, ops folded so far (the die's completed-op count when the trace started plus
    /// these is the die's completed ops now).
    pub(crate) folded: Vec<u64>,
    pub(crate) base: Vec<u64>,
}

impl FlashImage {
    pub(crate) fn new(physical_pages: u32, pages_per_block: u32, base: Vec<u64>) -> Self {
        FlashImage {
            pages: vec![PageImage::Erased; physical_pages as usize],
            unreliable: vec![false; (physical_pages / pages_per_block) as usize],
            pages_per_block,
            erases: vec![0; (physical_pages / pages_per_block) as usize],
            checkpoint: None,
            trim_log: Vec::new(),
            folded: vec![0; base.len()],
            base,
        }
    }

    /// Pages of the device.
    pub fn physical_pages(&self) -> u32 {
        self.pages.len() as u32
    }
    /// Pages per block.
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }
    /// The page at `ppa` (`None` out of range).
    pub fn page(&self, ppa: Ppa) -> Option<&PageImage> {
        self.pages.get(ppa.index())
    }
    /// Whether `block`'s last erase was interrupted.
    pub fn is_unreliable(&self, block: u32) -> bool {
        self.unreliable
            .get(block as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The newest committed map checkpoint, if any.
    pub fn checkpoint(&self) -> Option<&MapCheckpoint> {
        self.checkpoint.as_deref()
    }

    /// The trim log's committed records the mount reads (not covered by the checkpoint).
    pub fn trim_log(&self) -> &[std::sync::Arc<TrimRecord>] {
        &self.trim_log
    }

    /// Per LPA (of `logical_pages`), the durable trim table: the newest trim the committed
    /// checkpoint's trim log or a committed trim-log record holds (the write sequence current
    /// at the trim; 0: none). A page of the LPA with a sequence number at most this is older
    /// than a durable trim.
    pub fn durable_trims(&self, logical_pages: u32) -> Vec<u64> {
        let mut trims = vec![0u64; logical_pages as usize];
        if let Some(c) = self.checkpoint() {
            for (t, &c) in trims.iter_mut().zip(&c.trimmed_at) {
                *t = c;
            }
        }
        for record in &self.trim_log {
            for &(lpa, sequence) in &record.entries {
                if let Some(t) = trims.get_mut(lpa.index()) {
                    *t = (*t).max(sequence);
                }
            }
        }
        trims
    }

    /// Erases completed on `block` since the trace started.
    pub fn erases(&self, block: u32) -> u32 {
        self.erases.get(block as usize).copied().unwrap_or(0)
    }

    /// Applies every op of `trace` that its die has completed (`completed[die]`: the die's
    /// completed-op count since the device was built).
    pub(crate) fn fold(&mut self, trace: &mut Trace, completed: impl Fn(usize) -> u64) {
        for die in 0..trace.dies.len() {
            while self.base[die] + self.folded[die] < completed(die) {
                let Some(op) = trace.dies[die].pop_front() else {
                    break;
                };
                self.folded[die] += 1;
                trace.unfolded -= 1;
                self.apply(op.kind, op.source, op.programmed(), op.content);
            }
        }
    }

    /// The effect of one completed op.
    pub(crate) fn apply(
        &mut self,
        kind: OpKind,
        source: Ppa,
        programmed: Option<Ppa>,
        content: Option<PageContent>,
    ) {
        match kind {
            OpKind::Erase => {
                let block = source.0 / self.pages_per_block;
                let first = (block * self.pages_per_block) as usize;
                self.pages[first..first + self.pages_per_block as usize].fill(PageImage::Erased);
                self.unreliable[block as usize] = false;
                self.erases[block as usize] += 1;
            }
            _ => {
                if let Some(ppa) = programmed {
                    // content unknown (decided, then its block's erase decided before the
                    // program ran): a page of no LPA, which a scan skips
                    let content = content.unwrap_or(PageContent {
                        lpa: None,
                        sequence: 0,
                        crc: super::trace::unknown_crc(),
                        data: None,
                    });
                    self.pages[ppa.index()] = PageImage::Programmed(content);
                }
            }
        }
    }

    /// Damages the page at `ppa` (a torn program, or a lower page of a torn word line): its
    /// bytes get flipped bits and its CRC no longer matches. Erased pages are programmed with
    /// garbage when `garbage_if_erased`.
    pub(crate) fn damage(
        &mut self,
        ppa: Ppa,
        intended: Option<PageContent>,
        rng: &mut SimRng,
    ) -> bool {
        let page = &mut self.pages[ppa.index()];
        let mut content = match (intended, &*page) {
            (Some(c), _) => c,
            (None, PageImage::Programmed(c)) => c.clone(),
            (None, PageImage::Erased) => return false,
        };
        match content.data.as_deref_mut() {
            Some(bytes) if !bytes.is_empty() => {
                // a partly programmed page: some cells moved, others did not
                let flips = 1 + rng.below(8) as usize;
                for _ in 0..flips {
                    let i = rng.below(bytes.len() as u64) as usize;
                    bytes[i] ^= 1 << rng.below(8);
                }
            }
            _ => content.crc = !content.crc,
        }
        if content.crc_ok() {
            // (flips that cancel out: make the failure certain)
            content.crc = !content.crc;
        }
        *page = PageImage::Programmed(content);
        true
    }

    /// The LPA a programmed, intact page holds.
    pub fn intact_lpa(&self, ppa: Ppa) -> Option<Lpa> {
        match self.page(ppa)? {
            PageImage::Programmed(c) if c.crc_ok() => c.lpa,
            _ => None,
        }
    }
}
