//! What the host interface ([`crate::nvme`]) asks of the SSD about its namespaces.

use super::Ssd;
use crate::mapping::Mapper;

impl Ssd {
    /// With `ftl.mapping = "zoned"`: the device's zone size and capacity in pages (one LBA
    /// per page); `None` for a conventional mapping.
    pub fn zoned_layout(&self) -> Option<(u64, u64)> {
        match &self.mapper {
            Mapper::Zoned(z) => Some((
                z.layout().zone_size_pages(),
                z.layout().zone_capacity_pages(),
            )),
            _ => None,
        }
    }

    /// With `ftl.mapping = "zoned"`: each zone's write pointer on the device (pages
    /// programmed since its last reset; after a mount, one past its last intact page).
    pub fn zone_write_pointers(&self) -> Option<Vec<u64>> {
        match &self.mapper {
            Mapper::Zoned(z) => Some(
                (0..z.layout().zone_count())
                    .map(|zone| u64::from(z.write_pointer(zone)))
                    .collect(),
            ),
            _ => None,
        }
    }
}
