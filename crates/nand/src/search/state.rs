//! The chip-side SiM state: each block's mode, the bytes of every page programmed with data in a
//! match-mode block, and each plane's latches (paper 004 §IV-B).
//!
//! Latches per plane: Latch 2 holds the *active* page, the operand of search and gather; Latch 1
//! receives a page sensed while another is active (cache mode, page-open-cache) or by a gather of
//! a page that is not active. Page-close releases Latch 2 and moves a cached page up to it.
//!
//! Switching rules (paper §III-C, as this model enforces them; each violation is an error):
//! - SiM commands address only match-mode blocks; match mode stores one bit per cell (SLC).
//! - A block changes mode only while it holds no programmed page (cells programmed as SLC cannot
//!   be read as multi-bit, nor the reverse) and none of its pages is in a latch.
//! - Page-open needs Latch 2 free; page-open-cache with an active page needs Latch 1 free and a
//!   page of the active page's block (§III-B); search needs its page active; gather of a page
//!   that is not active needs Latch 1 free; page-close needs an active page.
//! - Reads, programs, erases and copybacks of a plane whose latches hold a SiM page are refused
//!   (they reuse the page buffers): close the page first.

use super::config::SearchConfig;
use super::format::SIM_PAGE_BYTES;
use super::randomize;
use crate::error::{NandError, NandResult};
use crate::geometry::{Geometry, PageAddress};
use crate::op::{FlashOp, OpKind, RegisterMode};
use crate::reliability::BlockTable;
use nandlab_core::SimRng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How a block is used (paper §III-C).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockMode {
    /// Multi-bit cells at the preset's timing, bus at the preset's rate; no SiM commands.
    #[default]
    Storage,
    /// SLC cells at the `[search]` timing; SiM commands, SiM transfers at the match bus rate.
    Match,
}

/// A page in a latch: its address and the bytes sensed (raw: with the bit errors of the sense;
/// `None` when the page was programmed without data). A sense without bit errors shares the
/// stored bytes (nothing is copied); one with errors holds its own copy.
#[derive(Clone, Debug)]
pub(crate) struct LatchPage {
    pub address: PageAddress,
    pub bytes: Option<Arc<[u8]>>,
    /// The first [`SIM_PAGE_BYTES`] of `bytes` de-randomized (with the same bit errors), for
    /// matching: `(d ^ r ^ e) ^ (k ^ r) = (d ^ e) ^ k`, so matching the randomized latch with
    /// the per-slot randomized key (§IV-C1) is matching this with the plain key. `None` without
    /// bytes or without randomization (match `bytes` then).
    pub plain: Option<Arc<[u8]>>,
    /// Bits that differ from what was programmed.
    pub bit_errors: u32,
}

impl LatchPage {
    /// The bytes to match keys against as they are (see [`LatchPage::plain`]).
    pub fn match_bytes(&self) -> Option<&[u8]> {
        self.plain.as_deref().or(self.bytes.as_deref())
    }
}

/// A page programmed with data: its bytes (page, then spare area) and, on a randomizing chip,
/// its first [`SIM_PAGE_BYTES`] de-randomized (computed once at program time).
#[derive(Clone, Debug)]
struct StoredPage {
    raw: Arc<[u8]>,
    plain: Option<Arc<[u8]>>,
}

#[derive(Clone, Debug, Default)]
struct PlaneLatches {
    /// Latch 2: the active page.
    active: Option<LatchPage>,
    /// Latch 1: a page sensed in cache mode, waiting for page-close.
    cached: Option<LatchPage>,
}

/// What the step compiler needs for one SiM op (decided when it is accepted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SearchPlan {
    /// The op senses its page (TON at the match-mode read time).
    pub sense: bool,
    /// The sense goes to Latch 1 while another page stays active (page-open-cache).
    pub cached_sense: bool,
    /// Bytes in and out on the bus (at the match-mode rate).
    pub data_in_bytes: u32,
    pub data_out_bytes: u32,
    /// Keys matched (search).
    pub keys: u32,
}

/// Chip-side SiM state of one device.
#[derive(Debug)]
pub(crate) struct SearchState {
    pub config: SearchConfig,
    geometry: Geometry,
    modes: Vec<BlockMode>,
    /// Page and spare bytes of pages programmed with data in match-mode blocks, by PPA.
    pages: Vec<Option<StoredPage>>,
    /// Scratch: bit positions a sense flips.
    flips: Vec<u64>,
    latches: Vec<PlaneLatches>,
    rng: SimRng,
    /// The page a gather sensed into Latch 1 (released when its chunks are out).
    one_shot: Option<LatchPage>,
    /// Bits flipped by senses so far.
    pub bit_errors_injected: u64,
}

