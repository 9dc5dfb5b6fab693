//! The hash-join operator of thesis chapter 4, in its four forms (Algorithms 1–4):
//!
//! | | partition phase writes to PCM | join phase reads |
//! |---|---|---|
//! | Grace, row store (Alg. 1) | each qualifying tuple: `[tid][row]` | the partitions |
//! | virtual, row store (Alg. 2) | its tuple id: `[tid]` | the tid lists, then each row by tid |
//! | Grace, column store (Alg. 3) | the join column's entry: `[tid][value]` | the partitions |
//! | virtual, column store (Alg. 4) | its tuple id | the tid lists, then each entry by tid |
//!
//! Partition `p = hash(key) mod P`. For each `p`, the build side's partition is inserted into a
//! chained hash table and the probe side's is probed against it; matches are `(build tid, probe
//! tid)` pairs sent to the upper layer. With PCM as main memory the hash table (12 B entries
//! `[key][tid][next]`, 4 B bucket heads) and the result pairs live in PCM too, so their writes
//! and reads are charged; with PCM as storage they are in DRAM. The Grace row partition carries
//! the tuple id beside the tuple, so the result can name the tuple.

use crate::access::{LineWriter, Mode, PAGE_BYTES, Partitions, Reader};
use crate::error::{JoinResult, argument};
use crate::store::{Layout, StoredTable, decode_u32s};
use nandlab_pcm::PcmDevice;

/// Traditional or virtual partitioning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Algorithm {
    /// Grace hash join: partitions hold copies of the tuples (thesis Alg. 1 and 3).
    Grace,
    /// Virtual partitioning: partitions hold tuple ids (thesis Alg. 2 and 4; Chen et al.).
    Virtual,
}

impl Algorithm {
    /// `grace` or `virtual`.
    pub fn label(self) -> &'static str {
        match self {
            Algorithm::Grace => "grace",
            Algorithm::Virtual => "virtual",
        }
    }
}

/// `low <= column <= high`, or `column IN values` when `values` is not empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Predicate {
    /// Column index in the table.
    pub column: usize,
    /// Smallest value kept.
    pub low: u32,
    /// Largest value kept.
    pub high: u32,
    /// The values kept (replaces the range when not empty).
    pub values: &'static [u32],
}

impl Predicate {
    /// `column = value`.
    pub fn equals(column: usize, value: u32) -> Self {
        Predicate {
            column,
            low: value,
            high: value,
            values: &[],
        }
    }

    /// Whether `value` qualifies.
    pub fn keeps(&self, value: u32) -> bool {
        if self.values.is_empty() {
            (self.low..=self.high).contains(&value)
        } else {
            self.values.contains(&value)
        }
    }
}

/// One side of a join.
#[derive(Clone, Copy, Debug)]
pub struct JoinInput<'a> {
    /// The stored table.
    pub table: &'a StoredTable,
    /// Join key column.
    pub key: usize,
    /// Selections applied while partitioning (all must hold).
    pub filters: &'a [Predicate],
    /// Only these tuple ids (ascending), or all rows.
    pub tids: Option<&'a [u32]>,
}

/// How to run the operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinSettings {
    /// Grace or virtual partitioning.
    pub algorithm: Algorithm,
    /// PCM as storage or as main memory.
    pub mode: Mode,
    /// Partitions P.
    pub partitions: u32,
}

/// Counts of one join.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JoinCounts {
    /// Build tuples that passed the filter (partitioned).
    pub build_tuples: u64,
    /// Probe tuples that passed the filter (partitioned).
    pub probe_tuples: u64,
    /// Bytes appended to partitions (tuples or tuple ids).
    pub partition_bytes: u64,
    /// Result pairs.
    pub pairs: u64,
}

