//! A secondary index on SiM pages (paper 004 §V-B, Fig. 9; ranges §V-C, Fig. 10): every row is
//! one packed slot ([`RowLayout`]: attributes + row id), 504 rows per store page. A query is
//! answered page by page on the chip: page-open, the query's key + mask searches as one batched
//! search command, a gather of the chunks holding hits, page-close. The gathered slots (checked
//! by the chunk ECC) carry the row ids and go through an exact check on the host, which removes
//! the approximate range's extra rows and any false hit from a bit error in the latch.
//!
//! [`SecondaryIndex::select_full_page`] is the baseline: full reads of every page, the same
//! check on the host.

use super::field::{BitField, RowLayout, VALID_BIT};
use super::range::{aligned_blocks, approximate, widened_blocks};
use crate::device::SearchDevice;
use crate::error::{SearchError, SearchResult};
use nandlab_core::SimTime;
use nandlab_ftl::search::LogicalPage;
use nandlab_nand::search::format::{self, CHUNK_BYTES, SLOTS_PER_CHUNK};
use nandlab_nand::search::header::DATA_BYTES;
use nandlab_nand::{MatchBitmap, SearchKey};

/// Rows per index page (the data slots of a store page).
pub const ROWS_PER_PAGE: usize = DATA_BYTES / 8;

/// `lo <= attribute <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldRange<'a> {
    pub attribute: &'a str,
    pub lo: u64,
    pub hi: u64,
}

/// A conjunction: every `equal` attribute has its value, and the attribute of `range` (if any)
/// lies in its range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Predicate<'a> {
    pub equal: &'a [(&'a str, u64)],
    pub range: Option<FieldRange<'a>>,
}

/// How a range becomes searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RangeMethod {
    /// The paper's power-of-two bounds (§V-C): at most 2 searches per page, a superset of the
    /// range, refined exactly on the gathered slots.
    #[default]
    Approximate,
    /// The exact decomposition into aligned power-of-two blocks: one search per block
    /// (at most `2w - 2` for a `w`-bit field), bitmaps ORed; nothing to refine.
    AlignedBlocks,
    /// The aligned blocks of the range widened to multiples of `2^g` (the smallest `g` that
    /// needs at most this many searches, ≥ 1): a superset refined on the host; exact from
    /// `2w - 2` on.
    SearchesAtMost(u32),
}

/// What a query did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelectStats {
    pub pages: u64,
    /// Keys searched, summed over pages (a batched command of `k` keys counts `k`).
    pub searches: u64,
    /// Search commands sent (batches of at most the chip's `batch_keys_max` keys).
    pub search_commands: u64,
    /// Slots selected by the combined bitmaps (before the exact check).
    pub candidates: u64,
    /// Candidates the exact check removed (the approximation's extra rows, false hits).
    pub refined_out: u64,
    pub chunks_gathered: u64,
    /// Full-page reads (the baseline).
    pub full_reads: u64,
}

/// The row ids a query selected (in increasing order) and what it did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub row_ids: Vec<u64>,
    pub stats: SelectStats,
}

/// How a query's bitmaps combine into its candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Combine {
    /// OR of all bitmaps.
    Union,
    /// The first bitmap AND NOT the second (the paper's upper AND NOT lower).
    FirstAndNotSecond,
}

/// The searches of a query and its exact check.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    keys: Vec<SearchKey>,
    combine: Combine,
    equal: SearchKey,
    range: Option<(BitField, u64, u64)>,
}

impl Plan {
    fn exact(&self, slot: u64) -> bool {
        self.equal.matches(slot)
            && self
                .range
                .is_none_or(|(field, lo, hi)| (lo..=hi).contains(&field.get(slot)))
    }
}

/// A secondary index: packed rows in pages `0..page_count` of its store.
#[derive(Debug)]
pub struct SecondaryIndex {
    layout: RowLayout,
    pages: Vec<LogicalPage>,
    rows: usize,
    batch_keys_max: usize,
}

impl SecondaryIndex {
    /// Writes `rows` (slots packed by `layout`, each with the valid bit) to logical pages 0, 1,
    /// … of `store`, 504 per page; unused slots of the last page are zero.
    pub fn build<D: SearchDevice>(
        device: &mut D,
        now: SimTime,
        layout: RowLayout,
        rows: &[u64],
    ) -> SearchResult<Self> {
        if let Some(i) = rows.iter().position(|r| r & VALID_BIT == 0) {
            return Err(SearchError::Argument {
                argument: "rows",
                message: format!("row {i} ({:#x}) lacks the valid bit: pack it", rows[i]),
            });
        }
        let batch_keys_max = device
            .nand()
            .search_config()
            .map(|c| c.batch_keys_max as usize)
            .ok_or_else(|| SearchError::Argument {
                argument: "sim",
                message: "the chip model has no [search] section".into(),
            })?;
        let mut pages = Vec::new();
        for (i, chunk) in rows.chunks(ROWS_PER_PAGE).enumerate() {
            let page = LogicalPage(i as u32);
            let mut bytes = vec![0u8; DATA_BYTES];
            for (slot, row) in bytes.chunks_exact_mut(8).zip(chunk) {
                slot.copy_from_slice(&row.to_le_bytes());
            }
            device.write(now, page, &bytes)?;
            pages.push(page);
        }
        Ok(SecondaryIndex {
            layout,
            pages,
            rows: rows.len(),
            batch_keys_max,
        })
    }

