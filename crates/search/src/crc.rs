//! The two CRCs of the integrity layer: CRC-64/XZ for the 8-byte verification-header checksum,
//! CRC-16/CCITT-FALSE inside the chunk ECC. Bitwise (no tables): the inputs are tens of bytes.

/// CRC-64/XZ (reflected ECMA-182 polynomial, init and xorout all ones).
pub fn crc64(parts: &[&[u8]]) -> u64 {
    const POLY: u64 = 0xC96C_5795_D787_0F42;
    let mut crc = !0u64;
    for part in parts {
        for byte in *part {
            crc ^= u64::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ POLY
                } else {
                    crc >> 1
                };
            }
        }
    }
    !crc
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, init 0xFFFF, not reflected).
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0xFFFFu16;
    for byte in bytes {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
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
}