impl SearchState {
    pub fn new(config: SearchConfig, geometry: &Geometry, seed: u64) -> Self {
        SearchState {
            config,
            modes: vec![BlockMode::Storage; geometry.total_blocks() as usize],
            pages: (0..geometry.total_pages()).map(|_| None).collect(),
            latches: vec![PlaneLatches::default(); geometry.total_planes() as usize],
            rng: SimRng::stream(seed, "nand.search.bit_errors"),
            geometry: geometry.clone(),
            one_shot: None,
            bit_errors_injected: 0,
            flips: Vec::new(),
        }
    }

    pub fn physical_page_bytes(&self) -> usize {
        (self.geometry.page_size_bytes + self.geometry.spare_bytes_per_page) as usize
    }

    pub fn mode(&self, address: &PageAddress) -> BlockMode {
        self.modes[self.geometry.block_id(address).index()]
    }

    fn latches(&self, address: &PageAddress) -> &PlaneLatches {
        &self.latches[self.geometry.plane_id(address).index()]
    }

    fn latches_mut(&mut self, address: &PageAddress) -> &mut PlaneLatches {
        &mut self.latches[self.geometry.plane_id(address).index()]
    }

    /// The active page of `address`'s plane.
    pub fn active(&self, address: &PageAddress) -> Option<&LatchPage> {
        self.latches(address).active.as_ref()
    }

    /// The page waiting in Latch 1 of `address`'s plane.
    pub fn cached(&self, address: &PageAddress) -> Option<&LatchPage> {
        self.latches(address).cached.as_ref()
    }

    /// The page the last gather sensed (it left Latch 1 when its chunks went out).
    pub fn one_shot(&self) -> Option<&LatchPage> {
        self.one_shot.as_ref()
    }

    /// The stored bytes (page, then spare area) of a page programmed with data.
    pub fn stored(&self, address: &PageAddress) -> Option<&[u8]> {
        self.pages[self.geometry.ppa(address).index()]
            .as_ref()
            .map(|p| &*p.raw)
    }

    /// Prefetch hint: the table entry of `address`'s stored page will be read soon.
    #[inline]
    pub fn prefetch_entry(&self, address: &PageAddress) {
        nandlab_core::prefetch::prefetch(&self.pages, self.geometry.ppa(address).index());
    }

    /// Prefetch hint: `address` will be sensed soon (a page-open or gather); `chunk`, the one
    /// chunk a gather will send. Reads the table entry (see [`SearchState::prefetch_entry`]).
    #[inline]
    pub fn prefetch_bytes(&self, address: &PageAddress, chunk: Option<u32>) {
        use nandlab_core::prefetch::{prefetch, prefetch_header};
        let Some(stored) = &self.pages[self.geometry.ppa(address).index()] else {
            return;
        };
        let line = 64;
        // the sense clones the page's `Arc`s: their counts
        prefetch_header(&stored.raw);
        if let Some(plain) = &stored.plain {
            prefetch_header(plain);
        }
        match chunk {
            // the verification window, and the whole page matched
            None => {
                let window = self.config.page_open_transfer_bytes as usize;
                for at in (0..window.min(stored.raw.len())).step_by(line) {
                    prefetch(&stored.raw, at);
                }
                if let Some(plain) = &stored.plain {
                    for at in (0..plain.len()).step_by(line) {
                        prefetch(plain, at);
                    }
                }
            }
            // the chunk and its ECC bytes in the spare area
            Some(chunk) => {
                let chunk = chunk as usize;
                prefetch(&stored.raw, chunk * line);
                let ecc = self.config.chunk_ecc_bytes as usize;
                prefetch(
                    &stored.raw,
                    self.geometry.page_size_bytes as usize + chunk * ecc,
                );
            }
        }
    }

    fn block_in_latch(&self, block: &PageAddress) -> Option<PageAddress> {
        let l = self.latches(block);
        [l.active.as_ref(), l.cached.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| p.address)
            .find(|a| a.block == block.block)
    }

    /// Switches the mode of `block`'s block (rules in the module docs).
    pub fn set_mode(
        &mut self,
        block: &PageAddress,
        mode: BlockMode,
        blocks: &BlockTable,
    ) -> NandResult<()> {
        self.geometry.check(block)?;
        let id = self.geometry.block_id(block);
        if self.modes[id.index()] == mode {
            return Ok(());
        }
        if let Some(last) = blocks.block(id).last_page {
            return Err(NandError::SearchRule {
                message: format!(
                    "block of {block} holds programmed pages (up to page {last}): erase it before \
                     switching it to {mode:?} mode"
                ),
            });
        }
        if let Some(open) = self.block_in_latch(block) {
            return Err(NandError::SearchRule {
                message: format!("{open} is in a latch: close it before switching its block"),
            });
        }
        self.modes[id.index()] = mode;
        Ok(())
    }

