//! A B+tree of `u64` keys and values over any [`BlockDevice`] (SPEC E5): inserts (upserts),
//! deletes with borrow and merge, splits, point lookups and range scans along a chain of
//! leaves. Every node is on the device; the root's address, the height and the page allocator
//! live in host memory.
//!
//! A leaf is two pages in the SiM page format ([`node`]): a key page and a value page with the
//! value of key slot `i` in value slot `i` (paper 004 §V-A, Fig. 8). Without SiM the tree reads
//! them like any page (a lookup reads the value page only when the key is found); with SiM a
//! controller can search the key page and gather the value chunk instead —
//! [`BTree::leaf_of`] names the two pages and the slot. The tree itself needs no SiM.

pub mod node;

use crate::device::{BlockDevice, Lpa};
use crate::error::EngineError;
use node::{EMPTY_KEY, Inner, Leaf, NO_PAGE};

/// Node sizes (smaller than a page's capacity to exercise splits and merges in tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BTreeConfig {
    /// Keys per leaf (3..=page capacity; 504 for 4 KiB pages).
    pub leaf_keys_max: usize,
    /// Keys per inner node (3..=page capacity; 251 for 4 KiB pages).
    pub inner_keys_max: usize,
}

impl BTreeConfig {
    /// Full pages.
    pub fn for_page(page_size_bytes: usize) -> Self {
        BTreeConfig {
            leaf_keys_max: node::leaf_capacity(page_size_bytes),
            inner_keys_max: node::inner_capacity(page_size_bytes),
        }
    }
}

/// Where a key's entry lives (or would live): the leaf's pages and the data slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSlot {
    pub key_page: Lpa,
    pub value_page: Lpa,
    /// Index among the leaf's entries (page slot `8 + slot`).
    pub slot: usize,
    pub found: bool,
}

#[derive(Debug)]
pub struct BTree<D: BlockDevice> {
    device: D,
    config: BTreeConfig,
    root: u64,
    /// Levels of inner nodes above the leaves.
    height: u32,
    len: u64,
    free: Vec<u64>,
    next_unused: u64,
    key_buf: Vec<u8>,
    value_buf: Vec<u8>,
}

/// A node split: the separator key and the new right node's page.
type Split = (u64, u64);

fn lpa(page: u64) -> Lpa {
    Lpa(page as u32)
}

impl<D: BlockDevice> BTree<D> {
    /// An empty tree using every logical page of `device` (one empty leaf is written).
    pub fn create(device: D, config: BTreeConfig) -> Result<Self, EngineError> {
        let page = device.page_size_bytes();
        if page < 128 || !page.is_multiple_of(8) {
            return Err(EngineError::config(
                "page_size_bytes",
                page,
                "the tree needs pages of at least 128 B, a multiple of 8",
            ));
        }
        for (field, value, max) in [
            (
                "leaf_keys_max",
                config.leaf_keys_max,
                node::leaf_capacity(page),
            ),
            (
                "inner_keys_max",
                config.inner_keys_max,
                node::inner_capacity(page),
            ),
        ] {
            if !(3..=max).contains(&value) {
                return Err(EngineError::config(
                    field,
                    value,
                    format!("must be in 3..={max} for {page}-byte pages"),
                ));
            }
        }
        if device.logical_page_count() < 2 || device.logical_page_count() > u64::from(u32::MAX) {
            return Err(EngineError::config(
                "logical_page_count",
                device.logical_page_count(),
                "must be in 2..2^32",
            ));
        }
        let mut tree = BTree {
            device,
            config,
            root: 0,
            height: 0,
            len: 0,
            free: Vec::new(),
            next_unused: 0,
            key_buf: vec![0; page],
            value_buf: vec![0; page],
        };
        let root = tree.allocate()?;
        let value_page = tree.allocate()?;
        tree.root = root;
        tree.write_leaf(
            root,
            &Leaf {
                next: NO_PAGE,
                value_page,
                ..Leaf::default()
            },
        )?;
        Ok(tree)
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn device(&self) -> &D {
        &self.device
    }

    /// The device, for calls beside the tree's own (e.g. SiM searches of its pages); writing
    /// the tree's pages through it corrupts the tree.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    pub fn into_device(self) -> D {
        self.device
    }

