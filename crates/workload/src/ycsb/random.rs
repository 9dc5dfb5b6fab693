//! The uniform draws every YCSB generator consumes, and YCSB's 64-bit FNV hash.
//!
//! YCSB's generators all read `ThreadLocalRandom.current()` (`nextDouble`, `nextLong`). Here a
//! generator takes its draws from a [`UniformSource`], so the same draws give the same values
//! as the reference math. [`JavaTlr`] is the JDK 8–18 `ThreadLocalRandom` algorithm (a
//! SplitMix-style counter with `GAMMA = 0x9e3779b97f4a7c15` and the Murmur3 `mix64` finalizer,
//! `nextDouble = (nextLong >>> 11) · 2⁻⁵³`) with an explicit seed; a JVM seeds it from the clock,
//! so no YCSB run can be replayed draw for draw anyway, and the algorithm here has not been
//! checked against a JVM.

/// A source of the two kinds of uniform draw YCSB's generators use.
pub trait UniformSource {
    /// Java `nextLong()`: any 64-bit value.
    fn next_i64(&mut self) -> i64;
    /// Java `nextDouble()`: uniform in `[0, 1)`.
    fn next_f64(&mut self) -> f64;
}

/// `ThreadLocalRandom`'s algorithm with an explicit seed (see the module note).
#[derive(Clone, Debug)]
pub struct JavaTlr {
    seed: u64,
}

/// Golden-ratio increment of `ThreadLocalRandom` (JDK source, `GAMMA`).
const TLR_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
/// 2⁻⁵³, Java's `DOUBLE_UNIT`.
const DOUBLE_UNIT: f64 = 1.0 / (1u64 << 53) as f64;

impl JavaTlr {
    pub fn new(seed: u64) -> Self {
        JavaTlr { seed }
    }
}

/// Murmur3's 64-bit finalizer, `ThreadLocalRandom.mix64`.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^ (z >> 33)
}

impl UniformSource for JavaTlr {
    fn next_i64(&mut self) -> i64 {
        self.seed = self.seed.wrapping_add(TLR_GAMMA);
        mix64(self.seed) as i64
    }

    fn next_f64(&mut self) -> f64 {
        ((self.next_i64() as u64) >> 11) as f64 * DOUBLE_UNIT
    }
}

/// FNV-1 offset basis, YCSB `Utils.FNV_OFFSET_BASIS_64` (0xCBF29CE484222325).
pub const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
/// FNV-1 prime, YCSB `Utils.FNV_PRIME_64` (1099511628211).
pub const FNV_PRIME_64: i64 = 1_099_511_628_211;

/// YCSB `Utils.fnvhash64`: FNV-1a over the eight little-endian bytes of `val` (XOR, then
/// multiply), then Java's `Math.abs` — which leaves `i64::MIN` negative, as `wrapping_abs` does.
pub fn fnvhash64(val: i64) -> i64 {
    let mut rest = val;
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = rest & 0xff;
        rest >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash.wrapping_abs()
}

/// Java's `long % long` for a (possibly negative) dividend: truncated remainder, as Rust's `%`.
pub(crate) fn java_rem(value: i64, modulus: i64) -> i64 {
    assert!(modulus > 0, "java_rem by {modulus}");
    value % modulus
}
