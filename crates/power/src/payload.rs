//! Self-identifying page payloads: every page a crash run writes names its LPA and version and
//! carries a checksum, so a page read back after recovery says what it is — the right write,
//! an older one, another LPA's (a misdirected write), or garbage (torn, corrupted).

use nandlab_core::Lpa;

const MAGIC: [u8; 4] = *b"NLPW";
/// Header bytes: magic, LPA (4), version (8), CRC-32 of the rest of the page (4).
pub const HEADER_BYTES: usize = 20;

/// What a page read back holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// All zeros: nothing written (or unmapped).
    Zeros,
    /// An intact payload of `lpa`, `version`.
    Written {
        /// The LPA the page was written to.
        lpa: Lpa,
        /// The write's version (its index in the crash run's write order, from 1).
        version: u64,
    },
    /// Neither: torn, damaged or foreign bytes.
    Garbage,
}

/// The page for version `version` of `lpa` (`page_size_bytes >= HEADER_BYTES`).
pub fn encode(lpa: Lpa, version: u64, page_size_bytes: usize) -> Vec<u8> {
    let mut page = vec![0u8; page_size_bytes.max(HEADER_BYTES)];
    page[0..4].copy_from_slice(&MAGIC);
    page[4..8].copy_from_slice(&lpa.0.to_le_bytes());
    page[8..16].copy_from_slice(&version.to_le_bytes());
    // body: a xorshift stream of (lpa, version), different for every write
    let mut x = (u64::from(lpa.0) << 32) ^ version ^ 0x9E37_79B9_7F4A_7C15;
    for byte in &mut page[HEADER_BYTES..] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *byte = x as u8;
    }
    let crc = crc(&page);
    page[16..20].copy_from_slice(&crc.to_le_bytes());
    page
}

fn crc(page: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&page[0..16]);
    h.update(&page[HEADER_BYTES..]);
    h.finalize()
}

/// Reads a page back.
pub fn decode(page: Option<&[u8]>) -> Decoded {
    let Some(page) = page else {
        return Decoded::Zeros;
    };
    if page.iter().all(|b| *b == 0) {
        return Decoded::Zeros;
    }
    if page.len() < HEADER_BYTES || page[0..4] != MAGIC {
        return Decoded::Garbage;
    }
    let stored = u32::from_le_bytes(page[16..20].try_into().expect("4 bytes"));
    if stored != crc(page) {
        return Decoded::Garbage;
    }
    Decoded::Written {
        lpa: Lpa(u32::from_le_bytes(page[4..8].try_into().expect("4 bytes"))),
        version: u64::from_le_bytes(page[8..16].try_into().expect("8 bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_name_themselves_and_damage_shows() {
        let mut page = encode(Lpa(7), 42, 512);
        assert_eq!(
            decode(Some(&page)),
            Decoded::Written {
                lpa: Lpa(7),
                version: 42
            }
        );
        assert_ne!(encode(Lpa(7), 43, 512), page);
        page[300] ^= 4;
        assert_eq!(decode(Some(&page)), Decoded::Garbage);
        assert_eq!(decode(Some(&[0u8; 512])), Decoded::Zeros);
        assert_eq!(decode(None), Decoded::Zeros);
        assert_eq!(decode(Some(&[1u8; 3])), Decoded::Garbage);
    }
}
