//! Page digests: the fast path of the engine's read verification.
//!
//! With `verify` on, every page the engine reads must hold each of its live rows at the
//! row's last written version. Regenerating every row's bytes from (row id, version) for that
//! costs a splitmix64 step per 8 bytes of every live row, on every read-modify-write. Instead
//! the engine keeps, for each table page, a digest of the exact bytes it last wrote there,
//! updated per row write from the bytes it changes ([`PageDigest::replace`], no pass over the
//! page). A page read back whose digest equals it is the page written, whose live rows were
//! all correct when it was written (verified on the read before, or just put in) and none of
//! which can have changed since without a write of that page. Any other page (a mismatch:
//! corruption, a lost or misplaced write; or a page without a digest) gets the row-by-row
//! check, which names the slot and row at fault as before.
//!
//! The digest is two 64-bit wrapping sums over the page's 8-byte words `w_i` (little-endian;
//! a short last word zero-padded), in `LANES` lanes (`j = i mod LANES`, block `k = i div
//! LANES`; `LANES` = 8, 64-byte blocks): `A = sum p_j * w_i` and `B = sum q_j * (k + 1) * w_i`, with odd constants `p_j`,
//! `q_j`. One pass needs only additions (per lane a running sum of the blocks from the last
//! one down, [`PageDigest::of`]); the constants are applied once per lane at the end. A change
//! of one word changes `A` (odd factors are invertible modulo 2^64); words moved to other
//! positions change `A` (another lane) or `B` (another block) unless their changes cancel by
//! chance. The all-zero page has digest zero.

/// Words summed side by side (one 64-byte block): independent sums, so the additions of a
/// block overlap.
const LANES: usize = 8;
/// The per-lane factors of `A` and of `B` (odd).
const P: [u64; LANES] = [
    0x9e37_79b9_7f4a_7c15,
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
    0xd6e8_feb8_6659_fd93,
    0xff51_afd7_ed55_8ccd,
    0xc4ce_b9fe_1a85_ec53,
    0x8764_6dfb_c2b3_34e7,
    0xa24b_aed4_963e_e407,
];
const Q: [u64; LANES] = [
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
    0x8ebc_6af0_9c88_c6e3,
    0x5899_65cc_7537_4cc3,
    0x1d8e_4e27_c47d_124f,
    0x9fb2_1c65_1e98_df25,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
];

/// Word `index` of `page` (zero-padded past its end).
#[inline(always)]
fn word_at(page: &[u8], index: usize) -> u64 {
    let start = index * 8;
    match page.get(start..start + 8) {
        Some(bytes) => u64::from_le_bytes(bytes.try_into().expect("8 bytes")),
        None => {
            let mut padded = [0u8; 8];
            let tail = &page[start.min(page.len())..];
            padded[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(padded)
        }
    }
}

/// The digest of one page's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PageDigest {
    a: u64,
    b: u64,
}

impl PageDigest {
    /// The digest of the all-zero page (of any size).
    pub const ZEROS: PageDigest = PageDigest { a: 0, b: 0 };

    /// The terms of word `index` holding `word`.
    #[inline(always)]
    fn term(index: usize, word: u64) -> (u64, u64) {
        let lane = index % LANES;
        let weight = (index / LANES) as u64 + 1;
        (
            word.wrapping_mul(P[lane]),
            word.wrapping_mul(weight).wrapping_mul(Q[lane]),
        )
    }

    fn add(&mut self, index: usize, word: u64) {
        let (a, b) = Self::term(index, word);
        self.a = self.a.wrapping_add(a);
        self.b = self.b.wrapping_add(b);
    }

    fn sub(&mut self, index: usize, word: u64) {
        let (a, b) = Self::term(index, word);
        self.a = self.a.wrapping_sub(a);
        self.b = self.b.wrapping_sub(b);
    }

    /// The digest of `page` (one pass of additions over its words).
    pub fn of(page: &[u8]) -> PageDigest {
        let blocks = page.chunks_exact(8 * LANES);
        let tail_start = page.len() - blocks.remainder().len();
        // from the last whole block down: `running` holds the sum of the blocks k.. per lane,
        // so adding it at each block gives block k the weight k + 1 in `weighted`
        let mut running = [0u64; LANES];
        let mut weighted = [0u64; LANES];
        for block in blocks.rev() {
            for lane in 0..LANES {
                let bytes = &block[lane * 8..lane * 8 + 8];
                let word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                running[lane] = running[lane].wrapping_add(word);
                weighted[lane] = weighted[lane].wrapping_add(running[lane]);
            }
        }
        let mut digest = PageDigest::ZEROS;
        for lane in 0..LANES {
            digest.a = digest.a.wrapping_add(running[lane].wrapping_mul(P[lane]));
            digest.b = digest.b.wrapping_add(weighted[lane].wrapping_mul(Q[lane]));
        }
        for index in tail_start / 8..page.len().div_ceil(8) {
            digest.add(index, word_at(page, index));
        }
        digest
    }

    /// Updates the digest of `page` (this digest's page) for new bytes in `range`: `write`
    /// changes the page in that range only, and the digest follows without a pass over the
    /// rest of the page.
    pub fn replace(
        &mut self,
        page: &mut [u8],
        range: std::ops::Range<usize>,
        write: impl FnOnce(&mut [u8]),
    ) {
        let words = range.start / 8..range.end.div_ceil(8);
        for i in words.clone() {
            self.sub(i, word_at(page, i));
        }
        write(&mut page[range]);
        for i in words {
            self.add(i, word_at(page, i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn zero_pages_have_digest_zero() {
        for len in [0, 5, 8, 4096, 16 * 1024 + 3] {
            assert_eq!(PageDigest::of(&vec![0u8; len]), PageDigest::ZEROS);
        }
    }

    #[test]
    fn replace_matches_a_full_pass() {
        for len in [64usize, 100, 16 * 1024, 16 * 1024 + 5] {
            let mut page = filled(len, 1);
            let mut digest = PageDigest::of(&page);
            for (start, row) in [(0usize, 16usize), (3, 17), (len - 9, 9), (len / 3, 20)] {
                let range = start..start + row;
                digest.replace(&mut page, range, |bytes| {
                    bytes.iter_mut().for_each(|b| *b = b.wrapping_add(7))
                });
                assert_eq!(
                    digest,
                    PageDigest::of(&page),
                    "len {len} range {start}+{row}"
                );
            }
        }
    }

    #[test]
    fn changes_are_caught() {
        let page = filled(16 * 1024, 3);
        let digest = PageDigest::of(&page);
        // every single bit flip, at a spread of positions
        for at in (0..page.len()).step_by(97) {
            for bit in 0..8 {
                let mut bad = page.clone();
                bad[at] ^= 1 << bit;
                assert_ne!(PageDigest::of(&bad), digest, "byte {at} bit {bit}");
            }
        }
        // two rows swapped, a row shifted by one byte
        let mut swapped = page.clone();
        let (a, b) = swapped.split_at_mut(119);
        a.swap_with_slice(&mut b[..119]);
        assert_ne!(PageDigest::of(&swapped), digest);
        let mut within_block = page.clone();
        within_block.copy_within(8..16, 0);
        within_block[8..16].copy_from_slice(&page[0..8]);
        assert_ne!(PageDigest::of(&within_block), digest);
        let mut shifted = page.clone();
        shifted.copy_within(0..119, 1);
        assert_ne!(PageDigest::of(&shifted), digest);
    }
}
