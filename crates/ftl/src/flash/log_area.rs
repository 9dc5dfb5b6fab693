//! In-Page Logging's log sectors on the chip (SPEC P4; Lee & Moon, SIGMOD'07): a front-end
//! stage running IPL ([`crate::FlashLogArea`]) asks for a log area, and each log sector it
//! writes becomes a partial-page program of a reserved log page, with the chip's time and
//! energy (a program transferring one sector's bytes).
//!
//! **Layout.** The paper keeps each erase unit's log sectors in log pages at the end of that
//! unit, erased with it when the unit merges. A page-mapped FTL has no such unit: a logical
//! block's pages live anywhere. So the log area is a ring of reserved blocks (taken out of the
//! free pool when the SSD is built, which costs over-provisioning as the paper's one log page
//! in 16 costs capacity; marked reserved, so GC, wear-leveling and its erase gap leave them
//! alone), written as one sector log: each log page takes up to
//! `min(page / sector, NOP limit)` sector programs while it is its block's last programmed
//! page, then the next page is opened (pages in order within a block). A unit's sectors die
//! when the unit merges. When the head block is full, the one erased spare block becomes the
//! head and the oldest block is reclaimed: its live sectors are read and programmed again at
//! the head, then it is erased and becomes the spare. The ring is sized so that every unit's
//! full log area fits with two blocks to spare; a ring that still cannot make room is an error.
//! Every program and erase goes to the chip model, which checks NOP and the in-order rule:
//! a violation is an error, never accepted.
//!
//! The paper's unit erase comes free with the merge there; here the merged unit's pages are
//! rewritten by the page mapping (whose GC erases the old copies) and the log ring adds its
//! own erases, one per block of reclaimed sectors.

use super::emit::Tag;
use super::{Flash, PageData};
use crate::address::{BlockId, Lpa, Ppa};
use crate::error::{FtlError, FtlResult};
use nandlab_nand::OpKind;
use std::collections::VecDeque;

/// The log area on flash a stage running In-Page Logging asks for (SPEC P4): `units` erase
/// units of `sectors_per_unit` log sectors of `sector_bytes` each. The SSD reserves blocks for
/// it and programs each log sector as a partial-page program (`flash/log_area.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashLogArea {
    /// Erase units (logical blocks) with a log area.
    pub units: u32,
    /// Logical pages per unit (unit `u` holds pages `u × pages_per_unit ..`).
    pub pages_per_unit: u32,
    /// Log sectors per unit.
    pub sectors_per_unit: u32,
    /// One log sector, bytes.
    pub sector_bytes: u32,
}

/// A stage's work on its [`FlashLogArea`], in order with its page writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogAreaOp {
    /// `unit` was merged: its log sectors are dead.
    UnitMerged(u32),
    /// `count` log sectors of `unit` are programmed.
    Sectors {
        /// The unit.
        unit: u32,
        /// Sectors programmed.
        count: u32,
    },
    /// The SLC cache (`frontend/slc.rs`) programs page `page` of its block `index`.
    SlcProgram {
        /// The cache's block index.
        index: u32,
        /// The page in the block.
        page: u32,
    },
    /// The SLC cache reads page `page` of its block `index`.
    SlcRead {
        /// The cache's block index.
        index: u32,
        /// The page in the block.
        page: u32,
    },
    /// The SLC cache erases its block `index` (`page` unused).
    SlcErase {
        /// The cache's block index.
        index: u32,
        /// Unused (0).
        page: u32,
    },
}

const NO_UNIT: u32 = u32::MAX;

/// The ring of reserved log blocks and who owns each sector slot.
#[derive(Debug)]
pub(crate) struct LogArea {
    area: FlashLogArea,
    sectors_per_page: u32,
    pages_per_block: u32,
    ring: Vec<BlockId>,
    /// Ring indices holding sectors, oldest first; the last is the head.
    order: VecDeque<u32>,
    /// Erased ring indices.
    spare: Vec<u32>,
    head_page: u32,
    /// Sectors programmed into the head page.
    head_sectors: u32,
    /// Owner unit of each slot (ring index × slots per block + page × sectors per page + k).
    owner: Vec<u32>,
    /// Live sectors per ring index.
    live: Vec<u32>,
    /// Each unit's live slots (`sectors_per_unit` entries per unit, `unit_len` used).
    unit_slots: Vec<u32>,
    unit_len: Vec<u32>,
    /// Counters.
    pub stats: LogAreaStats,
    /// Log pages of one unit (scratch, reused).
    pages: Vec<u32>,
}

