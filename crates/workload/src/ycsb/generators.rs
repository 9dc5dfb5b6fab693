//! YCSB's number generators (package `site.ycsb.generator`), the math carried over with the
//! reference's constants; each draw comes from a [`UniformSource`] passed in.
//!
//! Where the reference constructor already draws a value (`ZipfianGenerator` and
//! `SkewedLatestGenerator` call `nextValue()` at the end of their constructors), the constructor
//! here takes the source and draws it too, so the sequences line up draw for draw.

use super::random::{UniformSource, fnvhash64, java_rem};

/// Default Zipfian constant, YCSB `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Item count of the scrambled generator's inner Zipfian, YCSB
/// `ScrambledZipfianGenerator.ITEM_COUNT` (10¹⁰).
pub const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;
/// ζ(10¹⁰, 0.99) precomputed by YCSB, `ScrambledZipfianGenerator.ZETAN`.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB `ZipfianGenerator` (Gray et al., SIGMOD 1994): values in `[base, base + items)`, the
/// lowest most popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

/// `zetastatic(st, n, theta, initialsum)`: `initialsum + Σ_{i=st}^{n-1} 1/(i+1)^θ`, summed in the
/// reference's order.
pub fn zeta(start: i64, n: i64, theta: f64, initial_sum: f64) -> f64 {
    let mut sum = initial_sum;
    for i in start..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

impl Zipfian {
    /// `ZipfianGenerator(min, max, theta)`: computes ζ(items, θ) (O(items)), then draws once.
    pub fn new(min: i64, max: i64, theta: f64, rng: &mut impl UniformSource) -> Self {
        let zetan = zeta(0, max - min + 1, theta, 0.0);
        Self::with_zetan(min, max, theta, zetan, rng)
    }

    /// `ZipfianGenerator(min, max, theta, zetan)` with a precomputed ζ; draws once.
    pub fn with_zetan(
        min: i64,
        max: i64,
        theta: f64,
        zetan: f64,
        rng: &mut impl UniformSource,
    ) -> Self {
        assert!(
            max >= min && theta > 0.0 && theta != 1.0,
            "Zipfian({min}, {max}, {theta})"
        );
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let mut generator = Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            count_for_zeta: items,
        };
        generator.next_value(rng);
        generator
    }

    /// `nextLong(itemcount)`: grows ζ incrementally when `item_count` exceeds the count it was
    /// computed for (η keeps the constructor's `items`, as in the reference); a smaller count is
    /// used without recomputing (the reference's default, `allowitemcountdecrease = false`).
    pub fn next_long(&mut self, item_count: i64, rng: &mut impl UniformSource) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = rng.next_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        // Java's (long) cast of a double truncates toward zero and saturates, as `as i64`.
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }

    /// `nextValue()`.
    pub fn next_value(&mut self, rng: &mut impl UniformSource) -> i64 {
        self.next_long(self.items, rng)
    }
}

/// YCSB `ScrambledZipfianGenerator`: a Zipfian over 10¹⁰ + 1 items (θ = 0.99, ζ precomputed)
/// hashed by FNV-64 onto `[min, max]`, so popular items are scattered.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    inner: Zipfian,
    min: i64,
    item_count: i64,
}

impl ScrambledZipfian {
    /// `ScrambledZipfianGenerator(min, max)`; draws once (the inner constructor's draw).
    pub fn new(min: i64, max: i64, rng: &mut impl UniformSource) -> Self {
        // Reference: new ZipfianGenerator(0, ITEM_COUNT, 0.99, ZETAN) — ITEM_COUNT + 1 items.
        let inner = Zipfian::with_zetan(
            0,
            SCRAMBLED_ITEM_COUNT,
            ZIPFIAN_CONSTANT,
            SCRAMBLED_ZETAN,
            rng,
        );
        ScrambledZipfian {
            inner,
            min,
            item_count: max - min + 1,
        }
    }

    pub fn next_value(&mut self, rng: &mut impl UniformSource) -> i64 {
        let raw = self.inner.next_value(rng);
        self.min + java_rem(fnvhash64(raw), self.item_count)
    }
}

