//! The two CRCs of the integrity layer: CRC-64/XZ for the 8-byte verification-header checksum,
//! CRC-16/CCITT-FALSE inside the chunk ECC. Byte-wise with 256-entry tables computed at compile
//! time (they run on every page-open and every gathered chunk).

const CRC64_POLY: u64 = 0xC96C_5795_D787_0F42;
const CRC16_POLY: u16 = 0x1021;

/// CRC-64/XZ's table: the reflected CRC of each byte value.
const CRC64_TABLE: [u64; 256] = {
    let mut table = [0u64; 256];
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
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC-16/CCITT-FALSE's table: the CRC of each byte value in the top byte.
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
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
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC-64/XZ (reflected ECMA-182 polynomial, init and xorout all ones).
pub fn crc64(parts: &[&[u8]]) -> u64 {
    let mut crc = !0u64;
    for part in parts {
        for byte in *part {
            crc = CRC64_TABLE[((crc ^ u64::from(*byte)) & 0xFF) as usize] ^ (crc >> 8);
        }
    }
    !crc
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, init 0xFFFF, not reflected).
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0xFFFFu16;
    for byte in bytes {
        crc = CRC16_TABLE[usize::from((crc >> 8) as u8 ^ *byte)] ^ (crc << 8);
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
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    /// The bitwise definitions, for comparison with the table-driven ones.
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
        for n in [0, 1, 7, 64, 128, 300] {
            assert_eq!(crc64(&[&bytes[..n]]), crc64_bitwise(&bytes[..n]), "{n}");
            assert_eq!(crc16(&bytes[..n]), crc16_bitwise(&bytes[..n]), "{n}");
        }
    }
}
