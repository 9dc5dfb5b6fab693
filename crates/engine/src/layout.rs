//! Row layout over logical pages and the deterministic row payload.
//!
//! A table is an array of fixed-size row slots laid over LPAs `0..page_count`. Rows never
//! straddle a page boundary: a page holds `floor(page_size / row_size)` slots and the tail of
//! the page (`page_size mod row_size` bytes) is unused. The logical address of slot `i` of page
//! `p` is `p * page_size + i * row_size`, so "LPA = logical address / page size" (paper 000
//! Fig. 4) holds for every byte of the row, and writing a row touches exactly one logical page
//! (what Insert Address Assist relies on to invalidate exactly one page of the victim block).
//!
//! Row contents are derived from (row id, version): an 8-byte row id, a 4-byte version, a
//! 4-byte check word and filler from a splitmix64 stream, so a verifier only keeps a version
//! counter per row.

use crate::device::Lpa;
use crate::error::EngineError;
use crate::table::RowId;

/// Bytes of the row header (row id, version, check word); the smallest allowed row.
pub const ROW_HEADER_BYTES: usize = 16;

/// Row slots within the logical pages of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLayout {
    row_size_bytes: usize,
    page_size_bytes: usize,
    rows_per_page: u32,
    page_count: u64,
}

impl RowLayout {
    /// Lays rows of `row_size_bytes` over `page_count` pages of `page_size_bytes`.
    pub fn new(
        row_size_bytes: usize,
        page_size_bytes: usize,
        page_count: u64,
    ) -> Result<Self, EngineError> {
        if row_size_bytes < ROW_HEADER_BYTES {
            return Err(EngineError::config(
                "row_size_bytes",
                row_size_bytes,
                format!("must be at least {ROW_HEADER_BYTES} (row header)"),
            ));
        }
        if row_size_bytes > page_size_bytes {
            return Err(EngineError::config(
                "row_size_bytes",
                row_size_bytes,
                format!(
                    "rows do not straddle pages: must be at most the page size {page_size_bytes}"
                ),
            ));
        }
        if page_count == 0 {
            return Err(EngineError::config(
                "table_page_count",
                0,
                "must be positive",
            ));
        }
        let rows_per_page = u32::try_from(page_size_bytes / row_size_bytes)
            .map_err(|_| EngineError::config("row_size_bytes", row_size_bytes, "too small"))?;
        let layout = RowLayout {
            row_size_bytes,
            page_size_bytes,
            rows_per_page,
            page_count,
        };
        // Slots are indexed by u32 inside the table; u32::MAX is reserved as "none".
        if layout.slot_count() >= u64::from(u32::MAX) {
            return Err(EngineError::config(
                "table_page_count",
                page_count,
                format!(
                    "{} row slots exceed the bound of 2^32 - 1",
                    layout.slot_count()
                ),
            ));
        }
        Ok(layout)
    }