/// What the log area did on the chip.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogAreaStats {
    /// Reserved blocks.
    pub blocks: u32,
    /// Log sectors programmed (partial-page programs) for the stage.
    pub sector_programs: u64,
    /// Live sectors moved when their block was reclaimed (a read + a partial program each).
    pub sector_copies: u64,
    /// Log pages read to move live sectors.
    pub page_reads: u64,
    /// Log pages read for host reads of pages with logged changes (each log page holding a
    /// live sector of the page's unit).
    pub host_read_page_reads: u64,
    /// Log pages read by unit merges (each log page holding a live sector of the unit).
    pub merge_page_reads: u64,
    /// Ring blocks erased.
    pub erases: u64,
}

impl LogArea {
    fn slots_per_block(&self) -> u32 {
        self.pages_per_block * self.sectors_per_page
    }
}

impl Flash {
    /// Reserves the ring for `area` (see the module docs) on a device mapping
    /// `logical_pages`; `nop_limit` bounds the sectors per log page. An error names the key
    /// when the ring would leave the mapping less than two spare blocks per plane.
    pub fn reserve_log_area(
        &mut self,
        area: FlashLogArea,
        page_size_bytes: u32,
        nop_limit: u32,
        logical_pages: u32,
    ) -> FtlResult<()> {
        if area.sector_bytes == 0 || area.sector_bytes > page_size_bytes {
            return Err(crate::error::config_error(
                "pcm.log.sector_size_bytes",
                format!(
                    "{} B log sectors do not fit a {page_size_bytes} B flash page",
                    area.sector_bytes
                ),
            ));
        }
        let sectors_per_page = (page_size_bytes / area.sector_bytes).min(nop_limit).max(1);
        let ppb = self.blocks.pages_per_block();
        let per_block = ppb * sectors_per_page;
        let sectors = u64::from(area.units) * u64::from(area.sectors_per_unit);
        let blocks = sectors.div_ceil(u64::from(per_block)) + 2;
        let free = u64::from(self.blocks.free_total());
        let physical = u64::from(self.blocks.planes()) * u64::from(self.blocks.blocks_per_plane());
        let spare = physical.saturating_sub(u64::from(logical_pages).div_ceil(u64::from(ppb)));
        let needed = blocks + 2 * u64::from(self.blocks.planes());
        if needed > free || needed > spare {
            return Err(crate::error::config_error(
                "pcm.log.kind",
                format!(
                    "In-Page Logging's log area needs {blocks} reserved blocks ({sectors} \
                     sectors of {} B, {sectors_per_page} per page) and the mapping two spare \
                     blocks per plane, but the device has {spare} blocks beyond its logical \
                     space ({free} free): raise ssd.op_fraction",
                    area.sector_bytes
                ),
            ));
        }
        let mut ring = Vec::with_capacity(blocks as usize);
        let planes = self.blocks.planes();
        let mut plane = 0;
        while ring.len() < blocks as usize {
            // round robin over the planes (the free count was checked above)
            if let Some(b) = self
                .blocks
                .reserve_free(crate::address::PlaneId(plane % planes))
            {
                ring.push(b);
            }
            plane += 1;
        }
        let n = ring.len() as u32;
        self.log_area = Some(Box::new(LogArea {
            sectors_per_page,
            pages_per_block: self.blocks.pages_per_block(),
            owner: vec![NO_UNIT; (n * per_block) as usize],
            live: vec![0; n as usize],
            unit_slots: vec![0; (area.units * area.sectors_per_unit) as usize],
            unit_len: vec![0; area.units as usize],
            order: VecDeque::with_capacity(n as usize),
            spare: (0..n).rev().collect(),
            head_page: 0,
            head_sectors: 0,
            pages: Vec::with_capacity(area.sectors_per_unit as usize),
            ring,
            stats: LogAreaStats {
                blocks: n,
                ..LogAreaStats::default()
            },
            area,
        }));
        Ok(())
    }

