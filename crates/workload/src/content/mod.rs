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
    for chunk in out.chunks_mut(8) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}
