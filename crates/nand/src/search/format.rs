//! The SiM page format (SPEC S1; paper 004 §III-A): a 4 KiB page is an array of 512 8-byte slots;
//! eight slots make a 64-byte chunk, the unit of the gather command; 64 chunks per page. Slot
//! `i` holds `u64::from_le_bytes(page[8 i .. 8 i + 8])`.
//!
//! Also the command arguments and results: [`SearchKey`] (64-bit key and mask), [`MatchBitmap`]
//! (512 bits, one per slot), [`ChunkMask`] (64 bits, one per chunk), and the reference matcher
//! the chip model runs over the bytes in its latch.

use serde::{Deserialize, Serialize};

pub const SLOT_BYTES: u32 = 8;
pub const SLOTS_PER_CHUNK: u32 = 8;
pub const CHUNK_BYTES: u32 = SLOT_BYTES * SLOTS_PER_CHUNK;
pub const CHUNKS_PER_PAGE: u32 = 64;
pub const SLOTS_PER_PAGE: u32 = SLOTS_PER_CHUNK * CHUNKS_PER_PAGE;
pub const SIM_PAGE_BYTES: u32 = CHUNK_BYTES * CHUNKS_PER_PAGE;
/// Bytes of one match bitmap on the bus (512 bits).
pub const MATCH_BITMAP_BYTES: u32 = SLOTS_PER_PAGE / 8;
/// Bytes of one search key with its mask on the bus.
pub const SEARCH_KEY_BYTES: u32 = 16;
/// Bytes of a gather's chunk bitmap on the bus.
pub const CHUNK_MASK_BYTES: u32 = 8;

/// A query: slot `s` matches when `(s ^ key) & mask == 0` (mask bits set = compared).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SearchKey {
    pub key: u64,
    pub mask: u64,
}

impl SearchKey {
    /// Exact match of all 64 bits.
    pub fn exact(key: u64) -> Self {
        SearchKey { key, mask: !0 }
    }
    pub fn matches(&self, slot: u64) -> bool {
        (slot ^ self.key) & self.mask == 0
    }
}

/// One bit per slot of a page: bit `i` set when slot `i` matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatchBitmap(pub [u64; 8]);

impl MatchBitmap {
    /// The bitmap as a search returns it to the host: 64 bytes, eight little-endian words.
    pub fn from_le_bytes(bytes: &[u8; 64]) -> Self {
        let mut words = [0u64; 8];
        for (w, b) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        MatchBitmap(words)
    }
    pub fn is_set(&self, slot: u32) -> bool {
        slot < SLOTS_PER_PAGE && self.0[(slot / 64) as usize] >> (slot % 64) & 1 == 1
    }
    pub fn set(&mut self, slot: u32) {
        debug_assert!(slot < SLOTS_PER_PAGE);
        self.0[(slot / 64) as usize] |= 1 << (slot % 64);
    }
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    /// Matching slots in increasing order.
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..SLOTS_PER_PAGE).filter(|s| self.is_set(*s))
    }
    /// The chunks holding at least one matching slot (what a following gather asks for).
    pub fn chunks(&self) -> ChunkMask {
        let mut mask = 0u64;
        for (word_index, word) in self.0.iter().enumerate() {
            for byte in 0..8 {
                if (word >> (8 * byte)) & 0xFF != 0 {
                    mask |= 1 << (word_index * 8 + byte);
                }
            }
        }
        ChunkMask(mask)
    }
    pub fn and(&self, other: &MatchBitmap) -> MatchBitmap {
        MatchBitmap(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }
    pub fn or(&self, other: &MatchBitmap) -> MatchBitmap {
        MatchBitmap(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }
    pub fn not(&self) -> MatchBitmap {
        MatchBitmap(std::array::from_fn(|i| !self.0[i]))
    }
}

/// One bit per chunk of a page: the chunks a gather returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChunkMask(pub u64);

impl ChunkMask {
    pub const ALL: ChunkMask = ChunkMask(!0);
    pub fn single(chunk: u32) -> Self {
        debug_assert!(chunk < CHUNKS_PER_PAGE);
        ChunkMask(1 << chunk)
    }
    pub fn count(&self) -> u32 {
        self.0.count_ones()
    }
    pub fn contains(&self, chunk: u32) -> bool {
        chunk < CHUNKS_PER_PAGE && self.0 >> chunk & 1 == 1
    }
    /// Selected chunks in increasing order.
    pub fn chunks(&self) -> impl Iterator<Item = u32> + '_ {
        (0..CHUNKS_PER_PAGE).filter(|c| self.contains(*c))
    }
}

