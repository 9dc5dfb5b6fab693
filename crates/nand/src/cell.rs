//! Cell types and page-type layouts (SPEC N2, paper 003 §4 and §7.2).
//!
//! Multi-bit cells program their pages in phases (ISPP): the first (LSB) page of a word line is
//! fast, later pages (CSB, MSB, top) are slow. Which page offsets of a block are fast depends on
//! the manufacturer; the paper measured two MLC layouts on eight devices from four vendors.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Slc,
    Mlc,
    Tlc,
    Qlc,
}

impl CellType {
    pub fn bits_per_cell(self) -> u32 {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }
}

/// The type of a page within its word line: index 0 is the fastest to program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageType {
    /// Least significant bit page (the only type in SLC).
    Lsb,
    /// Centre significant bit page (TLC, QLC).
    Csb,
    /// Most significant bit page.
    Msb,
    /// Top page (QLC's fourth bit).
    Top,
}

impl PageType {
    /// Index into per-page-type latency tables.
    pub fn index(self) -> usize {
        match self {
            PageType::Lsb => 0,
            PageType::Csb => 1,
            PageType::Msb => 2,
            PageType::Top => 3,
        }
    }
}

/// How page types are laid out over the page offsets of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageLayout {
    /// Every page is an LSB page.
    Slc,
    /// Paper §7.2, the majority of devices: the first four pages fast, the last four slow, and
    /// pairs of pages alternating slow/fast in between (4,5 slow; 6,7 fast; …).
    MlcPaired,
    /// Paper §7.2, the other group: two fast pages first, two slow pages last, and single pages
    /// alternating slow/fast in between (2 slow, 3 fast, …).
    MlcAlternating,
    /// Word-line-sequential TLC: page offsets cycle LSB, CSB, MSB (one-shot programming of a
    /// word line, as in 3D TLC).
    TlcSequential,
    /// Word-line-sequential QLC: LSB, CSB, MSB, top.
    QlcSequential,
}

impl PageLayout {
    /// The cell type this layout belongs to.
    pub fn cell_type(self) -> CellType {
        match self {
            PageLayout::Slc => CellType::Slc,
            PageLayout::MlcPaired | PageLayout::MlcAlternating => CellType::Mlc,
            PageLayout::TlcSequential => CellType::Tlc,
            PageLayout::QlcSequential => CellType::Qlc,
        }
    }

    /// Checks that a block of `pages_per_block` pages fits the layout's pattern.
    pub fn check_pages_per_block(self, pages_per_block: u32) -> Result<(), String> {
        let ok = match self {
            PageLayout::Slc => true,
            PageLayout::MlcPaired => pages_per_block >= 8 && pages_per_block.is_multiple_of(4),
            PageLayout::MlcAlternating => pages_per_block >= 4 && pages_per_block.is_multiple_of(2),
            PageLayout::TlcSequential => pages_per_block.is_multiple_of(3),
            PageLayout::QlcSequential => pages_per_block.is_multiple_of(4),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{pages_per_block} pages per block do not fit the {self:?} layout ({})",
                match self {
                    PageLayout::MlcPaired => "needs a multiple of 4, at least 8",
                    PageLayout::MlcAlternating => "needs an even count, at least 4",
                    PageLayout::TlcSequential => "needs a multiple of 3",
                    _ => "needs a multiple of 4",
                }
            ))
        }
    }

    /// The page type at `page` (offset within the block) of a block of `pages_per_block` pages.
    pub fn page_type(self, page: u32, pages_per_block: u32) -> PageType {
        debug_assert!(page < pages_per_block);
        match self {
            PageLayout::Slc => PageType::Lsb,
            PageLayout::MlcPaired => {
                if page < 4 {
                    PageType::Lsb
                } else if page >= pages_per_block - 4 || ((page - 4) / 2).is_multiple_of(2) {
                    PageType::Msb
                } else {
                    PageType::Lsb
                }
            }
            PageLayout::MlcAlternating => {
                if page < 2 {
                    PageType::Lsb
                } else if page >= pages_per_block - 2 || (page - 2).is_multiple_of(2) {
                    PageType::Msb
                } else {
                    PageType::Lsb
                }
            }
            PageLayout::TlcSequential => match page % 3 {
                0 => PageType::Lsb,
                1 => PageType::Csb,
                _ => PageType::Msb,
            },
            PageLayout::QlcSequential => match page % 4 {
                0 => PageType::Lsb,
                1 => PageType::Csb,
                2 => PageType::Msb,
                _ => PageType::Top,
            },
        }
    }

    /// Number of distinct page types (the length of per-type latency tables).
    pub fn page_type_count(self) -> usize {
        self.cell_type().bits_per_cell() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(layout: PageLayout, n: u32) -> String {
        (0..n)
            .map(|p| match layout.page_type(p, n) {
                PageType::Lsb => 'F',
                _ => 'S',
            })
            .collect()
    }

    #[test]
    fn mlc_paired_layout_of_paper_section_7_2() {
        // first four fast, last four slow, pairs alternate (slow pair first) in between
        assert_eq!(pattern(PageLayout::MlcPaired, 16), "FFFFSSFFSSFFSSSS");
        let n = 128;
        let fast = (0..n)
            .filter(|p| PageLayout::MlcPaired.page_type(*p, n) == PageType::Lsb)
            .count();
        assert_eq!(fast, 64, "half of an MLC block is LSB pages");
    }

    #[test]
    fn mlc_alternating_layout_of_paper_section_7_2() {
        assert_eq!(pattern(PageLayout::MlcAlternating, 12), "FFSFSFSFSFSS");
        let n = 256;
        let fast = (0..n)
            .filter(|p| PageLayout::MlcAlternating.page_type(*p, n) == PageType::Lsb)
            .count();
        assert_eq!(fast, 128);
    }

    #[test]
    fn tlc_and_qlc_cycle_through_word_line_pages() {
        let types: Vec<_> = (0..6)
            .map(|p| PageLayout::TlcSequential.page_type(p, 6))
            .collect();
        assert_eq!(
            types,
            [
                PageType::Lsb,
                PageType::Csb,
                PageType::Msb,
                PageType::Lsb,
                PageType::Csb,
                PageType::Msb
            ]
        );
        assert_eq!(PageLayout::QlcSequential.page_type(7, 8), PageType::Top);
        assert_eq!(PageLayout::QlcSequential.page_type_count(), 4);
    }

    #[test]
    fn block_size_must_fit_the_layout() {
        assert!(PageLayout::MlcPaired.check_pages_per_block(6).is_err());
        assert!(
            PageLayout::TlcSequential
                .check_pages_per_block(128)
                .is_err()
        );
        assert!(PageLayout::TlcSequential.check_pages_per_block(192).is_ok());
    }
}
