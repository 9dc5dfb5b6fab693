//! The SSB tables laid out in a PCM region, as a row store or a column store (thesis §4.1.3:
//! "all the columns of a relation are stored like a separate relation with two attributes,
//! tupleID and Value").
//!
//! - **Row store**: row `t` of a table with `C` columns is `C` little-endian `u32`s at
//!   `base + t · 4C` (LINEORDER: 68 B per row).
//! - **Column store**: column `c` is an array of 8 B entries `[tid u32][value u32]` at
//!   `base + c · 8K + t · 8` (`K` the table's capacity in rows: `N` rows plus the room kept for
//!   inserts); the stored tid is checked on every read.
//!
//! Loading writes each table page by page (4 KiB at a time) through the device, so the build
//! cost is measured like everything else.

use crate::access::{PAGE_BYTES, Reader};
use crate::error::{JoinResult, argument};
use nandlab_pcm::{PcmAddr, PcmDevice};
use nandlab_workload::ssb::{SsbData, Table};

/// How tables are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Layout {
    /// Whole rows, one after another.
    Row,
    /// One `(tid, value)` array per column.
    Column,
}

impl Layout {
    /// `row` or `column`.
    pub fn label(self) -> &'static str {
        match self {
            Layout::Row => "row",
            Layout::Column => "column",
        }
    }
}

/// Bytes of one column-store entry (tid + value).
pub const ENTRY_BYTES: u64 = 8;

/// One table in PCM.
#[derive(Clone, Copy, Debug)]
pub struct StoredTable {
    /// Which SSB table.
    pub table: Table,
    /// Rows (tuple ids are `0..rows`).
    pub rows: u32,
    /// Rows the region has room for (`>= rows`; inserts append up to it).
    pub capacity: u32,
    /// Columns.
    pub columns: usize,
    /// First byte.
    pub base: u64,
    /// Layout.
    pub layout: Layout,
}

impl StoredTable {
    /// Bytes of one row in the row store.
    pub fn row_bytes(&self) -> u64 {
        4 * self.columns as u64
    }

    /// Bytes the table's region occupies (its capacity).
    pub fn bytes(&self) -> u64 {
        match self.layout {
            Layout::Row => u64::from(self.capacity) * self.row_bytes(),
            Layout::Column => u64::from(self.capacity) * self.columns as u64 * ENTRY_BYTES,
        }
    }

    /// Address of row `tid` (row store).
    pub fn row_addr(&self, tid: u32) -> u64 {
        self.base + u64::from(tid) * self.row_bytes()
    }

    /// Address of the entry of `tid` in `column` (column store).
    pub fn entry_addr(&self, column: usize, tid: u32) -> u64 {
        self.base + (column as u64 * u64::from(self.capacity) + u64::from(tid)) * ENTRY_BYTES
    }

    fn check_tid(&self, tid: u32) -> JoinResult<()> {
        if tid >= self.rows {
            return Err(argument(
                "tid",
                format!("{tid} is beyond {} ({} rows)", self.table.name(), self.rows),
            ));
        }
        Ok(())
    }

    /// Reads the whole row `tid` (row store) into `out` (one value per column).
    pub fn read_row(
        &self,
        reader: &mut Reader,
        device: &mut PcmDevice,
        tid: u32,
        out: &mut [u32],
    ) -> JoinResult<()> {
        self.check_tid(tid)?;
        let bytes = reader.read(device, self.row_addr(tid), self.row_bytes())?;
        decode_u32s(bytes, out);
        Ok(())
    }

    /// Reads `column` of `tid` from the column store, checking the stored tuple id.
    pub fn read_entry(
        &self,
        reader: &mut Reader,
        device: &mut PcmDevice,
        column: usize,
        tid: u32,
    ) -> JoinResult<u32> {
        self.check_tid(tid)?;
        let b = reader.read(device, self.entry_addr(column, tid), ENTRY_BYTES)?;
        let stored = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        assert_eq!(stored, tid, "column store entry holds another tuple id");
        Ok(u32::from_le_bytes([b[4], b[5], b[6], b[7]]))
    }

