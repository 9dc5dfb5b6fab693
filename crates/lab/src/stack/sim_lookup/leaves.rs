//! The loaded leaf level of a sim-lookup run: records, their leaves and the host's inner level.

use super::{EMPTY_KEY, Layout};
use crate::stack::sections::SimLookupWorkload;
use nandlab_core::SimRng;
use std::collections::HashSet;

/// One loaded record: its key and value, and where the leaf level keeps it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    pub(super) key: u64,
    pub(super) value: u64,
    pub(super) leaf: u32,
    pub(super) slot: u32,
}

/// The loaded leaf level: records by key number (the YCSB key chooser's numbering, in
/// generation order so popular key numbers scatter over the leaves), the key numbers in key
/// order (leaf by leaf) and the host's inner level (the leaves' low keys).
pub(super) struct Leaves {
    pub(super) layout: Layout,
    pub(super) by_keynum: Vec<Record>,
    pub(super) in_key_order: Vec<u32>,
    pub(super) low_keys: Vec<u64>,
}

impl Leaves {
    pub(super) fn generate(w: &SimLookupWorkload, layout: Layout, seed: u64) -> Leaves {
        let mut key_rng = SimRng::stream(seed, "sim-lookup.keys");
        let mut value_rng = SimRng::stream(seed, "sim-lookup.values");
        let mut seen = HashSet::with_capacity(w.records as usize);
        let mut by_keynum = Vec::with_capacity(w.records as usize);
        while (by_keynum.len() as u64) < w.records {
            // below(u64::MAX) never draws EMPTY_KEY
            let key = key_rng.below(EMPTY_KEY);
            if seen.insert(key) {
                let value = value_rng.below(u64::MAX);
                by_keynum.push(Record {
                    key,
                    value,
                    leaf: 0,
                    slot: 0,
                });
            }
        }
        drop(seen);
        let mut in_key_order: Vec<u32> = (0..by_keynum.len() as u32).collect();
        in_key_order.sort_unstable_by_key(|&i| by_keynum[i as usize].key);
        let mut low_keys = Vec::with_capacity(layout.leaves as usize);
        let per_leaf = layout.slots_per_leaf as usize;
        for (position, &i) in in_key_order.iter().enumerate() {
            let r = &mut by_keynum[i as usize];
            let (leaf, within) = ((position / per_leaf) as u32, (position % per_leaf) as u32);
            if within == 0 {
                low_keys.push(if leaf == 0 { 0 } else { r.key });
            }
            r.leaf = leaf;
            r.slot = layout.first_slot + within;
        }
        assert_eq!(low_keys.len(), layout.leaves as usize);
        Leaves {
            layout,
            by_keynum,
            in_key_order,
            low_keys,
        }
    }

    /// The leaf whose key range holds `key` (the host's inner level).
    pub(super) fn leaf_of(&self, key: u64) -> u32 {
        self.low_keys
            .partition_point(|&low| low <= key)
            .saturating_sub(1) as u32
    }

    pub(super) fn contains(&self, key: u64) -> bool {
        self.in_key_order
            .binary_search_by_key(&key, |&i| self.by_keynum[i as usize].key)
            .is_ok()
    }

    /// The key page and the value page of `leaf` into `keys` and `values`.
    pub(super) fn pages_of(&self, leaf: u32, keys: &mut [u8], values: &mut [u8]) {
        keys.fill(0xff);
        values.fill(0xff);
        let per_leaf = self.layout.slots_per_leaf as usize;
        let first = leaf as usize * per_leaf;
        let last = (first + per_leaf).min(self.in_key_order.len());
        for &i in &self.in_key_order[first..last] {
            let r = &self.by_keynum[i as usize];
            debug_assert_eq!(r.leaf, leaf);
            let at = 8 * r.slot as usize;
            keys[at..at + 8].copy_from_slice(&r.key.to_le_bytes());
            values[at..at + 8].copy_from_slice(&r.value.to_le_bytes());
        }
    }
}
