//! Per-word endurance drawn from a seed: a normal distribution around the mean with the
//! configured coefficient of variation, truncated to ±3σ and at least one write. Each word's
//! limit is a pure function of (seed, word), computed when the word's count nears the lowest
//! possible limit, so no table of limits is stored.

use crate::config::PcmEndurance;

/// The endurance model of one device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Endurance {
    seed: u64,
    mean: f64,
    cov: f64,
    /// No word's limit is below this: counts under it need no check.
    pub floor_writes: u32,
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn unit(x: u64) -> f64 {
    // (0, 1]: never zero, so the logarithm below is finite
    ((x >> 11) as f64 + 1.0) * (1.0 / (1u64 << 53) as f64)
}

impl Endurance {
    pub fn new(config: &PcmEndurance, seed: u64) -> Self {
        let mean = config.writes_mean;
        let cov = config.writes_cov;
        let floor = (mean * (1.0 - 3.0 * cov))
            .floor()
            .clamp(1.0, u32::MAX as f64);
        Endurance {
            seed: splitmix64(seed ^ 0x5043_4d5f_656e_6475), // "PCM_endu"
            mean,
            cov,
            floor_writes: floor as u32,
        }
    }

    /// Writes word `word` survives (its count reaching this means it is worn out).
    pub fn limit_writes(&self, word: u64) -> u32 {
        if self.cov == 0.0 {
            return self.mean.round().clamp(1.0, u32::MAX as f64) as u32;
        }
        let a = splitmix64(self.seed ^ word.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let b = splitmix64(a);
        // Box-Muller
        let z = (-2.0 * unit(a).ln()).sqrt() * (std::f64::consts::TAU * unit(b)).cos();
        let z = z.clamp(-3.0, 3.0);
        let limit = (self.mean * (1.0 + self.cov * z)).round();
        (limit.clamp(self.floor_writes as f64, u32::MAX as f64)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(mean: f64, cov: f64, seed: u64) -> Endurance {
        Endurance::new(
            &PcmEndurance {
                writes_mean: mean,
                writes_cov: cov,
            },
            seed,
        )
    }

    #[test]
    fn no_spread_gives_every_word_the_mean() {
        let e = model(1e6, 0.0, 1);
        assert_eq!(e.limit_writes(0), 1_000_000);
        assert_eq!(e.limit_writes(12345), 1_000_000);
        assert_eq!(e.floor_writes, 1_000_000);
    }

    #[test]
    fn spread_is_deterministic_by_seed_and_has_the_configured_moments() {
        let a = model(1e6, 0.2, 7);
        let b = model(1e6, 0.2, 7);
        let c = model(1e6, 0.2, 8);
        let n = 20_000u64;
        let xs: Vec<f64> = (0..n).map(|w| a.limit_writes(w) as f64).collect();
        assert!((0..n).all(|w| a.limit_writes(w) == b.limit_writes(w)));
        assert!((0..100).any(|w| a.limit_writes(w) != c.limit_writes(w)));
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean / 1e6 - 1.0).abs() < 0.01, "mean {mean}");
        assert!((sd / mean - 0.2).abs() < 0.01, "cov {}", sd / mean);
        assert!(
            xs.iter()
                .all(|x| *x >= a.floor_writes as f64 && *x <= 1.6e6)
        );
    }
}
