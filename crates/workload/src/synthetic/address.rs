//! Choosing the slot (aligned request position) of each request.
//!
//! Nothing here allocates per slot, so an address space of 10^12 slots costs the same as one of
//! ten. Popular ranks are mapped to slots by [`Permutation`], a keyed bijection on `0..n` built
//! from invertible 64-bit mixing steps restricted to the next power of two, with cycle walking
//! to stay inside `0..n` (on average fewer than two steps, since that power is below `2n`).

use super::spec::{AddressDistribution, Pattern};
use nandlab_core::SimRng;
use rand::distr::Distribution;
use rand_distr::Zipf;

/// Key of the fixed permutation that scatters popular slots (independent of the seed, so every
/// stream over the same span agrees on which slots are hot, as with fio's fixed hash).
const SCATTER_KEY: u64 = 0x5bd1_e995_9e37_79b9;

/// A bijection on `0..n` determined by `(n, key)`.
#[derive(Clone, Debug)]
pub(crate) struct Permutation {
    slot_count: u64,
    mask: u64,
    shift: u32,
    multipliers: [u64; 4],
    addends: [u64; 4],
}

impl Permutation {
    pub(crate) fn new(slot_count: u64, key: u64) -> Self {
        debug_assert!(slot_count > 0);
        let bits = 64 - (slot_count - 1).leading_zeros();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut state = key;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut multipliers = [0; 4];
        let mut addends = [0; 4];
        for round in 0..4 {
            multipliers[round] = next() | 1;
            addends[round] = next();
        }
        Permutation {
            slot_count,
            mask,
            shift: (bits / 2).max(1),
            multipliers,
            addends,
        }
    }

    /// One bijective step on `0..=mask`: odd multiply, xor-shift and add, each invertible
    /// modulo a power of two.
    fn mix(&self, mut x: u64) -> u64 {
        for round in 0..4 {
            x = x.wrapping_mul(self.multipliers[round]) & self.mask;
            x ^= x >> self.shift;
            x = x.wrapping_add(self.addends[round]) & self.mask;
        }
        x
    }

    /// The slot of `index` (`index < slot_count`).
    pub(crate) fn apply(&self, index: u64) -> u64 {
        debug_assert!(index < self.slot_count);
        let mut x = self.mix(index);
        while x >= self.slot_count {
            x = self.mix(x);
        }
        x
    }
}

/// Per-generator address state, chosen once from the spec.
#[derive(Clone, Debug)]
pub(crate) enum AddressSampler {
    Sequential {
        next_slot: u64,
    },
    Uniform,
    Shuffled {
        key: u64,
        order: Permutation,
        position: u64,
    },
    Zipf {
        zipf: Zipf<f64>,
        scatter: Option<Permutation>,
    },
    HotCold {
        hot_slots: u64,
        hot_access_fraction: f64,
        scatter: Option<Permutation>,
    },
}

impl AddressSampler {
    /// Builds the sampler; the spec has been validated (theta finite and >= 0, fractions in
    /// range, `slot_count > 0`).
    pub(crate) fn new(
        pattern: Pattern,
        distribution: AddressDistribution,
        slot_count: u64,
        scatter_hot_addresses: bool,
        seed: u64,
    ) -> Self {
        let scatter = || scatter_hot_addresses.then(|| Permutation::new(slot_count, SCATTER_KEY));
        match (pattern, distribution) {
            (Pattern::Sequential, _) => AddressSampler::Sequential { next_slot: 0 },
            (Pattern::Shuffled, _) => AddressSampler::Shuffled {
                key: seed,
                order: Permutation::new(slot_count, seed),
                position: 0,
            },
            (Pattern::Random, AddressDistribution::Uniform) => AddressSampler::Uniform,
            (Pattern::Random, AddressDistribution::Zipf { theta }) => {
                // Validation guarantees n >= 1 and theta >= 0, the only failure cases.
                let zipf = Zipf::new(slot_count as f64, theta)
                    .unwrap_or_else(|_| unreachable!("validated zipf parameters"));
                AddressSampler::Zipf {
                    zipf,
                    scatter: scatter(),
                }
            }
            (
                Pattern::Random,
                AddressDistribution::HotCold {
                    hot_space_fraction,
                    hot_access_fraction,
                },
            ) => {
                let hot_slots =
                    ((slot_count as f64 * hot_space_fraction).round() as u64).clamp(1, slot_count);
                AddressSampler::HotCold {
                    hot_slots,
                    hot_access_fraction,
                    scatter: scatter(),
                }
            }
        }
    }