    /// Reads one value of `tid` in the table's layout: the whole row (row store; the value is
    /// taken from it) or the column's entry (column store).
    pub fn read_value(
        &self,
        reader: &mut Reader,
        device: &mut PcmDevice,
        column: usize,
        tid: u32,
        row: &mut Vec<u32>,
    ) -> JoinResult<u32> {
        match self.layout {
            Layout::Row => {
                row.resize(self.columns, 0);
                self.read_row(reader, device, tid, row)?;
                Ok(row[column])
            }
            Layout::Column => self.read_entry(reader, device, column, tid),
        }
    }
}

/// A column-store entry `[tid][value]` (little-endian).
pub(crate) fn entry_bytes(tid: u32, value: u32) -> [u8; ENTRY_BYTES as usize] {
    let mut e = [0u8; ENTRY_BYTES as usize];
    e[..4].copy_from_slice(&tid.to_le_bytes());
    e[4..].copy_from_slice(&value.to_le_bytes());
    e
}

/// Little-endian `u32`s from `bytes` into `out`.
pub fn decode_u32s(bytes: &[u8], out: &mut [u32]) {
    for (v, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
}

/// Rows of each table (LINEORDER counted by generating it once).
pub fn row_counts(data: &SsbData) -> [u32; 5] {
    let c = data.cardinalities();
    [
        data.lineorder().count() as u32,
        c.customers,
        c.suppliers,
        c.parts,
        c.dates,
    ]
}

/// Bytes `table` takes in `layout` with `rows` rows.
pub fn table_bytes(table: Table, rows: u32, layout: Layout) -> u64 {
    let columns = table.columns().len() as u64;
    match layout {
        Layout::Row => u64::from(rows) * 4 * columns,
        Layout::Column => u64::from(rows) * columns * ENTRY_BYTES,
    }
}

/// Writes `table`'s `rows` rows at `base` in `layout`, page by page, in a region with room for
/// `capacity` rows; returns where it lies.
pub fn load_table(
    device: &mut PcmDevice,
    data: &SsbData,
    table: Table,
    (rows, capacity): (u32, u32),
    layout: Layout,
    base: u64,
) -> JoinResult<StoredTable> {
    if capacity < rows {
        return Err(argument(
            "capacity",
            format!("{capacity} rows is less than {}'s {rows}", table.name()),
        ));
    }
    let stored = StoredTable {
        table,
        rows,
        capacity,
        columns: table.columns().len(),
        base,
        layout,
    };
    let mut error = None;
    match layout {
        Layout::Row => {
            let mut page = PageWriter::new(base);
            data.for_each_row(table, |values| {
                for v in values {
                    if let Err(e) = page.push(device, &v.to_le_bytes()) {
                        error.get_or_insert(e);
                    }
                }
            });
            page.flush(device)?;
        }
        Layout::Column => {
            let mut pages: Vec<PageWriter> = (0..stored.columns)
                .map(|c| PageWriter::new(stored.entry_addr(c, 0)))
                .collect();
            let mut tid = 0u32;
            data.for_each_row(table, |values| {
                for (page, v) in pages.iter_mut().zip(values) {
                    if let Err(e) = page.push(device, &entry_bytes(tid, *v)) {
                        error.get_or_insert(e);
                    }
                }
                tid += 1;
            });
            for page in &mut pages {
                page.flush(device)?;
            }
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(stored),
    }
}

/// Sequential writes gathered into one device write per PCM page.
struct PageWriter {
    next: u64,
    buffer: Vec<u8>,
}

impl PageWriter {
    fn new(start: u64) -> Self {
        PageWriter {
            next: start,
            buffer: Vec::with_capacity(PAGE_BYTES as usize),
        }
    }

    fn push(&mut self, device: &mut PcmDevice, bytes: &[u8]) -> JoinResult<()> {
        self.buffer.extend_from_slice(bytes);
        if (self.next + self.buffer.len() as u64).is_multiple_of(PAGE_BYTES) {
            self.flush(device)?;
        }
        Ok(())
    }

    fn flush(&mut self, device: &mut PcmDevice) -> JoinResult<()> {
        if !self.buffer.is_empty() {
            device.write(PcmAddr(self.next), &self.buffer)?;
            self.next += self.buffer.len() as u64;
            self.buffer.clear();
        }
        Ok(())
    }
}