    /// Applies a stage's log-area operation; its chip ops carry `tag`.
    pub fn log_area_op(&mut self, op: LogAreaOp, tag: Tag) -> FtlResult<()> {
        if let Some(result) = self.slc_area_op(op, tag) {
            return result;
        }
        let Some(mut area) = self.log_area.take() else {
            return Err(FtlError::BadRequest {
                message: "a front-end stage wrote log sectors but no log area is reserved".into(),
            });
        };
        let result = match op {
            LogAreaOp::UnitMerged(unit) => {
                // the merge reads the unit's log pages, then its sectors are dead
                let pages = self.read_unit_log_pages(&mut area, unit, tag);
                area.stats.merge_page_reads += u64::from(pages);
                area.unit_merged(unit)
            }
            LogAreaOp::Sectors { unit, count } => {
                let mut r = Ok(());
                for _ in 0..count {
                    r = self.log_sector(&mut area, unit, tag);
                    if r.is_err() {
                        break;
                    }
                }
                r
            }
            _ => unreachable!("SLC cache ops are handled above"),
        };
        self.log_area = Some(area);
        result
    }

    /// A host read of `lpa`, a page with logged changes: reads each log page holding a live
    /// sector of its unit (the changes are merged with the data page, which the caller reads).
    /// Returns the log pages read (0 without a log area or live sectors).
    pub fn read_log_pages_of(&mut self, lpa: Lpa, tag: Tag) -> u32 {
        let Some(mut area) = self.log_area.take() else {
            return 0;
        };
        let unit = lpa.0 / area.area.pages_per_unit;
        let pages = if unit < area.area.units {
            self.read_unit_log_pages(&mut area, unit, tag)
        } else {
            0
        };
        area.stats.host_read_page_reads += u64::from(pages);
        self.log_area = Some(area);
        pages
    }

    /// Reads (chip ops tagged `tag`) each log page holding a live sector of `unit`, in ring
    /// order; returns how many.
    fn read_unit_log_pages(&mut self, area: &mut LogArea, unit: u32, tag: Tag) -> u32 {
        let u = unit as usize;
        let per_unit = area.area.sectors_per_unit as usize;
        let slots = &area.unit_slots[u * per_unit..u * per_unit + area.unit_len[u] as usize];
        area.pages.clear();
        area.pages
            .extend(slots.iter().map(|&slot| slot / area.sectors_per_page));
        area.pages.sort_unstable();
        area.pages.dedup();
        for &page in &area.pages {
            let (index, in_block) = (page / area.pages_per_block, page % area.pages_per_block);
            let ppa = self.blocks.page(area.ring[index as usize], in_block);
            self.emit.push(OpKind::Read, ppa, Ppa::NONE, tag);
        }
        area.pages.len() as u32
    }

    /// One sector of `unit` programmed at the head (making room first).
    fn log_sector(&mut self, area: &mut LogArea, unit: u32, tag: Tag) -> FtlResult<()> {
        if unit >= area.area.units {
            return Err(FtlError::BadRequest {
                message: format!(
                    "log sector of unit {unit}; the log area has {}",
                    area.area.units
                ),
            });
        }
        let u = unit as usize;
        let per_unit = area.area.sectors_per_unit;
        if area.unit_len[u] >= per_unit {
            return Err(FtlError::BadRequest {
                message: format!("unit {unit} wrote more than its {per_unit} log sectors"),
            });
        }
        self.make_room(area, tag)?;
        let slot = self.program_head(area, unit, tag);
        area.unit_slots[u * per_unit as usize + area.unit_len[u] as usize] = slot;
        area.unit_len[u] += 1;
        area.stats.sector_programs += 1;
        Ok(())
    }

    /// Ensures the head page can take a sector: the next page, or a fresh head block (then the
    /// oldest block is reclaimed into it).
    fn make_room(&mut self, area: &mut LogArea, tag: Tag) -> FtlResult<()> {
        for _ in 0..=area.ring.len() {
            if !area.order.is_empty() {
                if area.head_sectors < area.sectors_per_page {
                    return Ok(());
                }
                if area.head_page + 1 < area.pages_per_block {
                    area.head_page += 1;
                    area.head_sectors = 0;
                    return Ok(());
                }
            }
            let Some(fresh) = area.spare.pop() else {
                break;
            };
            area.order.push_back(fresh);
            area.head_page = 0;
            area.head_sectors = 0;
            if area.spare.is_empty() && area.order.len() > 1 {
                let oldest = area.order.pop_front().expect("two blocks in order");
                self.reclaim(area, oldest, tag);
            }
        }
        if area.order.is_empty()
            || (area.head_sectors == area.sectors_per_page
                && area.head_page + 1 == area.pages_per_block)
        {
            return Err(FtlError::DeviceFull {
                message: format!(
                    "In-Page Logging's log area ({} blocks) has no room for another sector",
                    area.ring.len()
                ),
            });
        }
        Ok(())
    }