    /// The next slot in `0..slot_count`.
    pub(crate) fn next_slot(&mut self, slot_count: u64, rng: &mut SimRng) -> u64 {
        match self {
            AddressSampler::Sequential { next_slot } => {
                let slot = *next_slot;
                *next_slot = if slot + 1 == slot_count { 0 } else { slot + 1 };
                slot
            }
            AddressSampler::Uniform => rng.below(slot_count),
            AddressSampler::Shuffled {
                key,
                order,
                position,
            } => {
                let slot = order.apply(*position);
                *position += 1;
                if *position == slot_count {
                    // A new pass in a new order.
                    *position = 0;
                    *key = key.wrapping_add(1);
                    *order = Permutation::new(slot_count, *key);
                }
                slot
            }
            AddressSampler::Zipf { zipf, scatter } => {
                let rank = (zipf.sample(rng) as u64)
                    .saturating_sub(1)
                    .min(slot_count - 1);
                scatter.as_ref().map_or(rank, |p| p.apply(rank))
            }
            AddressSampler::HotCold {
                hot_slots,
                hot_access_fraction,
                scatter,
            } => {
                let cold_slots = slot_count - *hot_slots;
                let rank = if cold_slots == 0 || rng.chance(*hot_access_fraction) {
                    rng.below(*hot_slots)
                } else {
                    *hot_slots + rng.below(cold_slots)
                };
                scatter.as_ref().map_or(rank, |p| p.apply(rank))
            }
        }
    }
}

/// The permutation that scatters popular ranks over `slot_count` slots (for tests): the hot
/// set of a hot/cold sampler is the image of ranks `0..hot_slots`.
#[cfg(test)]
pub(crate) fn scatter_permutation(slot_count: u64) -> Permutation {
    Permutation::new(slot_count, SCATTER_KEY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_bijection(n: u64, key: u64) -> bool {
        let p = Permutation::new(n, key);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let s = p.apply(i) as usize;
            if seen[s] {
                return false;
            }
            seen[s] = true;
        }
        true
    }

    #[test]
    fn permutation_is_a_bijection_for_awkward_sizes() {
        for n in [1, 2, 3, 5, 7, 8, 9, 100, 1000, 1023, 1024, 1025, 4097] {
            for key in [0, 1, SCATTER_KEY] {
                assert!(is_bijection(n, key), "n = {n}, key = {key}");
            }
        }
    }

    #[test]
    fn permutation_handles_huge_spaces_without_tables() {
        for n in [1_000_000_000_u64, u64::MAX, (1 << 63) + 1] {
            let p = Permutation::new(n, SCATTER_KEY);
            for i in [0, 1, 2, n / 2, n - 1] {
                assert!(p.apply(i) < n);
            }
            assert_ne!(p.apply(0), p.apply(1));
        }
    }

    #[test]
    fn shuffled_visits_every_slot_once_per_pass() {
        let n = 37;
        let mut sampler =
            AddressSampler::new(Pattern::Shuffled, AddressDistribution::Uniform, n, true, 9);
        let mut rng = SimRng::seed_from_u64(0);
        let mut first: Vec<u64> = (0..n).map(|_| sampler.next_slot(n, &mut rng)).collect();
        let mut second: Vec<u64> = (0..n).map(|_| sampler.next_slot(n, &mut rng)).collect();
        assert_ne!(first, second, "each pass has its own order");
        first.sort_unstable();
        second.sort_unstable();
        let all: Vec<u64> = (0..n).collect();
        assert_eq!(first, all);
        assert_eq!(second, all);
    }
}
