//! TPC-C's random functions (clause 2.1.6 and 4.3.2), on a seeded stream.

use nandlab_core::SimRng;

/// The syllables of customer last names (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// TPC-C's generator: uniform and non-uniform integers, strings, last names.
#[derive(Debug)]
pub struct TpccRng {
    rng: SimRng,
    /// The run-time constants C of NURand for A = 255, 1023, 8191.
    c_last: u64,
    c_id: u64,
    c_item: u64,
}

impl TpccRng {
    pub fn new(seed: u64, name: &str) -> Self {
        let mut rng = SimRng::stream(seed, name);
        let c_last = rng.below(256);
        let c_id = rng.below(1024);
        let c_item = rng.below(8192);
        TpccRng {
            rng,
            c_last,
            c_id,
            c_item,
        }
    }

    /// Uniform in `[lo, hi]`.
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.rng.below((hi - lo + 1) as u64) as i64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.chance(p)
    }

    /// NURand(A, 1, n) with A chosen from n's standard range (clause 2.1.6).
    fn nurand(&mut self, a: u64, c: u64, lo: i64, hi: i64) -> i64 {
        let x = self.rng.below(a + 1) as i64;
        let y = self.uniform(lo, hi);
        (((x | y) + c as i64) % (hi - lo + 1)) + lo
    }

    /// A customer id in `[1, customers]`.
    pub fn customer_id(&mut self, customers: i64) -> i64 {
        self.nurand(1023, self.c_id, 1, customers)
    }

    /// An item id in `[1, items]`.
    pub fn item_id(&mut self, items: i64) -> i64 {
        self.nurand(8191, self.c_item, 1, items)
    }

    /// A last-name number for a lookup, in `[0, min(customers, 1000) - 1]`.
    pub fn last_name_number(&mut self, customers: i64) -> i64 {
        self.nurand(255, self.c_last, 0, customers.min(1000) - 1)
    }

    /// A random alphanumeric string of length in `[lo, hi]`.
    pub fn astring(&mut self, lo: i64, hi: i64) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let n = self.uniform(lo, hi);
        (0..n)
            .map(|_| CHARS[self.rng.below(CHARS.len() as u64) as usize] as char)
            .collect()
    }

    /// A random numeric string of length `n`.
    pub fn nstring(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'0' + self.rng.below(10) as u8))
            .collect()
    }

    /// `s` with "ORIGINAL" at a random place 10 % of the time (i_data, s_data).
    pub fn data(&mut self, lo: i64, hi: i64) -> String {
        let mut s = self.astring(lo, hi);
        if self.chance(0.1) && s.len() >= 8 {
            let at = self.rng.below((s.len() - 7) as u64) as usize;
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }
}

/// The last name of number `n` in `[0, 999]` (three syllables).
pub fn last_name(n: i64) -> String {
    let n = n.clamp(0, 999) as usize;
    format!(
        "{}{}{}",
        SYLLABLES[n / 100],
        SYLLABLES[(n / 10) % 10],
        SYLLABLES[n % 10]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ranges() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        let mut r = TpccRng::new(1, "t");
        for _ in 0..1000 {
            let c = r.customer_id(3000);
            assert!((1..=3000).contains(&c));
            let i = r.item_id(100);
            assert!((1..=100).contains(&i));
            assert!((0..30).contains(&r.last_name_number(30)));
        }
        let s = r.data(26, 50);
        assert!((26..=50).contains(&s.len()));
    }
}
