//! The 4-byte ECC of a 64-byte chunk (paper 004 §IV-C3), stored in the spare area and sent with
//! every gathered chunk. Layout (little-endian `u32`): bits 0–9 the Hamming syndrome (XOR of
//! `i + 1` over the set bits `i` of the 512 data bits), bit 10 the overall parity, bits 16–31 a
//! CRC-16 of the data. Decoding corrects one flipped data bit (SEC-DED: two flips are detected);
//! the CRC-16 catches a wrong correction when three or more bits flipped. A flip inside the ECC
//! bytes themselves is detected (never miscorrects the data).

use crate::crc::crc16;

pub const CHUNK_ECC_BYTES: usize = 4;
const DATA_BITS: u32 = 512;

/// What decoding found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    Clean,
    /// One data bit was flipped and is corrected.
    Corrected {
        bit: u32,
    },
    /// More errors than the code corrects (or a damaged ECC field).
    Uncorrectable,
}

fn syndrome_and_parity(chunk: &[u8]) -> (u32, u32) {
    let mut syndrome = 0u32;
    let mut ones = 0u32;
    for (byte_index, byte) in chunk.iter().enumerate() {
        let mut b = *byte;
        while b != 0 {
            let bit = b.trailing_zeros();
            syndrome ^= byte_index as u32 * 8 + bit + 1;
            ones += 1;
            b &= b - 1;
        }
    }
    (syndrome, ones & 1)
}

/// The ECC bytes of a 64-byte chunk.
pub fn encode(chunk: &[u8]) -> [u8; CHUNK_ECC_BYTES] {
    debug_assert_eq!(chunk.len() * 8, DATA_BITS as usize);
    let (syndrome, parity) = syndrome_and_parity(chunk);
    let word = syndrome | parity << 10 | u32::from(crc16(chunk)) << 16;
    word.to_le_bytes()
}

/// Checks (and corrects in place) a chunk read back with its ECC bytes.
pub fn decode(chunk: &mut [u8], ecc: &[u8]) -> Decoded {
    debug_assert_eq!(chunk.len() * 8, DATA_BITS as usize);
    let mut word = [0u8; CHUNK_ECC_BYTES];
    word.copy_from_slice(&ecc[..CHUNK_ECC_BYTES]);
    let stored = u32::from_le_bytes(word);
    let (syndrome, parity) = syndrome_and_parity(chunk);
    let s = syndrome ^ (stored & 0x3FF);
    let p = parity ^ (stored >> 10 & 1);
    let crc = (stored >> 16) as u16;
    let outcome = match (s, p) {
        (0, 0) => Decoded::Clean,
        (s, 1) if (1..=DATA_BITS).contains(&s) => {
            let bit = s - 1;
            chunk[(bit / 8) as usize] ^= 1 << (bit % 8);
            Decoded::Corrected { bit }
        }
        _ => return Decoded::Uncorrectable,
    };
    if crc16(chunk) == crc {
        outcome
    } else {
        Decoded::Uncorrectable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(seed: u8) -> Vec<u8> {
        (0..64u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn every_single_bit_flip_is_corrected() {
        let original = chunk(3);
        let ecc = encode(&original);
        for bit in 0..512 {
            let mut c = original.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(decode(&mut c, &ecc), Decoded::Corrected { bit: bit as u32 });
            assert_eq!(c, original);
        }
        let mut c = original.clone();
        assert_eq!(decode(&mut c, &ecc), Decoded::Clean);
    }

    #[test]
    fn double_flips_and_damaged_ecc_are_detected() {
        let original = chunk(9);
        let ecc = encode(&original);
        for (a, b) in [(0, 1), (5, 400), (63, 511), (100, 101)] {
            let mut c = original.clone();
            c[a / 8] ^= 1 << (a % 8);
            c[b / 8] ^= 1 << (b % 8);
            assert_eq!(decode(&mut c, &ecc), Decoded::Uncorrectable, "{a} {b}");
        }
        for bit in 0..32 {
            let mut bad = ecc;
            bad[bit / 8] ^= 1 << (bit % 8);
            let mut c = original.clone();
            let d = decode(&mut c, &bad);
            assert!(
                d != Decoded::Clean || (11..16).contains(&bit),
                "bit {bit}: {d:?}"
            );
            assert!(
                matches!(d, Decoded::Uncorrectable | Decoded::Clean),
                "bit {bit}: {d:?}"
            );
            assert_eq!(c, original, "a damaged ECC field never changes the data");
        }
    }
}