/// Slot `index` of a page's bytes.
pub fn slot(page: &[u8], index: u32) -> u64 {
    let at = (index * SLOT_BYTES) as usize;
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&page[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// The match bitmap of `key` over a page's bytes (the first [`SIM_PAGE_BYTES`] are used).
///
/// On x86-64 with AVX2 (checked at run time) the slot loop is compiled for it: four 64-bit
/// compares per instruction, about five times faster than the portable loop.
pub fn match_page(page: &[u8], key: SearchKey) -> MatchBitmap {
    debug_assert!(page.len() >= SIM_PAGE_BYTES as usize);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)]
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
        // `match_page_avx2`.
        return unsafe { match_page_avx2(page, key) };
    }
    match_page_portable(page, key)
}

/// [`match_page`] compiled for AVX2: the shift-and-or loop, which LLVM turns into 64-bit
/// compares and mask extraction there.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn match_page_avx2(page: &[u8], key: SearchKey) -> MatchBitmap {
    let mut bitmap = MatchBitmap::default();
    let words = page[..SIM_PAGE_BYTES as usize].chunks_exact(64 * SLOT_BYTES as usize);
    for (word, bytes) in bitmap.0.iter_mut().zip(words) {
        let mut bits = 0u64;
        for (i, slot) in bytes.chunks_exact(SLOT_BYTES as usize).enumerate() {
            let value = u64::from_le_bytes(slot.try_into().expect("8 bytes"));
            bits |= u64::from(key.matches(value)) << i;
        }
        *word = bits;
    }
    bitmap
}

/// [`match_page`] for any CPU: 64 slots per bitmap word, a 0/1 flag per slot first (a loop
/// the compiler vectorizes with SSE2), then eight flags at a time packed into a byte by one
/// multiplication (flag `j` of the little-endian word lands in bit `56 + j`).
fn match_page_portable(page: &[u8], key: SearchKey) -> MatchBitmap {
    const PACK: u64 = 0x0102_0408_1020_4080;
    let mut bitmap = MatchBitmap::default();
    let words = page[..SIM_PAGE_BYTES as usize].chunks_exact(64 * SLOT_BYTES as usize);
    for (word, bytes) in bitmap.0.iter_mut().zip(words) {
        let mut flags = [0u8; 64];
        for (flag, slot) in flags
            .iter_mut()
            .zip(bytes.chunks_exact(SLOT_BYTES as usize))
        {
            let value = u64::from_le_bytes(slot.try_into().expect("8 bytes"));
            *flag = u8::from(key.matches(value));
        }
        let mut bits = 0u64;
        for (i, eight) in flags.chunks_exact(8).enumerate() {
            let packed = u64::from_le_bytes(eight.try_into().expect("8 flags"));
            bits |= (packed.wrapping_mul(PACK) >> 56) << (8 * i);
        }
        *word = bits;
    }
    bitmap
}

