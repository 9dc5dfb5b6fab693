//! Out-of-band (OOB) metadata of every programmed page, and which programs have completed.
//!
//! Each program writes, next to the page's data, the LPA it holds (`None` for a metadata page),
//! the write's sequence number and a CRC-32 of both and the data. The sequence number names the
//! host write (assigned when the FTL decides it, in decision order, from 1): a GC move, merge or
//! wear-leveling copy keeps the OOB of the page it copies, as a copyback copies the spare area
//! with the data. Recovery after a power cut rebuilds the mapping from the OOB alone: for each
//! LPA, the programmed page with the highest sequence number (copies of one write are
//! identical).
//!
//! Kept compactly for every physical page in both payload modes (an LPA and a sequence number,
//! 12 bytes per page, plus a completed-program watermark per block); in `full` payload mode the
//! 16-byte record with its CRC is also stored in the page's spare area by
//! [`super::payload::Payload`]. Nothing is allocated after construction.
//!
//! A program is *durable* when the chip model has completed it. Programs of one block complete
//! in page order (they go to one die, whose ops run in submission order), so a per-block
//! watermark of completed pages says which pages are durable.

use crate::address::{BlockId, Lpa, Ppa};

/// Bytes of the OOB record in a page's spare area (`full` payload mode): LPA (4, little-endian,
/// `u32::MAX` for none), sequence number (8), CRC-32 (4).
pub const OOB_BYTES: usize = 16;

/// Bit of the stored sequence number that marks a copy whose data was already durable on its
/// source page when the copy was decided (the source is erased only after the copy completes).
const DURABLE_SOURCE_BIT: u64 = 1 << 63;

/// The OOB record of one programmed page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageOob {
    /// The logical page the data belongs to; `None` for a metadata page.
    pub lpa: Option<Lpa>,
    /// Sequence number of the host write (from 1, in the order the FTL decided the writes).
    pub sequence: u64,
    /// CRC-32 (IEEE) of the LPA, the sequence number and the page's data ([`oob_crc`]).
    pub crc: u32,
}

impl PageOob {
    /// The 16-byte spare-area form.
    pub fn to_bytes(&self) -> [u8; OOB_BYTES] {
        let mut out = [0u8; OOB_BYTES];
        out[0..4].copy_from_slice(&self.lpa.unwrap_or(Lpa::NONE).0.to_le_bytes());
        out[4..12].copy_from_slice(&self.sequence.to_le_bytes());
        out[12..16].copy_from_slice(&self.crc.to_le_bytes());
        out
    }

    /// Parses the spare-area form.
    pub fn from_bytes(bytes: &[u8; OOB_BYTES]) -> Self {
        let lpa = Lpa(u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")));
        PageOob {
            lpa: lpa.get(),
            sequence: u64::from_le_bytes(bytes[4..12].try_into().expect("8 bytes")),
            crc: u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")),
        }
    }
}

/// CRC-32 of an OOB record: over the LPA and sequence number (little-endian, as stored) and the
/// page's data (`None` in timing-only mode, where no data exists).
pub fn oob_crc(lpa: Option<Lpa>, sequence: u64, data: Option<&[u8]>) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&lpa.unwrap_or(Lpa::NONE).0.to_le_bytes());
    h.update(&sequence.to_le_bytes());
    if let Some(d) = data {
        h.update(d);
    }
    h.finalize()
}

/// Compact OOB of every physical page and the completed-program watermark of every block.
#[derive(Debug)]
pub(crate) struct OobStore {
    pages_per_block: u32,
    /// LPA of each programmed page (`Lpa::NONE`: erased, or a metadata page).
    lpa: Vec<Lpa>,
    /// Sequence number of each programmed page (0: erased), with [`DURABLE_SOURCE_BIT`].
    sequence: Vec<u64>,
    /// Per block, the page offset below which every program has completed (low bits), and the
    /// erases of the block decided but not yet completed on the chip (high bits: while one is
    /// pending, the watermark belongs to the block's previous contents and nothing in it counts
    /// as durable).
    durable_pages: Vec<u32>,
}

/// Bits of [`OobStore::durable_pages`] holding the watermark; above them, pending erases.
const WATERMARK_BITS: u32 = 24;
const WATERMARK_MASK: u32 = (1 << WATERMARK_BITS) - 1;
const ONE_PENDING_ERASE: u32 = 1 << WATERMARK_BITS;

impl OobStore {
    pub fn new(physical_pages: u32, pages_per_block: u32) -> Self {
        OobStore {
            pages_per_block,
            lpa: vec![Lpa::NONE; physical_pages as usize],
            sequence: vec![0; physical_pages as usize],
            durable_pages: vec![0; (physical_pages / pages_per_block) as usize],
        }
    }

