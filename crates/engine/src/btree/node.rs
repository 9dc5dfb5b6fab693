//! On-page encoding of the B+tree's nodes, in 8-byte little-endian words. Every page starts
//! with a 64-byte header chunk (8 words) and keeps its entries from word 8 on, so a leaf's key
//! page and value page are SiM pages (paper 004 §III-A, Fig. 8: header chunk, then 8-byte slots;
//! the value of key slot `i` is value slot `i`; unused key slots hold [`EMPTY_KEY`], which no
//! search key equals).
//!
//! | page | word 0 | word 1 | word 2 | word 3 | words 8.. |
//! |---|---|---|---|---|---|
//! | leaf keys | `LEAF_MAGIC` | count | next leaf (key page) or `NO_PAGE` | value page | keys |
//! | leaf values | `VALUES_MAGIC` | key page | | | values |
//! | inner | `INNER_MAGIC` | count | | | keys, then from word 8 + capacity the children |

use crate::device::Lpa;
use crate::error::EngineError;

/// Key of an unused leaf slot (refused as a key).
pub const EMPTY_KEY: u64 = u64::MAX;
/// "No next leaf".
pub const NO_PAGE: u64 = u64::MAX;
/// Words of the header chunk.
pub const HEADER_WORDS: usize = 8;

pub const LEAF_MAGIC: u64 = 0x4641_454C_2B42_4C4E; // "NLB+LEAF"
const VALUES_MAGIC: u64 = 0x534C_4156_2B42_4C4E; // "NLB+VALS"
const INNER_MAGIC: u64 = 0x524E_4E49_2B42_4C4E; // "NLB+INNR"

/// Most keys a leaf page holds.
pub fn leaf_capacity(page_size_bytes: usize) -> usize {
    page_size_bytes / 8 - HEADER_WORDS
}

/// Most keys an inner page holds (it also holds one child more than keys).
pub fn inner_capacity(page_size_bytes: usize) -> usize {
    (page_size_bytes / 8 - HEADER_WORDS - 1) / 2
}

fn word(page: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(page[8 * i..8 * i + 8].try_into().expect("8 bytes"))
}

fn set_word(page: &mut [u8], i: usize, value: u64) {
    page[8 * i..8 * i + 8].copy_from_slice(&value.to_le_bytes());
}

fn corrupt(lpa: Lpa, detail: String) -> EngineError {
    EngineError::Corruption {
        lpa,
        slot_in_page: 0,
        detail,
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Leaf {
    pub keys: Vec<u64>,
    pub values: Vec<u64>,
    pub next: u64,
    pub value_page: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inner {
    pub keys: Vec<u64>,
    pub children: Vec<u64>,
}

pub fn encode_leaf(leaf: &Leaf, key_page: &mut [u8], value_page: &mut [u8], self_lpa: u64) {
    debug_assert_eq!(leaf.keys.len(), leaf.values.len());
    debug_assert!(leaf.keys.windows(2).all(|w| w[0] < w[1]));
    key_page.fill(0);
    value_page.fill(0);
    set_word(key_page, 0, LEAF_MAGIC);
    set_word(key_page, 1, leaf.keys.len() as u64);
    set_word(key_page, 2, leaf.next);
    set_word(key_page, 3, leaf.value_page);
    set_word(value_page, 0, VALUES_MAGIC);
    set_word(value_page, 1, self_lpa);
    for i in 0..leaf_capacity(key_page.len()) {
        let (key, value) = match (leaf.keys.get(i), leaf.values.get(i)) {
            (Some(k), Some(v)) => (*k, *v),
            _ => (EMPTY_KEY, EMPTY_KEY),
        };
        set_word(key_page, HEADER_WORDS + i, key);
        set_word(value_page, HEADER_WORDS + i, value);
    }
}

/// The key page's header and keys (values left empty).
pub fn decode_leaf_keys(lpa: Lpa, key_page: &[u8]) -> Result<Leaf, EngineError> {
    if word(key_page, 0) != LEAF_MAGIC {
        return Err(corrupt(
            lpa,
            format!("not a leaf key page (magic {:#x})", word(key_page, 0)),
        ));
    }
    let count = word(key_page, 1) as usize;
    if count > leaf_capacity(key_page.len()) {
        return Err(corrupt(lpa, format!("leaf count {count} exceeds the page")));
    }
    let keys = (0..count)
        .map(|i| word(key_page, HEADER_WORDS + i))
        .collect();
    Ok(Leaf {
        keys,
        values: Vec::new(),
        next: word(key_page, 2),
        value_page: word(key_page, 3),
    })
}

/// The values of `leaf` (count from its keys) from its value page.
pub fn decode_leaf_values(
    lpa: Lpa,
    owner: u64,
    value_page: &[u8],
    leaf: &mut Leaf,
) -> Result<(), EngineError> {
    if word(value_page, 0) != VALUES_MAGIC || word(value_page, 1) != owner {
        return Err(corrupt(lpa, format!("not the value page of leaf {owner}")));
    }
    leaf.values = (0..leaf.keys.len())
        .map(|i| word(value_page, HEADER_WORDS + i))
        .collect();
    Ok(())
}

/// Value slot `slot` of a value page.
pub fn value_at(value_page: &[u8], slot: usize) -> u64 {
    word(value_page, HEADER_WORDS + slot)
}

pub fn encode_inner(inner: &Inner, page: &mut [u8]) {
    debug_assert_eq!(inner.children.len(), inner.keys.len() + 1);
    let capacity = inner_capacity(page.len());
    page.fill(0);
    set_word(page, 0, INNER_MAGIC);
    set_word(page, 1, inner.keys.len() as u64);
    for (i, key) in inner.keys.iter().enumerate() {
        set_word(page, HEADER_WORDS + i, *key);
    }
    for (i, child) in inner.children.iter().enumerate() {
        set_word(page, HEADER_WORDS + capacity + i, *child);
    }
}

pub fn decode_inner(lpa: Lpa, page: &[u8]) -> Result<Inner, EngineError> {
    if word(page, 0) != INNER_MAGIC {
        return Err(corrupt(
            lpa,
            format!("not an inner page (magic {:#x})", word(page, 0)),
        ));
    }
    let capacity = inner_capacity(page.len());
    let count = word(page, 1) as usize;
    if count > capacity {
        return Err(corrupt(
            lpa,
            format!("inner count {count} exceeds the page"),
        ));
    }
    Ok(Inner {
        keys: (0..count).map(|i| word(page, HEADER_WORDS + i)).collect(),
        children: (0..=count)
            .map(|i| word(page, HEADER_WORDS + capacity + i))
            .collect(),
    })
}
