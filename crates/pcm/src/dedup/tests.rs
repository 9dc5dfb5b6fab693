use super::*;
use crate::preset::preset;
use proptest::prelude::*;
use std::collections::HashMap;

fn device(capacity_bytes: u64) -> PcmDevice {
    let mut c = preset("cidr11").unwrap();
    c.geometry.capacity_bytes = capacity_bytes;
    PcmDevice::new(c, 1).unwrap()
}

fn config(segments: u32, buckets: u64, bucket_size_bytes: u64) -> DedupConfig {
    DedupConfig {
        segments,
        store_size_bytes: buckets * bucket_size_bytes,
        bucket_size_bytes,
        search: BucketSearch::Binary,
        hash_latency_ns: 0.0,
        hash_energy_nj: 0.0,
    }
}

fn page(content: u32) -> Vec<u8> {
    let mut p = vec![0u8; 256];
    p[..4].copy_from_slice(&content.to_le_bytes());
    p
}

#[test]
fn a_page_written_once_is_found_until_its_location_is_invalidated() {
    let mut dev = device(1 << 20);
    let mut f = RedundantWriteFinder::new(config(4, 16, 4096), PcmAddr(0), 100, &dev).unwrap();
    let a = f.lookup(&mut dev, &page(1)).unwrap();
    assert_eq!(a.existing, None);
    f.insert(&mut dev, a.fingerprint, Location(7)).unwrap();
    let b = f.lookup(&mut dev, &page(1)).unwrap();
    assert_eq!(b.existing, Some(Location(7)));
    assert_eq!(f.lookup(&mut dev, &page(2)).unwrap().existing, None);
    assert_eq!(f.fingerprint_at(Location(7)), Some(a.fingerprint));
    f.remove(&mut dev, Location(7)).unwrap();
    assert_eq!(f.lookup(&mut dev, &page(1)).unwrap().existing, None);
    let s = f.stats();
    assert_eq!(
        (s.lookups, s.hits, s.inserts, s.removals, s.entries),
        (4, 1, 1, 1, 0)
    );
    // every store access went to the PCM device
    assert!(dev.stats().reads > 0 && dev.stats().words_written > 0);
    assert_eq!(s.pcm.lines_read, dev.stats().lines_read);
    f.check();
}

#[test]
fn hashing_cost_is_charged_per_lookup() {
    let mut dev = device(1 << 20);
    let mut c = config(1, 4, 4096);
    c.hash_latency_ns = 1500.0;
    c.hash_energy_nj = 2.0;
    let mut f = RedundantWriteFinder::new(c, PcmAddr(0), 10, &dev).unwrap();
    let l = f.lookup(&mut dev, &page(1)).unwrap();
    // empty store: no PCM read, only the hash
    assert_eq!(l.cost.latency, SimTime::from_ns(1500));
    assert_eq!(l.cost.energy_pj, 2000.0);
    assert_eq!(f.stats().hash_time, SimTime::from_ns(1500));
}

#[test]
fn a_fingerprint_moves_to_its_newest_location_and_a_location_holds_one() {
    let mut dev = device(1 << 20);
    let mut f = RedundantWriteFinder::new(config(2, 8, 4096), PcmAddr(0), 10, &dev).unwrap();
    let one = Fingerprint::of(&page(1));
    let two = Fingerprint::of(&page(2));
    f.insert(&mut dev, one, Location(1)).unwrap();
    f.insert(&mut dev, one, Location(2)).unwrap();
    assert_eq!(f.location_of(&one), Some(Location(2)));
    assert_eq!(f.fingerprint_at(Location(1)), None);
    f.insert(&mut dev, two, Location(2)).unwrap();
    assert_eq!(f.location_of(&one), None);
    assert_eq!(f.location_of(&two), Some(Location(2)));
    f.check();
}

