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

use crate::crc::crc64;
use nandlab_core::SimTime;
use nandlab_nand::search::format::{CHUNK_BYTES, CHUNKS_PER_PAGE};

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
}
