//! Store maintenance: inserts, updates and deletes of LINEORDER rows in either layout, every
//! byte through the PCM device (thesis §5.2: "creating a column-stored database, then
//! maintaining it is costlier than maintaining row-stored database because it requires
//! inserting extra column of tuple ID for each of the attributes").
//!
//! | | row store | column store |
//! |---|---|---|
//! | insert (tid = rows) | one 68 B row | one 8 B `[tid][value]` entry in each of 17 arrays |
//! | update (one column) | the row is read, its 4 B value written | the entry is read, its value written |
//! | delete `t` | the last row is read and written over row `t` | each array's last entry is read and written over entry `t` (with tid `t`) |
//!
//! A delete moves the last row into the hole (as `Vec::swap_remove`), so tuple ids stay dense
//! `0..rows` and the joins need no tombstones. Reads before writes go through the caller's
//! [`Reader`] (with PCM as storage: the page is brought into the DRAM buffer). A write-back of a
//! whole page would cost the same as writing the changed bytes, since the device's
//! data-comparison write programs only the words that change and charges nothing for the rest.

use crate::access::Reader;
use crate::database::Database;
use crate::error::{JoinResult, argument};
use crate::store::{Layout, StoredTable, entry_bytes};
use nandlab_pcm::PcmAddr;
use nandlab_workload::ssb::Table;

/// LINEORDER's position in `Database::tables` (`Table::ALL` order).
const FACTS: usize = 0;

impl Database {
    fn facts(&self) -> StoredTable {
        debug_assert_eq!(self.tables[FACTS].table, Table::Lineorder);
        self.tables[FACTS]
    }

    fn check_fact_tid(&self, tid: u32) -> JoinResult<()> {
        let rows = self.facts().rows;
        if tid >= rows {
            return Err(argument(
                "tid",
                format!("{tid} is beyond lineorder ({rows} rows)"),
            ));
        }
        Ok(())
    }

    /// Appends `row` (one value per LINEORDER column) as tuple id `rows`; returns that id.
    pub fn insert_fact(&mut self, row: &[u32]) -> JoinResult<u32> {
        let facts = self.facts();
        if row.len() != facts.columns {
            return Err(argument(
                "row",
                format!(
                    "{} values for lineorder's {} columns",
                    row.len(),
                    facts.columns
                ),
            ));
        }
        if facts.rows == facts.capacity {
            return Err(argument(
                "insert",
                format!(
                    "lineorder is full ({} rows): build the database with more room",
                    facts.capacity
                ),
            ));
        }
        let tid = facts.rows;
        match facts.layout {
            Layout::Row => {
                let bytes: Vec<u8> = row.iter().flat_map(|v| v.to_le_bytes()).collect();
                self.device.write(PcmAddr(facts.row_addr(tid)), &bytes)?;
            }
            Layout::Column => {
                for (column, v) in row.iter().enumerate() {
                    self.device.write(
                        PcmAddr(facts.entry_addr(column, tid)),
                        &entry_bytes(tid, *v),
                    )?;
                }
            }
        }
        self.tables[FACTS].rows += 1;
        Ok(tid)
    }

    /// Sets `column` of fact `tid` to `value` (the row or entry is read first).
    pub fn update_fact(
        &mut self,
        reader: &mut Reader,
        tid: u32,
        column: usize,
        value: u32,
    ) -> JoinResult<()> {
        self.check_fact_tid(tid)?;
        let facts = self.facts();
        if column >= facts.columns {
            return Err(argument(
                "column",
                format!("{column} is beyond lineorder's {} columns", facts.columns),
            ));
        }
        let at = match facts.layout {
            Layout::Row => {
                reader.read(&mut self.device, facts.row_addr(tid), facts.row_bytes())?;
                facts.row_addr(tid) + 4 * column as u64
            }
            Layout::Column => {
                facts.read_entry(reader, &mut self.device, column, tid)?;
                facts.entry_addr(column, tid) + 4
            }
        };
        self.device.write(PcmAddr(at), &value.to_le_bytes())?;
        Ok(())
    }