#[test]
fn full_buckets_split_and_a_full_segment_evicts_its_least_recently_used() {
    let mut dev = device(1 << 20);
    // one segment, 8 buckets of 2 entries: at most 16 fingerprints
    let mut f = RedundantWriteFinder::new(config(1, 8, 56), PcmAddr(0), 100, &dev).unwrap();
    for i in 0..40u32 {
        // page 0 is used before every insert, so it is never the least recently used
        if i > 0 {
            assert!(f.lookup(&mut dev, &page(0)).unwrap().existing.is_some());
        }
        f.insert(&mut dev, Fingerprint::of(&page(i)), Location(i))
            .unwrap();
        f.check();
    }
    let s = f.stats();
    assert!(s.splits >= 7 && s.evictions >= 24, "{s:?}");
    assert!(s.entries <= 16);
    assert_eq!(f.location_of(&Fingerprint::of(&page(0))), Some(Location(0)));
    assert_eq!(
        f.location_of(&Fingerprint::of(&page(39))),
        Some(Location(39))
    );
    assert_eq!(f.location_of(&Fingerprint::of(&page(1))), None);
}

#[test]
fn bad_config_and_arguments_name_the_key() {
    let dev = device(1 << 16);
    let cases = [
        (config(0, 4, 4096), "dedup.segments"),
        (config(8, 4, 4096), "dedup.store_size_bytes"),
        (config(1, 4, 40), "dedup.bucket_size_bytes"),
        // 64 buckets of 4 KiB do not fit a 64 KiB PCM
        (config(1, 64, 4096), "dedup.store_size_bytes"),
    ];
    for (c, key) in cases {
        let e = RedundantWriteFinder::new(c, PcmAddr(0), 10, &dev).unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
    // 2^32 locations need over 100 GB of tables: refused before allocating
    let e = RedundantWriteFinder::new(config(1, 4, 4096), PcmAddr(0), u32::MAX, &dev).unwrap_err();
    assert!(e.to_string().contains("`locations`"), "{e}");
    let mut dev = device(1 << 20);
    let mut f = RedundantWriteFinder::new(config(1, 4, 4096), PcmAddr(0), 10, &dev).unwrap();
    let e = f
        .insert(&mut dev, Fingerprint::of(b"x"), Location(10))
        .unwrap_err();
    assert!(e.to_string().contains("`location`"), "{e}");
    let e = f.lookup(&mut dev, &[]).unwrap_err();
    assert!(e.to_string().contains("`page`"), "{e}");
}

/// Runs a stream of page writes with duplicates through a finder of `buckets` buckets and
/// returns (duplicates detected / duplicates present, mean range checks per lookup).
fn detection(buckets: u64, search: BucketSearch) -> (f64, f64) {
    let mut dev = device(8 << 20);
    let mut c = config(4, buckets, 4096);
    c.search = search;
    let mut f = RedundantWriteFinder::new(c, PcmAddr(0), 1 << 16, &dev).unwrap();
    let mut rng = nandlab_core::SimRng::seed_from_u64(5);
    let mut seen = std::collections::HashSet::new();
    let (mut duplicates, mut next_location) = (0u64, 0u32);
    for _ in 0..20_000 {
        // 30 % rewrites of earlier content, skewed to recent contents
        let content = if rng.chance(0.3) && next_location > 0 {
            next_location - 1 - rng.below(u64::from(next_location.min(4_000))) as u32
        } else {
            1_000_000 + next_location
        };
        let l = f.lookup(&mut dev, &page(content)).unwrap();
        if !seen.insert(content) {
            duplicates += 1;
        }
        if l.existing.is_none() {
            f.insert(&mut dev, l.fingerprint, Location(next_location))
                .unwrap();
            next_location += 1;
        }
    }
    let s = f.stats();
    (
        s.hits as f64 / duplicates as f64,
        s.lookup_effort.range_checks as f64 / s.lookups as f64,
    )
}

#[test]
fn detection_rate_grows_with_the_store_and_reaches_all_duplicates() {
    let sizes = [4u64, 8, 16, 32, 128];
    let rates: Vec<(f64, f64)> = sizes
        .iter()
        .map(|b| detection(*b, BucketSearch::Linear))
        .collect();
    for w in rates.windows(2) {
        assert!(w[1].0 >= w[0].0, "detection not monotone: {rates:?}");
        assert!(
            w[1].1 >= w[0].1,
            "linear search effort not growing: {rates:?}"
        );
    }
    assert!(rates[0].0 < 0.5, "{rates:?}");
    assert!(rates[4].0 > 0.999, "{rates:?}");
    // binary search over buckets needs fewer range checks than the linear scan
    let binary = detection(128, BucketSearch::Binary);
    eprintln!(
        "buckets {sizes:?}: (detection, range checks per lookup) linear {rates:?}, binary@128 {binary:?}"
    );
    assert_eq!(binary.0, rates[4].0);
    assert!(binary.1 < rates[4].1, "{binary:?} vs {:?}", rates[4]);
}

#[derive(Clone, Debug)]
enum Op {
    Write { lpa: u8, content: u8 },
    Trim { lpa: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..24, 0u8..12).prop_map(|(lpa, content)| Op::Write { lpa, content }),
        1 => (0u8..24).prop_map(|lpa| Op::Trim { lpa }),
    ]
}

