//! Bit-packed row keys (paper 004 §V-B, Fig. 9): a row's indexed attributes and its row id
//! packed into one 64-bit SiM slot, so that an equality on any subset of the attributes is one
//! key + mask search.
//!
//! [`RowLayout`] places, from the most significant bit down: bit 63 = the *valid* bit (set in
//! every row, clear in unused slots, compared by every query), then the attribute fields in the
//! order given, then unused bits; the row id takes the lowest bits. Attributes are unsigned
//! integers of their field's width, most significant field first as in MySQL's key encoding
//! (the paper's ref. 23).

use crate::error::{SearchError, SearchResult};
use nandlab_nand::SearchKey;

/// `bits` bits of a slot starting at bit `shift` (bit 0 = least significant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitField {
    pub shift: u32,
    pub bits: u32,
}

impl BitField {
    /// A field of 1..=64 bits inside the 64-bit slot.
    pub fn new(shift: u32, bits: u32) -> SearchResult<Self> {
        if bits == 0 || bits > 64 || shift.checked_add(bits).is_none_or(|end| end > 64) {
            return Err(SearchError::Argument {
                argument: "field",
                message: format!("{bits} bits at bit {shift} do not fit a 64-bit slot"),
            });
        }
        Ok(BitField { shift, bits })
    }

    /// The largest value the field holds.
    pub fn value_max(&self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// The field's bits in slot position.
    pub fn mask(&self) -> u64 {
        self.value_max() << self.shift
    }

    /// The field's value in `slot`.
    pub fn get(&self, slot: u64) -> u64 {
        (slot >> self.shift) & self.value_max()
    }

    /// `value` moved to the field's position (`value` must fit).
    pub fn put(&self, value: u64) -> u64 {
        debug_assert!(value <= self.value_max());
        value << self.shift
    }

    /// The slot bits of the field's high part: bits `low_bits..bits` of the field. A search
    /// comparing them tests whether the value lies in the aligned block of `2^low_bits`
    /// values starting at `value` with those low bits cleared.
    pub fn high_mask(&self, low_bits: u32) -> u64 {
        debug_assert!(low_bits <= self.bits);
        if low_bits == self.bits {
            return 0;
        }
        (self.value_max() >> low_bits << low_bits) << self.shift
    }
}

/// Where each attribute and the row id of a packed row key lie (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowLayout {
    names: Vec<String>,
    fields: Vec<BitField>,
    row_id: BitField,
}

/// Bit of every row's slot that marks it used.
pub const VALID_BIT: u64 = 1 << 63;

impl RowLayout {
    /// A layout of `attributes` (name, width in bits), most significant first, and a row id of
    /// `row_id_bits`; 1 + the widths + `row_id_bits` must not exceed 64.
    pub fn new(attributes: &[(&str, u32)], row_id_bits: u32) -> SearchResult<Self> {
        let bad = |message: String| SearchError::Argument {
            argument: "layout",
            message,
        };
        if attributes.is_empty() {
            return Err(bad("no attribute given".into()));
        }
        let used: u64 =
            attributes.iter().map(|a| u64::from(a.1)).sum::<u64>() + u64::from(row_id_bits) + 1;
        if used > 64 {
            return Err(bad(format!(
                "the valid bit, the attributes and a {row_id_bits}-bit row id take {used} bits; a slot has 64"
            )));
        }
        let mut names = Vec::with_capacity(attributes.len());
        let mut fields = Vec::with_capacity(attributes.len());
        let mut top = 63; // bits below the valid bit
        for (name, bits) in attributes {
            if *bits == 0 {
                return Err(bad(format!("attribute `{name}` has 0 bits")));
            }
            if names.iter().any(|n| n == name) {
                return Err(bad(format!("attribute `{name}` is given twice")));
            }
            top -= bits;
            names.push((*name).to_string());
            fields.push(BitField::new(top, *bits)?);
        }
        if row_id_bits == 0 {
            return Err(bad("the row id needs at least 1 bit".into()));
        }
        let row_id = BitField::new(0, row_id_bits)?;
        debug_assert!(row_id.bits <= top);
        Ok(RowLayout {
            names,
            fields,
            row_id,
        })
    }

    pub fn attribute_count(&self) -> usize {
        self.fields.len()
    }