    /// Size of one row.
    pub fn row_size_bytes(&self) -> usize {
        self.row_size_bytes
    }
    /// Size of one logical page.
    pub fn page_size_bytes(&self) -> usize {
        self.page_size_bytes
    }
    /// Row slots per page.
    pub fn rows_per_page(&self) -> u32 {
        self.rows_per_page
    }
    /// Logical pages covered by the table.
    pub fn page_count(&self) -> u64 {
        self.page_count
    }
    /// Row slots in the table.
    pub fn slot_count(&self) -> u64 {
        self.page_count * u64::from(self.rows_per_page)
    }
    /// The logical page holding `slot`.
    pub fn lpa_of_slot(&self, slot: u32) -> Lpa {
        Lpa(slot / self.rows_per_page)
    }
    /// Index of `slot` within its page.
    pub fn slot_in_page(&self, slot: u32) -> u32 {
        slot % self.rows_per_page
    }
    /// First slot of page `lpa`.
    pub fn first_slot_of(&self, lpa: Lpa) -> u32 {
        lpa.0 * self.rows_per_page
    }
    /// Byte range of `slot` within its page.
    pub fn byte_range_in_page(&self, slot: u32) -> std::ops::Range<usize> {
        let start = self.slot_in_page(slot) as usize * self.row_size_bytes;
        start..start + self.row_size_bytes
    }
    /// Logical byte address of `slot` (paper 000 Fig. 4 "logical address").
    pub fn logical_address_bytes(&self, slot: u32) -> u64 {
        self.lpa_of_slot(slot)
            .offset_bytes(self.page_size_bytes as u64)
            + self.byte_range_in_page(slot).start as u64
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn stream_seed(row: RowId, version: u32) -> u64 {
    let mut state = row.0 ^ (u64::from(version) << 40) ^ 0x5851_f42d_4c95_7f2d;
    splitmix64(&mut state)
}

/// Writes the contents of `row` at `version` into `out` (one row long, at least the header).
pub fn write_row_payload(row: RowId, version: u32, out: &mut [u8]) {
    debug_assert!(out.len() >= ROW_HEADER_BYTES);
    let mut state = stream_seed(row, version);
    out[..8].copy_from_slice(&row.0.to_le_bytes());
    out[8..12].copy_from_slice(&version.to_le_bytes());
    out[12..16].copy_from_slice(&(state as u32).to_le_bytes());
    for chunk in out[ROW_HEADER_BYTES..].chunks_mut(8) {
        let word = splitmix64(&mut state).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// Whether `bytes` are exactly the contents of `row` at `version`.
pub fn row_payload_matches(row: RowId, version: u32, bytes: &[u8]) -> bool {
    let mut state = stream_seed(row, version);
    if bytes.len() < ROW_HEADER_BYTES {
        return false;
    }
    // fixed-size integer compares (slice equality would call memcmp for 4 and 8 bytes)
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let header_ok =
        word(0) == row.0 && word(8) == u64::from(version) | (u64::from(state as u32) << 32);
    if !header_ok {
        return false;
    }
    // compare word by word against the generator, in place (no expected-bytes buffer)
    let mut words = bytes[ROW_HEADER_BYTES..].chunks_exact(8);
    for word in words.by_ref() {
        let stored = u64::from_le_bytes(word.try_into().expect("8-byte chunk"));
        if stored != splitmix64(&mut state) {
            return false;
        }
    }
    let tail = words.remainder();
    tail.is_empty() || tail == &splitmix64(&mut state).to_le_bytes()[..tail.len()]
}

/// The row id and version a row's header claims (not checked).
pub fn read_row_header(bytes: &[u8]) -> (RowId, u32) {
    let mut id = [0u8; 8];
    id.copy_from_slice(&bytes[..8]);
    let mut version = [0u8; 4];
    version.copy_from_slice(&bytes[8..12]);
    (RowId(u64::from_le_bytes(id)), u32::from_le_bytes(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_do_not_straddle_pages() {
        let layout = RowLayout::new(119, 16 * 1024, 4).unwrap();
        assert_eq!(layout.rows_per_page(), 137);
        let last = layout.rows_per_page() - 1;
        assert_eq!(layout.byte_range_in_page(last).end, 137 * 119);
        assert_eq!(layout.lpa_of_slot(137), Lpa(1));
        assert_eq!(layout.logical_address_bytes(138), 16 * 1024 + 119);
        assert_eq!(
            layout.logical_address_bytes(138) / layout.page_size_bytes() as u64,
            u64::from(layout.lpa_of_slot(138).0)
        );
    }

    #[test]
    fn payload_round_trips_and_detects_changes() {
        for size in [16usize, 17, 119, 500] {
            let mut bytes = vec![0u8; size];
            write_row_payload(RowId(42), 7, &mut bytes);
            assert!(row_payload_matches(RowId(42), 7, &bytes));
            assert!(!row_payload_matches(RowId(42), 8, &bytes));
            assert_eq!(read_row_header(&bytes), (RowId(42), 7));
            let last = size - 1;
            bytes[last] ^= 1;
            assert!(!row_payload_matches(RowId(42), 7, &bytes), "size {size}");
        }
    }

    #[test]
    fn bad_layouts_are_refused() {
        assert!(RowLayout::new(8, 4096, 1).is_err());
        assert!(RowLayout::new(5000, 4096, 1).is_err());
        assert!(RowLayout::new(119, 4096, 0).is_err());
    }
}
