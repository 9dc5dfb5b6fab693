//! The durability contract on a device that loses unflushed page writes (each page reverts to
//! its last flushed content or to any write since, independently): flush, reopen, oracle.
//! The same check on the simulated SSD under real power cuts is in the lab crate
//! (`nandlab_lab::power::engine`).

use super::*;
use crate::durability::{EngineMutation, RowOracle, RowViolations};
use crate::mem::{MemDevice, MemFtl, MemFtlConfig};
use crate::workload::{QueryGenerator, QueryMix};
use std::collections::BTreeMap;

/// MemFtl (for IAA's hints) plus, per page, its content at the last flush and every write
/// since: what a power loss may leave.
struct LossyDevice {
    ftl: MemFtl,
    durable: BTreeMap<u32, Vec<u8>>,
    since_flush: BTreeMap<u32, Vec<Vec<u8>>>,
    flushes: u64,
}

impl LossyDevice {
    fn new() -> Self {
        LossyDevice {
            ftl: MemFtl::new(MemFtlConfig {
                page_size_bytes: 256,
                pages_per_block: 4,
                block_count: 12,
                spare_block_count: 3,
                ..MemFtlConfig::default()
            })
            .unwrap(),
            durable: BTreeMap::new(),
            since_flush: BTreeMap::new(),
            flushes: 0,
        }
    }

    /// The device after a power loss now: each page one of its allowed contents.
    fn power_loss(&self, state: &mut u64) -> MemDevice {
        let page = self.ftl.page_size_bytes();
        let pages = self.ftl.logical_page_count();
        let mut dev = MemDevice::new(page, pages, SimTime::ZERO, SimTime::ZERO).unwrap();
        let zeros = vec![0u8; page];
        for lpa in 0..pages as u32 {
            let mut options = vec![self.durable.get(&lpa).unwrap_or(&zeros)];
            options.extend(self.since_flush.get(&lpa).into_iter().flatten());
            let pick = options[(next(state) % options.len() as u64) as usize];
            dev.write_page(Lpa(lpa), pick).unwrap();
        }
        dev
    }
}

fn next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

impl BlockDevice for LossyDevice {
    fn page_size_bytes(&self) -> usize {
        self.ftl.page_size_bytes()
    }
    fn logical_page_count(&self) -> u64 {
        self.ftl.logical_page_count()
    }
    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        self.ftl.read_page(lpa, buf)
    }
    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        self.ftl.write_page(lpa, data)?;
        self.since_flush
            .entry(lpa.0)
            .or_default()
            .push(data.to_vec());
        Ok(())
    }
    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        self.ftl.trim_page(lpa)?;
        let zeros = vec![0u8; self.page_size_bytes()];
        self.since_flush.entry(lpa.0).or_default().push(zeros);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), EngineError> {
        for (lpa, writes) in std::mem::take(&mut self.since_flush) {
            if let Some(last) = writes.last() {
                self.durable.insert(lpa, last.clone());
            }
        }
        self.flushes += 1;
        Ok(())
    }
    fn now(&self) -> SimTime {
        self.ftl.now()
    }
}

impl CoDesignHints for LossyDevice {
    fn next_erase_block_valid_lpas(&self, out: &mut Vec<Lpa>) {
        self.ftl.next_erase_block_valid_lpas(out)
    }
}

fn crash_config(iaa: bool, u2di: bool) -> EngineConfig {
    EngineConfig {
        row_size_bytes: 40,
        hint_refresh_queries: 4,
        crash_consistent: true,
        ..EngineConfig::conventional().with_switches(iaa, u2di)
    }
}

/// Runs `queries` queries (flush probability 1/8) and, after every query and inside every
/// flush's place, loses power on a copy of the device, reopens and checks. Returns the
/// violations summed and the power losses checked.
fn run(config: EngineConfig, mutation: EngineMutation, seed: u64) -> (RowViolations, u64) {
    let mut engine = Engine::new(LossyDevice::new(), config.clone()).unwrap();
    engine.set_mutation(mutation);
    let mut oracle = RowOracle::of(&engine);
    let mix = QueryMix::new(0.4, 0.2, 0.4).unwrap();
    let mut generator = QueryGenerator::new(mix, seed).unwrap();
    let mut state = seed ^ 0xDEAD_BEEF;
    let (mut total, mut losses) = (RowViolations::default(), 0);
    for i in 0..300 {
        let query = if engine.free_space_fraction() < 0.3 {
            match generator.random_live_row(&engine) {
                Some(row) => Query::Delete(row),
                None => Query::Insert,
            }
        } else {
            generator.next_query(&engine)
        };
        oracle.query_issued(&engine, query);
        // a loss while the query is in flight: its write may or may not have landed
        engine.execute(query).unwrap();
        if next(&mut state).is_multiple_of(3) {
            check_loss(&engine, &oracle, &config, &mut state, &mut total);
            losses += 1;
        }
        oracle.query_completed();
        if i % 8 == 7 {
            engine.flush().unwrap();
            oracle.flush_completed();
        }
        check_loss(&engine, &oracle, &config, &mut state, &mut total);
        losses += 1;
    }
    (total, losses)
}

