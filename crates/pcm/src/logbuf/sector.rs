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

/// A set of byte positions in a page (the bytes a delta covers), one bit per byte.
#[derive(Clone, Debug)]
pub struct DirtyBytes {
    words: Vec<u64>,
    len: usize,
}

impl DirtyBytes {
    /// An empty set over `len` bytes.
    pub fn new(len: usize) -> Self {
        DirtyBytes {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// Adds byte `i`.
    #[inline]
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Adds bytes `start..end`.
    pub fn set_range(&mut self, start: usize, end: usize) {
        let mut i = start;
        while i < end {
            let bit = i % 64;
            let n = (64 - bit).min(end - i);
            let mask = if n == 64 {
                !0
            } else {
                ((1u64 << n) - 1) << bit
            };
            self.words[i / 64] |= mask;
            i += n;
        }
    }

    /// Adds byte `at + k` for each bit `k` of `mask`.
    #[inline]
    pub fn set_byte_mask(&mut self, at: usize, mask: u8) {
        let (w, bit) = (at / 64, at % 64);
        self.words[w] |= u64::from(mask) << bit;
        if bit > 56 {
            let spill = u64::from(mask) >> (64 - bit);
            if spill != 0 {
                self.words[w + 1] |= spill;
            }
        }
    }

    /// Whether byte `i` is in the set.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// The first member at or after `from`.
    fn next_set(&self, from: usize) -> Option<usize> {
        self.next(from, 0)
    }

    /// The first non-member at or after `from` (`len` if none).
    fn next_clear(&self, from: usize) -> usize {
        self.next(from, !0).unwrap_or(self.len)
    }

    fn next(&self, from: usize, invert: u64) -> Option<usize> {
        if from >= self.len {
            return None;
        }
        let mut w = from / 64;
        let mut bits = (self.words[w] ^ invert) & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                return (i < self.len).then_some(i);
            }
            w += 1;
            if w == self.words.len() {
                return None;
            }
            bits = self.words[w] ^ invert;
        }
    }
}

/// Copies `new` over `target` (which starts at byte `base` of its page) and marks the bytes
/// that changed in `dirty`; whether any did. Compares 8-byte words: an equal word is skipped,
/// a differing one is copied whole and its differing bytes marked at once.
pub fn overlay(target: &mut [u8], new: &[u8], base: usize, dirty: &mut DirtyBytes) -> bool {
    assert_eq!(target.len(), new.len(), "overlay of equal lengths");
    let mut changed = false;
    let mut words = target.chunks_exact_mut(8).zip(new.chunks_exact(8));
    let mut at = base;
    for (t, n) in &mut words {
        let x = word(t) ^ word(n);
        if x != 0 {
            t.copy_from_slice(n);
            dirty.set_byte_mask(at, differing_bytes(x));
            changed = true;
        }
        at += 8;
    }
    let tail = new.len() / 8 * 8;
    for (j, (t, &n)) in target[tail..].iter_mut().zip(&new[tail..]).enumerate() {
        if *t != n {
            *t = n;
            dirty.set(at + j);
            changed = true;
        }
    }
    changed
}

/// Whether `a` and `b` (equal lengths) differ in more than `limit` bytes (stops counting once
/// they do). A delta of more than `limit` changed bytes encodes to more than `limit` bytes.
pub fn differ_in_more_than(a: &[u8], b: &[u8], limit: usize) -> bool {
    assert_eq!(a.len(), b.len(), "compare of equal lengths");
    let mut count = 0usize;
    let mut words = a.chunks_exact(8).zip(b.chunks_exact(8));
    for (x, y) in &mut words {
        count += differing_bytes(word(x) ^ word(y)).count_ones() as usize;
        if count > limit {
            return true;
        }
    }
    let tail = a.len() / 8 * 8;
    count += a[tail..]
        .iter()
        .zip(&b[tail..])
        .filter(|(x, y)| x != y)
        .count();
    count > limit
}

/// The bytes of a word (little-endian: byte `k` is bits `8k..8k + 8`) that are not zero, as
/// bit `k` of the result.
#[inline]
fn differing_bytes(x: u64) -> u8 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // the high bit of each byte is set when the byte is non-zero
    let high = (((x & LOW7) + LOW7) | x) & !LOW7;
    // gather the eight high bits into the top byte
    ((high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    u64::from_le_bytes(w)
}

/// Marks the bytes a sector's delta covers.
pub fn mark(sector: &[u8], dirty: &mut DirtyBytes) {
    for (offset, bytes) in records(sector) {
        dirty.set_range(offset, offset + bytes.len());
    }
}

/// The runs of dirty bytes, runs closer than a record header joined.
fn runs(dirty: &DirtyBytes) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = dirty.next_set(at)?;
        let mut end = dirty.next_clear(start);
        // join the next run when the gap is shorter than a header
        while let Some(next) = dirty.next_set(end) {
            if next - end >= RECORD_HEADER_BYTES {
                break;
            }
            end = dirty.next_clear(next);
        }
        at = end;
        Some((start, end))
    })
}

