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
}