    /// Checks a read, program, erase or copyback against the latches (no state change).
    pub fn check_legacy(&self, op: &FlashOp) -> NandResult<()> {
        for t in op.targets.iter().chain(&op.destinations) {
            let l = self.latches(t);
            if let Some(p) = l.active.as_ref().or(l.cached.as_ref()) {
                return Err(NandError::SearchRule {
                    message: format!(
                        "{} of {t}: the plane's page buffers hold SiM page {} (page-close it first)",
                        op.kind.name(),
                        p.address
                    ),
                });
            }
        }
        Ok(())
    }

    /// Applies a read, program, erase or copyback to the stored bytes: a program without data
    /// leaves its page without bytes; an erase drops the block's bytes. `data` (page, then
    /// optionally the spare area) is stored for a one-plane program of a match-mode page.
    pub fn apply_legacy(&mut self, op: &FlashOp, data: Option<&[u8]>) {
        match op.kind {
            OpKind::Program | OpKind::Copyback => {
                let written = if op.kind == OpKind::Program {
                    &op.targets
                } else {
                    &op.destinations
                };
                for t in written {
                    let ppa = self.geometry.ppa(t).index();
                    self.pages[ppa] = None;
                }
                if let (Some(data), [target]) = (data, written.as_slice()) {
                    let mut page = vec![0u8; self.physical_page_bytes()].into_boxed_slice();
                    page[..data.len()].copy_from_slice(data);
                    let ppa = self.geometry.ppa(target);
                    let plain = self.config.randomized_chunks.then(|| {
                        let mut plain: Box<[u8]> = page[..SIM_PAGE_BYTES as usize].into();
                        randomize::randomize_page(ppa.0, &mut plain);
                        Arc::from(plain)
                    });
                    self.pages[ppa.index()] = Some(StoredPage {
                        raw: Arc::from(page),
                        plain,
                    });
                }
            }
            OpKind::Erase => {
                for t in &op.targets {
                    let first = self.geometry.ppa(&t.with_page(0)).index();
                    let n = self.geometry.pages_per_block as usize;
                    self.pages[first..first + n].fill(None);
                }
            }
            _ => {}
        }
    }

    /// Checks a SiM op (kind, mode, latches) and returns its plan; changes nothing.
    pub fn plan(&self, op: &FlashOp, blocks: &BlockTable) -> NandResult<SearchPlan> {
        let target = op.targets[0];
        if self.mode(&target) != BlockMode::Match {
            return Err(NandError::SearchRule {
                message: format!(
                    "{} of {target}: its block is in storage mode (switch it to match mode while erased)",
                    op.kind.name()
                ),
            });
        }
        let latches = self.latches(&target);
        let active = latches.active.as_ref().map(|p| p.address);
        let c = &self.config;
        let unprogrammed = |what: &str| NandError::SearchRule {
            message: format!("{what} of {target}: the page holds no data since its block's erase"),
        };
        let mut plan = SearchPlan::default();
        match op.kind {
            OpKind::PageOpen => {
                if !blocks.is_programmed(&target) {
                    return Err(unprogrammed(op.kind.name()));
                }
                plan.sense = true;
                match (active, op.mode) {
                    (None, _) => plan.data_out_bytes = c.page_open_transfer_bytes,
                    (Some(open), RegisterMode::Legacy) => {
                        return Err(NandError::SearchRule {
                            message: format!(
                                "page-open of {target}: {open} is active in Latch 2 (page-close it, \
                                 or use page-open-cache)"
                            ),
                        });
                    }
                    (Some(open), RegisterMode::Cache) => {
                        if let Some(waiting) = &latches.cached {
                            return Err(NandError::SearchRule {
                                message: format!(
                                    "page-open-cache of {target}: {} already waits in Latch 1 \
                                     (page-close first)",
                                    waiting.address
                                ),
                            });
                        }
                        if open.block != target.block {
                            return Err(NandError::SearchRule {
                                message: format!(
                                    "page-open-cache of {target}: the active page {open} is in \
                                     another block (page-open-cache stays within a block)"
                                ),
                            });
                        }
                        plan.cached_sense = true;
                    }
                }
            }
            OpKind::PageClose => {
                if active != Some(target) {
                    return Err(NandError::SearchRule {
                        message: match active {
                            Some(open) => format!("page-close of {target} but {open} is active"),
                            None => format!("page-close of {target} but no page is active"),
                        },
                    });
                }
                if latches.cached.is_some() {
                    plan.data_out_bytes = c.page_open_transfer_bytes;
                }
            }
            OpKind::Search => {
                if active != Some(target) {
                    return Err(NandError::SearchRule {
                        message: format!(
                            "search of {target}: the page is not active (page-open it first{})",
                            active
                                .map(|a| format!("; {a} is active"))
                                .unwrap_or_default()
                        ),
                    });
                }
                if op.search_keys == 0 || op.search_keys > c.batch_keys_max {
                    return Err(NandError::SearchRule {
                        message: format!(
                            "search of {target} with {} keys; a batch has 1 to {} (search.batch_keys_max)",
                            op.search_keys, c.batch_keys_max
                        ),
                    });
                }
                plan.keys = op.search_keys;
                plan.data_in_bytes = super::format::SEARCH_KEY_BYTES * op.search_keys;
                plan.data_out_bytes = super::format::MATCH_BITMAP_BYTES * op.search_keys;
            }
            OpKind::Gather => {
                if op.chunk_mask == 0 {
                    return Err(NandError::SearchRule {
                        message: format!("gather of {target} with an empty chunk bitmap"),
                    });
                }
                if active != Some(target) {
                    if !blocks.is_programmed(&target) {
                        return Err(unprogrammed("gather"));
                    }
                    if let Some(waiting) = &latches.cached {
                        return Err(NandError::SearchRule {
                            message: format!(
                                "gather of {target}: Latch 1 holds {} (page-close first)",
                                waiting.address
                            ),
                        });
                    }
                    plan.sense = true;
                }
                plan.data_in_bytes = super::format::CHUNK_MASK_BYTES;
                plan.data_out_bytes = op.chunk_mask.count_ones()
                    * (super::format::CHUNK_BYTES + self.config.chunk_ecc_bytes);
            }
            OpKind::Read | OpKind::Program | OpKind::Erase | OpKind::Copyback => {
                unreachable!("plan of a legacy op")
            }
        }
        Ok(plan)
    }

