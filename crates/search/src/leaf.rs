//! A SiM-aware B+tree leaf level (SPEC S6; paper 004 §V-A, Fig. 8): the inner levels live in
//! host memory (a sorted table of each leaf's lowest key), each leaf is two SiM pages of a
//! [`SearchStore`]: a key page and a value page with the value of key slot `i` in value slot
//! `i`. A point lookup searches the key page on the chip, checks the hit with an ECC-checked
//! gather of its key chunk, and gathers the value chunk from the value page (sensed while the key
//! page stays open) — 2 x 4 KiB never cross the bus. [`SimLeafIndex::get_full_page`] is the
//! baseline: full reads of both pages and a search on the host.
//!
//! Unused slots hold [`EMPTY_KEY`] (so the key `u64::MAX` is refused). Inserts rewrite both pages
//! of the leaf (read, modify, write to new locations); a full leaf splits in two. Deletes, merges
//! and range scans are not done here.

use crate::error::{SearchError, SearchResult};
use nandlab_core::SimTime;
use nandlab_ftl::search::{LogicalPage, SearchStore};
use nandlab_nand::search::format::{self, SLOTS_PER_CHUNK};
use nandlab_nand::search::header::DATA_BYTES;
use nandlab_nand::{ChunkMask, NandSim, SearchKey};

/// Key of an unused slot.
pub const EMPTY_KEY: u64 = u64::MAX;
/// Entries per leaf (data slots of a page).
pub const LEAF_SLOTS: usize = DATA_BYTES / 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Leaf {
    low_key: u64,
    keys: LogicalPage,
    values: LogicalPage,
}

/// The leaf level of a B+tree on SiM pages, with its in-memory inner level.
#[derive(Debug)]
pub struct SimLeafIndex {
    store: SearchStore,
    /// Leaves by increasing `low_key`; the first has `low_key` 0.
    leaves: Vec<Leaf>,
    next_page: u32,
}

fn encode(slots: &[u64]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(DATA_BYTES);
    for i in 0..LEAF_SLOTS {
        bytes.extend_from_slice(&slots.get(i).copied().unwrap_or(EMPTY_KEY).to_le_bytes());
    }
    bytes
}

fn decode(bytes: &[u8]) -> Vec<u64> {
    (0..LEAF_SLOTS as u32)
        .map(|i| format::slot(bytes, i))
        .collect()
}

impl SimLeafIndex {
    /// Builds the leaves from `entries` (keys strictly increasing, none equal to [`EMPTY_KEY`]),
    /// `fill_slots` entries per leaf (1..=504).
    pub fn bulk_load(
        sim: &mut NandSim,
        now: SimTime,
        store: SearchStore,
        entries: &[(u64, u64)],
        fill_slots: usize,
    ) -> SearchResult<Self> {
        if fill_slots == 0 || fill_slots > LEAF_SLOTS {
            return Err(SearchError::Argument {
                argument: "fill_slots",
                message: format!("{fill_slots}; give 1 to {LEAF_SLOTS}"),
            });
        }
        for pair in entries.windows(2) {
            if pair[0].0 >= pair[1].0 {
                return Err(SearchError::Argument {
                    argument: "entries",
                    message: format!(
                        "key {} follows key {}: keys must increase",
                        pair[1].0, pair[0].0
                    ),
                });
            }
        }
        if entries.last().is_some_and(|e| e.0 == EMPTY_KEY) {
            return Err(SearchError::Argument {
                argument: "entries",
                message: format!("key {EMPTY_KEY} marks empty slots"),
            });
        }
        let mut index = SimLeafIndex {
            store,
            leaves: Vec::new(),
            next_page: 0,
        };
        let mut chunks: Vec<&[(u64, u64)]> = entries.chunks(fill_slots).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        for (i, chunk) in chunks.iter().enumerate() {
            let low_key = if i == 0 { 0 } else { chunk[0].0 };
            let leaf = index.new_leaf(sim, now, low_key, chunk)?;
            index.leaves.push(leaf);
        }
        Ok(index)
    }

    pub fn store(&self) -> &SearchStore {
        &self.store
    }

