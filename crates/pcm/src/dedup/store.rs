//! The fingerprint store (thesis §3.2.2): `segments` segments, each a key-ordered list of
//! buckets; a bucket is one `bucket_size_bytes` region of PCM holding a header and entries
//! `<fingerprint, location>` sorted by fingerprint. A lookup range-checks buckets (their first
//! and last entries) and binary-searches the one whose range holds the key. A full bucket splits
//! into a free bucket of its segment; a segment with no free bucket reports `Full` and the
//! caller evicts.
//!
//! The store keeps its structure in host memory for speed and mirrors every bucket's bytes in
//! the PCM device: each read the search makes and each byte an update rewrites is charged to
//! the device, whose data-comparison write then programs only what changed.

use super::fingerprint::{Fingerprint, Location};
use crate::device::{AccessCost, PcmAddr, PcmDevice};
use crate::error::PcmResult;
use serde::{Deserialize, Serialize};

/// Bytes of a bucket header (entry count, padding).
pub const BUCKET_HEADER_BYTES: u64 = 8;
/// Bytes of one entry: a 20-byte SHA-1 and a 4-byte location (the thesis's "160 + 32").
pub const ENTRY_BYTES: u64 = 24;

/// How a lookup finds the bucket whose range holds a key (thesis §3.2.2 gives both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BucketSearch {
    /// Range-check the segment's buckets one after another.
    Linear,
    /// Binary search over the sorted buckets, range-checking each probe.
    #[default]
    Binary,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub fingerprint: Fingerprint,
    pub location: Location,
}

#[derive(Debug)]
struct Segment {
    /// Buckets in key order; none is empty.
    order: Vec<u32>,
    free: Vec<u32>,
}

/// Where a key is or would go.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    /// Index into the segment's bucket order (`None`: the segment has no bucket).
    position: Option<usize>,
    /// `Ok(i)`: the key is entry `i`; `Err(i)`: it would be inserted at `i`.
    index: Result<usize, usize>,
}

impl Place {
    pub fn found(&self) -> bool {
        self.index.is_ok()
    }
}

/// Search effort, for the "search time per fingerprint" figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SearchEffort {
    /// Buckets range-checked.
    pub range_checks: u64,
    /// Entries compared inside a bucket.
    pub entry_probes: u64,
}

/// Why an insert did not happen.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum InsertOutcome {
    Inserted,
    /// The target bucket is full and the segment has no free bucket.
    Full,
}

#[derive(Debug)]
pub(crate) struct Store {
    base: PcmAddr,
    bucket_size_bytes: u64,
    per_bucket: usize,
    search: BucketSearch,
    buckets: Vec<Vec<Entry>>,
    segments: Vec<Segment>,
    scratch: Vec<u8>,
    pub effort: SearchEffort,
    pub splits: u64,
    pub entries: u64,
}

impl Store {
    /// `buckets` buckets of `bucket_size_bytes` from `base`, dealt out evenly to `segments`.
    pub fn new(
        base: PcmAddr,
        bucket_size_bytes: u64,
        buckets: u32,
        segments: u32,
        search: BucketSearch,
    ) -> Self {
        let per_bucket = ((bucket_size_bytes - BUCKET_HEADER_BYTES) / ENTRY_BYTES) as usize;
        let per_segment = buckets / segments;
        Store {
            base,
            bucket_size_bytes,
            per_bucket,
            search,
            buckets: (0..segments * per_segment)
                .map(|_| Vec::with_capacity(per_bucket))
                .collect(),
            segments: (0..segments)
                .map(|s| Segment {
                    order: Vec::with_capacity(per_segment as usize),
                    // popped from the end: hand out the lowest bucket first
                    free: (s * per_segment..(s + 1) * per_segment).rev().collect(),
                })
                .collect(),
            scratch: Vec::with_capacity(bucket_size_bytes as usize),
            effort: SearchEffort::default(),
            splits: 0,
            entries: 0,
        }
    }

    fn bucket_addr(&self, bucket: u32) -> PcmAddr {
        self.base.offset(u64::from(bucket) * self.bucket_size_bytes)
    }

    fn entry_addr(&self, bucket: u32, index: usize) -> PcmAddr {
        self.bucket_addr(bucket)
            .offset(BUCKET_HEADER_BYTES + index as u64 * ENTRY_BYTES)
    }