    /// Pages in use (nodes; a leaf counts two).
    pub fn pages_used(&self) -> u64 {
        self.next_unused - self.free.len() as u64
    }

    fn allocate(&mut self) -> Result<u64, EngineError> {
        if let Some(page) = self.free.pop() {
            return Ok(page);
        }
        if self.next_unused >= self.device.logical_page_count() {
            return Err(EngineError::TableFull {
                slot_count: self.device.logical_page_count(),
            });
        }
        self.next_unused += 1;
        Ok(self.next_unused - 1)
    }

    fn release(&mut self, page: u64) -> Result<(), EngineError> {
        self.device.trim_page(lpa(page))?;
        self.free.push(page);
        Ok(())
    }

    fn read_inner(&mut self, page: u64) -> Result<Inner, EngineError> {
        self.device.read_page(lpa(page), &mut self.key_buf)?;
        node::decode_inner(lpa(page), &self.key_buf)
    }

    fn write_inner(&mut self, page: u64, inner: &Inner) -> Result<(), EngineError> {
        debug_assert!(inner.keys.len() <= self.config.inner_keys_max);
        node::encode_inner(inner, &mut self.key_buf);
        self.device.write_page(lpa(page), &self.key_buf)
    }

    fn read_leaf_keys(&mut self, page: u64) -> Result<Leaf, EngineError> {
        self.device.read_page(lpa(page), &mut self.key_buf)?;
        node::decode_leaf_keys(lpa(page), &self.key_buf)
    }

    fn read_leaf(&mut self, page: u64) -> Result<Leaf, EngineError> {
        let mut leaf = self.read_leaf_keys(page)?;
        self.device
            .read_page(lpa(leaf.value_page), &mut self.value_buf)?;
        node::decode_leaf_values(lpa(leaf.value_page), page, &self.value_buf, &mut leaf)?;
        Ok(leaf)
    }

    fn write_leaf(&mut self, page: u64, leaf: &Leaf) -> Result<(), EngineError> {
        debug_assert!(leaf.keys.len() <= self.config.leaf_keys_max);
        node::encode_leaf(leaf, &mut self.key_buf, &mut self.value_buf, page);
        self.device.write_page(lpa(page), &self.key_buf)?;
        self.device
            .write_page(lpa(leaf.value_page), &self.value_buf)
    }

    fn check_key(key: u64) -> Result<(), EngineError> {
        if key == EMPTY_KEY {
            return Err(EngineError::config(
                "key",
                key,
                "u64::MAX marks empty leaf slots",
            ));
        }
        Ok(())
    }

    /// The key page of the leaf whose range holds `key`.
    fn find_leaf(&mut self, key: u64) -> Result<u64, EngineError> {
        let mut page = self.root;
        for _ in 0..self.height {
            let inner = self.read_inner(page)?;
            page = inner.children[inner.keys.partition_point(|k| *k <= key)];
        }
        Ok(page)
    }

    /// The key page of the leaf whose range holds `key`, reading only the inner nodes (a SiM
    /// controller then searches that page on the chip instead of reading it).
    pub fn key_page_of(&mut self, key: u64) -> Result<Lpa, EngineError> {
        Ok(lpa(self.find_leaf(key)?))
    }

    /// Where `key` is or would go (reads the inner nodes and the key page).
    pub fn leaf_of(&mut self, key: u64) -> Result<LeafSlot, EngineError> {
        let page = self.find_leaf(key)?;
        let leaf = self.read_leaf_keys(page)?;
        let (slot, found) = match leaf.keys.binary_search(&key) {
            Ok(i) => (i, true),
            Err(i) => (i, false),
        };
        Ok(LeafSlot {
            key_page: lpa(page),
            value_page: lpa(leaf.value_page),
            slot,
            found,
        })
    }

