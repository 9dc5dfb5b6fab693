//! The engine's B+tree ([`nandlab_engine::BTree`], SPEC E5) on SiM pages (SPEC S6; paper 004
//! §V-A, Fig. 8). [`SearchBlockDevice`] is a [`BlockDevice`] over a [`SearchDevice`] (by default the
//! store on its chip model): a logical page is a store page's 4,032 data bytes (the store's verification header
//! takes chunk 0), every call runs the chip model to idle. The tree's nodes need no change: its
//! pages already start with a 64-byte header chunk and keep 8-byte slots after it, a leaf being
//! a key page and a value page with the value of key slot `i` in value slot `i`.
//!
//! [`get_on_chip`] is the SiM point lookup: the tree's inner nodes are read as usual, then the
//! leaf's key page is opened and searched on the chip, the hits' chunks and the tree's header
//! chunk (which names the value page) are gathered, the first hit whose ECC-checked slot holds
//! the key is taken, and its value chunk is gathered from the value page — the leaf's pages never
//! cross the bus in full.
//!
//! Tree word `w` of a page is page slot `8 + w`; keys start at tree word 8 (page slot 16,
//! chunk 2), so the tree header's chunk 1 is cleared from every bitmap.

use crate::device::{ChipDevice, SearchDevice};
use crate::error::{SearchError, SearchResult};
use crate::index::chip_energy_pj;
use nandlab_core::SimTime;
use nandlab_engine::btree::node::{EMPTY_KEY, HEADER_WORDS, LEAF_MAGIC};
use nandlab_engine::{BTree, BlockDevice, DeviceCounters, EngineError, Lpa};
use nandlab_ftl::search::LogicalPage;
use nandlab_nand::search::format::{self, CHUNK_BYTES, SLOTS_PER_CHUNK};
use nandlab_nand::search::header::DATA_BYTES;
use nandlab_nand::{ChunkMask, SearchKey};

/// Page slot of tree word 0 (after the store's header chunk).
const TREE_SLOT_0: u32 = SLOTS_PER_CHUNK;
/// The chunk holding the tree's node header.
const TREE_HEADER_CHUNK: u32 = 1;

/// A [`BlockDevice`] of the pages of a [`SearchDevice`] (see the module docs); by default the
/// store on its chip model.
#[derive(Debug)]
pub struct SearchBlockDevice<D: SearchDevice = ChipDevice> {
    device: D,
    counters: DeviceCounters,
}

fn device_error(op: &'static str, lpa: Lpa, error: SearchError) -> EngineError {
    EngineError::Device {
        op,
        lpa,
        reason: error.to_string(),
    }
}

impl<D: SearchDevice> SearchBlockDevice<D> {
    pub fn new(device: D) -> Self {
        SearchBlockDevice {
            device,
            counters: DeviceCounters::default(),
        }
    }

    /// The search device.
    pub fn device(&self) -> &D {
        &self.device
    }

    fn page(&self, lpa: Lpa) -> Result<LogicalPage, EngineError> {
        if lpa.0 >= self.device.page_count() {
            return Err(EngineError::LpaOutOfRange {
                lpa,
                page_count: u64::from(self.device.page_count()),
            });
        }
        Ok(LogicalPage(lpa.0))
    }

    fn check_buffer(lpa: Lpa, len_bytes: usize) -> Result<(), EngineError> {
        if len_bytes != DATA_BYTES {
            return Err(EngineError::BufferSize {
                lpa,
                len_bytes,
                page_size_bytes: DATA_BYTES,
            });
        }
        Ok(())
    }
}

impl<D: SearchDevice> BlockDevice for SearchBlockDevice<D> {
    fn page_size_bytes(&self) -> usize {
        DATA_BYTES
    }

