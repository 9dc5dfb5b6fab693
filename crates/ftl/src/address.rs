//! Typed addresses of the controller. Every table of the FTL is indexed by one of these, so a
//! logical page cannot be passed where a physical page is expected, nor a block where a plane
//! is (`PageTable::map(lpa, ppa)` or `alloc_gc(block, plane)` with swapped arguments does not
//! compile).
//!
//! - [`Lpa`]: logical page, the workspace's one type (from `nandlab_core`, shared with the
//!   engine).
//! - [`Ppa`]: flat physical page, the chip model's dense page index as a `u32`.
//! - [`BlockId`], [`PlaneId`], [`DieId`]: the chip model's dense ids (device-wide, channel
//!   major), used as they are.
//! - `BufferSlot`: a slot of the DRAM write buffer.
//!
//! The hot tables are flat arrays of these (`#[repr(transparent)]` over `u32`). An empty entry
//! is the type's own `NONE` (tested with `is_none()`, turned into an `Option` by `get()`);
//! interfaces that may have no answer return `Option`.

pub use nandlab_core::Lpa;
pub use nandlab_nand::{BlockId, DieId, PlaneId};

// The OOB LPA of a page written inside a transaction (X-FTL, `mapping/txn.rs`) carries a tag
// bit; the flash layer and recovery read it back.

/// Bit of an OOB LPA that marks a page written inside a transaction.
pub const TX_LPA_BIT: u32 = 1 << 31;

/// The host LPA of an OOB LPA (clears [`TX_LPA_BIT`]).
#[inline]
pub fn host_lpa(lpa: Lpa) -> Lpa {
    if lpa.is_none() {
        return lpa;
    }
    Lpa(lpa.0 & !TX_LPA_BIT)
}

/// What a recovery scan makes of an OOB LPA with sequence number `sequence`, given the commit
/// watermark `watermark` (0: no commit record): the host LPA, or `None` for a transactional
/// page without a durable commit (discarded).
#[inline]
pub fn resolve(lpa: Option<Lpa>, sequence: u64, watermark: u64) -> Option<Lpa> {
    let lpa = lpa?;
    if lpa.0 & TX_LPA_BIT == 0 {
        return Some(lpa);
    }
    (sequence <= watermark).then(|| host_lpa(lpa))
}

/// A dense `u32` index with an explicit "none" value, for flat tables.
macro_rules! table_id {
    ($(#[$doc:meta])* $vis:vis $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        $vis struct $name(pub u32);

        impl $name {
            /// "Nothing" in a dense table; never a valid id.
            pub const NONE: $name = $name(u32::MAX);
            /// Whether this is `NONE`.
            #[inline]
            pub const fn is_none(self) -> bool {
                self.0 == u32::MAX
            }
            /// `None` for `NONE`, else the id.
            #[inline]
            pub const fn get(self) -> Option<$name> {
                if self.is_none() { None } else { Some(self) }
            }
            /// The id as a table index.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

table_id!(
    /// Flat physical page address: the chip model's dense `Ppa` (block-major, channel-major
    /// blocks) as a `u32`, which bounds the FTL to 2^32 − 1 physical pages.
    pub Ppa
);
table_id!(
    /// A slot of the DRAM write buffer.
    pub(crate) BufferSlot
);

impl From<Ppa> for nandlab_nand::Ppa {
    fn from(ppa: Ppa) -> Self {
        nandlab_nand::Ppa(u64::from(ppa.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_u32_with_an_explicit_none() {
        assert_eq!(std::mem::size_of::<Ppa>(), 4);
        assert_eq!(std::mem::size_of::<BlockId>(), 4);
        assert!(Ppa::NONE.is_none() && Ppa::NONE.get().is_none());
        assert_eq!(Ppa(3).get(), Some(Ppa(3)));
        assert_eq!(nandlab_nand::Ppa::from(Ppa(9)), nandlab_nand::Ppa(9));
    }
}