    /// Point lookup: the value page is read only when the key is found.
    pub fn get(&mut self, key: u64) -> Result<Option<u64>, EngineError> {
        if key == EMPTY_KEY {
            return Ok(None);
        }
        let at = self.leaf_of(key)?;
        if !at.found {
            return Ok(None);
        }
        self.device.read_page(at.value_page, &mut self.value_buf)?;
        Ok(Some(node::value_at(&self.value_buf, at.slot)))
    }

    /// Inserts `key` or replaces its value; returns the old value.
    pub fn insert(&mut self, key: u64, value: u64) -> Result<Option<u64>, EngineError> {
        Self::check_key(key)?;
        let (old, split) = self.insert_at(self.root, self.height, key, value)?;
        if let Some((separator, right)) = split {
            let new_root = self.allocate()?;
            let root = Inner {
                keys: vec![separator],
                children: vec![self.root, right],
            };
            self.write_inner(new_root, &root)?;
            self.root = new_root;
            self.height += 1;
        }
        if old.is_none() {
            self.len += 1;
        }
        Ok(old)
    }

    /// Returns the old value and, when the node split, the separator and the new right node.
    fn insert_at(
        &mut self,
        page: u64,
        height: u32,
        key: u64,
        value: u64,
    ) -> Result<(Option<u64>, Option<Split>), EngineError> {
        if height == 0 {
            let mut leaf = self.read_leaf(page)?;
            match leaf.keys.binary_search(&key) {
                Ok(i) => {
                    let old = std::mem::replace(&mut leaf.values[i], value);
                    self.write_leaf(page, &leaf)?;
                    return Ok((Some(old), None));
                }
                Err(i) => {
                    leaf.keys.insert(i, key);
                    leaf.values.insert(i, value);
                }
            }
            if leaf.keys.len() <= self.config.leaf_keys_max {
                self.write_leaf(page, &leaf)?;
                return Ok((None, None));
            }
            let half = leaf.keys.len() / 2;
            let right_page = self.allocate()?;
            let right = Leaf {
                keys: leaf.keys.split_off(half),
                values: leaf.values.split_off(half),
                next: leaf.next,
                value_page: self.allocate()?,
            };
            leaf.next = right_page;
            self.write_leaf(right_page, &right)?;
            self.write_leaf(page, &leaf)?;
            return Ok((None, Some((right.keys[0], right_page))));
        }
        let mut inner = self.read_inner(page)?;
        let at = inner.keys.partition_point(|k| *k <= key);
        let (old, split) = self.insert_at(inner.children[at], height - 1, key, value)?;
        let Some((separator, right_child)) = split else {
            return Ok((old, None));
        };
        inner.keys.insert(at, separator);
        inner.children.insert(at + 1, right_child);
        if inner.keys.len() <= self.config.inner_keys_max {
            self.write_inner(page, &inner)?;
            return Ok((old, None));
        }
        let mid = inner.keys.len() / 2;
        let right = Inner {
            keys: inner.keys.split_off(mid + 1),
            children: inner.children.split_off(mid + 1),
        };
        let up = inner.keys.pop().expect("mid key");
        let right_page = self.allocate()?;
        self.write_inner(right_page, &right)?;
        self.write_inner(page, &inner)?;
        Ok((old, Some((up, right_page))))
    }

    /// Removes `key`; returns its value.
    pub fn delete(&mut self, key: u64) -> Result<Option<u64>, EngineError> {
        if key == EMPTY_KEY {
            return Ok(None);
        }
        let (removed, _) = self.delete_at(self.root, self.height, key)?;
        if removed.is_some() {
            self.len -= 1;
        }
        if self.height > 0 {
            let root = self.read_inner(self.root)?;
            if root.keys.is_empty() {
                let old = self.root;
                self.root = root.children[0];
                self.height -= 1;
                self.release(old)?;
            }
        }
        Ok(removed)
    }

