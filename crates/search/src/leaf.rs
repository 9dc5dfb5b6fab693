//! A SiM-aware B+tree leaf level (SPEC S6; paper 004 §V-A, Fig. 8): the inner levels live in
//! host memory (a sorted table of each leaf's lowest key), each leaf is two SiM pages of a
//! [`SearchDevice`]: a key page and a value page with the value of key slot `i` in value slot
//! `i`. A point lookup searches the key page on the chip, checks the hit with an ECC-checked
//! gather of its key chunk, and gathers the value chunk from the value page (sensed while the key
//! page stays open) — 2 x 4 KiB never cross the bus. [`SearchLeafIndex::get_full_page`] is the
//! baseline: full reads of both pages and a search on the host.
//!
//! Unused slots hold [`EMPTY_KEY`] (so the key `u64::MAX` is refused). Inserts rewrite both pages
//! of the leaf (read, modify, write to new locations); a full leaf splits in two. Deletes, merges
//! and range scans are not done here.

use crate::device::SearchDevice;
use crate::error::{SearchError, SearchResult};
use nandlab_core::SimTime;
use nandlab_ftl::search::LogicalPage;
use nandlab_nand::search::format::{self, SLOTS_PER_CHUNK};
use nandlab_nand::search::header::DATA_BYTES;
use nandlab_nand::{ChunkMask, SearchKey};

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
pub struct SearchLeafIndex {
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

impl SearchLeafIndex {
    /// Builds the leaves from `entries` (keys strictly increasing, none equal to [`EMPTY_KEY`]),
    /// `fill_slots` entries per leaf (1..=504).
    pub fn bulk_load<D: SearchDevice>(
        device: &mut D,
        now: SimTime,
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
        let mut index = SearchLeafIndex {
            leaves: Vec::new(),
            next_page: 0,
        };
        let mut chunks: Vec<&[(u64, u64)]> = entries.chunks(fill_slots).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        for (i, chunk) in chunks.iter().enumerate() {
            let low_key = if i == 0 { 0 } else { chunk[0].0 };
            let leaf = index.new_leaf(device, now, low_key, chunk)?;
            index.leaves.push(leaf);
        }
        Ok(index)
    }

    pub fn leaf_count(&self) -> usize {
        self.leaves.len()
    }

    fn new_leaf<D: SearchDevice>(
        &mut self,
        device: &mut D,
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
        self.write_leaf(device, now, &leaf, entries)?;
        Ok(leaf)
    }

    fn write_leaf<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        leaf: &Leaf,
        entries: &[(u64, u64)],
    ) -> SearchResult<()> {
        let keys: Vec<u64> = entries.iter().map(|e| e.0).collect();
        let values: Vec<u64> = entries.iter().map(|e| e.1).collect();
        device.write(now, leaf.keys, &encode(&keys))?;
        device.write(now, leaf.values, &encode(&values))?;
        Ok(())
    }

    /// The leaf whose key range holds `key`.
    fn leaf_of(&self, key: u64) -> usize {
        self.leaves
            .partition_point(|l| l.low_key <= key)
            .saturating_sub(1)
    }