/// The PCM area a join may use for its hash table, result pairs and partitions.
#[derive(Clone, Copy, Debug)]
pub struct Scratch {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Partition of a key.
pub fn partition_of(key: u32, partitions: u32) -> usize {
    ((u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % u64::from(partitions)) as usize
}

fn bucket_of(key: u32, buckets: u32) -> u32 {
    (key.wrapping_mul(0x85EB_CA6B) >> 7) & (buckets - 1)
}

/// Runs one hash join; returns `(build tid, probe tid)` pairs in the order produced.
pub fn hash_join(
    device: &mut PcmDevice,
    reader: &mut Reader,
    settings: &JoinSettings,
    build: &JoinInput,
    probe: &JoinInput,
    scratch: Scratch,
) -> JoinResult<(Vec<(u32, u32)>, JoinCounts)> {
    if settings.partitions == 0 {
        return Err(argument("partitions", "must be at least 1"));
    }
    if build.table.layout != probe.table.layout {
        return Err(argument("probe", "both sides must have the same layout"));
    }
    reader.reset();
    let in_pcm = settings.mode == Mode::MainMemory;
    let build_max = build.tids.map_or(build.table.rows, |t| t.len() as u32);
    let probe_max = probe.tids.map_or(probe.table.rows, |t| t.len() as u32);
    // scratch: [hash table entries | bucket heads | result pairs | partitions …]
    let heads_max = build_max.max(1).next_power_of_two();
    let entries_at = scratch.start;
    let heads_at = entries_at + u64::from(build_max) * 12;
    let pairs_at = (heads_at + u64::from(heads_max) * 4).div_ceil(PAGE_BYTES) * PAGE_BYTES;
    let parts_at = pairs_at + (u64::from(probe_max) * 8).div_ceil(PAGE_BYTES) * PAGE_BYTES;
    if parts_at > scratch.end {
        return Err(argument(
            "capacity_bytes",
            "the PCM scratch area is too small for the hash table",
        ));
    }
    let mut counts = JoinCounts::default();
    let item_bytes = |input: &JoinInput| match (settings.algorithm, input.table.layout) {
        (Algorithm::Virtual, _) => 4,
        (Algorithm::Grace, Layout::Column) => 8,
        (Algorithm::Grace, Layout::Row) => 4 + input.table.row_bytes(),
    };
    let mut build_parts = Partitions::new(
        device,
        settings.partitions,
        item_bytes(build),
        settings.mode,
        parts_at,
        scratch.end,
    )?;
    counts.build_tuples = partition(device, reader, settings, build, &mut build_parts)?;
    let mut probe_parts = Partitions::new(
        device,
        settings.partitions,
        item_bytes(probe),
        settings.mode,
        build_parts.scratch_end(),
        scratch.end,
    )?;
    counts.probe_tuples = partition(device, reader, settings, probe, &mut probe_parts)?;
    counts.partition_bytes =
        counts.build_tuples * item_bytes(build) + counts.probe_tuples * item_bytes(probe);

    let mut pairs = Vec::new();
    let mut table = HashTable::default();
    let mut row = Vec::new();
    let mut lines = LineWriter::new(device);
    for p in 0..settings.partitions as usize {
        let n = build_parts.len(p) as u32;
        if n == 0 {
            continue;
        }
        table.clear(n.next_power_of_two());
        if in_pcm {
            // initialise the bucket heads in PCM
            lines.write(device, heads_at, &vec![0u8; table.heads.len() * 4])?;
        }
        for addr in build_parts.item_addresses(p) {
            let (tid, key) = item_key(device, reader, settings, build, addr, &mut row)?;
            let entry = table.insert(key, tid);
            if in_pcm {
                let e = &table.entries[entry as usize];
                let mut bytes = [0u8; 12];
                bytes[..4].copy_from_slice(&e.0.to_le_bytes());
                bytes[4..8].copy_from_slice(&e.1.to_le_bytes());
                bytes[8..].copy_from_slice(&e.2.to_le_bytes());
                lines.write(device, entries_at + u64::from(entry) * 12, &bytes)?;
                let b = bucket_of(key, table.heads.len() as u32);
                lines.write(
                    device,
                    heads_at + u64::from(b) * 4,
                    &(entry + 1).to_le_bytes(),
                )?;
            }
        }
        // the probe reads the table from PCM
        lines.flush(device)?;
        for addr in probe_parts.item_addresses(p) {
            let (tid, key) = item_key(device, reader, settings, probe, addr, &mut row)?;
            let b = bucket_of(key, table.heads.len() as u32);
            let mut next = table.heads[b as usize];
            if in_pcm {
                let stored = reader.read_u32(device, heads_at + u64::from(b) * 4)?;
                assert_eq!(
                    stored, next,
                    "hash table head in PCM differs from its mirror"
                );
            }
            while next != 0 {
                let (k, build_tid, after) = table.entries[next as usize - 1];
                if in_pcm {
                    reader.read(device, entries_at + u64::from(next - 1) * 12, 12)?;
                }
                if k == key {
                    if in_pcm {
                        if pairs.len() as u64 >= u64::from(probe_max) {
                            return Err(argument(
                                "capacity_bytes",
                                "result pairs exceed the PCM area reserved for them",
                            ));
                        }
                        let mut bytes = [0u8; 8];
                        bytes[..4].copy_from_slice(&build_tid.to_le_bytes());
                        bytes[4..].copy_from_slice(&tid.to_le_bytes());
                        lines.write(device, pairs_at + pairs.len() as u64 * 8, &bytes)?;
                    }
                    pairs.push((build_tid, tid));
                }
                next = after;
            }
        }
    }
    lines.flush(device)?;
    counts.pairs = pairs.len() as u64;
    Ok((pairs, counts))
}

/// Partition phase over one input: returns the tuples that passed the filter.
fn partition(
    device: &mut PcmDevice,
    reader: &mut Reader,
    settings: &JoinSettings,
    input: &JoinInput,
    parts: &mut Partitions,
) -> JoinResult<u64> {
    let table = input.table;
    let mut row = vec![0u32; table.columns];
    let mut item = Vec::with_capacity(4 + table.row_bytes() as usize);
    let mut kept = 0u64;
    let all: Vec<u32>;
    let tids = match input.tids {
        Some(t) => t,
        None => {
            all = (0..table.rows).collect();
            &all
        }
    };
    for &tid in tids {
        let key = match table.layout {
            Layout::Row => {
                table.read_row(reader, device, tid, &mut row)?;
                if input.filters.iter().any(|f| !f.keeps(row[f.column])) {
                    continue;
                }
                row[input.key]
            }
            Layout::Column => {
                // each selection column is read until one fails (late materialisation)
                let mut kept = true;
                for f in input.filters {
                    if !f.keeps(table.read_entry(reader, device, f.column, tid)?) {
                        kept = false;
                        break;
                    }
                }
                if !kept {
                    continue;
                }
                table.read_entry(reader, device, input.key, tid)?
            }
        };
        item.clear();
        item.extend_from_slice(&tid.to_le_bytes());
        if settings.algorithm == Algorithm::Grace {
            match table.layout {
                Layout::Row => {
                    for v in &row {
                        item.extend_from_slice(&v.to_le_bytes());
                    }
                }
                Layout::Column => item.extend_from_slice(&key.to_le_bytes()),
            }
        }
        parts.append(device, partition_of(key, settings.partitions), &item)?;
        kept += 1;
    }
    parts.finish(device)?;
    Ok(kept)
}

/// Reads one partition item and returns its tuple id and join key (from the item itself, or for
/// virtual partitioning from the base table by tuple id).
fn item_key(
    device: &mut PcmDevice,
    reader: &mut Reader,
    settings: &JoinSettings,
    input: &JoinInput,
    addr: u64,
    row: &mut Vec<u32>,
) -> JoinResult<(u32, u32)> {
    let table = input.table;
    match (settings.algorithm, table.layout) {
        (Algorithm::Virtual, _) => {
            let tid = reader.read_u32(device, addr)?;
            let key = table.read_value(reader, device, input.key, tid, row)?;
            Ok((tid, key))
        }
        (Algorithm::Grace, Layout::Column) => {
            let b = reader.read(device, addr, 8)?;
            Ok((
                u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            ))
        }
        (Algorithm::Grace, Layout::Row) => {
            let b = reader.read(device, addr, 4 + table.row_bytes())?;
            let tid = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            row.resize(table.columns, 0);
            decode_u32s(&b[4..], row);
            Ok((tid, row[input.key]))
        }
    }
}

/// A chained hash table (the DRAM mirror; with PCM as main memory its bytes are also in PCM).
#[derive(Debug, Default)]
struct HashTable {
    /// Bucket → 1 + first entry (0 = empty).
    heads: Vec<u32>,
    /// `(key, tid, 1 + next entry)`.
    entries: Vec<(u32, u32, u32)>,
}

impl HashTable {
    fn clear(&mut self, buckets: u32) {
        self.heads.clear();
        self.heads.resize(buckets as usize, 0);
        self.entries.clear();
    }

    /// Inserts and returns the entry's index.
    fn insert(&mut self, key: u32, tid: u32) -> u32 {
        let b = bucket_of(key, self.heads.len() as u32) as usize;
        let index = self.entries.len() as u32;
        self.entries.push((key, tid, self.heads[b]));
        self.heads[b] = index + 1;
        index
    }
}