    pub fn leaf_count(&self) -> usize {
        self.leaves.len()
    }

    fn new_leaf(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        low_key: u64,
        entries: &[(u64, u64)],
    ) -> SearchResult<Leaf> {
        let leaf = Leaf {
            low_key,
            keys: LogicalPage(self.next_page),
            values: LogicalPage(self.next_page + 1),
        };
        self.next_page += 2;
        self.write_leaf(sim, now, &leaf, entries)?;
        Ok(leaf)
    }

    fn write_leaf(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        leaf: &Leaf,
        entries: &[(u64, u64)],
    ) -> SearchResult<()> {
        let keys: Vec<u64> = entries.iter().map(|e| e.0).collect();
        let values: Vec<u64> = entries.iter().map(|e| e.1).collect();
        self.store.write(sim, now, leaf.keys, &encode(&keys))?;
        self.store.write(sim, now, leaf.values, &encode(&values))?;
        Ok(())
    }

    /// The leaf whose key range holds `key`.
    fn leaf_of(&self, key: u64) -> usize {
        self.leaves
            .partition_point(|l| l.low_key <= key)
            .saturating_sub(1)
    }

    /// Point lookup on the chip: search the key page, verify the hit, gather the value chunk.
    pub fn get(&mut self, sim: &mut NandSim, now: SimTime, key: u64) -> SearchResult<Option<u64>> {
        if key == EMPTY_KEY {
            return Ok(None);
        }
        let leaf = self.leaves[self.leaf_of(key)];
        let mut open = self.store.open(sim, now, leaf.keys)?;
        let bitmap = self
            .store
            .search(sim, now, &open, &[SearchKey::exact(key)])?[0];
        let mut found = None;
        for slot in bitmap.slots() {
            let chunk = slot / SLOTS_PER_CHUNK;
            let within = slot % SLOTS_PER_CHUNK;
            let key_chunk = self
                .store
                .gather(sim, now, &mut open, ChunkMask::single(chunk))?;
            if format::slot(&key_chunk, within) != key {
                continue; // a false hit from a bit error in the latch
            }
            let value_chunk =
                self.store
                    .gather_page(sim, now, leaf.values, ChunkMask::single(chunk))?;
            found = Some(format::slot(&value_chunk, within));
            break;
        }
        self.store.close(sim, now, open)?;
        Ok(found)
    }

    /// The baseline lookup: full reads of the key and value pages, a search on the host.
    pub fn get_full_page(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        key: u64,
    ) -> SearchResult<Option<u64>> {
        if key == EMPTY_KEY {
            return Ok(None);
        }
        let leaf = self.leaves[self.leaf_of(key)];
        let keys = decode(&self.store.read(sim, now, leaf.keys)?);
        let values = decode(&self.store.read(sim, now, leaf.values)?);
        Ok(keys.iter().position(|k| *k == key).map(|i| values[i]))
    }

    /// Inserts or updates `key`: the leaf is read, changed and rewritten; a full leaf splits.
    pub fn insert(
        &mut self,
        sim: &mut NandSim,
        now: SimTime,
        key: u64,
        value: u64,
    ) -> SearchResult<()> {
        if key == EMPTY_KEY {
            return Err(SearchError::Argument {
                argument: "key",
                message: format!("{EMPTY_KEY} marks empty slots"),
            });
        }
        let at = self.leaf_of(key);
        let leaf = self.leaves[at];
        let keys = decode(&self.store.read(sim, now, leaf.keys)?);
        let values = decode(&self.store.read(sim, now, leaf.values)?);
        let mut entries: Vec<(u64, u64)> = keys
            .iter()
            .zip(&values)
            .filter(|(k, _)| **k != EMPTY_KEY)
            .map(|(k, v)| (*k, *v))
            .collect();
        match entries.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => entries[i].1 = value,
            Err(i) => entries.insert(i, (key, value)),
        }
        if entries.len() <= LEAF_SLOTS {
            return self.write_leaf(sim, now, &leaf, &entries);
        }
        let half = entries.len() / 2;
        self.write_leaf(sim, now, &leaf, &entries[..half])?;
        let right = self.new_leaf(sim, now, entries[half].0, &entries[half..])?;
        self.leaves.insert(at + 1, right);
        debug_assert!(self.leaves.windows(2).all(|w| w[0].low_key < w[1].low_key));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_core::SimRng;
    use nandlab_ftl::search::StoreConfig;
    use nandlab_nand::{OpKind, PageAddress, preset};
    use std::collections::BTreeMap;

