//! The two CRCs of the integrity layer: CRC-64/XZ for the 8-byte verification-header checksum,
//! CRC-16/CCITT-FALSE inside the chunk ECC. Slice-by-8 (eight bytes per step through eight
//! 256-entry tables computed at compile time; they run on every page-open and every gathered
//! chunk), the byte-wise table step for the tail.

const CRC64_POLY: u64 = 0xC96C_5795_D787_0F42;
const CRC16_POLY: u16 = 0x1021;

/// CRC-64/XZ's tables: `[0]` the reflected CRC of each byte value; `[k]` that of the byte
/// followed by `k` zero bytes.
const CRC64_TABLES: [[u64; 256]; 8] = {
    let mut tables = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ CRC64_POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = (prev >> 8) ^ tables[0][(prev & 0xFF) as usize];
            i += 1;
        }
        k += 1;
    }
    tables
};

/// CRC-16/CCITT-FALSE's tables: `[0]` the CRC of each byte value in the top byte; `[k]` that of
/// the byte followed by `k` zero bytes.
const CRC16_TABLES: [[u16; 256]; 8] = {
    let mut tables = [[0u16; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ CRC16_POLY
            } else {
                crc << 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = (prev << 8) ^ tables[0][(prev >> 8) as usize];
            i += 1;
        }
        k += 1;
    }
    tables
};

/// CRC-64/XZ (reflected ECMA-182 polynomial, init and xorout all ones).
pub fn crc64(parts: &[&[u8]]) -> u64 {
    let t = &CRC64_TABLES;
    let mut crc = !0u64;
    for part in parts {
        let mut words = part.chunks_exact(8);
        for word in &mut words {
            let x = crc ^ u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let b = x.to_le_bytes();
            crc = t[7][usize::from(b[0])]
                ^ t[6][usize::from(b[1])]
                ^ t[5][usize::from(b[2])]
                ^ t[4][usize::from(b[3])]
                ^ t[3][usize::from(b[4])]
                ^ t[2][usize::from(b[5])]
                ^ t[1][usize::from(b[6])]
                ^ t[0][usize::from(b[7])];
        }
        for byte in words.remainder() {
            crc = t[0][((crc ^ u64::from(*byte)) & 0xFF) as usize] ^ (crc >> 8);
        }
    }
    !crc
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, init 0xFFFF, not reflected).
pub fn crc16(bytes: &[u8]) -> u16 {
    let t = &CRC16_TABLES;
    let mut crc = 0xFFFFu16;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let [hi, lo] = crc.to_be_bytes();
        crc = t[7][usize::from(w[0] ^ hi)]
            ^ t[6][usize::from(w[1] ^ lo)]
            ^ t[5][usize::from(w[2])]
            ^ t[4][usize::from(w[3])]
            ^ t[3][usize::from(w[4])]
            ^ t[2][usize::from(w[5])]
            ^ t[1][usize::from(w[6])]
            ^ t[0][usize::from(w[7])];
    }
    for byte in words.remainder() {
        crc = t[0][usize::from((crc >> 8) as u8 ^ *byte)] ^ (crc << 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values_of_the_standard_catalogue() {
        // the "check" value of each CRC over "123456789"
        assert_eq!(crc64(&[b"123456789"]), 0x995D_C9BB_DF19_39FA);
        assert_eq!(crc64(&[b"1234", b"56789"]), 0x995D_C9BB_DF19_39FA);
        assert_eq!(crc64(&[b"12345678", b"9"]), 0x995D_C9BB_DF19_39FA);
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    /// The bitwise definitions, for comparison with the sliced table-driven ones.
    fn crc64_bitwise(bytes: &[u8]) -> u64 {
        let mut crc = !0u64;
        for byte in bytes {
            crc ^= u64::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ CRC64_POLY
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    fn crc16_bitwise(bytes: &[u8]) -> u16 {
        let mut crc = 0xFFFFu16;
        for byte in bytes {
            crc ^= u16::from(*byte) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ CRC16_POLY
                } else {
                    crc << 1
                };
            }
        }
        crc
    }

    #[test]
    fn tables_equal_the_bitwise_definitions() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 97 + 13) as u8).collect();
        for n in [0, 1, 7, 8, 9, 15, 16, 63, 64, 120, 128, 299, 300] {
            assert_eq!(crc64(&[&bytes[..n]]), crc64_bitwise(&bytes[..n]), "{n}");
            assert_eq!(crc16(&bytes[..n]), crc16_bitwise(&bytes[..n]), "{n}");
            let cut = n.min(5);
            assert_eq!(
                crc64(&[&bytes[..cut], &bytes[cut..n]]),
                crc64_bitwise(&bytes[..n]),
                "{n} in two parts"
            );
        }
    }
}
