//! Data redistribution by key-space partition (paper 004 §V-D): the slots of a set of source
//! pages are split by a bit slice of the slot (like a radix tree) into `2^bits` partitions,
//! **one partition at a time**: for each partition, every source page is searched for the
//! slice's value (one key + mask search), the chunks holding hits are gathered, and the hits
//! are appended to the partition's target pages. Only the partition being built is held in
//! memory (the partition's unwritten page and the hits of one source page: fewer than two
//! pages of slots), and slots of other partitions are not loaded, except
//! those sharing a gathered chunk with a hit (they are dropped by the bitmap).
//!
//! [`redistribute_full_read`] is the baseline without SiM, in two forms ([`FullRead`]): every
//! source page read in full once with all slots bucketed in memory, or — to bound memory as the
//! SiM path does — every source page read in full once per partition.

use super::field::BitField;
use super::secondary::ROWS_PER_PAGE;
use crate::device::SearchDevice;
use crate::error::{SearchError, SearchResult};
use nandlab_core::SimTime;
use nandlab_ftl::search::LogicalPage;
use nandlab_nand::SearchKey;
use nandlab_nand::search::format::{self, CHUNK_BYTES, SLOTS_PER_CHUNK};
use nandlab_nand::search::header::DATA_BYTES;

/// Largest slice width: `2^12` partitions.
pub const PARTITION_BITS_MAX: u32 = 12;

/// What a redistribution did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedistributeStats {
    pub searches: u64,
    pub chunks_gathered: u64,
    /// Full-page reads (the baseline).
    pub full_reads: u64,
    pub slots_moved: u64,
    pub pages_written: u64,
    /// The most slots held in host memory at once.
    pub buffer_slots_max: u64,
}

/// Where each partition went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redistribution {
    /// Target pages of partition `p` (slice value `p`), in order; the last may be part full
    /// (unused slots zero). A partition without slots has no page.
    pub partitions: Vec<Vec<LogicalPage>>,
    /// Slots in each partition.
    pub slot_counts: Vec<u64>,
    pub stats: RedistributeStats,
}

/// The partition sink: buffers one page of slots, writes target pages from `next_target` on.
struct Sink {
    buffer: Vec<u64>,
    next_target: u32,
    target_end: u32,
}

impl Sink {
    fn push<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        out: &mut Redistribution,
        slot: u64,
    ) -> SearchResult<()> {
        self.buffer.push(slot);
        out.stats.slots_moved += 1;
        *out.slot_counts.last_mut().expect("a partition is open") += 1;
        out.stats.buffer_slots_max = out.stats.buffer_slots_max.max(self.buffer.len() as u64);
        if self.buffer.len() == ROWS_PER_PAGE {
            self.flush(device, now, out)?;
        }
        Ok(())
    }

    fn flush<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        out: &mut Redistribution,
    ) -> SearchResult<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        if self.next_target >= self.target_end {
            return Err(SearchError::Argument {
                argument: "targets",
                message: format!(
                    "the target pages end at {} before the partitions do",
                    self.target_end
                ),
            });
        }
        let mut bytes = vec![0u8; DATA_BYTES];
        for (at, slot) in bytes.chunks_exact_mut(8).zip(&self.buffer) {
            at.copy_from_slice(&slot.to_le_bytes());
        }
        let page = LogicalPage(self.next_target);
        device.write(now, page, &bytes)?;
        self.next_target += 1;
        out.partitions
            .last_mut()
            .expect("a partition is open")
            .push(page);
        out.stats.pages_written += 1;
        self.buffer.clear();
        Ok(())
    }
}

fn check(
    sources: &[LogicalPage],
    used: SearchKey,
    slice: BitField,
    targets: std::ops::Range<u32>,
) -> SearchResult<()> {
    let bad = |argument: &'static str, message: String| SearchError::Argument { argument, message };
    if slice.bits > PARTITION_BITS_MAX {
        return Err(bad(
            "slice",
            format!("{} bits; at most {PARTITION_BITS_MAX}", slice.bits),
        ));
    }
    if used.matches(0) {
        return Err(bad(
            "used",
            format!(
                "{used:?} matches the all-zero slot that pads target pages; compare a bit that used slots set"
            ),
        ));
    }
    if used.mask & slice.mask() != 0 {
        return Err(bad("used", "compares bits of the slice".into()));
    }
    if let Some(s) = sources.iter().find(|s| targets.contains(&s.0)) {
        return Err(bad(
            "targets",
            format!("{}..{} holds source page {s}", targets.start, targets.end),
        ));
    }
    Ok(())
}

