//! Range predicates on a packed field as key + mask searches (paper 004 §V-C). The chip only
//! tests equality under a mask, so a range is turned into prefix tests:
//!
//! - [`approximate`]: the paper's one-pass form. The range `lo <= k <= hi` is split into an
//!   upper bound `k < U` (`U = hi + 1`) and a lower bound `k >= lo`. The upper bound is widened
//!   to `k < 2^m` with `2^m` the smallest power of two `>= U` — one search: the field's bits
//!   `m..` are zero. The lower bound becomes NOT `k < 2^l` with `2^l` the largest power of two
//!   `<= lo` — one search, then a bitwise NOT of its bitmap. The AND of the two is a
//!   **superset** of the range (`2^l <= k < 2^m`), as the paper says ("the result encompasses
//!   more elements than the actual range"); an exact pass over the gathered candidates refines
//!   it. At most 2 searches.
//! - [`aligned_blocks`]: the exact form, which the paper leaves to "multi-pass comparisons":
//!   the range is the union of at most `2w - 2` maximal aligned power-of-two blocks
//!   (`w` = field width), each a prefix test — one search per block, bitmaps ORed.
//! - [`widened_blocks`]: between the two, the range widened to multiples of `2^g` so that it
//!   takes at most a given number of blocks (searches): a smaller superset for more searches.

use super::field::BitField;
use nandlab_nand::SearchKey;

/// An aligned block of `2^low_bits` values starting at `start` (`start`'s low bits clear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlignedBlock {
    pub start: u64,
    pub low_bits: u32,
}

impl AlignedBlock {
    /// The search key: `base` plus the block's prefix on `field`.
    pub fn key(&self, field: BitField, base: SearchKey) -> SearchKey {
        let high = field.high_mask(self.low_bits);
        SearchKey {
            key: base.key & !field.mask() | field.put(self.start) & high,
            mask: base.mask & !field.mask() | high,
        }
    }
}

/// The exact decomposition of `lo..=hi` (within a field of `bits` bits) into maximal aligned
/// power-of-two blocks, in increasing order; empty when `lo > hi`.
pub fn aligned_blocks(lo: u64, hi: u64, bits: u32) -> Vec<AlignedBlock> {
    debug_assert!((1..=64).contains(&bits));
    let mut blocks = Vec::new();
    let (mut at, hi) = (u128::from(lo), u128::from(hi));
    while at <= hi {
        let mut low_bits = if at == 0 {
            bits
        } else {
            at.trailing_zeros().min(bits)
        };
        while at + (1u128 << low_bits) - 1 > hi {
            low_bits -= 1;
        }
        blocks.push(AlignedBlock {
            start: at as u64,
            low_bits,
        });
        at += 1u128 << low_bits;
    }
    debug_assert!(bits < 2 || blocks.len() <= 2 * bits as usize - 2 || blocks.len() == 1);
    blocks
}

/// The aligned blocks of `lo..=hi` widened to multiples of `2^g`, with `g` the smallest that
/// gives at most `searches_max` blocks (≥ 1): a superset of the range between the paper's
/// 2-search approximation and the exact decomposition, refined on the host like the former.
pub fn widened_blocks(lo: u64, hi: u64, bits: u32, searches_max: usize) -> Vec<AlignedBlock> {
    debug_assert!(searches_max >= 1);
    for g in 0..=bits {
        let low = if g == 64 { u64::MAX } else { (1u64 << g) - 1 };
        let blocks = aligned_blocks(lo & !low, hi | low, bits);
        if blocks.len() <= searches_max {
            return blocks;
        }
    }
    unreachable!("g = bits gives one block")
}

/// The paper's approximation of `lo..=hi` on a field of `bits` bits: the two prefix searches
/// (each `None` when its bound is not needed) and the superset they select.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApproximateRange {
    /// `k < 2^m`: the field's bits `m..` compared with zero (`Some(m)`); `None` when
    /// `2^m` exceeds the field (no upper bound).
    pub upper_low_bits: Option<u32>,
    /// `k < 2^l`, whose bitmap is inverted (`Some(l)`); `None` when `lo` is 0.
    pub lower_low_bits: Option<u32>,
}

impl ApproximateRange {
    /// The smallest and largest value the approximation selects.
    pub fn covered(&self, bits: u32) -> (u64, u64) {
        let field_max = u64::MAX >> (64 - bits);
        let low = self.lower_low_bits.map_or(0, |l| 1u64 << l);
        let high = self
            .upper_low_bits
            .map_or(field_max, |m| (1u64 << m).wrapping_sub(1));
        (low, high)
    }

