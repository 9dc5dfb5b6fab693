//! Database integrations of SiM beyond the B+tree leaf (SPEC S6; paper 004 §V-B to §V-D):
//!
//! - [`field`]: bit-packed row keys — several attributes and a row id in one 64-bit slot, an
//!   equality on any subset of the attributes as one key + mask (§V-B, Fig. 9);
//! - [`secondary`]: a secondary index of such rows on [`SearchStore`](crate::SearchStore)
//!   pages, queried on the chip (search + gather per page) with an exact check on the host;
//! - [`range`]: range predicates as key + mask searches — the paper's approximate power-of-two
//!   bounds (§V-C, Fig. 10: a superset in at most 2 searches) and the exact aligned-block
//!   decomposition;
//! - [`redistribute`](mod@redistribute): splitting pages by a bit slice of the key, one
//!   partition at a time (§V-D);
//! - [`cost`]: bytes, energy and time of a sequence of calls on the chip model.

pub mod cost;
pub mod field;
pub mod range;
pub mod redistribute;
pub mod secondary;

pub use cost::{ChipCost, ChipMeter, chip_bus_bytes, chip_energy_pj};
pub use field::{BitField, RowLayout, VALID_BIT};
pub use redistribute::{
    FullRead, RedistributeStats, Redistribution, redistribute, redistribute_full_read,
};
pub use secondary::{FieldRange, Predicate, RangeMethod, SecondaryIndex, SelectStats, Selection};

#[cfg(test)]
mod tests;