/// Splits the slots of `sources` that match `used` (a key + mask every used slot matches and
/// the zero slot does not) by `slice` into partitions written to logical pages `targets`
/// (which must not hold a source), one partition at a time on the chip (see the module docs).
pub fn redistribute<D: SearchDevice>(
    device: &mut D,
    now: SimTime,
    sources: &[LogicalPage],
    used: SearchKey,
    slice: BitField,
    targets: std::ops::Range<u32>,
) -> SearchResult<Redistribution> {
    check(sources, used, slice, targets.clone())?;
    let mut out = Redistribution::default();
    let mut sink = Sink {
        buffer: Vec::with_capacity(ROWS_PER_PAGE),
        next_target: targets.start,
        target_end: targets.end,
    };
    let mut pending = Vec::with_capacity(ROWS_PER_PAGE);
    for partition in 0..=slice.value_max() {
        out.partitions.push(Vec::new());
        out.slot_counts.push(0);
        let key = SearchKey {
            key: used.key | slice.put(partition),
            mask: used.mask | slice.mask(),
        };
        for source in sources {
            let mut open = device.open(now, *source)?;
            let hits = device.search(now, &open, &[key])?[0];
            out.stats.searches += 1;
            let chunks = hits.chunks();
            if chunks.count() > 0 {
                let bytes = device.gather(now, &mut open, chunks)?;
                out.stats.chunks_gathered += u64::from(chunks.count());
                for (i, chunk) in chunks.chunks().enumerate() {
                    let chunk_bytes =
                        &bytes[i * CHUNK_BYTES as usize..(i + 1) * CHUNK_BYTES as usize];
                    for within in 0..SLOTS_PER_CHUNK {
                        let slot = format::slot(chunk_bytes, within);
                        // a set bit whose ECC-checked slot does not match was a bit error
                        if hits.is_set(chunk * SLOTS_PER_CHUNK + within) && key.matches(slot) {
                            pending.push(slot);
                        }
                    }
                }
            }
            // the chip refuses programs of a plane whose latches hold a SiM page: close first
            device.close(now, open)?;
            let held = (sink.buffer.len() + pending.len()) as u64;
            out.stats.buffer_slots_max = out.stats.buffer_slots_max.max(held);
            for slot in pending.drain(..) {
                sink.push(device, now, &mut out, slot)?;
            }
        }
        sink.flush(device, now, &mut out)?;
    }
    Ok(out)
}

/// How the baseline reads its sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullRead {
    /// Every source page once; all slots held in memory until written.
    OnePass,
    /// Every source page once per partition; only the partition's slots kept (memory bounded
    /// like the SiM path, reads multiplied by the partition count).
    PerPartition,
}

/// The baseline: source pages read in full (through the page ECC) as `mode` says, the slots
/// bucketed on the host, the same target pages written.
#[allow(clippy::too_many_arguments)]
pub fn redistribute_full_read<D: SearchDevice>(
    device: &mut D,
    now: SimTime,
    sources: &[LogicalPage],
    used: SearchKey,
    slice: BitField,
    targets: std::ops::Range<u32>,
    mode: FullRead,
) -> SearchResult<Redistribution> {
    check(sources, used, slice, targets.clone())?;
    let partitions = slice.value_max() + 1;
    // the partitions read in each pass
    let passes: Vec<std::ops::Range<u64>> = match mode {
        FullRead::OnePass => std::iter::once(0..partitions).collect(),
        FullRead::PerPartition => (0..partitions).map(|p| p..p + 1).collect(),
    };
    let mut out = Redistribution::default();
    let mut sink = Sink {
        buffer: Vec::with_capacity(ROWS_PER_PAGE),
        next_target: targets.start,
        target_end: targets.end,
    };
    for pass in passes {
        let mut buckets: Vec<Vec<u64>> = vec![Vec::new(); (pass.end - pass.start) as usize];
        for source in sources {
            let bytes = device.read(now, *source)?;
            out.stats.full_reads += 1;
            for i in 0..ROWS_PER_PAGE as u32 {
                let slot = format::slot(&bytes, i);
                if used.matches(slot) && pass.contains(&slice.get(slot)) {
                    buckets[(slice.get(slot) - pass.start) as usize].push(slot);
                }
            }
        }
        let held: u64 = buckets.iter().map(|b| b.len() as u64).sum();
        for bucket in buckets {
            out.partitions.push(Vec::new());
            out.slot_counts.push(0);
            for slot in bucket {
                sink.push(device, now, &mut out, slot)?;
            }
            sink.flush(device, now, &mut out)?;
        }
        out.stats.buffer_slots_max = out.stats.buffer_slots_max.max(held);
    }
    Ok(out)
}
