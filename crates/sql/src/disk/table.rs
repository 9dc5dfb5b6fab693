//! The on-device file table: names, sizes and extents of the files, so that a disk can be
//! mounted again after a power cut (`SimDisk::mount`).
//!
//! Two slots at the start of the logical space, each [`TABLE_SLOT_BYTES`] (rounded up to
//! whole SSD pages): a table is written to the slot after the one holding the previous
//! generation, so a torn table write leaves the previous one readable. Format (little-endian):
//! magic `NLFTBL01` (8 bytes), body length (u32, from the magic to the CRC), generation (u64),
//! file count (u32), then per file: name length (u16), name (UTF-8), size in bytes (u64),
//! extent count (u32), extents (start page u64, pages u64); then a CRC-32 of everything before
//! it. The mount takes the valid slot with the highest generation.

use crate::error::{SqlError, SqlResult};
use crate::extent::Extent;

/// Bytes of one table slot (only the pages a table uses are written).
pub const TABLE_SLOT_BYTES: u64 = 64 * 1024;
/// Magic at the start of a table.
pub const TABLE_MAGIC: &[u8; 8] = b"NLFTBL01";

/// One file of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableFile {
    pub name: String,
    pub size_bytes: u64,
    pub extents: Vec<Extent>,
}

/// A table generation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileTable {
    pub generation: u64,
    pub files: Vec<TableFile>,
}

impl FileTable {
    /// The encoded table (at most `slot_bytes`).
    pub fn encode(&self, slot_bytes: u64) -> SqlResult<Vec<u8>> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(TABLE_MAGIC);
        out.extend_from_slice(&[0; 4]); // body length, filled below
        out.extend_from_slice(&self.generation.to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        for f in &self.files {
            let name = f.name.as_bytes();
            let len = u16::try_from(name.len())
                .map_err(|_| SqlError::Usage(format!("file name `{}`: too long", f.name)))?;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(&f.size_bytes.to_le_bytes());
            out.extend_from_slice(&(f.extents.len() as u32).to_le_bytes());
            for e in &f.extents {
                out.extend_from_slice(&e.start_page.to_le_bytes());
                out.extend_from_slice(&e.pages.to_le_bytes());
            }
        }
        let body = out.len() as u32;
        out[8..12].copy_from_slice(&body.to_le_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        if out.len() as u64 > slot_bytes {
            return Err(SqlError::Usage(format!(
                "file table: {} bytes ({} files) do not fit its {slot_bytes}-byte slot",
                out.len(),
                self.files.len()
            )));
        }
        Ok(out)
    }

    /// The table in `bytes`, or `None` when they hold no intact table.
    pub fn decode(bytes: &[u8]) -> Option<FileTable> {
        if bytes.len() < 28 || &bytes[..8] != TABLE_MAGIC {
            return None;
        }
        let body = u32::from_le_bytes(bytes[8..12].try_into().ok()?) as usize;
        if body + 4 > bytes.len() || body < 24 {
            return None;
        }
        let crc = u32::from_le_bytes(bytes[body..body + 4].try_into().ok()?);
        if crc32fast::hash(&bytes[..body]) != crc {
            return None;
        }
        let mut r = Reader {
            bytes: &bytes[..body],
            at: 12,
        };
        let generation = r.u64()?;
        let count = r.u32()?;
        let mut files = Vec::new();
        for _ in 0..count {
            let len = r.u16()? as usize;
            let name = String::from_utf8(r.take(len)?.to_vec()).ok()?;
            let size_bytes = r.u64()?;
            let extents = (0..r.u32()?)
                .map(|_| {
                    Some(Extent {
                        start_page: r.u64()?,
                        pages: r.u64()?,
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            files.push(TableFile {
                name,
                size_bytes,
                extents,
            });
        }
        Some(FileTable { generation, files })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage_is_refused() {
        let t = FileTable {
            generation: 7,
            files: vec![TableFile {
                name: "main.db".into(),
                size_bytes: 12_345,
                extents: vec![Extent {
                    start_page: 4,
                    pages: 8,
                }],
            }],
        };
        let mut bytes = t.encode(TABLE_SLOT_BYTES).unwrap();
        assert_eq!(FileTable::decode(&bytes), Some(t.clone()));
        bytes.resize(8192, 0);
        assert_eq!(FileTable::decode(&bytes), Some(t));
        bytes[20] ^= 1;
        assert_eq!(FileTable::decode(&bytes), None);
        assert_eq!(FileTable::decode(&[0; 100]), None);
    }

    #[test]
    fn a_table_too_large_for_its_slot_is_an_error() {
        let t = FileTable {
            generation: 1,
            files: (0..100)
                .map(|i| TableFile {
                    name: format!("f{i}"),
                    size_bytes: 0,
                    extents: vec![],
                })
                .collect(),
        };
        let e = t.encode(256).unwrap_err().to_string();
        assert!(e.contains("file table"), "{e}");
    }
}
