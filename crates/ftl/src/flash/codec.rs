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
        let bits = counts
            .iter()
            .all(|c| c.is_power_of_two())
            .then(|| counts.map(u32::trailing_zeros));
        AddressCodec {
            geometry: geometry.clone(),
            bits,
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
        let Some(b) = self.bits else {
            return Ok(self.geometry.address_of(ppa.into())?);
        };
        debug_assert!(u64::from(ppa.0) < self.geometry.total_pages());
        let mut rest = ppa.0;
        let mut take = |bits: u32| {
            let v = rest & ((1 << bits) - 1);
            rest >>= bits;
            v
        };
        let page = take(b[0]);
        let block = take(b[1]);
        let plane = take(b[2]);
        let die = take(b[3]);
        let chip = take(b[4]);
        Ok(PageAddress {
            channel: rest,
            chip,
            die,
            plane,
            block,
            page,
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
