//! A cached mapping table (DFTL, Gupta et al. ASPLOS'09; MQSim's CMT, Tavakkol et al.
//! FAST'18; SPEC C2): only `ftl.cmt_entries` mapping entries are in DRAM, the full table lives
//! on flash in translation pages.
//!
//! - The cache holds entries (one logical page's mapping each) in LRU order with a dirty bit.
//! - A miss reads the entry's translation page from flash (a real read through the flash
//!   scheduler, tagged with the request that missed, which waits for it) and caches the entry,
//!   evicting the least recently used one when the cache is full.
//! - Evicting a dirty entry writes its translation page back: a read of the page's old version
//!   (when it has one) and a program of the new one. Like DFTL's batch update, the write-back
//!   cleans every other cached dirty entry of the same translation page.
//! - Translation pages are stored through the page mapping itself, at logical pages reserved
//!   above the host's range (the host sees that many logical pages fewer). They therefore
//!   share blocks with data (DFTL keeps separate translation blocks), are moved by the same
//!   GC, counted in WAF (`flash_pages_programmed`), and their OOB records their logical page,
//!   so the global translation directory (which flash page holds which translation page) is
//!   the page map's entries for the reserved pages: a remount rebuilds it from OOB like any
//!   other mapping.
//!
//! - GC moving a data page changes its entry (DFTL §3.4): a cached entry becomes dirty; for
//!   the uncached ones, each translation page they fall in is read and programmed once per
//!   batch of moves (one victim block, or the moves one host write's GC made), carrying its
//!   cached dirty entries too. Moving a translation page only changes the global translation
//!   directory, which is in DRAM. `Flash::move_page` logs the moved LPAs with their GC job's
//!   tag (`Flash::moved_lpas`); `Cmt::settle_moves` pays for them in the same decision
//!   step, so the translation I/O belongs to the GC job.
//! - TRIM changes the entry of each trimmed page: an access like a write's.

use crate::address::{Lpa, Ppa};
use crate::error::{FtlResult, config_error};
use crate::flash::emit::Tag;
use crate::flash::{Flash, HostWrite, PageData};
use crate::mapping::Mapping;
use nandlab_nand::OpKind;
use serde::Serialize;
use std::collections::BTreeMap;

/// Bytes of one on-flash mapping entry (a physical page number).
pub(crate) const ENTRY_BYTES: u32 = 4;

/// What the cached mapping table did since the device was built (its JSON adds
/// `hit_ratio`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CmtCounters {
    /// Mapping entries in DRAM at most (`ftl.cmt_entries`).
    pub cache_entries: u32,
    /// Entries one translation page holds.
    pub entries_per_translation_page: u32,
    /// Translation pages (logical pages reserved above the host's range).
    pub translation_pages: u32,
    /// Host page accesses whose entry was cached.
    pub hits: u64,
    /// Host page accesses whose entry was not.
    pub misses: u64,
    /// Entries evicted (clean or dirty).
    pub evictions: u64,
    /// Evictions of a dirty entry (each writes its translation page back).
    pub dirty_evictions: u64,
    /// Translation pages read from flash (misses, and the old version at a write-back).
    pub translation_reads: u64,
    /// Translation pages programmed (write-backs).
    pub translation_writes: u64,
    /// Data pages GC moved (each changes its entry).
    pub gc_entry_updates: u64,
    /// Of those, entries that were cached (made dirty, no flash I/O).
    pub gc_cached_updates: u64,
    /// Translation pages GC's moves of uncached entries programmed (in `translation_writes`).
    pub gc_translation_writes: u64,
}