    fn logical_page_count(&self) -> u64 {
        u64::from(self.device.page_count())
    }

    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        let page = self.page(lpa)?;
        Self::check_buffer(lpa, buf.len())?;
        self.counters.host_reads += 1;
        if !self.device.written(page) {
            buf.fill(0); // never written or trimmed
            return Ok(());
        }
        let now = self.device.now();
        let bytes = self
            .device
            .read(now, page)
            .map_err(|e| device_error("read", lpa, e))?;
        buf.copy_from_slice(&bytes);
        self.device.settle();
        Ok(())
    }

    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        let page = self.page(lpa)?;
        Self::check_buffer(lpa, data.len())?;
        self.counters.host_writes += 1;
        let now = self.device.now();
        self.device
            .write(now, page, data)
            .map_err(|e| device_error("write", lpa, e))?;
        self.device.settle();
        Ok(())
    }

    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        let page = self.page(lpa)?;
        self.counters.host_trims += 1;
        if self.device.written(page) {
            let now = self.device.now();
            self.device
                .trim(now, page)
                .map_err(|e| device_error("trim", lpa, e))?;
        }
        Ok(())
    }

    fn now(&self) -> SimTime {
        self.device.now()
    }

    fn energy_mj(&self) -> f64 {
        chip_energy_pj(self.device.nand()) / 1e9
    }

    fn counters(&self) -> DeviceCounters {
        self.counters
    }
}

/// Point lookup with the leaf searched on the chip (see the module docs); the same answer as
/// [`BTree::get`].
pub fn get_on_chip<D: SearchDevice>(
    tree: &mut BTree<SearchBlockDevice<D>>,
    key: u64,
) -> SearchResult<Option<u64>> {
    if key == EMPTY_KEY {
        return Ok(None);
    }
    let key_page = LogicalPage(tree.key_page_of(key)?.0);
    let device = &mut tree.device_mut().device;
    let now = device.now();
    let mut open = device.open(now, key_page)?;
    let mut bitmap = device.search(now, &open, &[SearchKey::exact(key)])?[0];
    bitmap.0[0] &= !0xFFFF; // chunks 0 and 1: the store's and the tree's headers
    let mut found = None;
    let hit_chunks = bitmap.chunks();
    if hit_chunks.count() > 0 {
        // the tree's header chunk (the value page) and every chunk with a hit, in one gather
        let mask = ChunkMask(1 << TREE_HEADER_CHUNK | hit_chunks.0);
        let bytes = device.gather(now, &mut open, mask)?;
        let header = &bytes[..CHUNK_BYTES as usize];
        let magic = format::slot(header, 0);
        if magic != LEAF_MAGIC {
            device.close(now, open)?;
            return Err(SearchError::Engine(EngineError::Corruption {
                lpa: Lpa(key_page.0),
                slot_in_page: 0,
                detail: format!("page {key_page} searched as a leaf has magic {magic:#x}"),
            }));
        }
        // the first hit whose ECC-checked slot holds the key (others were bit errors in the
        // latch); chunk i of the gather is the i-th chunk of `mask`
        let verified = mask.chunks().enumerate().skip(1).find_map(|(i, chunk)| {
            let chunk_bytes = &bytes[i * CHUNK_BYTES as usize..(i + 1) * CHUNK_BYTES as usize];
            (0..SLOTS_PER_CHUNK)
                .find(|w| {
                    bitmap.is_set(chunk * SLOTS_PER_CHUNK + w)
                        && format::slot(chunk_bytes, *w) == key
                })
                .map(|w| (chunk, w))
        });
        if let Some((chunk, within)) = verified {
            let value_page = LogicalPage(format::slot(header, 3) as u32);
            let values = device.gather_page(now, value_page, ChunkMask::single(chunk))?;
            found = Some(format::slot(&values, within));
        }
    }
    device.close(now, open)?;
    debug_assert!(TREE_SLOT_0 + HEADER_WORDS as u32 == 2 * SLOTS_PER_CHUNK);
    device.settle();
    Ok(found)
}

#[cfg(test)]
mod tests;
