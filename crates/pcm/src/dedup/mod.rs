//! The redundant write finder (SPEC P2, thesis §3.2.2): a SHA-1 fingerprint per flash page,
//! a fingerprint store in PCM (segments of sorted buckets, range check + binary search), a
//! bidirectional fingerprint ↔ location map, bounded with least-recently-used eviction.
//!
//! The finder speaks in opaque [`Location`] ids (a physical flash page for an FTL): on a write
//! the caller asks [`RedundantWriteFinder::lookup`] with the page's bytes; a hit names a
//! location that already holds exactly those bytes, so the caller may map the logical page
//! there instead of writing. After writing a page somewhere the caller
//! [`insert`](RedundantWriteFinder::insert)s its fingerprint; when a location stops holding
//! those bytes (overwritten, trimmed, garbage collected, erased) the caller
//! [`remove`](RedundantWriteFinder::remove)s it. Every access to the store is charged to the
//! PCM device passed in; the finder owns no device.

mod fingerprint;
mod lru;
mod store;
#[cfg(test)]
mod tests;

pub use fingerprint::{Fingerprint, Location};
pub use store::{BUCKET_HEADER_BYTES, BucketSearch, ENTRY_BYTES, SearchEffort};

use crate::device::{AccessCost, PcmAddr, PcmDevice};
use crate::error::{PcmResult, argument_error, config_error};
use lru::Lru;
use nandlab_core::SimTime;
use serde::{Deserialize, Serialize};
use store::{Entry, InsertOutcome, Store};

/// Bytes of one slot of the location → fingerprint map in PCM (location and bucket ids).
pub const REVERSE_SLOT_BYTES: u64 = 8;
/// Reverse-map slots per store entry (a hash table kept at most half full).
pub const REVERSE_SLOTS_PER_ENTRY: u64 = 2;

/// Configuration of the finder (TOML section `dedup`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DedupConfig {
    /// Segments N: a fingerprint `f` lives in segment `f mod N`.
    pub segments: u32,
    /// PCM given to the buckets, bytes (a multiple of the bucket size; the bound of the store).
    pub store_size_bytes: u64,
    /// One bucket, bytes (thesis: a 4 KB page).
    #[serde(default = "default_bucket_size_bytes")]
    pub bucket_size_bytes: u64,
    /// How a lookup finds the bucket.
    #[serde(default)]
    pub search: BucketSearch,
    /// Time to fingerprint one page, nanoseconds (the thesis gives none: a dedicated engine or
    /// the controller's processor).
    #[serde(default)]
    pub hash_latency_ns: f64,
    /// Energy to fingerprint one page, nanojoules.
    #[serde(default)]
    pub hash_energy_nj: f64,
}

fn default_bucket_size_bytes() -> u64 {
    4096
}

impl DedupConfig {
    /// Checks every key; the error names the first offending one.
    pub fn validate(&self) -> PcmResult<()> {
        let bucket = self.bucket_size_bytes;
        if !(BUCKET_HEADER_BYTES + 2 * ENTRY_BYTES..=1 << 20).contains(&bucket) {
            return Err(config_error(
                "dedup.bucket_size_bytes",
                format!(
                    "{bucket} must hold a header and two entries ({} B) and be at most 1 MiB",
                    BUCKET_HEADER_BYTES + 2 * ENTRY_BYTES
                ),
            ));
        }
        if self.segments == 0 {
            return Err(config_error("dedup.segments", "must be at least 1"));
        }
        let buckets = self.store_size_bytes / bucket;
        if buckets < u64::from(self.segments) {
            return Err(config_error(
                "dedup.store_size_bytes",
                format!(
                    "{} B is {buckets} buckets of {bucket} B, fewer than the {} segments",
                    self.store_size_bytes, self.segments
                ),
            ));
        }
        if buckets > u64::from(u32::MAX) {
            return Err(config_error(
                "dedup.store_size_bytes",
                format!("{buckets} buckets is more than 2^32 - 1"),
            ));
        }
        for (key, value) in [
            ("dedup.hash_latency_ns", self.hash_latency_ns),
            ("dedup.hash_energy_nj", self.hash_energy_nj),
        ] {
            if !value.is_finite() || !(0.0..=1e9).contains(&value) {
                return Err(config_error(key, format!("{value} is outside 0..=1e9")));
            }
        }
        Ok(())
    }