impl Serialize for CmtCounters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut o = s.serialize_struct("CmtCounters", 13)?;
        o.serialize_field("cache_entries", &self.cache_entries)?;
        o.serialize_field(
            "entries_per_translation_page",
            &self.entries_per_translation_page,
        )?;
        o.serialize_field("translation_pages", &self.translation_pages)?;
        o.serialize_field("hits", &self.hits)?;
        o.serialize_field("misses", &self.misses)?;
        o.serialize_field("hit_ratio", &self.hit_ratio())?;
        o.serialize_field("evictions", &self.evictions)?;
        o.serialize_field("dirty_evictions", &self.dirty_evictions)?;
        o.serialize_field("translation_reads", &self.translation_reads)?;
        o.serialize_field("translation_writes", &self.translation_writes)?;
        o.serialize_field("gc_entry_updates", &self.gc_entry_updates)?;
        o.serialize_field("gc_cached_updates", &self.gc_cached_updates)?;
        o.serialize_field("gc_translation_writes", &self.gc_translation_writes)?;
        o.end()
    }
}

impl CmtCounters {
    /// Hits per access (0 when nothing was accessed).
    pub fn hit_ratio(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            0.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

/// The cached mapping table.
#[derive(Debug)]
pub(crate) struct Cmt {
    capacity: u32,
    per_page: u32,
    /// The first reserved logical page (= the host's logical pages).
    first_translation_lpa: u32,
    /// LRU stamp of each host logical page's cached entry (0: not cached).
    stamp: Vec<u64>,
    dirty: Vec<bool>,
    /// Cached entries by stamp, least recently used first.
    lru: BTreeMap<u64, u32>,
    clock: u64,
    /// Scratch: translation pages a batch of GC moves updates, with the tag to charge.
    pending: Vec<(Lpa, Tag)>,
    pub counters: CmtCounters,
}

/// Host logical pages left when `map_pages` logical pages also hold the translation pages of
/// the host's: `(host pages, translation pages)`.
pub(crate) fn split(map_pages: u32, page_size_bytes: u32) -> (u32, u32) {
    let per_page = (page_size_bytes / ENTRY_BYTES).max(1);
    let translation = map_pages.div_ceil(per_page + 1);
    (map_pages - translation, translation)
}

impl Cmt {
    /// The table for a device whose page mapping has `map_pages` logical pages; `None` when
    /// `entries` is 0 (the whole table in DRAM, the default).
    pub fn new(
        entries: u32,
        map_pages: u32,
        page_size_bytes: u32,
        page_mapping: bool,
    ) -> FtlResult<Option<Box<Cmt>>> {
        if entries == 0 {
            return Ok(None);
        }
        if !page_mapping {
            return Err(config_error(
                "ftl.cmt_entries",
                "a cached mapping table applies to the page mapping only",
            ));
        }
        let per_page = (page_size_bytes / ENTRY_BYTES).max(1);
        let (host, translation) = split(map_pages, page_size_bytes);
        if host == 0 {
            return Err(config_error(
                "ftl.cmt_entries",
                format!("{map_pages} logical pages leave none to the host"),
            ));
        }
        Ok(Some(Box::new(Cmt {
            capacity: entries,
            per_page,
            first_translation_lpa: host,
            stamp: vec![0; host as usize],
            dirty: vec![false; host as usize],
            lru: BTreeMap::new(),
            clock: 0,
            pending: Vec::new(),
            counters: CmtCounters {
                cache_entries: entries,
                entries_per_translation_page: per_page,
                translation_pages: translation,
                ..CmtCounters::default()
            },
        })))
    }

    /// The host's logical pages.
    pub fn host_pages(&self) -> u32 {
        self.first_translation_lpa
    }

    /// The logical page holding the translation page of `lpa`'s entry.
    pub fn translation_lpa(&self, lpa: Lpa) -> Lpa {
        Lpa(self.first_translation_lpa + lpa.0 / self.per_page)
    }

    /// The host accesses `lpa`'s mapping (a read, or with `dirty` a write that changes it): a
    /// hit, or a miss that reads its translation page and may evict (and write back) another
    /// entry. The flash ops carry `tag`.
    pub fn access(
        &mut self,
        lpa: Lpa,
        dirty: bool,
        mapper: &mut impl Mapping,
        flash: &mut Flash,
        tag: Tag,
    ) -> FtlResult<()> {
        let i = lpa.0 as usize;
        self.clock += 1;
        if self.stamp[i] != 0 {
            self.counters.hits += 1;
            self.lru.remove(&self.stamp[i]);
        } else {
            self.counters.misses += 1;
            self.read_translation(self.translation_lpa(lpa), mapper, flash, tag);
            if self.lru.len() as u32 >= self.capacity {
                self.evict(mapper, flash, tag)?;
            }
        }
        self.stamp[i] = self.clock;
        self.dirty[i] |= dirty;
        self.lru.insert(self.clock, lpa.0);
        // the eviction's write-back may have collected garbage
        self.settle_moves(mapper, flash)
    }

    /// Pays for the GC moves logged since the last call: a moved page's cached entry becomes
    /// dirty; each translation page of uncached moved entries is read and written back once
    /// per batch. Its write-backs may move more pages: settled until none is left.
    pub fn settle_moves(&mut self, mapper: &mut impl Mapping, flash: &mut Flash) -> FtlResult<()> {
        loop {
            let Some(moved) = flash.moved_lpas.as_mut().filter(|m| !m.is_empty()) else {
                return Ok(());
            };
            let mut pending = std::mem::take(&mut self.pending);
            for (lpa, tag) in moved.drain(..) {
                if lpa.0 >= self.first_translation_lpa {
                    continue; // a translation page: the directory is in DRAM
                }
                self.counters.gc_entry_updates += 1;
                let i = lpa.0 as usize;
                if self.stamp[i] != 0 {
                    self.counters.gc_cached_updates += 1;
                    self.dirty[i] = true;
                    continue;
                }
                let t = self.translation_lpa(lpa);
                if !pending.iter().any(|&(p, _)| p == t) {
                    pending.push((t, tag));
                }
            }
            let mut result = Ok(());
            for &(t, tag) in &pending {
                self.counters.gc_translation_writes += 1;
                result = self.write_back(t, mapper, flash, tag);
                if result.is_err() {
                    break;
                }
            }
            pending.clear();
            self.pending = pending;
            result?;
        }
    }

    /// Reads translation page `t` from flash when it has been written.
    fn read_translation(&mut self, t: Lpa, mapper: &impl Mapping, flash: &mut Flash, tag: Tag) {
        if let Some(ppa) = mapper.locate(t) {
            self.counters.translation_reads += 1;
            flash.emit.push(OpKind::Read, ppa, Ppa::NONE, tag);
        }
    }

    /// Evicts the least recently used entry, writing its translation page back when dirty.
    fn evict(&mut self, mapper: &mut impl Mapping, flash: &mut Flash, tag: Tag) -> FtlResult<()> {
        let Some((_, victim)) = self.lru.pop_first() else {
            return Ok(());
        };
        let v = victim as usize;
        self.stamp[v] = 0;
        self.counters.evictions += 1;
        if !std::mem::take(&mut self.dirty[v]) {
            return Ok(());
        }
        self.counters.dirty_evictions += 1;
        self.write_back(self.translation_lpa(Lpa(victim)), mapper, flash, tag)
    }

    /// Writes translation page `t` back (a read of its old version, when it has one, and a
    /// program): a batch update that carries, and cleans, every cached entry of the page.
    fn write_back(
        &mut self,
        t: Lpa,
        mapper: &mut impl Mapping,
        flash: &mut Flash,
        tag: Tag,
    ) -> FtlResult<()> {
        let first = (t.0 - self.first_translation_lpa) * self.per_page;
        let end = (first + self.per_page).min(self.first_translation_lpa);
        for d in &mut self.dirty[first as usize..end as usize] {
            *d = false;
        }
        self.read_translation(t, mapper, flash, tag);
        self.counters.translation_writes += 1;
        let write = HostWrite {
            lpa: t,
            sequence: flash.next_sequence(),
            data: PageData::Zeros,
            placement: 0,
        };
        mapper.write(flash, write, tag)
    }
}

#[cfg(test)]
mod tests;