/// The match bitmap of `key` over a page stored randomized at PPA `ppa`: each slot is compared
/// with the key XORed with that slot's keystream word, as the chip's deserializer sends it.
pub fn match_randomized_page(page: &[u8], key: SearchKey, ppa: u64) -> MatchBitmap {
    debug_assert!(page.len() >= SIM_PAGE_BYTES as usize);
    let mut bitmap = MatchBitmap::default();
    for index in 0..SLOTS_PER_PAGE {
        let chunk_address = super::randomize::chunk_address(ppa, index / SLOTS_PER_CHUNK);
        let stream = super::randomize::slot_keystream(chunk_address, index % SLOTS_PER_CHUNK);
        let randomized = SearchKey {
            key: key.key ^ stream,
            mask: key.mask,
        };
        if randomized.matches(slot(page, index)) {
            bitmap.set(index);
        }
    }
    bitmap
}

/// Bytes of chunk `chunk` of a page.
pub fn chunk_bytes(page: &[u8], chunk: u32) -> &[u8] {
    let at = (chunk * CHUNK_BYTES) as usize;
    &page[at..at + CHUNK_BYTES as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_paper() {
        assert_eq!(SIM_PAGE_BYTES, 4096);
        assert_eq!(SLOTS_PER_PAGE, 512);
        assert_eq!(MATCH_BITMAP_BYTES, 64);
    }

    #[test]
    fn mask_ignores_dont_care_bits() {
        let mut page = vec![0u8; SIM_PAGE_BYTES as usize];
        page[8..16].copy_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        page[16..24].copy_from_slice(&0xFF02_0304_0506_0708u64.to_le_bytes());
        let exact = match_page(&page, SearchKey::exact(0x0102_0304_0506_0708));
        assert_eq!(exact.slots().collect::<Vec<_>>(), vec![1]);
        let low = SearchKey {
            key: 0x0506_0708,
            mask: 0xFFFF_FFFF,
        };
        assert_eq!(
            match_page(&page, low).slots().collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(match_page(&page, low).chunks(), ChunkMask(1));
    }

    proptest::proptest! {
        /// Matching a randomized page with the deserializer's per-slot key randomization gives
        /// the bitmap of matching the plain page with the plain key (paper §IV-C1).
        #[test]
        fn randomized_matching_equals_plain_matching(
            seed in proptest::prelude::any::<u64>(),
            ppa in 0u64..1 << 30,
            key_slot in 0u32..SLOTS_PER_PAGE,
            mask in proptest::prelude::any::<u64>(),
        ) {
            let mut state = seed;
            let page: Vec<u8> = (0..SIM_PAGE_BYTES)
                .map(|_| {
                    state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (state >> 61) as u8
                })
                .collect();
            let key = SearchKey { key: slot(&page, key_slot), mask };
            let mut stored = page.clone();
            super::super::randomize::randomize_page(ppa, &mut stored);
            let plain = match_page(&page, key);
            proptest::prop_assert!(plain.is_set(key_slot));
            proptest::prop_assert_eq!(match_randomized_page(&stored, key, ppa), plain);
        }
    }

    #[test]
    fn both_matchers_equal_the_slot_by_slot_definition() {
        let mut state = 7u64;
        let page: Vec<u8> = (0..SIM_PAGE_BYTES)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                (state >> 62) as u8
            })
            .collect();
        for (key, mask) in [
            (0, !0),
            (slot(&page, 5), !0),
            (0, 0),
            (0x0101, 0x0303),
            (3, 3),
        ] {
            let key = SearchKey { key, mask };
            let mut expected = MatchBitmap::default();
            for index in 0..SLOTS_PER_PAGE {
                if key.matches(slot(&page, index)) {
                    expected.set(index);
                }
            }
            assert_eq!(match_page(&page, key), expected, "{key:?}");
            assert_eq!(match_page_portable(&page, key), expected, "{key:?}");
        }
    }

    #[test]
    fn chunks_of_a_bitmap() {
        let mut b = MatchBitmap::default();
        b.set(0);
        b.set(511);
        b.set(70);
        assert_eq!(b.chunks(), ChunkMask(1 | 1 << 63 | 1 << 8));
        assert_eq!(b.count(), 3);
        assert!(!b.is_set(512));
    }
}
