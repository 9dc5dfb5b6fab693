//! A log sector's byte layout: the delta of one page against its flash copy, as byte ranges
//! at relative addresses (thesis §3.2.3, "Relative Address": `addr_rel = addr_update -
//! addr_page`).
//!
//! ```text
//! [used_bytes: u16 LE] then records [offset: u16 LE][len: u16 LE][len bytes]
//! ```
//! A sector with `used_bytes = 0` (or all zeros) holds no delta. Ranges are sorted and
//! disjoint; runs closer than a record header are joined (the gap costs less than a header).

/// Bytes of the sector header.
pub const SECTOR_HEADER_BYTES: usize = 2;
/// Bytes of a record header.
pub const RECORD_HEADER_BYTES: usize = 4;

/// The used length recorded in a sector.
pub fn used_bytes(sector: &[u8]) -> usize {
    usize::from(u16::from_le_bytes([sector[0], sector[1]]))
}

/// The records of a sector as `(offset, bytes)`.
pub fn records(sector: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let used = used_bytes(sector).min(sector.len());
    let mut at = if used == 0 { used } else { SECTOR_HEADER_BYTES };
    std::iter::from_fn(move || {
        if at + RECORD_HEADER_BYTES > used {
            return None;
        }
        let offset = usize::from(u16::from_le_bytes([sector[at], sector[at + 1]]));
        let len = usize::from(u16::from_le_bytes([sector[at + 2], sector[at + 3]]));
        let start = at + RECORD_HEADER_BYTES;
        at = start + len;
        Some((offset, &sector[start..start + len]))
    })
}

/// Overlays a sector's delta on `page`.
pub fn apply(sector: &[u8], page: &mut [u8]) {
    for (offset, bytes) in records(sector) {
        page[offset..offset + bytes.len()].copy_from_slice(bytes);
    }
}

/// Marks the bytes a sector's delta covers.
pub fn mark(sector: &[u8], dirty: &mut [bool]) {
    for (offset, bytes) in records(sector) {
        dirty[offset..offset + bytes.len()]
            .iter_mut()
            .for_each(|d| *d = true);
    }
}

/// The runs of dirty bytes, runs closer than a record header joined.
fn runs(dirty: &[bool]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + dirty[at..].iter().position(|d| *d)?;
        let mut end = start;
        loop {
            while end < dirty.len() && dirty[end] {
                end += 1;
            }
            // join the next run when the gap is shorter than a header
            match dirty[end..].iter().position(|d| *d) {
                Some(gap) if gap < RECORD_HEADER_BYTES => end += gap,
                _ => break,
            }
        }
        at = end;
        Some((start, end))
    })
}

/// Bytes the delta of `dirty` takes in a sector (0 when nothing is dirty).
pub fn encoded_size(dirty: &[bool]) -> usize {
    let body: usize = runs(dirty).map(|(s, e)| RECORD_HEADER_BYTES + e - s).sum();
    if body == 0 {
        0
    } else {
        SECTOR_HEADER_BYTES + body
    }
}

/// Encodes the dirty bytes of `content` into `out` (cleared first).
pub fn encode(content: &[u8], dirty: &[bool], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[0, 0]);
    for (s, e) in runs(dirty) {
        out.extend_from_slice(&(s as u16).to_le_bytes());
        out.extend_from_slice(&((e - s) as u16).to_le_bytes());
        out.extend_from_slice(&content[s..e]);
    }
    let used = if out.len() == SECTOR_HEADER_BYTES {
        0
    } else {
        out.len()
    };
    out[..2].copy_from_slice(&(used as u16).to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn near_runs_share_a_record() {
        let mut dirty = vec![false; 32];
        for i in [2, 3, 6, 20] {
            dirty[i] = true;
        }
        // [2..7) joined (gap of 2 < 4), [20..21) alone
        assert_eq!(runs(&dirty).collect::<Vec<_>>(), vec![(2, 7), (20, 21)]);
        assert_eq!(encoded_size(&dirty), 2 + (4 + 5) + (4 + 1));
        assert_eq!(encoded_size(&[false; 8]), 0);
    }

    proptest! {
        #[test]
        fn encode_then_apply_restores_the_dirty_bytes(
            content in proptest::collection::vec(any::<u8>(), 1..200),
            marks in proptest::collection::vec(any::<bool>(), 200),
        ) {
            let dirty: Vec<bool> = marks[..content.len()].to_vec();
            let mut sector = Vec::new();
            encode(&content, &dirty, &mut sector);
            prop_assert_eq!(sector.len().max(2), encoded_size(&dirty).max(2));
            let mut page = vec![0u8; content.len()];
            apply(&sector, &mut page);
            let mut covered = vec![false; content.len()];
            mark(&sector, &mut covered);
            for i in 0..content.len() {
                if dirty[i] { prop_assert!(covered[i]); }
                if covered[i] { prop_assert_eq!(page[i], content[i]); } else { prop_assert_eq!(page[i], 0); }
            }
        }
    }
}
