//! Read disturb and read reclaim (issue 34 item 4, SPEC C4): each read of a block disturbs its
//! other pages, raising their raw bit error rate by `[nand.reliability] read_disturb_coeff` per
//! read until the block is erased (the chip model's BER term, `nandlab_nand::reliability`).
//! The controller counts the host reads of each block since its erase; when the block's
//! expected bit errors per ECC codeword
//! ([`ReliabilityConfig::needs_read_reclaim`]: base + wear + disturb, without retention, which
//! the controller cannot know) reach `read_reclaim_margin` × `ecc_correctable_bits`, the block
//! is queued, and once the read is decided its valid pages are rewritten elsewhere and the
//! block erased (an open block is closed first) (read reclaim: the GC relocation path, counted as its own traffic: reclaims
//! and pages moved, in the WAF and the report's `read_reclaim` section).
//!
//! Built only when the reliability config asks for it
//! ([`ReliabilityConfig::read_reclaim_enabled`]); off, the read path pays one `Option` test.

use crate::address::BlockId;
use crate::config::{FtlConfig, MappingKind};
use crate::error::{FtlResult, config_error};
use nandlab_nand::ReliabilityConfig;
use serde::Serialize;

/// Read counts and the blocks waiting for reclaim.
#[derive(Debug)]
pub(crate) struct ReadReclaim {
    config: ReliabilityConfig,
    /// Per block, host reads since its last erase.
    reads: Vec<u32>,
    /// Blocks that crossed the margin, in the order they did (each at most once).
    pending: Vec<BlockId>,
    queued: Vec<bool>,
    counts: ReadReclaimReport,
}

/// The read-reclaim part of a report (present when read reclaim is on): counts since the
/// device was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReadReclaimReport {
    /// Blocks rewritten because of read disturb.
    pub reclaims: u64,
    /// Valid pages those reclaims moved (also in `flash_pages_programmed`, so in the WAF).
    pub pages_moved: u64,
    /// Blocks that crossed the margin but were not reclaimed (open in a superblock: queued
    /// again by their next read).
    pub skipped: u64,
    /// The most reads any block took between erases.
    pub max_block_reads: u32,
}

impl ReadReclaim {
    pub fn new(config: &ReliabilityConfig, blocks: u32) -> Self {
        ReadReclaim {
            config: config.clone(),
            reads: vec![0; blocks as usize],
            pending: Vec::new(),
            queued: vec![false; blocks as usize],
            counts: ReadReclaimReport::default(),
        }
    }

    /// A host read of `block`, erased `erase_count` times: counts it and queues the block for
    /// reclaim when it crosses the margin. Whether it did now.
    #[inline]
    pub fn on_read(&mut self, block: BlockId, erase_count: u32) -> bool {
        let i = block.index();
        let reads = self.reads[i].saturating_add(1);
        self.reads[i] = reads;
        self.counts.max_block_reads = self.counts.max_block_reads.max(reads);
        if self.queued[i] || !self.config.needs_read_reclaim(erase_count, reads) {
            return false;
        }
        self.queued[i] = true;
        self.pending.push(block);
        true
    }

    /// `block` was erased: its disturb is gone.
    #[inline]
    pub fn on_erase(&mut self, block: BlockId) {
        let i = block.index();
        self.reads[i] = 0;
        self.queued[i] = false;
    }

    /// Whether blocks wait for reclaim.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Takes the blocks waiting for reclaim, oldest first.
    pub fn take_pending(&mut self) -> Vec<BlockId> {
        std::mem::take(&mut self.pending)
    }

    /// `block` could not be reclaimed now: it is queued again by its next read.
    pub fn skipped(&mut self, block: BlockId) {
        self.queued[block.index()] = false;
        self.counts.skipped += 1;
    }

    /// A reclaim of a block that moved `pages` valid pages.
    pub fn reclaimed(&mut self, pages: u64) {
        self.counts.reclaims += 1;
        self.counts.pages_moved += pages;
    }

    /// Host reads of `block` since its erase.
    #[cfg(test)]
    pub fn reads(&self, block: BlockId) -> u32 {
        self.reads[block.index()]
    }

    pub fn report(&self) -> ReadReclaimReport {
        self.counts
    }
}

/// The device's read reclaim under `f` (`None` when off); only the page mapping relocates
/// single blocks.
pub(crate) fn build_for(
    config: &ReliabilityConfig,
    f: &FtlConfig,
    blocks: u32,
) -> FtlResult<Option<Box<ReadReclaim>>> {
    if !config.read_reclaim_enabled() {
        return Ok(None);
    }
    if f.mapping.kind != MappingKind::Page || f.mapping.cache_entries > 0 {
        return Err(config_error(
            "nand.reliability.read_reclaim_margin",
            format!(
                "read reclaim needs ftl.mapping = \"page\" without a cached mapping table (not {:?}, cmt_entries {})",
                f.mapping.kind, f.mapping.cache_entries
            ),
        ));
    }
    Ok(Some(Box::new(ReadReclaim::new(config, blocks))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With rber 1e-4 + 1e-8 · reads, 1 KiB codewords, t = 40, margin 0.5: reclaim at read
    /// 234,141 (`nandlab_nand` `rd_read_reclaim_threshold_by_hand`); queued once, and again
    /// only after the erase.
    #[test]
    fn rd_queues_a_block_once_at_the_hand_computed_read() {
        let c = ReliabilityConfig {
            rber_base: 1e-4,
            read_disturb_coeff: 1e-8,
            read_reclaim_margin: 0.5,
            ..ReliabilityConfig::default()
        };
        let mut r = ReadReclaim::new(&c, 4);
        let b = BlockId(2);
        for _ in 0..234_140 {
            assert!(!r.on_read(b, 0));
        }
        assert!(!r.has_pending());
        assert!(r.on_read(b, 0));
        assert!(!r.on_read(b, 0), "queued once");
        assert_eq!(r.take_pending(), vec![b]);
        assert_eq!(r.reads(b), 234_142);
        r.on_erase(b);
        assert_eq!(r.reads(b), 0);
        assert!(!r.on_read(b, 0));
        assert_eq!(r.report().max_block_reads, 234_142);
    }
}
