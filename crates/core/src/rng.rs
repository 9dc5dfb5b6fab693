//! Seeded random numbers.
//!
//! `SimRng` wraps xoshiro256++ (portable and stable across platforms and crate versions of the
//! algorithm), seeded from a `u64`. Components derive independent sub-streams with
//! [`SimRng::stream`], so adding a random draw in one component never shifts another's sequence.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Deterministic RNG for simulations. Implements `rand::Rng`, so `rand::RngExt` and
/// `rand_distr` distributions work with it.
#[derive(Clone, Debug)]
pub struct SimRng {
    inner: Xoshiro256PlusPlus,
}

impl SimRng {
    pub fn seed_from_u64(seed: u64) -> Self {
        SimRng {
            inner: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// An independent stream for a named component: the same `(seed, name)` always gives the
    /// same stream, whatever other streams exist.
    pub fn stream(seed: u64, name: &str) -> Self {
        // FNV-1a over the name, mixed with the seed by splitmix64 inside seed_from_u64.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in name.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        Self::seed_from_u64(seed ^ hash.rotate_left(17))
    }

    /// Uniform in `0..bound` (bound > 0), without modulo bias.
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "SimRng::below(0)");
        // Lemire's nearly divisionless method.
        let mut x = self.inner.next_u64();
        let mut m = u128::from(x) * u128::from(bound);
        let mut low = m as u64;
        if low < bound {
            let threshold = bound.wrapping_neg() % bound;
            while low < threshold {
                x = self.inner.next_u64();
                m = u128::from(x) * u128::from(bound);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub fn unit_f64(&mut self) -> f64 {
        (self.inner.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit_f64() < p
    }
}

impl rand::TryRng for SimRng {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.inner.next_u32())
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.inner.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.inner.fill_bytes(dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = SimRng::seed_from_u64(42);
        let mut b = SimRng::seed_from_u64(42);
        for _ in 0..100 {
            assert_eq!(a.below(1000), b.below(1000));
        }
    }

    #[test]
    fn streams_are_independent_of_each_other() {
        let mut a = SimRng::stream(7, "workload");
        let mut b = SimRng::stream(7, "chip");
        let xs: Vec<u64> = (0..8).map(|_| a.below(u64::MAX)).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.below(u64::MAX)).collect();
        assert_ne!(xs, ys);
        let mut a2 = SimRng::stream(7, "workload");
        let xs2: Vec<u64> = (0..8).map(|_| a2.below(u64::MAX)).collect();
        assert_eq!(xs, xs2);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SimRng::seed_from_u64(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = r.below(7);
            assert!(v < 7);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        let u = r.unit_f64();
        assert!((0.0..1.0).contains(&u));
    }

    #[test]
    fn works_with_rand_distr() {
        use rand::distr::Distribution;
        let mut r = SimRng::seed_from_u64(3);
        let d = rand::distr::Uniform::new(0u32, 10).unwrap();
        assert!(d.sample(&mut r) < 10);
    }
}