    /// Buckets actually used (each segment gets an equal share).
    pub fn buckets(&self) -> u64 {
        let buckets = self.store_size_bytes / self.bucket_size_bytes;
        buckets / u64::from(self.segments) * u64::from(self.segments)
    }

    /// Entries one bucket holds.
    pub fn entries_per_bucket(&self) -> u64 {
        (self.bucket_size_bytes - BUCKET_HEADER_BYTES) / ENTRY_BYTES
    }

    /// Most fingerprints the store can hold.
    pub fn capacity_entries(&self) -> u64 {
        self.buckets() * self.entries_per_bucket()
    }

    /// PCM the finder occupies: buckets plus the location → fingerprint map.
    pub fn pcm_bytes(&self) -> u64 {
        self.buckets() * self.bucket_size_bytes
            + self.capacity_entries() * REVERSE_SLOTS_PER_ENTRY * REVERSE_SLOT_BYTES
    }
}

/// What a lookup found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DedupLookup {
    /// The page's fingerprint (pass it to `insert` after writing the page).
    pub fingerprint: Fingerprint,
    /// A location already holding these bytes.
    pub existing: Option<Location>,
    /// Hashing plus store search.
    pub cost: AccessCost,
}

/// Running totals of a finder.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DedupStats {
    /// Lookups.
    pub lookups: u64,
    /// Lookups that found a location.
    pub hits: u64,
    /// Fingerprints inserted.
    pub inserts: u64,
    /// Fingerprints removed by the caller (location invalidated).
    pub removals: u64,
    /// Fingerprints evicted to make room (least recently used of their segment).
    pub evictions: u64,
    /// Fingerprints currently held.
    pub entries: u64,
    /// Bucket splits.
    pub splits: u64,
    /// Range checks and entry probes of all searches.
    pub effort: SearchEffort,
    /// Range checks and entry probes of lookups only.
    pub lookup_effort: SearchEffort,
    /// PCM time of lookups (the "search time" of thesis Fig. 5.2a), idle-device latency.
    pub search_time: SimTime,
    /// Hashing time.
    pub hash_time: SimTime,
    /// Hashing energy, picojoules.
    pub hash_energy_pj: f64,
    /// Every PCM access the finder made.
    pub pcm: AccessCost,
}

/// The redundant write finder.
#[derive(Debug)]
pub struct RedundantWriteFinder {
    config: DedupConfig,
    base: PcmAddr,
    reverse_base: PcmAddr,
    reverse_slots: u64,
    store: Store,
    lru: Lru,
    /// Fingerprint held by each location.
    reverse: Vec<Option<Fingerprint>>,
    hash_latency: SimTime,
    stats: DedupStats,
}

