//! Page fingerprints (SHA-1 of a flash page's bytes, thesis §3.2.2) and the opaque physical
//! location ids the finder maps them to.

use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};
use std::fmt;

/// The SHA-1 digest of one page's bytes. Ordered as its bytes are (lexicographically).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u8; 20]);

impl Ord for Fingerprint {
    /// The bytes' lexicographic order, compared as three big-endian words (no `memcmp` call
    /// per probe of the store's searches).
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Fingerprint {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Fingerprint {
    /// Bytes of a fingerprint (160 bits).
    pub const SIZE_BYTES: usize = 20;

    /// The fingerprint of `page`.
    pub fn of(page: &[u8]) -> Fingerprint {
        Fingerprint(Sha1::digest(page).into())
    }

    /// The fingerprints of the pages of `pages` (consecutive pages of `page_size_bytes`), in
    /// order, into `out` (cleared first), hashed on up to `threads` threads (scoped: the pages
    /// are cut into one contiguous run per thread). The result does not depend on `threads`.
    pub fn of_pages(pages: &[u8], page_size_bytes: usize, threads: usize, out: &mut Vec<Self>) {
        assert!(page_size_bytes > 0, "a page has bytes");
        let n = pages.len() / page_size_bytes;
        out.clear();
        out.resize(n, Fingerprint::default());
        let threads = threads.clamp(1, n.max(1));
        if threads == 1 {
            for (f, page) in out.iter_mut().zip(pages.chunks_exact(page_size_bytes)) {
                *f = Fingerprint::of(page);
            }
            return;
        }
        let per_thread = n.div_ceil(threads);
        std::thread::scope(|scope| {
            let runs = out
                .chunks_mut(per_thread)
                .zip(pages.chunks(per_thread * page_size_bytes));
            for (fingerprints, run) in runs {
                scope.spawn(move || {
                    for (f, page) in fingerprints
                        .iter_mut()
                        .zip(run.chunks_exact(page_size_bytes))
                    {
                        *f = Fingerprint::of(page);
                    }
                });
            }
        });
    }

    /// The bytes as big-endian words: their order is the bytes' lexicographic order.
    #[inline]
    fn key(&self) -> (u64, u64, u32) {
        let b = &self.0;
        (
            u64::from_be_bytes(b[..8].try_into().expect("8 bytes")),
            u64::from_be_bytes(b[8..16].try_into().expect("8 bytes")),
            u32::from_be_bytes(b[16..].try_into().expect("4 bytes")),
        )
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

    proptest::proptest! {
        #[test]
        fn order_is_the_bytes_lexicographic_order(
            a in proptest::array::uniform20(0u8..4),
            b in proptest::array::uniform20(0u8..4),
        ) {
            proptest::prop_assert_eq!(Fingerprint(a).cmp(&Fingerprint(b)), a.cmp(&b));
        }
    }

    #[test]
    fn pages_hashed_on_threads_equal_the_serial_hashes() {
        let page = 512;
        let pages: Vec<u8> = (0..37 * page).map(|i| (i * 7 % 251) as u8).collect();
        let serial: Vec<Fingerprint> = pages.chunks_exact(page).map(Fingerprint::of).collect();
        let mut out = vec![Fingerprint::default(); 3];
        for threads in [0, 1, 2, 3, 4, 8, 64] {
            Fingerprint::of_pages(&pages, page, threads, &mut out);
            assert_eq!(out, serial, "{threads} threads");
        }
        Fingerprint::of_pages(&[], page, 4, &mut out);
        assert!(out.is_empty());
    }
}