    /// Deletes fact `tid`: the last row moves into its place (its tuple id becomes `tid`).
    pub fn delete_fact(&mut self, reader: &mut Reader, tid: u32) -> JoinResult<()> {
        self.check_fact_tid(tid)?;
        let facts = self.facts();
        let last = facts.rows - 1;
        if tid != last {
            match facts.layout {
                Layout::Row => {
                    let bytes = reader
                        .read(&mut self.device, facts.row_addr(last), facts.row_bytes())?
                        .to_vec();
                    self.device.write(PcmAddr(facts.row_addr(tid)), &bytes)?;
                }
                Layout::Column => {
                    for column in 0..facts.columns {
                        let v = facts.read_entry(reader, &mut self.device, column, last)?;
                        self.device
                            .write(PcmAddr(facts.entry_addr(column, tid)), &entry_bytes(tid, v))?;
                    }
                }
            }
        }
        self.tables[FACTS].rows = last;
        Ok(())
    }

    /// LINEORDER's rows now.
    pub fn fact_rows(&self) -> u32 {
        self.facts().rows
    }
}

#[cfg(test)]
mod tests {
    use crate::access::{Mode, Reader};
    use crate::database::Database;
    use crate::store::Layout;
    use crate::{Algorithm, JoinSettings, reference::reference_rows_over, thesis_queries};
    use nandlab_workload::ssb::{SsbData, Table};

    fn facts_of(data: &SsbData) -> Vec<Vec<u32>> {
        let mut rows = Vec::new();
        data.for_each_row(Table::Lineorder, |v| rows.push(v.to_vec()));
        rows
    }

    /// Inserts, updates and deletes applied to the database and to a host copy of LINEORDER
    /// give the same join results, in both layouts; the column store pays more cells for an
    /// insert than the row store (17 entries with their tuple ids against one row).
    #[test]
    fn mutations_keep_joins_equal_to_the_reference() {
        let data = SsbData::new(0.002, 5).unwrap();
        let pcm = nandlab_pcm::preset("cidr11").unwrap();
        let mut insert_bits = Vec::new();
        for layout in [Layout::Row, Layout::Column] {
            let mut db = Database::build_with_room(&data, layout, &pcm, 1, 8).unwrap();
            let mut mirror = facts_of(&data);
            let mut reader = Reader::new(Mode::MainMemory, db.device()).unwrap();
            let quantity = Table::Lineorder.column("lo_quantity").unwrap();
            let before = db.device().stats().bits_programmed;
            for k in 0..8u32 {
                let mut row = mirror[k as usize * 3].clone();
                row[0] = 9_000_000 + k;
                row[quantity] = 46 + k % 4;
                assert_eq!(db.insert_fact(&row).unwrap() as usize, mirror.len());
                mirror.push(row);
            }
            insert_bits.push(db.device().stats().bits_programmed - before);
            assert!(db.insert_fact(&mirror[0]).is_err(), "no room left");
            for tid in [3u32, 40, 41, 7] {
                db.update_fact(&mut reader, tid, quantity, 50).unwrap();
                mirror[tid as usize][quantity] = 50;
            }
            for which in [0u32, 100, u32::MAX] {
                let tid = which.min(mirror.len() as u32 - 1);
                db.delete_fact(&mut reader, tid).unwrap();
                mirror.swap_remove(tid as usize);
            }
            assert_eq!(db.fact_rows() as usize, mirror.len());
            assert!(db.delete_fact(&mut reader, mirror.len() as u32).is_err());
            for algorithm in [Algorithm::Grace, Algorithm::Virtual] {
                let settings = JoinSettings {
                    algorithm,
                    mode: Mode::MainMemory,
                    partitions: 8,
                };
                for query in thesis_queries() {
                    let got = db.run(&query, &settings).unwrap().rows;
                    let want =
                        reference_rows_over(&data, &query, |f| mirror.iter().for_each(|r| f(r)))
                            .unwrap();
                    assert_eq!(got, want, "{layout:?} {algorithm:?} {}", query.name);
                }
            }
        }
        assert!(
            insert_bits[1] > insert_bits[0],
            "column-store inserts program {} cells, row store {}",
            insert_bits[1],
            insert_bits[0]
        );
    }
}