    fn settle(sim: &mut NandSim) {
        let mut done = Vec::new();
        sim.run_until_idle(&mut done);
    }

    fn chip_bytes(sim: &NandSim) -> u64 {
        OpKind::ALL
            .iter()
            .map(|k| sim.stats().kind(*k).bytes_transferred)
            .sum()
    }

    #[test]
    fn sim_lookups_equal_full_page_lookups_and_a_btreemap() {
        let mut sim = NandSim::new(preset("sim2024").unwrap(), 1).unwrap();
        let blocks = (0..16)
            .map(|b| PageAddress {
                block: b,
                ..PageAddress::default()
            })
            .collect();
        let store = SearchStore::new(&mut sim, blocks, StoreConfig::default()).unwrap();
        let mut rng = SimRng::seed_from_u64(3);
        let mut reference = BTreeMap::new();
        while reference.len() < 2_000 {
            reference.insert(rng.below(1 << 40), rng.below(u64::MAX));
        }
        let entries: Vec<(u64, u64)> = reference.iter().map(|(k, v)| (*k, *v)).collect();
        let now = sim.now();
        let mut index = SimLeafIndex::bulk_load(&mut sim, now, store, &entries, 480).unwrap();
        settle(&mut sim);
        assert_eq!(index.leaf_count(), 5); // 2,000 / 480 per leaf
        // inserts, some into full leaves (splits), some updates
        for i in 0..400u64 {
            let key = if i % 10 == 0 {
                entries[(i * 3) as usize].0
            } else {
                rng.below(1 << 40)
            };
            let value = i;
            let now = sim.now();
            index.insert(&mut sim, now, key, value).unwrap();
            settle(&mut sim);
            reference.insert(key, value);
        }
        assert!(index.leaf_count() > 5, "a leaf split");
        let probes: Vec<u64> = reference
            .keys()
            .step_by(7)
            .copied()
            .chain((0..50).map(|_| rng.below(1 << 40)))
            .collect();
        let mut sim_bytes = 0;
        let mut full_bytes = 0;
        for key in probes {
            let expected = reference.get(&key).copied();
            let before = chip_bytes(&sim);
            let now = sim.now();
            assert_eq!(
                index.get(&mut sim, now, key).unwrap(),
                expected,
                "SiM {key}"
            );
            settle(&mut sim);
            let middle = chip_bytes(&sim);
            let now = sim.now();
            assert_eq!(
                index.get_full_page(&mut sim, now, key).unwrap(),
                expected,
                "full {key}"
            );
            settle(&mut sim);
            if expected.is_some() {
                sim_bytes += middle - before;
                full_bytes += chip_bytes(&sim) - middle;
            }
        }
        assert!(index.store().stats().opens_on_chip > 0);
        assert!(
            sim_bytes * 10 < full_bytes,
            "SiM {sim_bytes} B vs full pages {full_bytes} B"
        );
    }

    #[test]
    fn the_empty_key_is_refused() {
        let mut sim = NandSim::new(preset("sim2024").unwrap(), 1).unwrap();
        let store = SearchStore::new(
            &mut sim,
            vec![PageAddress::default()],
            StoreConfig::default(),
        )
        .unwrap();
        let now = sim.now();
        let mut index = SimLeafIndex::bulk_load(&mut sim, now, store, &[], 10).unwrap();
        let err = index.insert(&mut sim, now, EMPTY_KEY, 1).unwrap_err();
        assert!(err.to_string().contains("`key`"), "{err}");
        assert_eq!(index.get(&mut sim, now, EMPTY_KEY).unwrap(), None);
    }
}