    /// Applies an accepted SiM op to the latches; a sense copies the stored bytes with bit
    /// errors drawn at `rber`.
    pub fn apply(&mut self, op: &FlashOp, plan: &SearchPlan, rber: f64) {
        let target = op.targets[0];
        let sensed = plan.sense.then(|| self.sense(&target, rber));
        match op.kind {
            OpKind::PageOpen if plan.cached_sense => self.latches_mut(&target).cached = sensed,
            OpKind::PageOpen => self.latches_mut(&target).active = sensed,
            OpKind::PageClose => {
                let latches = self.latches_mut(&target);
                latches.active = latches.cached.take();
            }
            // a gather's sense is a one-shot load into Latch 1, released when its chunks are out
            OpKind::Gather if sensed.is_some() => self.one_shot = sensed,
            _ => {}
        }
    }

    /// The bytes of `address` as the sense amplifiers deliver them: the stored bytes with each
    /// bit flipped with probability `rber` (geometric gaps between flips).
    fn sense(&mut self, address: &PageAddress, rber: f64) -> LatchPage {
        let ppa = self.geometry.ppa(address).index();
        let Some(stored) = &self.pages[ppa] else {
            return LatchPage {
                address: *address,
                bytes: None,
                plain: None,
                bit_errors: 0,
            };
        };
        let bits = stored.raw.len() as u64 * 8;
        self.flips.clear();
        let p = rber.clamp(0.0, 0.5);
        if p > 0.0 {
            let log_q = (1.0 - p).ln();
            let mut position: u64 = 0;
            loop {
                let u = self.rng.unit_f64();
                let gap = ((1.0 - u).ln() / log_q).floor();
                if !gap.is_finite() || gap >= (bits - position) as f64 {
                    break;
                }
                position += gap as u64;
                self.flips.push(position);
                position += 1;
                if position >= bits {
                    break;
                }
            }
        }
        let errors = self.flips.len() as u32;
        let (bytes, plain) = if self.flips.is_empty() {
            (stored.raw.clone(), stored.plain.clone())
        } else {
            let flip = |from: &[u8], flips: &[u64]| -> Arc<[u8]> {
                let mut copy: Box<[u8]> = from.into();
                for &at in flips {
                    if let Some(byte) = copy.get_mut((at / 8) as usize) {
                        *byte ^= 1 << (at % 8);
                    }
                }
                Arc::from(copy)
            };
            (
                flip(&stored.raw, &self.flips),
                stored.plain.as_deref().map(|p| flip(p, &self.flips)),
            )
        };
        self.bit_errors_injected += u64::from(errors);
        debug_assert!(bytes.len() >= SIM_PAGE_BYTES as usize);
        LatchPage {
            address: *address,
            bytes: Some(bytes),
            plain,
            bit_errors: errors,
        }
    }
}
