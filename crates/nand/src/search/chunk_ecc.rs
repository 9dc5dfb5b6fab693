//! The 4-byte ECC of a 64-byte chunk (paper 004 §IV-C3), stored in the spare area and sent with
//! every gathered chunk. Layout (little-endian `u32`): bits 0–9 the Hamming syndrome (XOR of
//! `i + 1` over the set bits `i` of the 512 data bits), bit 10 the overall parity, bits 16–31 a
//! CRC-16 of the data. Decoding corrects one flipped data bit (SEC-DED: two flips are detected);
//! the CRC-16 catches a wrong correction when three or more bits flipped. A flip inside the ECC
//! bytes themselves is detected (never miscorrects the data).

use super::crc::crc16;

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

/// `SYNDROME_MASKS[t][w]`: the data bits `i` of word `w` (bit `i % 64` of little-endian word
/// `i / 64`) whose `i + 1` has bit `t` set. Syndrome bit `t` is the parity of the set data bits
/// under mask `t`.
const SYNDROME_MASKS: [[u64; 8]; 10] = {
    let mut masks = [[0u64; 8]; 10];
    let mut i = 0;
    while i < DATA_BITS as usize {
        let mut t = 0;
        while t < 10 {
            if (i + 1) >> t & 1 == 1 {
                masks[t][i / 64] |= 1 << (i % 64);
            }
            t += 1;
        }
        i += 1;
    }
    masks
};

/// The Hamming syndrome (XOR of `i + 1` over the set bits `i`) and the overall parity of a
/// 64-byte chunk, a word at a time.
fn syndrome_and_parity(chunk: &[u8]) -> (u32, u32) {
    let mut words = [0u64; 8];
    for (w, bytes) in words.iter_mut().zip(chunk.chunks_exact(8)) {
        *w = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    }
    let mut syndrome = 0u32;
    for (t, mask) in SYNDROME_MASKS.iter().enumerate() {
        let mut acc = 0u64;
        for (w, m) in words.iter().zip(mask) {
            acc ^= w & m;
        }
        syndrome |= (acc.count_ones() & 1) << t;
    }
    let all = words.iter().fold(0u64, |acc, w| acc ^ w);
    (syndrome, all.count_ones() & 1)
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

    /// The bit-by-bit definition of the syndrome and parity.
    fn syndrome_bitwise(chunk: &[u8]) -> (u32, u32) {
        let mut syndrome = 0u32;
        let mut ones = 0u32;
        for i in 0..DATA_BITS {
            if chunk[(i / 8) as usize] >> (i % 8) & 1 == 1 {
                syndrome ^= i + 1;
                ones += 1;
            }
        }
        (syndrome, ones & 1)
    }

    #[test]
    fn word_syndrome_equals_the_bitwise_definition() {
        for seed in 0..50u8 {
            let mut c = chunk(seed);
            c[usize::from(seed) % 64] ^= seed;
            assert_eq!(syndrome_and_parity(&c), syndrome_bitwise(&c), "{seed}");
        }
        assert_eq!(
            syndrome_and_parity(&[0xFF; 64]),
            syndrome_bitwise(&[0xFF; 64])
        );
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