/// YCSB `SkewedLatestGenerator`: `max − zipfian(max)` where `max` is the latest acknowledged
/// insert, so recent records are popular. The basis is passed in on every call.
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// `SkewedLatestGenerator(basis)` with `basis.lastValue() = last`; draws twice (the inner
    /// constructor's draw and its own `nextValue()`).
    pub fn new(last: i64, rng: &mut impl UniformSource) -> Self {
        // Reference: new ZipfianGenerator(basis.lastValue()) — items = last, range [0, last − 1].
        let zipfian = Zipfian::new(0, last - 1, ZIPFIAN_CONSTANT, rng);
        let mut generator = SkewedLatest { zipfian };
        generator.next_value(last, rng);
        generator
    }

    pub fn next_value(&mut self, last: i64, rng: &mut impl UniformSource) -> i64 {
        last - self.zipfian.next_long(last, rng)
    }
}

/// YCSB `UniformLongGenerator`: `|nextLong| % interval + lb` (Java's `abs` and `%`).
#[derive(Clone, Copy, Debug)]
pub struct UniformLong {
    lower: i64,
    interval: i64,
}

impl UniformLong {
    pub fn new(lower: i64, upper: i64) -> Self {
        assert!(upper >= lower, "UniformLong({lower}, {upper})");
        UniformLong {
            lower,
            interval: upper - lower + 1,
        }
    }

    pub fn next_value(&self, rng: &mut impl UniformSource) -> i64 {
        java_rem(rng.next_i64().wrapping_abs(), self.interval) + self.lower
    }
}

/// YCSB `HotspotIntegerGenerator`: with probability `op_fraction` a value from the first
/// `data_fraction` of `[lower, upper]`, else from the rest.
#[derive(Clone, Copy, Debug)]
pub struct Hotspot {
    lower: i64,
    hot_interval: i64,
    cold_interval: i64,
    op_fraction: f64,
}

/// `hotspotdatafraction` default, YCSB `CoreWorkload.HOTSPOT_DATA_FRACTION_DEFAULT`.
pub const HOTSPOT_DATA_FRACTION: f64 = 0.2;
/// `hotspotopnfraction` default, YCSB `CoreWorkload.HOTSPOT_OPN_FRACTION_DEFAULT`.
pub const HOTSPOT_OPN_FRACTION: f64 = 0.8;

impl Hotspot {
    /// Fractions must be in `[0, 1]` and `lower ≤ upper` (checked by the workload spec; the
    /// reference silently clamps and swaps instead).
    pub fn new(lower: i64, upper: i64, data_fraction: f64, op_fraction: f64) -> Self {
        assert!(upper >= lower, "Hotspot({lower}, {upper})");
        let interval = upper - lower + 1;
        // Reference: (int) (interval * hotsetFraction).
        let hot_interval = i64::from((interval as f64 * data_fraction) as i32);
        Hotspot {
            lower,
            hot_interval,
            cold_interval: interval - hot_interval,
            op_fraction,
        }
    }

    pub fn next_value(&self, rng: &mut impl UniformSource) -> i64 {
        if rng.next_f64() < self.op_fraction {
            self.lower + java_rem(rng.next_i64().wrapping_abs(), self.hot_interval)
        } else {
            self.lower
                + self.hot_interval
                + java_rem(rng.next_i64().wrapping_abs(), self.cold_interval)
        }
    }
}

/// YCSB `DiscreteGenerator`: one uniform draw walked over normalized weights.
#[derive(Clone, Debug)]
pub struct Discrete<T: Copy> {
    values: Vec<(f64, T)>,
}

impl<T: Copy> Discrete<T> {
    /// Weights in insertion order (the reference adds only positive ones).
    pub fn new(values: Vec<(f64, T)>) -> Self {
        assert!(values.iter().all(|(w, _)| *w > 0.0) && !values.is_empty());
        Discrete { values }
    }

    pub fn next_value(&self, rng: &mut impl UniformSource) -> T {
        let sum: f64 = self.values.iter().map(|(w, _)| w).sum();
        let mut val = rng.next_f64();
        for (weight, value) in &self.values {
            let share = weight / sum;
            if val < share {
                return *value;
            }
            val -= share;
        }
        // Rounding can leave val ≥ the last share; the reference throws here. Take the last.
        self.values[self.values.len() - 1].1
    }
}
