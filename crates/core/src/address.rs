//! The logical page address every layer speaks: the engine addresses a block device by it, the
//! SSD controller maps it to flash, and it is what a page's out-of-band area records. It lives
//! here, below both, so that there is one `Lpa` type (not one per layer).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A logical page address: logical byte address divided by the page size (paper 000 Fig. 4).
///
/// A dense `u32` index, `#[repr(transparent)]` so that the controller's mapping tables are flat
/// `u32` arrays. [`Lpa::NONE`] marks an empty entry in such a table (a free physical page, an
/// unused buffer slot, a metadata page's out-of-band area); it is never a valid address, and
/// interfaces that may have no address return `Option<Lpa>` instead.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
#[repr(transparent)]
pub struct Lpa(pub u32);

impl Lpa {
    /// "No logical page" in a dense table; never a valid address.
    pub const NONE: Lpa = Lpa(u32::MAX);

    /// Whether this is [`Lpa::NONE`].
    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == u32::MAX
    }

    /// `None` for [`Lpa::NONE`], else the address.
    #[inline]
    pub const fn get(self) -> Option<Lpa> {
        if self.is_none() { None } else { Some(self) }
    }

    /// The address as a table index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The page's first byte for pages of `page_size_bytes`.
    #[inline]
    pub const fn offset_bytes(self, page_size_bytes: u64) -> u64 {
        self.0 as u64 * page_size_bytes
    }
}

impl fmt::Display for Lpa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_is_explicit() {
        assert!(Lpa::NONE.is_none());
        assert_eq!(Lpa::NONE.get(), None);
        assert_eq!(Lpa(7).get(), Some(Lpa(7)));
        assert_eq!(Lpa(3).offset_bytes(4096), 12288);
        assert_eq!(std::mem::size_of::<Lpa>(), 4);
    }
}