    /// The keys to send: the upper-bound search (or `base` alone), then the lower-bound search
    /// if any. Result bitmap = first AND NOT second.
    pub fn keys(&self, field: BitField, base: SearchKey) -> Vec<SearchKey> {
        let zero_above = |low_bits: u32| SearchKey {
            key: base.key & !field.mask(),
            mask: base.mask & !field.mask() | field.high_mask(low_bits),
        };
        let mut keys = vec![self.upper_low_bits.map_or(base, zero_above)];
        keys.extend(self.lower_low_bits.map(zero_above));
        keys
    }
}

/// The paper's approximation of `lo..=hi` (`lo <= hi <= the field's max`).
pub fn approximate(lo: u64, hi: u64, bits: u32) -> ApproximateRange {
    debug_assert!(lo <= hi && (bits == 64 || hi >> bits == 0));
    // smallest m with 2^m > hi, i.e. the bit length of hi
    let m = 64 - hi.leading_zeros();
    ApproximateRange {
        upper_low_bits: (m < bits).then_some(m),
        lower_low_bits: (lo > 0).then(|| 63 - lo.leading_zeros()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::SimRng;

    fn brute(blocks: &[AlignedBlock], bits: u32) -> Vec<u64> {
        let field = BitField::new(3, bits).unwrap();
        let base = SearchKey { key: 0, mask: 0 };
        (0..=field.value_max())
            .filter(|v| {
                blocks
                    .iter()
                    .any(|b| b.key(field, base).matches(field.put(*v)))
            })
            .collect()
    }

    #[test]
    fn aligned_blocks_cover_exactly_the_range() {
        let bits = 9;
        let mut rng = SimRng::seed_from_u64(5);
        for _ in 0..300 {
            let a = rng.below(512);
            let b = rng.below(512);
            let (lo, hi) = (a.min(b), a.max(b));
            let blocks = aligned_blocks(lo, hi, bits);
            assert!(blocks.len() <= 2 * bits as usize - 2, "{lo}..={hi}");
            assert_eq!(brute(&blocks, bits), (lo..=hi).collect::<Vec<_>>());
        }
        assert_eq!(aligned_blocks(0, 511, bits).len(), 1);
        assert_eq!(aligned_blocks(1, 510, bits).len(), 16); // the worst case, 2w - 2
        assert_eq!(aligned_blocks(0, u64::MAX, 64).len(), 1);
        assert_eq!(aligned_blocks(5, 4, bits), vec![]);
    }

    #[test]
    fn widened_blocks_are_a_superset_within_the_budget() {
        let bits = 10;
        let mut rng = SimRng::seed_from_u64(7);
        for _ in 0..300 {
            let a = rng.below(1 << bits);
            let b = rng.below(1 << bits);
            let (lo, hi) = (a.min(b), a.max(b));
            for budget in [1, 2, 4, 8, 18] {
                let blocks = widened_blocks(lo, hi, bits, budget);
                assert!(blocks.len() <= budget);
                let covered = brute(&blocks, bits);
                assert!(covered.contains(&lo) && covered.contains(&hi));
                assert_eq!(
                    covered.len() as u64,
                    covered[covered.len() - 1] - covered[0] + 1
                );
                if budget >= 2 * bits as usize - 2 {
                    assert_eq!(covered, (lo..=hi).collect::<Vec<_>>(), "exact at 2w - 2");
                }
            }
        }
    }

    #[test]
    fn the_approximation_is_a_superset_as_in_the_papers_example() {
        // Fig. 10: 2000 < salary < 7000 -> NOT (salary <= 1023) AND salary <= 8191
        let range = approximate(2001, 6999, 16);
        assert_eq!(range.covered(16), (1024, 8191));
        let field = BitField::new(0, 16).unwrap();
        let keys = range.keys(field, SearchKey { key: 0, mask: 0 });
        let salaries = [800u64, 4000, 9000];
        let bit = |k: &SearchKey| -> Vec<bool> { salaries.iter().map(|s| k.matches(*s)).collect() };
        assert_eq!(bit(&keys[0]), vec![true, true, false]); // bitmap 110
        let lower: Vec<bool> = bit(&keys[1]).iter().map(|b| !b).collect();
        assert_eq!(lower, vec![false, true, true]); // bitmap 011
        let mut rng = SimRng::seed_from_u64(6);
        for _ in 0..300 {
            let a = rng.below(1 << 12);
            let b = rng.below(1 << 12);
            let (lo, hi) = (a.min(b), a.max(b));
            let range = approximate(lo, hi, 12);
            let (low, high) = range.covered(12);
            assert!(low <= lo && hi <= high, "{lo}..={hi} in {low}..={high}");
            let field = BitField::new(20, 12).unwrap();
            let keys = range.keys(field, SearchKey { key: 0, mask: 0 });
            assert!(keys.len() <= 2);
            for v in 0..1u64 << 12 {
                let slot = field.put(v);
                let selected =
                    keys[0].matches(slot) && keys.get(1).is_none_or(|k| !k.matches(slot));
                assert_eq!(selected, (low..=high).contains(&v), "{v} for {lo}..={hi}");
            }
        }
    }
}
