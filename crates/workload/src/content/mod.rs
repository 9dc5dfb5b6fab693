//! Workloads with real page content (issue 15 item 5): the PCM experiments need bytes that
//! repeat (for dedup) and small in-page updates (for log buffers), which block-only requests
//! cannot carry. A generator here yields each request with its bytes.
//!
//! - [`desktop`]: a desktop-like mix (SPEC issue 15 (b)): whole-file page writes of which a
//!   configurable share repeats content written before, small in-page updates of metadata-like
//!   records, reads, deletes (TRIM) and idle gaps between bursts.
//! - [`blocks`]: bytes for the writes of a block stream that has none (SPEC issue 15 (c): trace
//!   replay, synthetic and fio workloads): whole pages recur at a configurable share, partial
//!   pages are small updates.

pub mod blocks;
pub mod desktop;

pub use blocks::{BlockContent, ContentSpec};
pub use desktop::{DesktopGenerator, DesktopSpec};

/// Fills `out` with bytes that are a pure function of `key` (SplitMix64 words).
pub fn fill_keyed(key: u64, out: &mut [u8]) {
    let mut state = key;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    // whole words with a fixed-size store (a copy of run-time length per word was a memcpy
    // call each), then the tail
    let mut words = out.chunks_exact_mut(8);
    for chunk in &mut words {
        chunk.copy_from_slice(&next().to_le_bytes());
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        let len = tail.len();
        tail.copy_from_slice(&next().to_le_bytes()[..len]);
    }
}

#[cfg(test)]
mod fill_tests {
    use super::fill_keyed;

    /// The bytes are those of one SplitMix64 word per 8 bytes, the last word cut short: the
    /// same for every length (word-sized stores give what byte-wise copies gave).
    #[test]
    fn fill_keyed_is_splitmix_words_cut_to_length() {
        for len in [0usize, 1, 7, 8, 9, 15, 16, 100, 4096, 4099] {
            let mut out = vec![0u8; len];
            fill_keyed(42, &mut out);
            let mut state = 42u64;
            let mut expected = Vec::new();
            while expected.len() < len {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                expected.extend_from_slice(&z.to_le_bytes());
            }
            expected.truncate(len);
            assert_eq!(out, expected, "{len}");
        }
    }
}