fn check_loss(
    engine: &Engine<LossyDevice>,
    oracle: &RowOracle,
    config: &EngineConfig,
    state: &mut u64,
    total: &mut RowViolations,
) {
    let device = engine.device().power_loss(state);
    let mut reopened = match Engine::open(device, config.clone()) {
        Ok(e) => e,
        Err(e) => {
            total.unknown += 1;
            total.examples.push(format!("reopen failed: {e}"));
            return;
        }
    };
    total.add(&oracle.check(&reopened));
    if let Err(e) = reopened.verify_all() {
        total.unknown += 1;
        total.examples.push(format!("verify_all: {e}"));
    }
}

#[test]
fn every_variant_keeps_flushed_rows_across_power_loss() {
    for (iaa, u2di) in [(false, false), (true, true), (false, true), (true, false)] {
        for seed in 0..4 {
            let (v, losses) = run(crash_config(iaa, u2di), EngineMutation::None, seed);
            assert!(losses > 300);
            assert_eq!(v.total(), 0, "iaa {iaa} u2di {u2di} seed {seed}: {v:?}");
        }
    }
}

#[test]
fn every_engine_mutation_is_caught() {
    for (mutation, iaa, u2di) in [
        (EngineMutation::ReuseMovedSlots, true, true),
        (EngineMutation::KeepDeletedRows, false, false),
        (EngineMutation::NoDeviceFlush, false, false),
    ] {
        let caught = (0..4)
            .map(|seed| run(crash_config(iaa, u2di), mutation, seed).0.total())
            .sum::<u64>();
        assert!(caught > 0, "{mutation:?} not caught");
    }
}

#[test]
fn a_reopened_table_is_usable_and_reuses_nothing_it_must_keep() {
    let config = crash_config(true, true);
    let mut engine = Engine::new(LossyDevice::new(), config.clone()).unwrap();
    let mut generator = QueryGenerator::new(QueryMix::new(0.35, 0.25, 0.4).unwrap(), 3).unwrap();
    for _ in 0..200 {
        let q = generator.next_query(&engine);
        engine.execute(q).unwrap();
    }
    engine.flush().unwrap();
    assert_eq!(engine.quarantined_slots(), 0);
    let live = engine.live_row_count();
    let mut state = 9;
    let device = engine.device().power_loss(&mut state);
    let mut reopened = Engine::open(device, config).unwrap();
    assert_eq!(reopened.live_row_count(), live);
    for id in 0..engine.row_id_bound() {
        assert_eq!(
            reopened.row_version(RowId(id)),
            engine.row_version(RowId(id))
        );
    }
    for _ in 0..200 {
        let q = generator.next_query(&reopened);
        reopened.execute(q).unwrap();
    }
    reopened.flush().unwrap();
    assert!(reopened.verify_all().unwrap() > 0);
}

#[test]
fn flush_needs_the_crash_consistent_mode_and_garbage_fails_the_reopen() {
    let mut engine = Engine::new(
        LossyDevice::new(),
        EngineConfig {
            row_size_bytes: 40,
            ..EngineConfig::conventional()
        },
    )
    .unwrap();
    let e = engine.flush().unwrap_err().to_string();
    assert!(e.contains("crash_consistent"), "{e}");
    let mut dev = MemDevice::new(256, 4, SimTime::ZERO, SimTime::ZERO).unwrap();
    let mut page = vec![0u8; 256];
    page[40] = 1; // slot 1: not a row image
    dev.write_page(Lpa(2), &page).unwrap();
    let e = Engine::open(dev, crash_config(false, false)).unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::Corruption {
                lpa: Lpa(2),
                slot_in_page: 1,
                ..
            }
        ),
        "{e}"
    );
}