    pub fn layout(&self) -> &RowLayout {
        &self.layout
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    fn plan(&self, predicate: &Predicate, method: RangeMethod) -> SearchResult<Plan> {
        let equal = self.layout.equality_key(predicate.equal)?;
        let Some(range) = predicate.range else {
            return Ok(Plan {
                keys: vec![equal],
                combine: Combine::Union,
                equal,
                range: None,
            });
        };
        let field = self.layout.field(range.attribute)?;
        if range.lo > range.hi || range.hi > field.value_max() {
            return Err(SearchError::Argument {
                argument: "range",
                message: format!(
                    "{}: {}..={} is empty or beyond the field's max {}",
                    range.attribute,
                    range.lo,
                    range.hi,
                    field.value_max()
                ),
            });
        }
        if method == RangeMethod::SearchesAtMost(0) {
            return Err(SearchError::Argument {
                argument: "method",
                message: "SearchesAtMost(0): a range needs at least 1 search".into(),
            });
        }
        let (keys, combine) = match method {
            RangeMethod::Approximate => (
                approximate(range.lo, range.hi, field.bits).keys(field, equal),
                Combine::FirstAndNotSecond,
            ),
            RangeMethod::AlignedBlocks => (
                aligned_blocks(range.lo, range.hi, field.bits)
                    .iter()
                    .map(|b| b.key(field, equal))
                    .collect(),
                Combine::Union,
            ),
            RangeMethod::SearchesAtMost(n) => (
                widened_blocks(range.lo, range.hi, field.bits, n as usize)
                    .iter()
                    .map(|b| b.key(field, equal))
                    .collect(),
                Combine::Union,
            ),
        };
        Ok(Plan {
            keys,
            combine,
            equal,
            range: Some((field, range.lo, range.hi)),
        })
    }

    /// The rows matching `predicate`, searched on the chip page by page (`method` only matters
    /// for a range). Chip ops are submitted at `now`; the caller runs the chip model's events.
    pub fn select<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        predicate: &Predicate,
        method: RangeMethod,
    ) -> SearchResult<Selection> {
        let plan = self.plan(predicate, method)?;
        let mut out = Selection::default();
        for i in 0..self.pages.len() {
            self.select_page(device, now, self.pages[i], &plan, &mut out)?;
        }
        out.row_ids.sort_unstable();
        Ok(out)
    }

    fn select_page<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        page: LogicalPage,
        plan: &Plan,
        out: &mut Selection,
    ) -> SearchResult<()> {
        let stats = &mut out.stats;
        let mut open = device.open(now, page)?;
        stats.pages += 1;
        let mut bitmaps = Vec::with_capacity(plan.keys.len());
        for batch in plan.keys.chunks(self.batch_keys_max) {
            bitmaps.extend(device.search(now, &open, batch)?);
            stats.search_commands += 1;
        }
        stats.searches += plan.keys.len() as u64;
        let hits = match plan.combine {
            Combine::Union => bitmaps
                .iter()
                .fold(MatchBitmap::default(), |acc, b| acc.or(b)),
            Combine::FirstAndNotSecond => bitmaps
                .get(1)
                .map_or(bitmaps[0], |lower| bitmaps[0].and(&lower.not())),
        };
        debug_assert_eq!(hits.0[0] & 0xFF, 0, "the header chunk is never a candidate");
        stats.candidates += u64::from(hits.count());
        let chunks = hits.chunks();
        if chunks.count() > 0 {
            let bytes = device.gather(now, &mut open, chunks)?;
            stats.chunks_gathered += u64::from(chunks.count());
            for (i, chunk) in chunks.chunks().enumerate() {
                let chunk_bytes = &bytes[i * CHUNK_BYTES as usize..(i + 1) * CHUNK_BYTES as usize];
                for within in 0..SLOTS_PER_CHUNK {
                    if !hits.is_set(chunk * SLOTS_PER_CHUNK + within) {
                        continue;
                    }
                    let slot = format::slot(chunk_bytes, within);
                    if plan.exact(slot) {
                        out.row_ids.push(self.layout.row_id(slot));
                    } else {
                        stats.refined_out += 1;
                    }
                }
            }
        }
        device.close(now, open)
    }

    /// The baseline: every page read in full (through the page ECC), every slot checked on the
    /// host.
    pub fn select_full_page<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        predicate: &Predicate,
    ) -> SearchResult<Selection> {
        let plan = self.plan(predicate, RangeMethod::AlignedBlocks)?;
        let mut out = Selection::default();
        for i in 0..self.pages.len() {
            let bytes = device.read(now, self.pages[i])?;
            out.stats.pages += 1;
            out.stats.full_reads += 1;
            for i in 0..ROWS_PER_PAGE as u32 {
                let slot = format::slot(&bytes, i);
                if plan.exact(slot) {
                    out.row_ids.push(self.layout.row_id(slot));
                }
            }
        }
        out.row_ids.sort_unstable();
        Ok(out)
    }
}
