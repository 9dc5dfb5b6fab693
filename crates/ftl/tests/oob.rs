//! Out-of-band metadata and write durability through the full pipeline (issue 10 item 4).
//!
//! Writes go through the host path (buffer, RMW, GC, wear-leveling, merges), then every
//! physical page's OOB is read back: the LPA and sequence number of the page the mapping points
//! at are those of the LPA's last write, no other programmed page carries a newer write of that
//! LPA (so a recovery scan, highest sequence per LPA, rebuilds the same mapping), sequence
//! numbers never exceed the last one decided, and the CRC matches the page's bytes. Durable /
//! acknowledged states are checked against request completions, with and without a write
//! buffer.

mod common;

use nandlab_core::SimRng;
use nandlab_ftl::{
    GcPolicy, HostRequest, Lpa, MappingKind, PayloadMode, Ppa, Ssd, SsdConfig, WearLeveling,
    WriteState, oob_crc,
};
use std::collections::HashMap;

const PAGE: u64 = 512;

fn config(mapping: MappingKind, payload: PayloadMode, buffer_pages: u32) -> SsdConfig {
    let mut c = common::slc(1, 2, 12, 4, PAGE as u32);
    c.ftl.payload = payload;
    c.ftl.op_fraction = 0.6;
    c.ftl.gc.threshold_blocks = 2;
    c.ftl.mapping.kind = mapping;
    c.ftl.gc.policy = GcPolicy::Greedy;
    c.ftl.wear.leveling = WearLeveling::Static;
    c.ftl.wear.erase_gap_threshold = 2;
    c.ftl.buffer.pages = buffer_pages;
    c.ftl.mapping.random_log_blocks = 2;
    c
}

/// Reads every physical page's OOB and checks it against the mapping and `last_write` (the
/// sequence number of each LPA's last write).
fn check_oob(ssd: &Ssd, last_write: &HashMap<Lpa, u64>, buffered: &[Lpa]) {
    let full = ssd.keeps_payloads();
    // what a recovery scan finds: the newest write of each LPA, and how many pages hold it
    let mut newest: HashMap<Lpa, u64> = HashMap::new();
    for ppa in (0..ssd.physical_pages() as u32).map(Ppa) {
        let Some(oob) = ssd.read_oob(ppa) else {
            assert!(
                ssd.physical_page(ppa).is_none(),
                "erased ppa {ppa} has data"
            );
            continue;
        };
        let lpa = oob.lpa.expect("the FTL writes no metadata pages");
        assert!(oob.sequence >= 1 && oob.sequence <= ssd.write_sequence());
        let data = if full {
            Some(ssd.physical_page(ppa).expect("programmed page has bytes"))
        } else {
            None
        };
        assert_eq!(
            oob.crc,
            oob_crc(oob.lpa, oob.sequence, data),
            "CRC of ppa {ppa}"
        );
        let best = newest.entry(lpa).or_default();
        *best = (*best).max(oob.sequence);
    }
    for lpa in (0..ssd.logical_pages() as u32).map(Lpa) {
        let Some(ppa) = ssd.locate(lpa) else {
            assert!(
                !last_write.contains_key(&lpa) || buffered.contains(&lpa),
                "lpa {lpa} was written but is not mapped"
            );
            continue;
        };
        let oob = ssd.read_oob(ppa).expect("a mapped page is programmed");
        assert_eq!(oob.lpa, Some(lpa), "OOB of ppa {ppa} names another LPA");
        assert_eq!(
            Some(&oob.sequence),
            newest.get(&lpa),
            "a page newer than the mapped one exists for lpa {lpa}"
        );
        if !buffered.contains(&lpa) {
            assert_eq!(
                Some(&oob.sequence),
                last_write.get(&lpa),
                "lpa {lpa}: the mapped page is not its last write"
            );
        }
    }
}

