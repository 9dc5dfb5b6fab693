//! Geometry (SPEC N1): channel → chip (package / chip enable) → die → plane → block → page.
//!
//! Every count is configurable, far beyond real parts (64 dies, 16 planes). Hierarchical
//! addresses are [`PageAddress`]; the simulator works on dense flat ids ([`DieId`], [`PlaneId`],
//! [`BlockId`], [`Ppa`]) so that its tables are flat `Vec`s.

use crate::error::{NandError, NandResult, config_error};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest number of planes per die that the model supports (multiplane ops address planes
/// with a 16-bit mask).
pub const MAX_PLANES_PER_DIE: u32 = 16;

/// The largest number of blocks a device may have: per-block state is kept in flat tables, and
/// 2^26 blocks (64 Mi, e.g. 64 dies x 4 planes x 262,144 blocks) bound them to ~2 GB.
pub const MAX_TOTAL_BLOCKS: u64 = 1 << 26;

/// The smallest page (data area) the model accepts: 512 bytes, the small-block NAND page.
pub const MIN_PAGE_SIZE_BYTES: u32 = 512;
/// The largest page (data area) the model accepts: 16 MiB.
pub const MAX_PAGE_SIZE_BYTES: u32 = 1 << 24;

/// Counts of every level of the hierarchy and the page format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    /// Independent NAND I/O buses.
    pub channels: u32,
    /// Packages (chip enables) sharing one channel's bus.
    pub chips_per_channel: u32,
    /// Dies (logical units) per package; dies of a channel share its bus.
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// User data bytes per page (the data register size).
    pub page_size_bytes: u32,
    /// Spare (out-of-band) bytes per page, beside the data area.
    #[serde(default)]
    pub spare_bytes_per_page: u32,
}

impl Geometry {
    pub fn validate(&self) -> NandResult<()> {
        let counts = [
            ("geometry.channels", self.channels),
            ("geometry.chips_per_channel", self.chips_per_channel),
            ("geometry.dies_per_chip", self.dies_per_chip),
            ("geometry.planes_per_die", self.planes_per_die),
            ("geometry.blocks_per_plane", self.blocks_per_plane),
            ("geometry.pages_per_block", self.pages_per_block),
            ("geometry.page_size_bytes", self.page_size_bytes),
        ];
        for (key, value) in counts {
            if value == 0 {
                return Err(config_error(key, "must be at least 1"));
            }
        }
        if self.planes_per_die > MAX_PLANES_PER_DIE {
            return Err(config_error(
                "geometry.planes_per_die",
                format!(
                    "{} planes per die; at most {MAX_PLANES_PER_DIE} are supported",
                    self.planes_per_die
                ),
            ));
        }
        // saturating: five u32 counts can overflow even a u64
        let blocks = [
            self.channels,
            self.chips_per_channel,
            self.dies_per_chip,
            self.planes_per_die,
            self.blocks_per_plane,
        ]
        .into_iter()
        .fold(1u64, |product, count| {
            product.saturating_mul(u64::from(count))
        });
        if blocks > MAX_TOTAL_BLOCKS {
            return Err(config_error(
                "geometry",
                format!("{blocks} blocks in total; at most {MAX_TOTAL_BLOCKS} are supported"),
            ));
        }
        if u64::from(self.pages_per_block) > 1 << 20 {
            return Err(config_error(
                "geometry.pages_per_block",
                format!("{} pages per block; at most 2^20", self.pages_per_block),
            ));
        }
        let page = self.page_size_bytes;
        if !(MIN_PAGE_SIZE_BYTES..=MAX_PAGE_SIZE_BYTES).contains(&page) || !page.is_power_of_two() {
            return Err(config_error(
                "geometry.page_size_bytes",
                format!(
                    "{page} bytes; a NAND page's data area is a power of two from \
                     {MIN_PAGE_SIZE_BYTES} bytes to 16 MiB (e.g. 2048, 4096, 16384)"
                ),
            ));
        }
        if self.spare_bytes_per_page > page {
            return Err(config_error(
                "geometry.spare_bytes_per_page",
                format!(
                    "{} spare bytes exceed the {page}-byte data area of a page",
                    self.spare_bytes_per_page
                ),
            ));
        }
        Ok(())
    }

    pub fn dies_per_channel(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }
    pub fn total_dies(&self) -> u32 {
        self.channels * self.dies_per_channel()
    }
    pub fn total_planes(&self) -> u32 {
        self.total_dies() * self.planes_per_die
    }
    pub fn total_blocks(&self) -> u32 {
        self.total_planes() * self.blocks_per_plane
    }
    pub fn total_pages(&self) -> u64 {
        u64::from(self.total_blocks()) * u64::from(self.pages_per_block)
    }
    pub fn block_size_bytes(&self) -> u64 {
        u64::from(self.pages_per_block) * u64::from(self.page_size_bytes)
    }
    pub fn capacity_bytes(&self) -> u64 {
        self.total_pages() * u64::from(self.page_size_bytes)
    }

    /// Checks every component of `address` against the geometry.
    #[inline]
    pub fn check(&self, address: &PageAddress) -> NandResult<()> {
        if address.channel < self.channels
            && address.chip < self.chips_per_channel
            && address.die < self.dies_per_chip
            && address.plane < self.planes_per_die
            && address.block < self.blocks_per_plane
            && address.page < self.pages_per_block
        {
            return Ok(());
        }
        self.out_of_range(address)
    }

