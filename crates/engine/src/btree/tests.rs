//! The tree against `BTreeMap` over random operation sequences, with tiny nodes so that splits,
//! borrows, merges and root changes happen often.

use super::*;
use crate::mem::MemDevice;
use nandlab_core::SimTime;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn tree(leaf: usize, inner: usize, pages: u64) -> BTree<MemDevice> {
    let device = MemDevice::new(256, pages, SimTime::from_ns(1), SimTime::from_ns(1)).unwrap();
    BTree::create(
        device,
        BTreeConfig {
            leaf_keys_max: leaf,
            inner_keys_max: inner,
        },
    )
    .unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64, u64),
    Delete(u64),
    Get(u64),
    Range(u64, u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..200u64, any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => (0..200u64).prop_map(Op::Delete),
        1 => (0..200u64).prop_map(Op::Get),
        1 => (0..200u64, 0..60u64).prop_map(|(k, n)| Op::Range(k, k + n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn matches_a_btreemap(ops in proptest::collection::vec(op(), 1..600), leaf in 3..6usize, inner in 3..6usize) {
        let mut t = tree(leaf, inner, 4096);
        let mut reference = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => prop_assert_eq!(t.insert(k, v).unwrap(), reference.insert(k, v)),
                Op::Delete(k) => prop_assert_eq!(t.delete(k).unwrap(), reference.remove(&k)),
                Op::Get(k) => prop_assert_eq!(t.get(k).unwrap(), reference.get(&k).copied()),
                Op::Range(a, b) => {
                    let expected: Vec<(u64, u64)> = reference.range(a..b).map(|(k, v)| (*k, *v)).collect();
                    prop_assert_eq!(t.range(a, b).unwrap(), expected);
                }
            }
            prop_assert_eq!(t.len(), reference.len() as u64);
        }
        let all: Vec<(u64, u64)> = reference.iter().map(|(k, v)| (*k, *v)).collect();
        prop_assert_eq!(t.range(0, u64::MAX).unwrap(), all);
    }
}

#[test]
fn grows_and_shrinks_back_to_one_leaf_and_frees_its_pages() {
    let mut t = tree(4, 3, 4096);
    for k in 0..500 {
        t.insert(k * 7, k).unwrap();
    }
    assert!(t.height() >= 3, "height {}", t.height());
    let grown = t.pages_used();
    for k in 0..500 {
        assert_eq!(t.delete(k * 7).unwrap(), Some(k));
    }
    assert_eq!((t.height(), t.len()), (0, 0));
    assert_eq!(t.pages_used(), 2, "one leaf left (of {grown} pages)");
    assert_eq!(t.get(0).unwrap(), None);
}

#[test]
fn leaves_are_sim_pages_and_lookups_skip_the_value_page_on_a_miss() {
    let mut t = tree(node::leaf_capacity(256), 3, 64);
    t.insert(42, 4200).unwrap();
    let at = t.leaf_of(42).unwrap();
    assert!(at.found && at.slot == 0);
    let mut page = vec![0u8; 256];
    let mut device = t.into_device();
    device.read_page(at.key_page, &mut page).unwrap();
    // slot 8 is the first data slot of a SiM page; unused slots hold u64::MAX
    assert_eq!(u64::from_le_bytes(page[64..72].try_into().unwrap()), 42);
    assert_eq!(
        u64::from_le_bytes(page[72..80].try_into().unwrap()),
        EMPTY_KEY
    );
    device.read_page(at.value_page, &mut page).unwrap();
    assert_eq!(u64::from_le_bytes(page[64..72].try_into().unwrap()), 4200);
    let mut t = tree(4, 3, 64);
    t.insert(1, 1).unwrap();
    let reads = t.device().counters().host_reads;
    assert_eq!(t.get(2).unwrap(), None);
    assert_eq!(t.device().counters().host_reads - reads, 1, "key page only");
}

#[test]
fn bad_input_is_refused_with_the_field_named() {
    let device = MemDevice::new(256, 16, SimTime::ZERO, SimTime::ZERO).unwrap();
    let err = BTree::create(
        device,
        BTreeConfig {
            leaf_keys_max: 2,
            inner_keys_max: 3,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("leaf_keys_max"), "{err}");
    let mut t = tree(4, 3, 8);
    assert!(
        t.insert(EMPTY_KEY, 1)
            .unwrap_err()
            .to_string()
            .contains("`key`")
    );
    let mut full = None;
    for k in 0..100 {
        if let Err(e) = t.insert(k, k) {
            full = Some(e);
            break;
        }
    }
    assert!(
        matches!(full, Some(EngineError::TableFull { .. })),
        "{full:?}"
    );
}