    /// Records the OOB of a host write programmed at `ppa`.
    #[inline]
    pub fn program(&mut self, ppa: Ppa, lpa: Lpa, sequence: u64) {
        debug_assert_eq!(self.sequence[ppa.index()], 0, "ppa {ppa} programmed twice");
        debug_assert!(sequence > 0 && sequence < DURABLE_SOURCE_BIT);
        self.lpa[ppa.index()] = lpa;
        self.sequence[ppa.index()] = sequence;
    }

    /// Copies the OOB of `source` to `target` (GC, merge or wear-leveling move).
    #[inline]
    pub fn copy(&mut self, source: Ppa, target: Ppa) {
        debug_assert_eq!(
            self.sequence[target.index()],
            0,
            "ppa {target} programmed twice"
        );
        let durable = self.is_durable(source);
        self.lpa[target.index()] = self.lpa[source.index()];
        self.sequence[target.index()] =
            self.sequence[source.index()] | if durable { DURABLE_SOURCE_BIT } else { 0 };
    }

    /// Forgets the OOB of the pages of `block` (the erase is decided): new programs may be
    /// decided into it at once, but its durability restarts only when the erase completes
    /// ([`OobStore::erased`]); programs of its old contents still in flight may complete first.
    pub fn erase(&mut self, block: BlockId) {
        let first = block.index() * self.pages_per_block as usize;
        let pages = first..first + self.pages_per_block as usize;
        self.lpa[pages.clone()].fill(Lpa::NONE);
        self.sequence[pages].fill(0);
        let d = &mut self.durable_pages[block.index()];
        assert!(
            *d >> WATERMARK_BITS < 0xff,
            "block {block}: too many erases in flight"
        );
        *d += ONE_PENDING_ERASE;
    }

    /// The erase of `block` completed on the chip (or no op was timed).
    pub fn erased(&mut self, block: BlockId) {
        let d = &mut self.durable_pages[block.index()];
        debug_assert!(
            *d >= ONE_PENDING_ERASE,
            "block {block}: erase completed twice"
        );
        *d = (*d - ONE_PENDING_ERASE) & !WATERMARK_MASK;
    }

    /// The program of `ppa` completed (the chip model reported it, or no op was timed).
    #[inline]
    pub fn completed(&mut self, ppa: Ppa) {
        let block = (ppa.0 / self.pages_per_block) as usize;
        let offset = ppa.0 % self.pages_per_block;
        let d = &mut self.durable_pages[block];
        debug_assert!(
            offset >= *d & WATERMARK_MASK,
            "program of ppa {ppa} completed out of page order"
        );
        *d = (*d & !WATERMARK_MASK) | (offset + 1);
    }

    /// `(lpa, sequence)` of a programmed page; `None` when erased.
    pub fn get(&self, ppa: Ppa) -> Option<(Option<Lpa>, u64)> {
        let sequence = self.sequence[ppa.index()] & !DURABLE_SOURCE_BIT;
        (sequence != 0).then(|| (self.lpa[ppa.index()].get(), sequence))
    }

    /// The program of `ppa` has completed.
    pub fn is_durable(&self, ppa: Ppa) -> bool {
        let block = (ppa.0 / self.pages_per_block) as usize;
        let d = self.durable_pages[block];
        // no erase pending, and below the watermark
        d < ONE_PENDING_ERASE && ppa.0 % self.pages_per_block < d
    }

    /// The data of `ppa` is on flash: its program completed, or it is a copy of a page whose
    /// program had completed when the copy was decided (that page stays until the copy is done).
    pub fn data_is_durable(&self, ppa: Ppa) -> bool {
        self.is_durable(ppa) || self.sequence[ppa.index()] & DURABLE_SOURCE_BIT != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_bytes_round_trip() {
        for lpa in [Some(Lpa(7)), None] {
            let oob = PageOob {
                lpa,
                sequence: 1 << 40,
                crc: oob_crc(lpa, 1 << 40, Some(b"page")),
            };
            assert_eq!(PageOob::from_bytes(&oob.to_bytes()), oob);
        }
        assert_ne!(
            oob_crc(Some(Lpa(1)), 2, None),
            oob_crc(Some(Lpa(2)), 1, None)
        );
    }

    #[test]
    fn copies_keep_the_write_and_durability_follows_completions() {
        let mut s = OobStore::new(8, 4);
        s.program(Ppa(0), Lpa(5), 1);
        s.program(Ppa(1), Lpa(6), 2);
        assert!(!s.is_durable(Ppa(0)));
        s.completed(Ppa(0));
        assert!(s.is_durable(Ppa(0)) && !s.is_durable(Ppa(1)));
        s.copy(Ppa(0), Ppa(4));
        s.copy(Ppa(1), Ppa(5));
        assert_eq!(s.get(Ppa(4)), Some((Some(Lpa(5)), 1)));
        assert!(s.data_is_durable(Ppa(4)) && !s.data_is_durable(Ppa(5)));
        s.erase(BlockId(0));
        assert_eq!(s.get(Ppa(0)), None);
        assert!(!s.is_durable(Ppa(0)));
    }
}