    /// Point lookup on the chip: search the key page, verify the hit, gather the value chunk.
    pub fn get<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        key: u64,
    ) -> SearchResult<Option<u64>> {
        if key == EMPTY_KEY {
            return Ok(None);
        }
        let leaf = self.leaves[self.leaf_of(key)];
        let mut open = device.open(now, leaf.keys)?;
        let bitmap = device.search(now, &open, &[SearchKey::exact(key)])?[0];
        let mut found = None;
        for slot in bitmap.slots() {
            let chunk = slot / SLOTS_PER_CHUNK;
            let within = slot % SLOTS_PER_CHUNK;
            let key_chunk = device.gather(now, &mut open, ChunkMask::single(chunk))?;
            if format::slot(&key_chunk, within) != key {
                continue; // a false hit from a bit error in the latch
            }
            let value_chunk = device.gather_page(now, leaf.values, ChunkMask::single(chunk))?;
            found = Some(format::slot(&value_chunk, within));
            break;
        }
        device.close(now, open)?;
        Ok(found)
    }

    /// The baseline lookup: full reads of the key and value pages, a search on the host.
    pub fn get_full_page<D: SearchDevice>(
        &mut self,
        device: &mut D,
        now: SimTime,
        key: u64,
    ) -> SearchResult<Option<u64>> {
        if key == EMPTY_KEY {
            return Ok(None);
        }
        let leaf = self.leaves[self.leaf_of(key)];
        let keys = decode(&device.read(now, leaf.keys)?);
        let values = decode(&device.read(now, leaf.values)?);
        Ok(keys.iter().position(|k| *k == key).map(|i| values[i]))
    }

    /// Inserts or updates `key`: the leaf is read, changed and rewritten; a full leaf splits.
    pub fn insert<D: SearchDevice>(
        &mut self,
        device: &mut D,
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
        let keys = decode(&device.read(now, leaf.keys)?);
        let values = decode(&device.read(now, leaf.values)?);
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
            return self.write_leaf(device, now, &leaf, &entries);
        }
        let half = entries.len() / 2;
        self.write_leaf(device, now, &leaf, &entries[..half])?;
        let right = self.new_leaf(device, now, entries[half].0, &entries[half..])?;
        self.leaves.insert(at + 1, right);
        debug_assert!(self.leaves.windows(2).all(|w| w[0].low_key < w[1].low_key));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ChipDevice;
    use nandlab_core::SimRng;
    use nandlab_ftl::search::{SearchStore, StoreConfig};
    use nandlab_ftl::{FtlConfig, PayloadMode, Ssd, SsdConfig};
    use nandlab_nand::{NandSim, OpKind, PageAddress, preset};
    use std::collections::BTreeMap;

    fn chip_bytes(sim: &NandSim) -> u64 {
        OpKind::ALL
            .iter()
            .map(|k| sim.stats().kind(*k).bytes_transferred)
            .sum()
    }

    fn chip_device(blocks: u32) -> ChipDevice {
        let mut sim = NandSim::new(preset("sim2024").unwrap(), 1).unwrap();
        let blocks = (0..blocks)
            .map(|b| PageAddress {
                block: b,
                ..PageAddress::default()
            })
            .collect();
        let store = SearchStore::new(&mut sim, blocks, StoreConfig::default()).unwrap();
        ChipDevice::new(sim, store)
    }

    /// 2,000 random entries, 400 inserts and updates (some split a leaf); the reference map.
    fn load_and_insert<D: SearchDevice>(device: &mut D) -> (SearchLeafIndex, BTreeMap<u64, u64>) {
        let mut rng = SimRng::seed_from_u64(3);
        let mut reference = BTreeMap::new();
        while reference.len() < 2_000 {
            reference.insert(rng.below(1 << 40), rng.below(u64::MAX));
        }
        let entries: Vec<(u64, u64)> = reference.iter().map(|(k, v)| (*k, *v)).collect();
        let now = device.now();
        let mut index = SearchLeafIndex::bulk_load(device, now, &entries, 480).unwrap();
        device.settle();
        assert_eq!(index.leaf_count(), 5); // 2,000 / 480 per leaf
        for i in 0..400u64 {
            let key = if i % 10 == 0 {
                entries[(i * 3) as usize].0
            } else {
                rng.below(1 << 40)
            };
            let now = device.now();
            index.insert(device, now, key, i).unwrap();
            device.settle();
            reference.insert(key, i);
        }
        assert!(index.leaf_count() > 5, "a leaf split");
        (index, reference)
    }

    fn probes(reference: &BTreeMap<u64, u64>) -> Vec<u64> {
        let mut rng = SimRng::seed_from_u64(4);
        reference
            .keys()
            .step_by(7)
            .copied()
            .chain((0..50).map(|_| rng.below(1 << 40)))
            .collect()
    }

    #[test]
    fn sim_lookups_equal_full_page_lookups_and_a_btreemap() {
        let mut device = chip_device(16);
        let (mut index, reference) = load_and_insert(&mut device);
        let mut sim_bytes = 0;
        let mut full_bytes = 0;
        for key in probes(&reference) {
            let expected = reference.get(&key).copied();
            let before = chip_bytes(&device.nand);
            let now = device.now();
            assert_eq!(
                index.get(&mut device, now, key).unwrap(),
                expected,
                "SiM {key}"
            );
            device.settle();
            let middle = chip_bytes(&device.nand);
            let now = device.now();
            assert_eq!(
                index.get_full_page(&mut device, now, key).unwrap(),
                expected,
                "full {key}"
            );
            device.settle();
            if expected.is_some() {
                sim_bytes += middle - before;
                full_bytes += chip_bytes(&device.nand) - middle;
            }
        }
        assert!(device.store.stats().opens_on_chip > 0);
        assert!(
            sim_bytes * 10 < full_bytes,
            "SiM {sim_bytes} B vs full pages {full_bytes} B"
        );
    }

    /// The same leaf level driven through the SSD's SiM region (search and gather commands,
    /// host reads and writes; GC moves the pool's pages as the inserts rewrite leaves) gives
    /// the same answers as the map, with and without the integrity layer.
    #[test]
    fn the_leaf_level_runs_on_the_ssd_through_the_same_trait() {
        for integrity in [false, true] {
            let mut config = SsdConfig::from_preset("sim2024");
            config.device.overrides = Some(
                toml::from_str(
                    "[geometry]\nchannels = 1\ndies_per_chip = 2\nblocks_per_plane = 32\npages_per_block = 16\n",
                )
                .unwrap(),
            );
            config.ftl = FtlConfig {
                op_fraction: 1.0,
                gc: nandlab_ftl::GcConfig {
                    threshold_blocks: 3,
                    ..Default::default()
                },
                payload: PayloadMode::Full,
                search: nandlab_ftl::SearchRegionConfig {
                    pages: 64,
                    integrity,
                    ..Default::default()
                },
                ..FtlConfig::default()
            };
            let mut ssd = Ssd::new(config, 1).unwrap();
            assert_eq!(SearchDevice::page_count(&ssd), 64);
            let (mut index, reference) = load_and_insert(&mut ssd);
            for key in probes(&reference) {
                let expected = reference.get(&key).copied();
                let now = SearchDevice::now(&ssd);
                assert_eq!(
                    index.get(&mut ssd, now, key).unwrap(),
                    expected,
                    "SiM {key}"
                );
                assert_eq!(
                    index.get_full_page(&mut ssd, now, key).unwrap(),
                    expected,
                    "full {key}"
                );
            }
            let counters = ssd.search_counters();
            assert!(counters.chip_searches > 0 && counters.chip_gathers > 0);
            assert_eq!(counters.opens_checked > 0, integrity);
        }
    }

    #[test]
    fn the_empty_key_is_refused() {
        let mut device = chip_device(1);
        let now = device.now();
        let mut index = SearchLeafIndex::bulk_load(&mut device, now, &[], 10).unwrap();
        let err = index.insert(&mut device, now, EMPTY_KEY, 1).unwrap_err();
        assert!(err.to_string().contains("`key`"), "{err}");
        assert_eq!(index.get(&mut device, now, EMPTY_KEY).unwrap(), None);
    }
}
