//! A plain Zipf(α) over `n` ranks by exact inverse CDF: rank `r` (0 = most popular) has
//! probability `(r + 1)^-α / H(n, α)`. Any α > 0 (the paper's 0.5, 0.9 and 1.3, §VI-A5, §VII-E);
//! YCSB's own Zipfian (Gray's approximation) needs θ < 1 and bends the tail, this one does not.

use super::random::UniformSource;

/// Most ranks a [`PlainZipf`] tabulates (its table is 8 bytes a rank).
pub const PLAIN_ZIPF_RANKS_MAX: u64 = 1 << 27;

#[derive(Clone, Debug)]
pub struct PlainZipf {
    /// `cumulative[r] = Σ_{i ≤ r} (i + 1)^-α`, increasing.
    cumulative: Vec<f64>,
}

impl PlainZipf {
    /// `ranks` in `1..=PLAIN_ZIPF_RANKS_MAX`, `alpha` > 0 and finite (checked by the spec).
    pub fn new(ranks: u64, alpha: f64) -> Self {
        assert!(
            (1..=PLAIN_ZIPF_RANKS_MAX).contains(&ranks),
            "PlainZipf ranks {ranks}"
        );
        assert!(alpha.is_finite() && alpha > 0.0, "PlainZipf alpha {alpha}");
        let mut sum = 0.0;
        let cumulative = (0..ranks)
            .map(|r| {
                sum += ((r + 1) as f64).powf(-alpha);
                sum
            })
            .collect();
        PlainZipf { cumulative }
    }

    /// Probability of rank `r`.
    pub fn probability(&self, rank: u64) -> f64 {
        let r = rank as usize;
        let below = if r == 0 { 0.0 } else { self.cumulative[r - 1] };
        (self.cumulative[r] - below) / self.total()
    }

    fn total(&self) -> f64 {
        self.cumulative[self.cumulative.len() - 1]
    }

    /// The smallest rank whose cumulative weight exceeds `u · H(n, α)`.
    pub fn rank_of(&self, u: f64) -> u64 {
        let target = u * self.total();
        let rank = self.cumulative.partition_point(|&c| c <= target);
        rank.min(self.cumulative.len() - 1) as u64
    }

    pub fn next_value(&self, rng: &mut impl UniformSource) -> u64 {
        self.rank_of(rng.next_f64())
    }
}