    /// Reads a bucket's header with its first entry, and its last entry.
    fn range_check(&mut self, device: &mut PcmDevice, bucket: u32) -> PcmResult<AccessCost> {
        self.effort.range_checks += 1;
        let len = self.buckets[bucket as usize].len();
        let mut cost =
            device.charge_read(self.bucket_addr(bucket), BUCKET_HEADER_BYTES + ENTRY_BYTES)?;
        if len > 1 {
            cost += device.charge_read(self.entry_addr(bucket, len - 1), ENTRY_BYTES)?;
        }
        Ok(cost)
    }

    /// Binary search inside a bucket, one entry read per probe.
    fn search_bucket(
        &mut self,
        device: &mut PcmDevice,
        bucket: u32,
        key: &Fingerprint,
        cost: &mut AccessCost,
    ) -> PcmResult<Result<usize, usize>> {
        let (mut lo, mut hi) = (0usize, self.buckets[bucket as usize].len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            self.effort.entry_probes += 1;
            *cost += device.charge_read(self.entry_addr(bucket, mid), ENTRY_BYTES)?;
            match self.buckets[bucket as usize][mid].fingerprint.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Ok(mid)),
            }
        }
        Ok(Err(lo))
    }

    /// Finds where `key` is, or would be inserted, in `segment`.
    pub fn locate(
        &mut self,
        device: &mut PcmDevice,
        segment: u32,
        key: &Fingerprint,
        cost: &mut AccessCost,
    ) -> PcmResult<Place> {
        let count = self.segments[segment as usize].order.len();
        if count == 0 {
            return Ok(Place {
                position: None,
                index: Err(0),
            });
        }
        // the bucket whose range holds the key, or the gap it falls in (`below`: the bucket
        // before the gap, if any)
        let mut below: Option<usize> = None;
        let mut holding: Option<usize> = None;
        match self.search {
            BucketSearch::Linear => {
                for position in 0..count {
                    let bucket = self.segments[segment as usize].order[position];
                    *cost += self.range_check(device, bucket)?;
                    let b = &self.buckets[bucket as usize];
                    if *key < b[0].fingerprint {
                        break;
                    }
                    if *key <= b[b.len() - 1].fingerprint {
                        holding = Some(position);
                        break;
                    }
                    below = Some(position);
                }
            }
            BucketSearch::Binary => {
                let (mut lo, mut hi) = (0usize, count);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    let bucket = self.segments[segment as usize].order[mid];
                    *cost += self.range_check(device, bucket)?;
                    let b = &self.buckets[bucket as usize];
                    if *key < b[0].fingerprint {
                        hi = mid;
                    } else if *key > b[b.len() - 1].fingerprint {
                        below = Some(mid);
                        lo = mid + 1;
                    } else {
                        holding = Some(mid);
                        break;
                    }
                }
            }
        }
        if let Some(position) = holding {
            let bucket = self.segments[segment as usize].order[position];
            let index = self.search_bucket(device, bucket, key, cost)?;
            return Ok(Place {
                position: Some(position),
                index,
            });
        }
        // not present: append to the bucket below the gap, or prepend to the first bucket
        Ok(match below {
            Some(position) => {
                let bucket = self.segments[segment as usize].order[position];
                Place {
                    position: Some(position),
                    index: Err(self.buckets[bucket as usize].len()),
                }
            }
            None => Place {
                position: Some(0),
                index: Err(0),
            },
        })
    }

    /// Rewrites a bucket's header and its entries from `from` on in the PCM.
    fn write_back(
        &mut self,
        device: &mut PcmDevice,
        bucket: u32,
        from: usize,
    ) -> PcmResult<AccessCost> {
        let entries = &self.buckets[bucket as usize];
        self.scratch.clear();
        self.scratch
            .extend_from_slice(&(entries.len() as u32).to_le_bytes());
        self.scratch.extend_from_slice(&[0; 4]);
        let mut cost = device.write(self.bucket_addr(bucket), &self.scratch)?;
        self.scratch.clear();
        for e in &entries[from.min(entries.len())..] {
            self.scratch.extend_from_slice(&e.fingerprint.0);
            self.scratch.extend_from_slice(&e.location.0.to_le_bytes());
        }
        if !self.scratch.is_empty() {
            let at = self.entry_addr(bucket, from);
            cost += device.write(at, &self.scratch)?;
        }
        Ok(cost)
    }

    /// Inserts `entry` at `place` (from a `locate` that did not find it).
    pub fn insert(
        &mut self,
        device: &mut PcmDevice,
        segment: u32,
        place: Place,
        entry: Entry,
        cost: &mut AccessCost,
    ) -> PcmResult<InsertOutcome> {
        let Err(mut index) = place.index else {
            unreachable!("insert at a place that holds the key");
        };
        let mut position = match place.position {
            Some(p) if !self.segments[segment as usize].order.is_empty() => p,
            _ => {
                let Some(bucket) = self.segments[segment as usize].free.pop() else {
                    return Ok(InsertOutcome::Full);
                };
                self.segments[segment as usize].order.push(bucket);
                index = 0;
                0
            }
        };
        let mut bucket = self.segments[segment as usize].order[position];
        if self.buckets[bucket as usize].len() == self.per_bucket {
            let Some(upper) = self.segments[segment as usize].free.pop() else {
                return Ok(InsertOutcome::Full);
            };
            self.splits += 1;
            let half = self.per_bucket / 2;
            let mut upper_entries = std::mem::take(&mut self.buckets[upper as usize]);
            upper_entries.extend(self.buckets[bucket as usize].drain(half..));
            self.buckets[upper as usize] = upper_entries;
            self.segments[segment as usize]
                .order
                .insert(position + 1, upper);
            *cost += self.write_back(device, upper, 0)?;
            *cost += self.write_back(device, bucket, half)?;
            if index > half {
                index -= half;
                bucket = upper;
                position += 1;
            }
        }
        debug_assert_eq!(self.segments[segment as usize].order[position], bucket);
        self.buckets[bucket as usize].insert(index, entry);
        self.entries += 1;
        *cost += self.write_back(device, bucket, index)?;
        Ok(InsertOutcome::Inserted)
    }

    /// Removes the entry at `place` (from a `locate` that found it); returns it.
    pub fn remove(
        &mut self,
        device: &mut PcmDevice,
        segment: u32,
        place: Place,
        cost: &mut AccessCost,
    ) -> PcmResult<Entry> {
        let (Some(position), Ok(index)) = (place.position, place.index) else {
            unreachable!("remove at a place that does not hold the key");
        };
        let bucket = self.segments[segment as usize].order[position];
        let entry = self.buckets[bucket as usize].remove(index);
        self.entries -= 1;
        *cost += self.write_back(device, bucket, index)?;
        if self.buckets[bucket as usize].is_empty() {
            let s = &mut self.segments[segment as usize];
            s.order.remove(position);
            s.free.push(bucket);
        }
        Ok(entry)
    }

    /// The location of the entry at a found `place` (no cost).
    pub fn peek_place(&self, segment: u32, place: Place) -> Option<Location> {
        let (Some(position), Ok(index)) = (place.position, place.index) else {
            return None;
        };
        let bucket = *self.segments[segment as usize].order.get(position)?;
        self.buckets[bucket as usize].get(index).map(|e| e.location)
    }

    /// The location stored for `key` (no cost; for tests and invariant checks).
    pub fn peek(&self, segment: u32, key: &Fingerprint) -> Option<Location> {
        self.segments[segment as usize]
            .order
            .iter()
            .flat_map(|b| self.buckets[*b as usize].iter())
            .find(|e| e.fingerprint == *key)
            .map(|e| e.location)
    }

    /// Checks the ordering invariants of every segment (tests).
    #[cfg(test)]
    pub fn check(&self, segments: u32) {
        let mut total = 0;
        for (s, seg) in self.segments.iter().enumerate() {
            let mut last: Option<Fingerprint> = None;
            for b in &seg.order {
                let entries = &self.buckets[*b as usize];
                assert!(!entries.is_empty() && entries.len() <= self.per_bucket);
                for e in entries {
                    assert_eq!(e.fingerprint.segment(segments) as usize, s);
                    assert!(
                        last.is_none_or(|l| l < e.fingerprint),
                        "unsorted segment {s}"
                    );
                    last = Some(e.fingerprint);
                    total += 1;
                }
            }
        }
        assert_eq!(total, self.entries);
    }
}
