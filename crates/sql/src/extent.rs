//! The extent allocator: lays files out on the SSD's logical pages.
//!
//! The logical space is a run of pages `[0, pages)`. Free space is a set of disjoint runs
//! (`start → length`), coalesced on every free. An allocation takes the first run, in address
//! order, that holds the whole request (first fit); when no run is long enough it takes the
//! longest runs first, so a request is refused only when the free pages do not add up.
//! A file asks for room in growing steps ([`grow_pages`]): at least
//! [`EXTENT_PAGES_MIN`] pages, then as many pages as the file already has (doubling), at most
//! [`EXTENT_PAGES_MAX`] per step, so a file of N pages has O(log N) extents until it passes
//! the cap and then one per cap.

use std::collections::BTreeMap;

/// Smallest step a file grows by, in pages.
pub const EXTENT_PAGES_MIN: u64 = 8;
/// Largest step a file grows by, in pages.
pub const EXTENT_PAGES_MAX: u64 = 4096;

/// A run of logical pages `[start_page, start_page + pages)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub start_page: u64,
    pub pages: u64,
}

impl Extent {
    pub fn end_page(&self) -> u64 {
        self.start_page + self.pages
    }
}

/// First-fit allocator of logical page runs.
#[derive(Clone, Debug)]
pub struct ExtentAllocator {
    /// Free runs: start page → length in pages. Disjoint, never adjacent (coalesced).
    free: BTreeMap<u64, u64>,
    pages_total: u64,
    pages_free: u64,
}

impl ExtentAllocator {
    /// All of `[0, pages_total)` free.
    pub fn new(pages_total: u64) -> Self {
        let mut free = BTreeMap::new();
        if pages_total > 0 {
            free.insert(0, pages_total);
        }
        ExtentAllocator {
            free,
            pages_total,
            pages_free: pages_total,
        }
    }

    pub fn pages_total(&self) -> u64 {
        self.pages_total
    }

    pub fn pages_free(&self) -> u64 {
        self.pages_free
    }

    /// `pages` pages as one or more extents (one when a free run is long enough), or `None`
    /// (nothing taken) when fewer pages are free.
    pub fn allocate(&mut self, pages: u64) -> Option<Vec<Extent>> {
        if pages == 0 {
            return Some(Vec::new());
        }
        if pages > self.pages_free {
            return None;
        }
        let fit = self
            .free
            .iter()
            .find(|(_, len)| **len >= pages)
            .map(|(start, _)| *start);
        if let Some(start) = fit {
            self.take(start, pages);
            return Some(vec![Extent {
                start_page: start,
                pages,
            }]);
        }
        let mut runs: Vec<(u64, u64)> = self.free.iter().map(|(s, l)| (*s, *l)).collect();
        runs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut out = Vec::new();
        let mut left = pages;
        for (start, len) in runs {
            let n = len.min(left);
            self.take(start, n);
            out.push(Extent {
                start_page: start,
                pages: n,
            });
            left -= n;
            if left == 0 {
                break;
            }
        }
        Some(out)
    }

    /// Takes exactly `extent` (a file table's extent at mount); an error when any of its pages
    /// is not free.
    pub fn take_exact(&mut self, extent: Extent) -> Result<(), String> {
        if extent.pages == 0 {
            return Ok(());
        }
        let run = self
            .free
            .range(..=extent.start_page)
            .next_back()
            .map(|(s, l)| (*s, *l));
        let Some((start, len)) = run.filter(|(s, l)| s + l >= extent.end_page()) else {
            return Err(format!("{extent:?} is not free"));
        };
        self.free.remove(&start);
        if start < extent.start_page {
            self.free.insert(start, extent.start_page - start);
        }
        if extent.end_page() < start + len {
            self.free
                .insert(extent.end_page(), start + len - extent.end_page());
        }
        self.pages_free -= extent.pages;
        Ok(())
    }

    /// Takes `[start, start + pages)` from the front of the free run at `start`.
    fn take(&mut self, start: u64, pages: u64) {
        let len = self.free.remove(&start).expect("a free run starts here");
        assert!(pages <= len, "taking {pages} pages of a run of {len}");
        if pages < len {
            self.free.insert(start + pages, len - pages);
        }
        self.pages_free -= pages;
    }

