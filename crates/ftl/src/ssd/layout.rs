//! The device layout: what the SSD was built as (chip geometry, flash page size, the logical
//! pages the mapping leaves the host, the placement ids it may name) and the seed behind every
//! random choice. Fixed at build.

use nandlab_nand::Geometry;

#[derive(Debug)]
pub(super) struct Layout {
    pub seed: u64,
    pub geometry: Geometry,
    /// The flash page size (the host's page: SPEC F7).
    pub page_size_bytes: u32,
    /// Logical pages the host can address.
    pub logical_pages: u32,
    /// Placement ids the host may name (`ftl.placement_ids`).
    pub placement_ids: u16,
}

impl Layout {
    pub fn new(seed: u64, geometry: Geometry, logical_pages: u32, placement_ids: u16) -> Self {
        Layout {
            seed,
            placement_ids,
            page_size_bytes: geometry.page_size_bytes,
            geometry,
            logical_pages,
        }
    }

    /// Logical capacity in bytes.
    pub fn logical_capacity_bytes(&self) -> u64 {
        u64::from(self.logical_pages) * u64::from(self.page_size_bytes)
    }
}