/// A flash of 64 locations with reference-counted pages, as an FTL with dedup keeps it.
struct ModelFlash {
    pages: HashMap<u32, Vec<u8>>,
    refs: HashMap<u32, u32>,
    map: HashMap<u8, u32>,
    free: Vec<u32>,
}

impl ModelFlash {
    fn release(&mut self, lpa: u8, f: &mut RedundantWriteFinder, dev: &mut PcmDevice) {
        let Some(loc) = self.map.remove(&lpa) else {
            return;
        };
        let r = self.refs.get_mut(&loc).unwrap();
        *r -= 1;
        if *r == 0 {
            f.remove(dev, Location(loc)).unwrap();
            self.pages.remove(&loc);
            self.free.push(loc);
        }
    }
}

proptest! {
    /// Dedup against a model flash: whatever the interleaving of writes, duplicate writes,
    /// overwrites, trims and evictions, a hit names a location holding exactly the bytes looked
    /// up, and both directions of the map agree.
    #[test]
    fn a_hit_always_holds_the_same_bytes(ops in proptest::collection::vec(op(), 1..200), segments in 1u32..3) {
        let mut dev = device(1 << 20);
        // 2 entries per bucket, 3 buckets per segment: evictions happen
        let c = config(segments, 3 * u64::from(segments), 56);
        let mut f = RedundantWriteFinder::new(c, PcmAddr(4096), 64, &dev).unwrap();
        let mut flash = ModelFlash {
            pages: HashMap::new(),
            refs: HashMap::new(),
            map: HashMap::new(),
            free: (0..64).rev().collect(),
        };
        for op in ops {
            match op {
                Op::Write { lpa, content } => {
                    let bytes = page(u32::from(content));
                    let l = f.lookup(&mut dev, &bytes).unwrap();
                    let target = match l.existing {
                        Some(loc) => {
                            prop_assert_eq!(flash.pages.get(&loc.0), Some(&bytes));
                            loc.0
                        }
                        None => {
                            let loc = flash.free.pop().unwrap();
                            flash.pages.insert(loc, bytes.clone());
                            f.insert(&mut dev, l.fingerprint, Location(loc)).unwrap();
                            loc
                        }
                    };
                    *flash.refs.entry(target).or_insert(0) += 1;
                    flash.release(lpa, &mut f, &mut dev);
                    flash.map.insert(lpa, target);
                }
                Op::Trim { lpa } => flash.release(lpa, &mut f, &mut dev),
            }
            f.check();
        }
        for loc in flash.map.values() {
            prop_assert!(flash.pages.contains_key(loc));
        }
    }
}