    /// Returns an extent to the free space (coalescing with its neighbours).
    ///
    /// # Panics
    /// If the extent overlaps free space or the end of the space (a double free).
    pub fn free(&mut self, extent: Extent) {
        if extent.pages == 0 {
            return;
        }
        assert!(
            extent.end_page() <= self.pages_total,
            "freeing {extent:?} past the end ({} pages)",
            self.pages_total
        );
        let mut start = extent.start_page;
        let mut len = extent.pages;
        if let Some((&prev, &prev_len)) = self.free.range(..start).next_back() {
            assert!(prev + prev_len <= start, "double free of {extent:?}");
            if prev + prev_len == start {
                self.free.remove(&prev);
                start = prev;
                len += prev_len;
            }
        }
        if let Some((&next, &next_len)) = self.free.range(extent.start_page..).next() {
            assert!(next >= extent.end_page(), "double free of {extent:?}");
            if next == extent.end_page() {
                self.free.remove(&next);
                len += next_len;
            }
        }
        self.free.insert(start, len);
        self.pages_free += extent.pages;
    }
}

/// Pages a file of `pages_now` pages that needs `pages_needed` in all asks for next.
pub fn grow_pages(pages_now: u64, pages_needed: u64) -> u64 {
    let short = pages_needed.saturating_sub(pages_now);
    let step = pages_now.clamp(EXTENT_PAGES_MIN, EXTENT_PAGES_MAX);
    short.max(step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_and_coalescing() {
        let mut a = ExtentAllocator::new(100);
        let x = a.allocate(10).unwrap();
        let y = a.allocate(20).unwrap();
        assert_eq!(
            x,
            vec![Extent {
                start_page: 0,
                pages: 10
            }]
        );
        assert_eq!(
            y,
            vec![Extent {
                start_page: 10,
                pages: 20
            }]
        );
        a.free(x[0]);
        // a 5-page request fits in the hole at 0 (first fit)
        assert_eq!(a.allocate(5).unwrap()[0].start_page, 0);
        a.free(Extent {
            start_page: 0,
            pages: 5,
        });
        a.free(y[0]);
        assert_eq!(a.pages_free(), 100);
        assert_eq!(a.free.len(), 1, "everything coalesced: {:?}", a.free);
    }

    #[test]
    fn fragmented_space_gives_several_extents_and_refuses_too_much() {
        let mut a = ExtentAllocator::new(30);
        let e: Vec<Extent> = (0..3).flat_map(|_| a.allocate(10).unwrap()).collect();
        a.free(e[0]);
        a.free(e[2]);
        assert_eq!(a.allocate(21), None);
        assert_eq!(a.pages_free(), 20, "a refused request takes nothing");
        let got = a.allocate(15).unwrap();
        assert_eq!(got.iter().map(|x| x.pages).sum::<u64>(), 15);
        assert_eq!(got.len(), 2);
        assert_eq!(a.pages_free(), 5);
    }

    #[test]
    #[should_panic(expected = "double free")]
    fn double_free_is_caught() {
        let mut a = ExtentAllocator::new(10);
        let x = a.allocate(4).unwrap();
        a.free(x[0]);
        a.free(x[0]);
    }

    #[test]
    fn exact_takes_split_runs_and_refuse_overlaps() {
        let mut a = ExtentAllocator::new(100);
        let e = |s, p| Extent {
            start_page: s,
            pages: p,
        };
        a.take_exact(e(10, 5)).unwrap();
        a.take_exact(e(0, 2)).unwrap();
        assert_eq!(a.pages_free(), 93);
        assert!(a.take_exact(e(12, 1)).is_err());
        assert!(a.take_exact(e(95, 10)).is_err());
        assert_eq!(a.allocate(8).unwrap(), vec![e(2, 8)]);
        a.free(e(10, 5));
        a.free(e(0, 2));
        a.free(e(2, 8));
        assert_eq!(a.pages_free(), 100);
    }

    #[test]
    fn growth_doubles_between_the_bounds() {
        assert_eq!(grow_pages(0, 1), EXTENT_PAGES_MIN);
        assert_eq!(grow_pages(100, 101), 100);
        assert_eq!(grow_pages(100_000, 100_001), EXTENT_PAGES_MAX);
        assert_eq!(grow_pages(0, 50_000), 50_000);
    }
}