/// Single-page writes one at a time (random LPAs, random bytes), recording each write's
/// sequence number; returns the record.
fn write_randomly(ssd: &mut Ssd, count: usize, seed: u64) -> HashMap<Lpa, u64> {
    let mut rng = SimRng::seed_from_u64(seed);
    let mut last_write = HashMap::new();
    let mut previous = ssd.write_sequence();
    for _ in 0..count {
        let lpa = Lpa(rng.below(ssd.logical_pages()) as u32);
        let bytes: Vec<u8> = (0..PAGE).map(|_| rng.below(256) as u8).collect();
        ssd.execute(
            &HostRequest::write(lpa.offset_bytes(PAGE), PAGE),
            Some(&bytes),
        )
        .unwrap();
        let sequence = ssd.write_sequence();
        assert_eq!(sequence, previous + 1, "one sequence number per page write");
        previous = sequence;
        last_write.insert(lpa, sequence);
        // the request completed: its write is acknowledged, and durable unless buffered
        let expected = if ssd.has_front_end() {
            WriteState::Acknowledged
        } else {
            WriteState::Durable
        };
        assert_eq!(ssd.write_state(lpa), Some(expected), "lpa {lpa}");
    }
    last_write
}

#[test]
fn oob_agrees_with_the_mapping_in_every_mode() {
    for mapping in [MappingKind::Page, MappingKind::Block, MappingKind::Hybrid] {
        for payload in [PayloadMode::Full, PayloadMode::TimingOnly] {
            let mut ssd = Ssd::new(config(mapping, payload, 0), 7).unwrap();
            let last_write = write_randomly(&mut ssd, 600, 11);
            assert!(
                ssd.report().counters.erases > 0,
                "{mapping:?}: no GC or merge"
            );
            ssd.drain().unwrap();
            check_oob(&ssd, &last_write, &[]);
            let counts = ssd.write_state_counts();
            assert_eq!(counts.durable, last_write.len() as u64, "{mapping:?}");
            assert_eq!(counts.acknowledged + counts.decided, 0);
        }
    }
}

#[test]
fn buffered_writes_are_acknowledged_until_flushed() {
    for payload in [PayloadMode::Full, PayloadMode::TimingOnly] {
        let mut ssd = Ssd::new(config(MappingKind::Page, payload, 8), 3).unwrap();
        let last_write = write_randomly(&mut ssd, 400, 5);
        ssd.drain().unwrap();
        let buffered: Vec<Lpa> = (0..ssd.logical_pages() as u32)
            .map(Lpa)
            .filter(|&l| ssd.write_state(l) == Some(WriteState::Acknowledged))
            .collect();
        assert!(!buffered.is_empty() && buffered.len() <= 8);
        check_oob(&ssd, &last_write, &buffered);
        let counts = ssd.write_state_counts();
        assert_eq!(counts.acknowledged, buffered.len() as u64);
        assert_eq!(
            counts.durable + counts.acknowledged,
            last_write.len() as u64
        );

        ssd.execute(&HostRequest::flush(), None).unwrap();
        check_oob(&ssd, &last_write, &[]);
        let counts = ssd.write_state_counts();
        assert_eq!(counts.durable, last_write.len() as u64);
        assert_eq!(counts.acknowledged + counts.decided, 0);
    }
}

/// Queue depth > 1 with partial-page writes (read-modify-write) and GC in flight: after the
/// run every write is durable and the OOB still names each LPA's newest write.
#[test]
fn concurrent_runs_end_durable() {
    let mut c = config(MappingKind::Page, PayloadMode::TimingOnly, 0);
    c.ftl.host.queue_depth = 8;
    let mut ssd = Ssd::new(c, 9).unwrap();
    let logical = ssd.logical_pages();
    let mut rng = SimRng::seed_from_u64(2);
    let requests: Vec<HostRequest> = (0..3000)
        .map(|i| {
            let lpa = rng.below(logical);
            if i % 5 == 0 {
                HostRequest::write(lpa * PAGE + 100, 200)
            } else {
                HostRequest::write(lpa * PAGE, PAGE)
            }
        })
        .collect();
    ssd.run(requests).unwrap();
    let mut newest = HashMap::new();
    for ppa in (0..ssd.physical_pages() as u32).map(Ppa) {
        if let Some(oob) = ssd.read_oob(ppa) {
            let best = newest.entry(oob.lpa.unwrap()).or_insert(0);
            *best = oob.sequence.max(*best);
        }
    }
    for lpa in (0..logical as u32).map(Lpa) {
        match ssd.locate(lpa) {
            Some(ppa) => {
                let oob = ssd.read_oob(ppa).unwrap();
                assert_eq!(Some(&oob.sequence), newest.get(&lpa));
                assert_eq!(ssd.write_state(lpa), Some(WriteState::Durable));
                assert!(ssd.is_programmed_durably(ppa));
            }
            None => assert_eq!(ssd.write_state(lpa), None),
        }
    }
}
