//! The verification header (paper 004 §IV-C2) in chunk 0 of every SiM page the store writes:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | CRC-64 over bytes 8..64 of chunk 0 and all of chunk 1 (the first data chunk) |
//! | 8..16 | write timestamp, picoseconds of simulated time |
//! | 16..24 | magic number |
//! | 24..28 | logical page number |
//! | 28..64 | zero |
//!
//! Chunks 1..64 hold the user's data (63 chunks, 504 slots). The header chunk is never a search
//! result: the store clears its bits in every bitmap.

use super::chunk_ecc::{self, CHUNK_ECC_BYTES};
use super::crc::crc64;
use super::format::{self, CHUNK_BYTES, CHUNKS_PER_PAGE, SIM_PAGE_BYTES};
use super::randomize;
use nandlab_core::SimTime;

/// Data chunks of a page (chunk 0 is the header).
pub const DATA_CHUNKS: u32 = CHUNKS_PER_PAGE - 1;
/// Bytes of user data per page.
pub const DATA_BYTES: usize = (DATA_CHUNKS * CHUNK_BYTES) as usize;
/// Bytes the CRC covers plus chunk 0's CRC field: the header and first data chunk.
pub const VERIFIED_BYTES: usize = 2 * CHUNK_BYTES as usize;

/// The decoded header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub written_at: SimTime,
    pub magic: u64,
    pub page: u32,
}

impl Header {
    /// Writes the header with its CRC into `page[..64]`; `page[64..128]` must already hold the
    /// first data chunk.
    pub fn write(&self, page: &mut [u8]) {
        page[..CHUNK_BYTES as usize].fill(0);
        page[8..16].copy_from_slice(&self.written_at.as_ps().to_le_bytes());
        page[16..24].copy_from_slice(&self.magic.to_le_bytes());
        page[24..28].copy_from_slice(&self.page.to_le_bytes());
        let crc = crc64(&[&page[8..VERIFIED_BYTES]]);
        page[..8].copy_from_slice(&crc.to_le_bytes());
    }

    /// Reads and checks the header from the first 128 de-randomized bytes of a page: `None` when
    /// the CRC or the magic number does not match.
    pub fn verify(bytes: &[u8], magic: u64) -> Option<Header> {
        if bytes.len() < VERIFIED_BYTES {
            return None;
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(w)
        };
        if word(0) != crc64(&[&bytes[8..VERIFIED_BYTES]]) || word(16) != magic {
            return None;
        }
        let mut page = [0u8; 4];
        page.copy_from_slice(&bytes[24..28]);
        Some(Header {
            written_at: SimTime::from_ps(word(8)),
            magic,
            page: u32::from_le_bytes(page),
        })
    }
}

/// Lays a SiM page out for programming (paper 004 §IV-C): `page` holds the page's 4,096 bytes
/// (chunks 1..64 the data; chunk 0 is overwritten with `header` and its CRC); every chunk is
/// randomized with its chunk address at chip page `ppa` when `randomized`, and the 4-byte ECC of
/// each stored chunk is appended (the spare area the chip sends with a gathered chunk).
pub fn seal_page(page: &mut Vec<u8>, header: &Header, ppa: u64, randomized: bool) {
    let page_bytes = SIM_PAGE_BYTES as usize;
    assert_eq!(page.len(), page_bytes, "a SiM page is {page_bytes} bytes");
    header.write(page);
    if randomized {
        randomize::randomize_page(ppa, page);
    }
    page.resize(page_bytes + CHUNKS_PER_PAGE as usize * CHUNK_ECC_BYTES, 0);
    for chunk in 0..CHUNKS_PER_PAGE as usize {
        let ecc = chunk_ecc::encode(format::chunk_bytes(page, chunk as u32));
        let at = page_bytes + chunk * CHUNK_ECC_BYTES;
        page[at..at + CHUNK_ECC_BYTES].copy_from_slice(&ecc);
    }
}

/// The header of the verification window a page-open of chip page `ppa` sent (at least its
/// first 128 bytes, as stored: randomized when `randomized`); `None` when the CRC or the magic
/// number does not match.
pub fn verify_window(window: &[u8], ppa: u64, randomized: bool, magic: u64) -> Option<Header> {
    if window.len() < VERIFIED_BYTES {
        return None;
    }
    let mut head = [0u8; VERIFIED_BYTES];
    head.copy_from_slice(&window[..VERIFIED_BYTES]);
    if randomized {
        for (i, chunk) in head.chunks_exact_mut(CHUNK_BYTES as usize).enumerate() {
            randomize::randomize_chunk(randomize::chunk_address(ppa, i as u32), chunk);
        }
    }
    Header::verify(&head, magic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_any_flip_fails() {
        let mut page = vec![0u8; 4096];
        for (i, b) in page[64..128].iter_mut().enumerate() {
            *b = i as u8;
        }
        let header = Header {
            written_at: SimTime::from_us(5),
            magic: 0xABCD,
            page: 17,
        };
        header.write(&mut page);
        assert_eq!(Header::verify(&page, 0xABCD), Some(header));
        assert_eq!(Header::verify(&page, 0xABCE), None);
        for bit in 0..VERIFIED_BYTES * 8 {
            let mut p = page.clone();
            p[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(Header::verify(&p, 0xABCD), None, "bit {bit}");
        }
    }

    #[test]
    fn a_sealed_page_verifies_from_its_window_at_its_own_address_only() {
        let mut page: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        let header = Header {
            written_at: SimTime::from_us(9),
            magic: 0x51,
            page: 3,
        };
        seal_page(&mut page, &header, 77, true);
        assert_eq!(page.len(), 4096 + 64 * CHUNK_ECC_BYTES);
        assert_eq!(verify_window(&page[..256], 77, true, 0x51), Some(header));
        assert_eq!(verify_window(&page[..256], 78, true, 0x51), None);
        assert_eq!(verify_window(&page[..100], 77, true, 0x51), None);
        // each chunk's ECC is over its stored (randomized) bytes
        let mut chunk = page[64 * 5..64 * 6].to_vec();
        chunk[3] ^= 0x10;
        let at = 4096 + 5 * CHUNK_ECC_BYTES;
        let ecc = page[at..at + CHUNK_ECC_BYTES].to_vec();
        assert!(matches!(
            chunk_ecc::decode(&mut chunk, &ecc),
            chunk_ecc::Decoded::Corrected { .. }
        ));
        assert_eq!(chunk, &page[64 * 5..64 * 6]);
    }
}