impl RedundantWriteFinder {
    /// A finder whose store occupies `config.pcm_bytes()` of `device` from `base`, for
    /// locations `0..locations`.
    pub fn new(
        config: DedupConfig,
        base: PcmAddr,
        locations: u32,
        device: &PcmDevice,
    ) -> PcmResult<Self> {
        config.validate()?;
        let end = base.0.checked_add(config.pcm_bytes());
        if end.is_none_or(|end| end > device.capacity_bytes()) {
            return Err(config_error(
                "dedup.store_size_bytes",
                format!(
                    "the store needs {} B of PCM from {base} but the device has {} B",
                    config.pcm_bytes(),
                    device.capacity_bytes()
                ),
            ));
        }
        crate::memory::check_host_memory(
            "locations",
            u64::from(locations) * 32 + config.capacity_entries() * 24,
        )?;
        let buckets = config.buckets();
        let reverse_slots = config.capacity_entries() * REVERSE_SLOTS_PER_ENTRY;
        Ok(RedundantWriteFinder {
            base,
            reverse_base: base.offset(buckets * config.bucket_size_bytes),
            reverse_slots,
            store: Store::new(
                base,
                config.bucket_size_bytes,
                buckets as u32,
                config.segments,
                config.search,
            ),
            lru: Lru::new(locations, config.segments),
            reverse: vec![None; locations as usize],
            hash_latency: SimTime::from_ns_f64(config.hash_latency_ns),
            stats: DedupStats::default(),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DedupConfig {
        &self.config
    }

    /// First PCM byte of the store.
    pub fn base(&self) -> PcmAddr {
        self.base
    }

    /// Running totals.
    pub fn stats(&self) -> DedupStats {
        let mut stats = self.stats.clone();
        stats.entries = self.store.entries;
        stats.splits = self.store.splits;
        stats.effort = self.store.effort;
        stats
    }

    /// The fingerprint `location` holds, if the finder knows it (no cost).
    pub fn fingerprint_at(&self, location: Location) -> Option<Fingerprint> {
        self.reverse.get(location.index()).copied().flatten()
    }

    /// The location recorded for `fingerprint` (no cost, no recency change).
    pub fn location_of(&self, fingerprint: &Fingerprint) -> Option<Location> {
        self.store
            .peek(fingerprint.segment(self.config.segments), fingerprint)
    }

    /// Fingerprints `page` and searches the store. A hit is the most recent use of its entry.
    pub fn lookup(&mut self, device: &mut PcmDevice, page: &[u8]) -> PcmResult<DedupLookup> {
        if page.is_empty() {
            return Err(argument_error("page", "an empty page has no fingerprint"));
        }
        self.lookup_hashed(device, Fingerprint::of(page))
    }

    /// [`RedundantWriteFinder::lookup`] of a page whose SHA-1 the caller computed ahead (e.g.
    /// on other threads): the same costs (hashing included) and the same search.
    pub fn lookup_hashed(
        &mut self,
        device: &mut PcmDevice,
        fingerprint: Fingerprint,
    ) -> PcmResult<DedupLookup> {
        let hash = AccessCost {
            latency: self.hash_latency,
            energy_pj: self.config.hash_energy_nj * 1e3,
            ..AccessCost::default()
        };
        self.stats.hash_time += hash.latency;
        self.stats.hash_energy_pj += hash.energy_pj;
        // hashing runs on the controller: a timed call's next access waits for it
        device.compute(hash.latency);
        let (existing, search) = self.lookup_fingerprint(device, &fingerprint)?;
        Ok(DedupLookup {
            fingerprint,
            existing,
            cost: hash + search,
        })
    }

    /// Searches the store for a fingerprint already computed.
    pub fn lookup_fingerprint(
        &mut self,
        device: &mut PcmDevice,
        fingerprint: &Fingerprint,
    ) -> PcmResult<(Option<Location>, AccessCost)> {
        let segment = fingerprint.segment(self.config.segments);
        let before = self.store.effort;
        let mut cost = AccessCost::default();
        let place = self.store.locate(device, segment, fingerprint, &mut cost)?;
        let existing = if place.found() {
            let location = self
                .store
                .peek_place(segment, place)
                .expect("a found place holds an entry");
            self.lru.touch(segment, location.0);
            Some(location)
        } else {
            None
        };
        self.stats.lookups += 1;
        self.stats.hits += u64::from(existing.is_some());
        self.stats.lookup_effort.range_checks +=
            self.store.effort.range_checks - before.range_checks;
        self.stats.lookup_effort.entry_probes +=
            self.store.effort.entry_probes - before.entry_probes;
        self.stats.search_time += cost.latency;
        self.stats.pcm += cost;
        Ok((existing, cost))
    }

    /// Records that `location` now holds the page with `fingerprint`. A location that held
    /// another fingerprint drops it; a fingerprint recorded at another location moves here.
    pub fn insert(
        &mut self,
        device: &mut PcmDevice,
        fingerprint: Fingerprint,
        location: Location,
    ) -> PcmResult<AccessCost> {
        self.check_location(location)?;
        let segment = fingerprint.segment(self.config.segments);
        let mut cost = AccessCost::default();
        match self.reverse[location.index()] {
            Some(held) if held == fingerprint => {
                self.lru.touch(segment, location.0);
                return Ok(cost);
            }
            Some(_) => cost += self.remove_inner(device, location)?,
            None => {}
        }
        loop {
            let place = self
                .store
                .locate(device, segment, &fingerprint, &mut cost)?;
            if place.found() {
                // recorded elsewhere: the newest copy wins
                let other = self
                    .store
                    .peek_place(segment, place)
                    .expect("a found place holds an entry");
                cost += self.remove_inner(device, other)?;
                continue;
            }
            let entry = Entry {
                fingerprint,
                location,
            };
            match self
                .store
                .insert(device, segment, place, entry, &mut cost)?
            {
                InsertOutcome::Inserted => break,
                InsertOutcome::Full => {
                    let oldest = self
                        .lru
                        .oldest(segment)
                        .expect("a full segment holds entries");
                    cost += self.remove_inner(device, Location(oldest))?;
                    self.stats.evictions += 1;
                }
            }
        }
        self.reverse[location.index()] = Some(fingerprint);
        self.lru.push_front(segment, location.0);
        cost += device.write(self.reverse_slot(location), &Self::slot_bytes(location))?;
        self.stats.inserts += 1;
        self.stats.pcm += cost;
        Ok(cost)
    }

    /// Forgets the fingerprint of `location` (its bytes are no longer valid there).
    pub fn remove(&mut self, device: &mut PcmDevice, location: Location) -> PcmResult<AccessCost> {
        self.check_location(location)?;
        let cost = if self.reverse[location.index()].is_some() {
            self.stats.removals += 1;
            self.remove_inner(device, location)?
        } else {
            // the reverse map is consulted and finds nothing
            device.charge_read(self.reverse_slot(location), REVERSE_SLOT_BYTES)?
        };
        self.stats.pcm += cost;
        Ok(cost)
    }

    fn remove_inner(
        &mut self,
        device: &mut PcmDevice,
        location: Location,
    ) -> PcmResult<AccessCost> {
        let Some(fingerprint) = self.reverse[location.index()] else {
            return Ok(AccessCost::default());
        };
        let segment = fingerprint.segment(self.config.segments);
        let slot = self.reverse_slot(location);
        let mut cost = device.charge_read(slot, REVERSE_SLOT_BYTES)?;
        let place = self
            .store
            .locate(device, segment, &fingerprint, &mut cost)?;
        debug_assert!(
            place.found(),
            "reverse map names a fingerprint the store lacks"
        );
        if place.found() {
            let entry = self.store.remove(device, segment, place, &mut cost)?;
            debug_assert_eq!(entry.location, location);
        }
        self.reverse[location.index()] = None;
        self.lru.unlink(segment, location.0);
        cost += device.write(slot, &[0; REVERSE_SLOT_BYTES as usize])?;
        Ok(cost)
    }

    fn check_location(&self, location: Location) -> PcmResult<()> {
        if location.index() < self.reverse.len() {
            Ok(())
        } else {
            Err(argument_error(
                "location",
                format!(
                    "{location} is beyond the {} locations the finder was built for",
                    self.reverse.len()
                ),
            ))
        }
    }

    /// The PCM slot of `location` in the reverse map (a hash table; one slot is charged).
    fn reverse_slot(&self, location: Location) -> PcmAddr {
        let slot = u64::from(location.0).wrapping_mul(0x9e37_79b9_7f4a_7c15) % self.reverse_slots;
        self.reverse_base.offset(slot * REVERSE_SLOT_BYTES)
    }

    fn slot_bytes(location: Location) -> [u8; REVERSE_SLOT_BYTES as usize] {
        let mut bytes = [0u8; REVERSE_SLOT_BYTES as usize];
        bytes[..4].copy_from_slice(&location.0.wrapping_add(1).to_le_bytes());
        bytes
    }

    /// Checks the finder's invariants: both directions of the map agree (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.store.check(self.config.segments);
        let mut held = 0;
        for (i, fp) in self.reverse.iter().enumerate() {
            if let Some(fp) = fp {
                assert_eq!(self.location_of(fp), Some(Location(i as u32)));
                held += 1;
            }
        }
        assert_eq!(held, self.store.entries);
    }
}
