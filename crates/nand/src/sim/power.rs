//! What a power cut sees in the chip model: the ops in flight and how far each got, and which
//! pages an interrupted program can damage (the lower pages of its word line).
//!
//! Nothing here runs unless a power-loss experiment asks: the chip model keeps no extra state
//! for it. An op's progress is read from its step chain (the steps already started).

use super::NandSim;
use super::steps::Step;
use crate::cell::PageLayout;
use crate::op::OpKind;

/// An op in flight at the instant of a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlightOp {
    /// The controller's tag.
    pub tag: u64,
    pub kind: OpKind,
    /// Dense die id.
    pub die: u32,
    /// Submission order (device-wide).
    pub sequence: u64,
    /// The op's cell stage (program or erase of the array) has begun: the array is being
    /// changed. A cell stage merged with the data burst before it counts as begun as soon as
    /// that burst has (the chip model schedules both as one event), so a cut during the data
    /// transfer of a program counts as mid-program (pessimistic by at most one burst).
    pub cell_started: bool,
}

impl NandSim {
    /// The ops in flight now, oldest first (by submission order). Allocates; for power-cut
    /// analysis, not for the hot path.
    pub fn in_flight_ops(&self) -> Vec<InFlightOp> {
        let mut free = vec![false; self.ops.len()];
        for &slot in &self.free_ops {
            free[slot as usize] = true;
        }
        let mut out: Vec<InFlightOp> = self
            .ops
            .iter()
            .zip(&free)
            .filter(|(_, free)| !**free)
            .map(|(o, _)| InFlightOp {
                tag: o.tag,
                kind: o.kind,
                die: o.die,
                sequence: o.sequence,
                cell_started: o.steps[..o.next.min(o.steps.len())]
                    .iter()
                    .any(|s| matches!(s, Step::Cell(..))),
            })
            .collect();
        out.sort_by_key(|o| o.sequence);
        out
    }
}

/// Page offsets of the block that share a word line with `page` and are programmed before it
/// (the pages an interrupted program of `page` may damage), for a block of `pages_per_block`
/// pages laid out as `layout`.
///
/// TLC and QLC sequential layouts program a word line's pages in a row (LSB, CSB, MSB, top):
/// the lower pages are the word line's earlier offsets. The MLC layouts of paper 003 §7.2 give
/// page types, not pairs; the pairing assumed is the k-th MSB page of the block with the k-th
/// LSB page (both counted in offset order), which keeps every LSB page before its MSB page.
/// SLC pages share nothing.
pub fn paired_lower_pages(layout: PageLayout, page: u32, pages_per_block: u32) -> Vec<u32> {
    if page >= pages_per_block {
        return Vec::new();
    }
    match layout {
        PageLayout::Slc => Vec::new(),
        PageLayout::TlcSequential | PageLayout::QlcSequential => {
            let bits = layout.cell_type().bits_per_cell();
            let first = page - page % bits;
            (first..page).collect()
        }
        PageLayout::MlcPaired | PageLayout::MlcAlternating => {
            use crate::cell::PageType;
            let is_lsb = |p: u32| layout.page_type(p, pages_per_block) == PageType::Lsb;
            if is_lsb(page) {
                return Vec::new();
            }
            let k = (0..page).filter(|p| !is_lsb(*p)).count();
            (0..pages_per_block)
                .filter(|p| is_lsb(*p))
                .nth(k)
                .filter(|lsb| *lsb < page)
                .into_iter()
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_pages_share_the_word_line() {
        assert!(paired_lower_pages(PageLayout::Slc, 5, 8).is_empty());
        assert_eq!(paired_lower_pages(PageLayout::TlcSequential, 5, 9), [3, 4]);
        assert!(paired_lower_pages(PageLayout::TlcSequential, 3, 9).is_empty());
        assert_eq!(
            paired_lower_pages(PageLayout::QlcSequential, 7, 8),
            [4, 5, 6]
        );
        // MlcPaired 16: FFFFSSFFSSFFSSSS -> MSB 4 pairs with LSB 0, MSB 8 with LSB 2, ...
        assert_eq!(paired_lower_pages(PageLayout::MlcPaired, 4, 16), [0]);
        assert_eq!(paired_lower_pages(PageLayout::MlcPaired, 9, 16), [3]);
        assert!(paired_lower_pages(PageLayout::MlcPaired, 6, 16).is_empty());
        // every MSB page has one lower page, all distinct, all before it
        for layout in [PageLayout::MlcPaired, PageLayout::MlcAlternating] {
            let mut lowers: Vec<u32> = (0..64)
                .flat_map(|p| paired_lower_pages(layout, p, 64))
                .collect();
            assert_eq!(lowers.len(), 32);
            lowers.dedup();
            assert_eq!(lowers.len(), 32);
        }
        assert!(paired_lower_pages(PageLayout::MlcPaired, 99, 16).is_empty());
    }
}
