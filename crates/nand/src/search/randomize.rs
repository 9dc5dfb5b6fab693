//! Per-chunk data randomization (paper 004 §IV-C1). Stored data is XORed with a keystream seeded
//! by the *chunk* address (not the page address as in conventional randomizers), so any chunk can
//! be de-randomized on its own after a gather. The chip's deserializer XORs the search key with
//! the same keystream word for each slot it sends the key to, and since `(d ^ r) ^ (k ^ r) = d ^ k`
//! the page buffers match without de-randomizing the page.
//!
//! The keystream is SplitMix64 (Steele, Lea and Flood, OOPSLA 2014) of the chunk address and the
//! slot within the chunk; the chunk address of chunk `c` of the page at PPA `p` is `64 p + c`.
//! Controller and chip use this one definition.

use super::format::{CHUNK_BYTES, CHUNKS_PER_PAGE, SLOT_BYTES, SLOTS_PER_CHUNK};

/// Address of chunk `chunk` of the page with dense physical index `ppa`.
pub fn chunk_address(ppa: u64, chunk: u32) -> u64 {
    ppa * u64::from(CHUNKS_PER_PAGE) + u64::from(chunk)
}

/// The keystream word XORed into slot `slot` (0..8) of the chunk at `chunk_address`.
pub fn slot_keystream(chunk_address: u64, slot: u32) -> u64 {
    splitmix64(
        chunk_address
            .wrapping_mul(u64::from(SLOTS_PER_CHUNK))
            .wrapping_add(u64::from(slot))
            ^ 0x5349_4D5F_5241_4E44, // "SIM_RAND"
    )
}

/// XORs the keystream of `chunk_address` into one chunk's bytes (randomizes and de-randomizes).
pub fn randomize_chunk(chunk_address: u64, chunk: &mut [u8]) {
    debug_assert_eq!(chunk.len(), CHUNK_BYTES as usize);
    for (slot, bytes) in chunk.chunks_exact_mut(SLOT_BYTES as usize).enumerate() {
        let word = u64::from_le_bytes((&*bytes).try_into().expect("8 bytes"));
        let stream = slot_keystream(chunk_address, slot as u32);
        bytes.copy_from_slice(&(word ^ stream).to_le_bytes());
    }
}

/// Randomizes (or de-randomizes) the first `4096` bytes of a page at PPA `ppa`, chunk by chunk.
pub fn randomize_page(ppa: u64, page: &mut [u8]) {
    for (chunk, bytes) in page
        .chunks_exact_mut(CHUNK_BYTES as usize)
        .take(CHUNKS_PER_PAGE as usize)
        .enumerate()
    {
        randomize_chunk(chunk_address(ppa, chunk as u32), bytes);
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn randomizing_twice_restores_the_chunk_and_chunks_differ() {
        let original = [7u8; 64];
        let mut a = original;
        randomize_chunk(chunk_address(3, 1), &mut a);
        assert_ne!(a, original);
        let mut b = original;
        randomize_chunk(chunk_address(3, 2), &mut b);
        assert_ne!(a, b, "each chunk has its own keystream");
        randomize_chunk(chunk_address(3, 1), &mut a);
        assert_eq!(a, original);
    }
}