    /// The error of [`Geometry::check`]: the first component out of range.
    #[cold]
    #[inline(never)]
    fn out_of_range(&self, address: &PageAddress) -> NandResult<()> {
        let fields = [
            ("channel", address.channel, self.channels),
            ("chip", address.chip, self.chips_per_channel),
            ("die", address.die, self.dies_per_chip),
            ("plane", address.plane, self.planes_per_die),
            ("block", address.block, self.blocks_per_plane),
            ("page", address.page, self.pages_per_block),
        ];
        for (field, value, limit) in fields {
            if value >= limit {
                return Err(NandError::AddressOutOfRange {
                    field,
                    value: u64::from(value),
                    limit: u64::from(limit),
                    address: address.to_string(),
                });
            }
        }
        Ok(())
    }

    pub fn die_id(&self, address: &PageAddress) -> DieId {
        DieId(
            (address.channel * self.chips_per_channel + address.chip) * self.dies_per_chip
                + address.die,
        )
    }
    pub fn plane_id(&self, address: &PageAddress) -> PlaneId {
        PlaneId(self.die_id(address).0 * self.planes_per_die + address.plane)
    }
    pub fn block_id(&self, address: &PageAddress) -> BlockId {
        BlockId(self.plane_id(address).0 * self.blocks_per_plane + address.block)
    }
    pub fn ppa(&self, address: &PageAddress) -> Ppa {
        Ppa(
            u64::from(self.block_id(address).0) * u64::from(self.pages_per_block)
                + u64::from(address.page),
        )
    }
    pub fn channel_of_die(&self, die: DieId) -> u32 {
        die.0 / self.dies_per_channel()
    }
    pub fn die_of_block(&self, block: BlockId) -> DieId {
        DieId(block.0 / (self.blocks_per_plane * self.planes_per_die))
    }

    /// The hierarchical address of a flat page address (the inverse of [`Geometry::ppa`]).
    pub fn address_of(&self, ppa: Ppa) -> NandResult<PageAddress> {
        if ppa.0 >= self.total_pages() {
            return Err(NandError::AddressOutOfRange {
                field: "ppa",
                value: ppa.0,
                limit: self.total_pages(),
                address: format!("ppa {}", ppa.0),
            });
        }
        let page = (ppa.0 % u64::from(self.pages_per_block)) as u32;
        let mut rest = (ppa.0 / u64::from(self.pages_per_block)) as u32;
        let block = rest % self.blocks_per_plane;
        rest /= self.blocks_per_plane;
        let plane = rest % self.planes_per_die;
        rest /= self.planes_per_die;
        let die = rest % self.dies_per_chip;
        rest /= self.dies_per_chip;
        let chip = rest % self.chips_per_channel;
        let channel = rest / self.chips_per_channel;
        Ok(PageAddress {
            channel,
            chip,
            die,
            plane,
            block,
            page,
        })
    }

    /// The address of page 0 of a flat block id.
    pub fn block_address(&self, block: BlockId) -> NandResult<PageAddress> {
        self.address_of(Ppa(u64::from(block.0) * u64::from(self.pages_per_block)))
    }
}

/// A page's place in the hierarchy. Also names a block (with `page` ignored) for erases.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct PageAddress {
    pub channel: u32,
    pub chip: u32,
    pub die: u32,
    pub plane: u32,
    pub block: u32,
    pub page: u32,
}

impl PageAddress {
    /// The same address on another page of the same block.
    pub fn with_page(self, page: u32) -> Self {
        PageAddress { page, ..self }
    }
    pub fn with_plane(self, plane: u32) -> Self {
        PageAddress { plane, ..self }
    }
}

impl fmt::Display for PageAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ch{}/chip{}/die{}/plane{}/block{}/page{}",
            self.channel, self.chip, self.die, self.plane, self.block, self.page
        )
    }
}

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident, $inner:ty) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        #[repr(transparent)]
        pub struct $name(pub $inner);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

dense_id!(
    /// Dense index of a die over the whole device (channel-major).
    DieId,
    u32
);
dense_id!(
    /// Dense index of a plane over the whole device.
    PlaneId,
    u32
);
dense_id!(
    /// Dense index of a block over the whole device.
    BlockId,
    u32
);
dense_id!(
    /// Physical page address: dense index of a page over the whole device.
    Ppa,
    u64
);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn small() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 16,
            page_size_bytes: 2048,
            spare_bytes_per_page: 64,
        }
    }

    #[test]
    fn totals() {
        let g = small();
        assert_eq!(g.total_dies(), 8);
        assert_eq!(g.total_blocks(), 128);
        assert_eq!(g.total_pages(), 2048);
        assert_eq!(g.capacity_bytes(), 2048 * 2048);
    }

    #[test]
    fn zero_counts_are_rejected_by_key() {
        let mut g = small();
        g.pages_per_block = 0;
        let err = g.validate().unwrap_err().to_string();
        assert!(err.contains("geometry.pages_per_block"), "{err}");
        let mut g = small();
        g.planes_per_die = 17;
        assert!(
            g.validate()
                .unwrap_err()
                .to_string()
                .contains("planes_per_die")
        );
    }

    #[test]
    fn out_of_range_address_names_the_field() {
        let g = small();
        let a = PageAddress {
            block: 8,
            ..PageAddress::default()
        };
        let err = g.check(&a).unwrap_err().to_string();
        assert!(err.contains("block = 8") && err.contains("has 8"), "{err}");
        assert!(g.address_of(Ppa(2048)).is_err());
    }

    proptest! {
        #[test]
        fn ppa_round_trips(ppa in 0u64..2048) {
            let g = small();
            let a = g.address_of(Ppa(ppa)).unwrap();
            g.check(&a).unwrap();
            prop_assert_eq!(g.ppa(&a), Ppa(ppa));
            prop_assert_eq!(g.die_of_block(g.block_id(&a)), g.die_id(&a));
            prop_assert_eq!(g.channel_of_die(g.die_id(&a)), a.channel);
        }
    }
}