    /// Returns the removed value and the node's key count after the removal.
    fn delete_at(
        &mut self,
        page: u64,
        height: u32,
        key: u64,
    ) -> Result<(Option<u64>, usize), EngineError> {
        if height == 0 {
            let mut leaf = self.read_leaf(page)?;
            let Ok(i) = leaf.keys.binary_search(&key) else {
                return Ok((None, leaf.keys.len()));
            };
            leaf.keys.remove(i);
            let value = leaf.values.remove(i);
            self.write_leaf(page, &leaf)?;
            return Ok((Some(value), leaf.keys.len()));
        }
        let mut inner = self.read_inner(page)?;
        let at = inner.keys.partition_point(|k| *k <= key);
        let (removed, child_len) = self.delete_at(inner.children[at], height - 1, key)?;
        let child_min = if height == 1 {
            self.config.leaf_keys_max / 2
        } else {
            self.config.inner_keys_max / 2
        };
        if removed.is_some() && child_len < child_min {
            let left = if at > 0 { at - 1 } else { at };
            self.rebalance(&mut inner, left, height - 1)?;
            self.write_inner(page, &inner)?;
        }
        Ok((removed, inner.keys.len()))
    }

    /// Merges children `i` and `i + 1` of `parent` (both at `height`) or evens them out.
    fn rebalance(&mut self, parent: &mut Inner, i: usize, height: u32) -> Result<(), EngineError> {
        let (left_page, right_page) = (parent.children[i], parent.children[i + 1]);
        if height == 0 {
            let mut left = self.read_leaf(left_page)?;
            let mut right = self.read_leaf(right_page)?;
            if left.keys.len() + right.keys.len() <= self.config.leaf_keys_max {
                left.keys.append(&mut right.keys);
                left.values.append(&mut right.values);
                left.next = right.next;
                self.write_leaf(left_page, &left)?;
                self.release(right.value_page)?;
                self.release(right_page)?;
                parent.keys.remove(i);
                parent.children.remove(i + 1);
                return Ok(());
            }
            let mut keys = std::mem::take(&mut left.keys);
            keys.append(&mut right.keys);
            let mut values = std::mem::take(&mut left.values);
            values.append(&mut right.values);
            let half = keys.len() / 2;
            right.keys = keys.split_off(half);
            right.values = values.split_off(half);
            (left.keys, left.values) = (keys, values);
            parent.keys[i] = right.keys[0];
            self.write_leaf(left_page, &left)?;
            return self.write_leaf(right_page, &right);
        }
        let mut left = self.read_inner(left_page)?;
        let mut right = self.read_inner(right_page)?;
        let mut keys = std::mem::take(&mut left.keys);
        keys.push(parent.keys[i]);
        keys.append(&mut right.keys);
        let mut children = std::mem::take(&mut left.children);
        children.append(&mut right.children);
        if keys.len() <= self.config.inner_keys_max {
            self.write_inner(left_page, &Inner { keys, children })?;
            self.release(right_page)?;
            parent.keys.remove(i);
            parent.children.remove(i + 1);
            return Ok(());
        }
        let mid = keys.len() / 2;
        let right_keys = keys.split_off(mid + 1);
        parent.keys[i] = keys.pop().expect("mid key");
        let right_children = children.split_off(mid + 1);
        self.write_inner(left_page, &Inner { keys, children })?;
        self.write_inner(
            right_page,
            &Inner {
                keys: right_keys,
                children: right_children,
            },
        )
    }

    /// Entries with `low ≤ key < high`, in key order, following the leaf chain.
    pub fn range(&mut self, low: u64, high: u64) -> Result<Vec<(u64, u64)>, EngineError> {
        let mut out = Vec::new();
        if low >= high {
            return Ok(out);
        }
        let mut page = self.find_leaf(low)?;
        loop {
            let leaf = self.read_leaf(page)?;
            for (k, v) in leaf.keys.iter().zip(&leaf.values) {
                if *k >= high {
                    return Ok(out);
                }
                if *k >= low {
                    out.push((*k, *v));
                }
            }
            if leaf.next == NO_PAGE {
                return Ok(out);
            }
            page = leaf.next;
        }
    }
}

#[cfg(test)]
mod tests;