/// Bytes the delta of `dirty` takes in a sector (0 when nothing is dirty).
pub fn encoded_size(dirty: &DirtyBytes) -> usize {
    let body: usize = runs(dirty).map(|(s, e)| RECORD_HEADER_BYTES + e - s).sum();
    if body == 0 {
        0
    } else {
        SECTOR_HEADER_BYTES + body
    }
}

/// Encodes the dirty bytes of `content` into `out` (cleared first).
pub fn encode(content: &[u8], dirty: &DirtyBytes, out: &mut Vec<u8>) {
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
        let mut dirty = DirtyBytes::new(32);
        for i in [2, 3, 6, 20] {
            dirty.set(i);
        }
        // [2..7) joined (gap of 2 < 4), [20..21) alone
        assert_eq!(runs(&dirty).collect::<Vec<_>>(), vec![(2, 7), (20, 21)]);
        assert_eq!(encoded_size(&dirty), 2 + (4 + 5) + (4 + 1));
        assert_eq!(encoded_size(&DirtyBytes::new(8)), 0);
    }

    /// The byte-by-byte overlay the word-wise one must equal.
    fn overlay_bytewise(
        target: &mut [u8],
        new: &[u8],
        base: usize,
        dirty: &mut DirtyBytes,
    ) -> bool {
        let mut changed = false;
        for j in 0..new.len() {
            if target[j] != new[j] {
                target[j] = new[j];
                dirty.set(base + j);
                changed = true;
            }
        }
        changed
    }

    proptest! {
        #[test]
        fn word_overlay_equals_the_bytewise_overlay(
            old in proptest::collection::vec(0u8..3, 0..300),
            new in proptest::collection::vec(0u8..3, 300),
            base in 0usize..200,
            marks in proptest::collection::vec(0usize..500, 0..8),
        ) {
            let new = &new[..old.len()];
            let len = base + old.len() + 7;
            let (mut a, mut b) = (old.clone(), old.clone());
            let (mut da, mut db) = (DirtyBytes::new(len), DirtyBytes::new(len));
            for &m in &marks {
                da.set(m % len);
                db.set(m % len);
            }
            let ca = overlay(&mut a, new, base, &mut da);
            let cb = overlay_bytewise(&mut b, new, base, &mut db);
            prop_assert_eq!(ca, cb);
            prop_assert_eq!(&a, &b);
            prop_assert_eq!(&da.words, &db.words);
            // the count of changed bytes, and the bound on the delta's size it gives
            let differing = old.iter().zip(new).filter(|(x, y)| x != y).count();
            for limit in [0, differing.saturating_sub(1), differing, differing + 1] {
                prop_assert_eq!(differ_in_more_than(&old, new, limit), differing > limit);
            }
            let mut fresh = DirtyBytes::new(len);
            overlay(&mut old.clone(), new, base, &mut fresh);
            if differ_in_more_than(&old, new, 100) {
                prop_assert!(encoded_size(&fresh) > 100);
            }
        }

        #[test]
        fn encode_then_apply_restores_the_dirty_bytes(
            content in proptest::collection::vec(any::<u8>(), 1..200),
            marks in proptest::collection::vec(any::<bool>(), 200),
        ) {
            let mut dirty = DirtyBytes::new(content.len());
            for (i, m) in marks[..content.len()].iter().enumerate() {
                if *m { dirty.set(i); }
            }
            let mut sector = Vec::new();
            encode(&content, &dirty, &mut sector);
            prop_assert_eq!(sector.len().max(2), encoded_size(&dirty).max(2));
            let mut page = vec![0u8; content.len()];
            apply(&sector, &mut page);
            let mut covered = DirtyBytes::new(content.len());
            mark(&sector, &mut covered);
            for i in 0..content.len() {
                if dirty.get(i) { prop_assert!(covered.get(i)); }
                if covered.get(i) { prop_assert_eq!(page[i], content[i]); } else { prop_assert_eq!(page[i], 0); }
            }
        }
    }
}