    /// The field of attribute `name`.
    pub fn field(&self, name: &str) -> SearchResult<BitField> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.fields[i])
            .ok_or_else(|| SearchError::Argument {
                argument: "attribute",
                message: format!("`{name}` is not in the layout ({})", self.names.join(", ")),
            })
    }

    pub fn row_id_field(&self) -> BitField {
        self.row_id
    }

    /// The slot of a row: `values` in attribute order, each within its width.
    pub fn pack(&self, values: &[u64], row_id: u64) -> SearchResult<u64> {
        if values.len() != self.fields.len() {
            return Err(SearchError::Argument {
                argument: "values",
                message: format!(
                    "{} values for {} attributes",
                    values.len(),
                    self.fields.len()
                ),
            });
        }
        let mut slot = VALID_BIT | self.checked_put("row id", self.row_id, row_id)?;
        for ((name, field), value) in self.names.iter().zip(&self.fields).zip(values) {
            slot |= self.checked_put(name, *field, *value)?;
        }
        Ok(slot)
    }

    fn checked_put(&self, name: &str, field: BitField, value: u64) -> SearchResult<u64> {
        if value > field.value_max() {
            return Err(SearchError::Argument {
                argument: "values",
                message: format!(
                    "{name} = {value} does not fit its {} bits (max {})",
                    field.bits,
                    field.value_max()
                ),
            });
        }
        Ok(field.put(value))
    }

    /// The attribute values of a slot, in attribute order.
    pub fn values(&self, slot: u64) -> Vec<u64> {
        self.fields.iter().map(|f| f.get(slot)).collect()
    }

    pub fn row_id(&self, slot: u64) -> u64 {
        self.row_id.get(slot)
    }

    /// The key + mask of "every attribute of `equal` has its value" (and the slot is valid):
    /// one search per page answers it.
    pub fn equality_key(&self, equal: &[(&str, u64)]) -> SearchResult<SearchKey> {
        let mut key = SearchKey {
            key: VALID_BIT,
            mask: VALID_BIT,
        };
        for (name, value) in equal {
            let field = self.field(name)?;
            let bits = self.checked_put(name, field, *value)?;
            if key.mask & field.mask() != 0 && key.key & field.mask() != bits {
                return Err(SearchError::Argument {
                    argument: "equal",
                    message: format!("attribute `{name}` is given two different values"),
                });
            }
            key.key |= bits;
            key.mask |= field.mask();
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_unpack_round_trip_and_keys_select_by_attribute() {
        let layout = RowLayout::new(&[("gender", 1), ("age", 7), ("city", 6)], 20).unwrap();
        let slot = layout.pack(&[1, 42, 17], 12_345).unwrap();
        assert_eq!(slot >> 63, 1);
        assert_eq!(layout.values(slot), vec![1, 42, 17]);
        assert_eq!(layout.row_id(slot), 12_345);
        assert_eq!(
            layout.field("gender").unwrap(),
            BitField { shift: 62, bits: 1 }
        );
        assert_eq!(
            layout.field("city").unwrap(),
            BitField { shift: 49, bits: 6 }
        );
        let key = layout.equality_key(&[("age", 42)]).unwrap();
        assert!(key.matches(slot));
        assert!(!key.matches(layout.pack(&[1, 43, 17], 12_345).unwrap()));
        assert!(!key.matches(0), "an unused slot never matches");
        let both = layout.equality_key(&[("city", 17), ("gender", 1)]).unwrap();
        assert!(both.matches(slot));
        assert!(!both.matches(layout.pack(&[0, 42, 17], 1).unwrap()));
    }

    #[test]
    fn bad_layouts_and_values_are_named() {
        let too_wide = RowLayout::new(&[("a", 40)], 24).unwrap_err();
        assert!(too_wide.to_string().contains("65 bits"), "{too_wide}");
        let twice = RowLayout::new(&[("a", 4), ("a", 4)], 8).unwrap_err();
        assert!(twice.to_string().contains("`a` is given twice"), "{twice}");
        let layout = RowLayout::new(&[("age", 7)], 8).unwrap();
        let big = layout.pack(&[128], 0).unwrap_err();
        assert!(big.to_string().contains("age = 128"), "{big}");
        let id = layout.pack(&[1], 256).unwrap_err();
        assert!(id.to_string().contains("row id = 256"), "{id}");
        let unknown = layout.equality_key(&[("salary", 1)]).unwrap_err();
        assert!(unknown.to_string().contains("`salary`"), "{unknown}");
        let two = layout.equality_key(&[("age", 1), ("age", 2)]).unwrap_err();
        assert!(two.to_string().contains("two different values"), "{two}");
    }

    #[test]
    fn high_mask_compares_the_block_prefix() {
        let f = BitField::new(8, 16).unwrap();
        assert_eq!(f.high_mask(0), f.mask());
        assert_eq!(f.high_mask(16), 0);
        assert_eq!(f.high_mask(4), 0xFFF0 << 8);
    }
}
