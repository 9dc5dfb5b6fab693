//! Flat page address → hierarchical [`PageAddress`] on the hot path. When every count of the
//! geometry is a power of two (the usual case) this is shifts and masks; otherwise it falls
//! back to [`Geometry::address_of`] (six integer divisions).

use crate::address::{DieId, Ppa};
use crate::error::FtlResult;
use nandlab_nand::{Geometry, PageAddress};

/// Shift/mask decomposition of a flat page address.
#[derive(Clone, Debug)]
pub(crate) struct AddressCodec {
    geometry: Geometry,
    /// Bits of (page, block, plane, die, chip), lowest level first; `None` if any count is
    /// not a power of two.
    bits: Option<[u32; 5]>,
    /// With `bits`: the shift of each level (page, block, plane, die, chip, channel) and the
    /// mask of each level below the channel, computed once.
    shifts: [u32; 6],
    masks: [u32; 5],
    pages_per_die: u32,
}

impl AddressCodec {
    pub fn new(geometry: &Geometry) -> Self {
        let counts = [
            geometry.pages_per_block,
            geometry.blocks_per_plane,
            geometry.planes_per_die,
            geometry.dies_per_chip,
            geometry.chips_per_channel,
        ];
        // (a device of 2^32 pages below the channel level takes the general path: the channel
        // shift must stay below 32)
        let bits = counts
            .iter()
            .all(|c| c.is_power_of_two())
            .then(|| counts.map(u32::trailing_zeros))
            .filter(|b| b.iter().sum::<u32>() < 32);
        let mut shifts = [0; 6];
        let mut masks = [0; 5];
        if let Some(b) = bits {
            for level in 0..5 {
                shifts[level + 1] = shifts[level] + b[level];
                masks[level] = (1 << b[level]) - 1;
            }
        }
        AddressCodec {
            geometry: geometry.clone(),
            bits,
            shifts,
            masks,
            pages_per_die: geometry.planes_per_die
                * geometry.blocks_per_plane
                * geometry.pages_per_block,
        }
    }

    /// Dense die id of a flat page address.
    pub fn die_of(&self, ppa: Ppa) -> DieId {
        DieId(match self.bits {
            Some(b) => ppa.0 >> (b[0] + b[1] + b[2]),
            None => ppa.0 / self.pages_per_die,
        })
    }

    pub fn address(&self, ppa: Ppa) -> FtlResult<PageAddress> {
        if self.bits.is_none() {
            return Ok(self.geometry.address_of(ppa.into())?);
        }
        debug_assert!(u64::from(ppa.0) < self.geometry.total_pages());
        let (s, m, p) = (&self.shifts, &self.masks, ppa.0);
        Ok(PageAddress {
            channel: p >> s[5],
            chip: (p >> s[4]) & m[4],
            die: (p >> s[3]) & m[3],
            plane: (p >> s[2]) & m[2],
            block: (p >> s[1]) & m[1],
            page: p & m[0],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_geometry() {
        for pages_per_block in [16, 12] {
            let g = Geometry {
                channels: 3,
                chips_per_channel: 2,
                dies_per_chip: 2,
                planes_per_die: 2,
                blocks_per_plane: 8,
                pages_per_block,
                page_size_bytes: 512,
                spare_bytes_per_page: 0,
            };
            let codec = AddressCodec::new(&g);
            assert_eq!(codec.bits.is_some(), pages_per_block == 16);
            for ppa in (0..g.total_pages() as u32).map(Ppa) {
                let a = g.address_of(ppa.into()).unwrap();
                assert_eq!(codec.address(ppa).unwrap(), a);
                assert_eq!(codec.die_of(ppa), g.die_id(&a));
            }
        }
    }
}