    /// Programs one sector of `unit` at the head (room made); returns its slot.
    fn program_head(&mut self, area: &mut LogArea, unit: u32, tag: Tag) -> u32 {
        let head = *area.order.back().expect("a head block");
        let block = area.ring[head as usize];
        let ppa = self.blocks.page(block, area.head_page);
        if area.head_sectors == 0 {
            // the page's first program: it holds no LPA (a log page), like a padded page
            let sequence = self.next_sequence();
            self.payload
                .write(ppa, PageData::Zeros, None, None, sequence);
            self.oob
                .program(ppa, Lpa::NONE, sequence, !self.emit.enabled);
            self.blocks.set_next_page(block, area.head_page + 1);
        } else {
            self.oob.reprogram(ppa, !self.emit.enabled);
        }
        self.emit
            .push_partial_program(ppa, area.area.sector_bytes, tag);
        let slot = head * area.slots_per_block()
            + area.head_page * area.sectors_per_page
            + area.head_sectors;
        area.head_sectors += 1;
        area.owner[slot as usize] = unit;
        area.live[head as usize] += 1;
        slot
    }

    /// Moves the live sectors of ring block `index` to the head, then erases it (the spare).
    fn reclaim(&mut self, area: &mut LogArea, index: u32, tag: Tag) {
        let per_block = area.slots_per_block();
        let block = area.ring[index as usize];
        for page in 0..area.pages_per_block {
            if area.live[index as usize] == 0 {
                break;
            }
            let first = index * per_block + page * area.sectors_per_page;
            let live = (first..first + area.sectors_per_page)
                .filter(|&s| area.owner[s as usize] != NO_UNIT)
                .count();
            if live == 0 {
                continue;
            }
            self.emit
                .push(OpKind::Read, self.blocks.page(block, page), Ppa::NONE, tag);
            area.stats.page_reads += 1;
            for slot in first..first + area.sectors_per_page {
                let unit = area.owner[slot as usize];
                if unit == NO_UNIT {
                    continue;
                }
                area.owner[slot as usize] = NO_UNIT;
                area.live[index as usize] -= 1;
                // the head block is fresh and holds at most one block's sectors: room is there
                if area.head_sectors == area.sectors_per_page {
                    area.head_page += 1;
                    area.head_sectors = 0;
                }
                let moved = self.program_head(area, unit, tag);
                let u = unit as usize;
                let per_unit = area.area.sectors_per_unit as usize;
                let list =
                    &mut area.unit_slots[u * per_unit..u * per_unit + area.unit_len[u] as usize];
                let at = list
                    .iter()
                    .position(|&s| s == slot)
                    .expect("live slot listed");
                list[at] = moved;
                area.stats.sector_copies += 1;
            }
        }
        debug_assert_eq!(area.live[index as usize], 0);
        let first = self.blocks.page(block, 0);
        self.payload
            .clear_block(first, self.blocks.pages_per_block());
        self.oob.erase(block);
        self.blocks.set_next_page(block, 0);
        self.blocks.count_erase(block);
        self.counters.erases += 1;
        self.erased_since_gates = true;
        self.emit.push(OpKind::Erase, first, Ppa::NONE, tag);
        area.stats.erases += 1;
        area.spare.push(index);
    }
}

impl LogArea {
    /// `unit` merged: its sectors are dead.
    fn unit_merged(&mut self, unit: u32) -> FtlResult<()> {
        if unit >= self.area.units {
            return Err(FtlError::BadRequest {
                message: format!("merge of unit {unit}; the log area has {}", self.area.units),
            });
        }
        let u = unit as usize;
        let per_unit = self.area.sectors_per_unit as usize;
        let per_block = self.slots_per_block();
        for i in 0..self.unit_len[u] as usize {
            let slot = self.unit_slots[u * per_unit + i];
            debug_assert_eq!(self.owner[slot as usize], unit);
            self.owner[slot as usize] = NO_UNIT;
            self.live[(slot / per_block) as usize] -= 1;
        }
        self.unit_len[u] = 0;
        Ok(())
    }
}
