//! Page fingerprints (SHA-1 of a flash page's bytes, thesis §3.2.2) and the opaque physical
//! location ids the finder maps them to.

use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};
use std::fmt;

/// The SHA-1 digest of one page's bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(pub [u8; 20]);

impl Fingerprint {
    /// Bytes of a fingerprint (160 bits).
    pub const SIZE_BYTES: usize = 20;

    /// The fingerprint of `page`.
    pub fn of(page: &[u8]) -> Fingerprint {
        Fingerprint(Sha1::digest(page).into())
    }

    /// The segment a fingerprint lives in: `f mod segments` (thesis §3.2.2), over its first
    /// eight bytes.
    #[inline]
    pub fn segment(&self, segments: u32) -> u32 {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        (u64::from_be_bytes(head) % u64::from(segments)) as u32
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0[..6] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…")
    }
}

/// An opaque physical location (e.g. a flash physical page) that the caller names; the
/// finder only stores and returns it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Location(pub u32);

impl Location {
    /// The id as a table index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_of_known_text() {
        // FIPS 180 test vector: SHA-1("abc")
        let f = Fingerprint::of(b"abc");
        assert_eq!(f.0[..4], [0xa9, 0x99, 0x3e, 0x36]);
        assert_eq!(f.0[16..], [0x9c, 0xd0, 0xd8, 0x9d]);
        assert!(f.segment(7) < 7);
    }
}
