use super::*;
use crate::mem::{MemDevice, MemFtl, MemFtlConfig};
use proptest::prelude::*;
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

fn small_ftl() -> MemFtl {
    MemFtl::new(MemFtlConfig {
        page_size_bytes: 256,
        pages_per_block: 4,
        block_count: 10,
        spare_block_count: 3,
        ..MemFtlConfig::default()
    })
    .unwrap()
}

fn config(iaa: bool, u2di: bool, refresh: u32) -> EngineConfig {
    EngineConfig {
        row_size_bytes: 40,
        hint_refresh_queries: refresh,
        ..EngineConfig::conventional().with_switches(iaa, u2di)
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert,
    Delete(usize),
    Update(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Insert),
        2 => any::<usize>().prop_map(Op::Delete),
        3 => any::<usize>().prop_map(Op::Update),
    ]
}

/// The reference: live rows and their versions, plus the last version of every id.
#[derive(Default)]
struct Model {
    live: HashMap<RowId, u32>,
    last_version: HashMap<RowId, u32>,
}

impl Model {
    fn pick(&self, index: usize) -> Option<RowId> {
        let mut rows: Vec<RowId> = self.live.keys().copied().collect();
        rows.sort();
        (!rows.is_empty()).then(|| rows[index % rows.len()])
    }
    fn bump(&mut self, row: RowId) {
        let version = self.last_version.get(&row).map_or(1, |v| v + 1);
        self.last_version.insert(row, version);
        self.live.insert(row, version);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every engine variant shows the same rows as a HashMap model after any I/D/U sequence,
    /// also across the GC of a small FTL, and every row reads back with verification on.
    #[test]
    fn all_engines_agree_with_the_model(ops in prop::collection::vec(op(), 1..400),
                                        refresh in 1u32..20) {
        let first_fit = ConventionalInsert::FirstFit;
        let recent_hole = ConventionalInsert::RecentHole;
        let mut engines: Vec<Engine<MemFtl>> = [
            (false, false, first_fit),
            (true, false, first_fit),
            (false, true, first_fit),
            (true, true, first_fit),
            (false, false, recent_hole),
            (false, true, recent_hole),
        ]
        .into_iter()
        .map(|(iaa, u2di, conventional_insert)| {
            let config = EngineConfig {
                conventional_insert,
                ..config(iaa, u2di, refresh)
            };
            Engine::new(small_ftl(), config).unwrap()
        })
        .collect();
        let slot_count = engines[0].slot_count();
        let mut model = Model::default();
        for op in &ops {
            match op {
                Op::Insert if model.live.len() as u64 == slot_count => {
                    for engine in &mut engines {
                        let full = matches!(engine.insert(), Err(EngineError::TableFull { .. }));
                        prop_assert!(full);
                    }
                }
                Op::Insert => {
                    let rows: Vec<RowId> = engines.iter_mut().map(|e| e.insert().unwrap()).collect();
                    prop_assert!(rows.iter().all(|r| *r == rows[0]), "ids differ: {:?}", rows);
                    prop_assert!(!model.live.contains_key(&rows[0]));
                    model.bump(rows[0]);
                }
                Op::Delete(index) | Op::Update(index) => {
                    let Some(row) = model.pick(*index) else { continue };
                    let is_delete = matches!(op, Op::Delete(_));
                    for engine in &mut engines {
                        if is_delete { engine.delete(row).unwrap() } else { engine.update(row).unwrap() }
                    }
                    if is_delete { model.live.remove(&row); } else { model.bump(row); }
                }
            }
        }
        for engine in &mut engines {
            prop_assert_eq!(engine.live_row_count(), model.live.len() as u64);
            for (&row, &version) in &model.live {
                prop_assert_eq!(engine.read_row(row).unwrap(), version);
            }
            for row in model.last_version.keys().filter(|r| !model.live.contains_key(r)) {
                prop_assert!(!engine.is_live(*row));
                let missing = matches!(engine.read_row(*row), Err(EngineError::RowNotFound { .. }));
                prop_assert!(missing);
            }
            prop_assert_eq!(engine.verify_all().unwrap(), model.live.len() as u64);
            engine.device().check_invariants().unwrap();
        }
    }
}

fn mem_device(pages: u64) -> MemDevice {
    MemDevice::new(256, pages, SimTime::from_us(100), SimTime::from_us(1_600)).unwrap()
}

#[test]
fn conventional_engine_appends_marks_deletes_and_updates_in_place() {
    let mut engine = Engine::new(mem_device(8), config(false, false, 16)).unwrap();
    let rows: Vec<RowId> = (0..8).map(|_| engine.insert().unwrap()).collect();
    let addresses: Vec<u64> = rows
        .iter()
        .map(|&r| engine.row_logical_address_bytes(r).unwrap())
        .collect();
    assert_eq!(addresses, vec![0, 40, 80, 120, 160, 200, 256, 296]);
    let before = *engine.metrics();
    engine.delete(rows[1]).unwrap();
    let delete = engine.metrics().since(&before).delete;
    assert_eq!(
        (delete.count, delete.device_reads, delete.device_writes),
        (1, 0, 0)
    );
    assert_eq!(delete.time_total, SimTime::ZERO);
    engine.update(rows[3]).unwrap();
    assert_eq!(engine.row_logical_address_bytes(rows[3]), Some(120));
    let update = engine.metrics().since(&before).update;
    assert_eq!((update.device_reads, update.device_writes), (1, 1));
    assert_eq!(update.time_total, SimTime::from_us(1_700));
    // The next insert takes the hole the Delete left (paper 000 Fig. 8(b)); the one after
    // that appends after the last row.
    let next = engine.insert().unwrap();
    assert_eq!(engine.row_logical_address_bytes(next), Some(40));
    let after = engine.insert().unwrap();
    assert_eq!(engine.row_logical_address_bytes(after), Some(336));
}

/// First fit takes the lowest hole; the recent-hole policy the hole the last Delete left, then
/// appends after the last appended row.
#[test]
fn conventional_insert_policies_fill_holes_in_their_order() {
    for (policy, expected) in [
        (ConventionalInsert::FirstFit, [40, 200, 336]),
        (ConventionalInsert::RecentHole, [200, 336, 376]),
    ] {
        let config = EngineConfig {
            conventional_insert: policy,
            ..config(false, false, 16)
        };
        let mut engine = Engine::new(mem_device(8), config).unwrap();
        let rows: Vec<RowId> = (0..8).map(|_| engine.insert().unwrap()).collect();
        engine.delete(rows[1]).unwrap();
        engine.delete(rows[5]).unwrap();
        let placed: Vec<u64> = (0..3)
            .map(|_| {
                let row = engine.insert().unwrap();
                engine.row_logical_address_bytes(row).unwrap()
            })
            .collect();
        assert_eq!(placed, expected, "{policy:?}");
        assert_eq!(engine.live_row_count(), 9);
    }
}

#[test]
fn u2di_moves_an_updated_row_and_keeps_its_id() {
    let mut engine = Engine::new(mem_device(8), config(false, true, 16)).unwrap();
    let rows: Vec<RowId> = (0..3).map(|_| engine.insert().unwrap()).collect();
    engine.update(rows[0]).unwrap();
    // Without IAA the Insert half takes the hole the Delete half just left: the row stays
    // (which is why U2DI alone gains nothing, paper 000 Fig. 14).
    assert_eq!(engine.row_logical_address_bytes(rows[0]), Some(0));
    assert_eq!(engine.read_row(rows[0]).unwrap(), 2);
    // with IAA and no target page, the row moves to the append point
    let mut engine = Engine::new(mem_device(8), config(true, true, 16)).unwrap();
    let rows: Vec<RowId> = (0..3).map(|_| engine.insert().unwrap()).collect();
    engine.update(rows[0]).unwrap();
    assert_ne!(engine.row_logical_address_bytes(rows[0]), Some(0));
    assert_eq!(engine.live_row_count(), 3);
}

#[test]
fn bad_config_is_refused_with_the_field_named() {
    let error = Engine::new(
        mem_device(4),
        EngineConfig {
            row_size_bytes: 300,
            ..EngineConfig::conventional()
        },
    )
    .unwrap_err();
    assert!(error.to_string().contains("row_size_bytes"), "{error}");
    let error = Engine::new(
        mem_device(4),
        EngineConfig {
            table_page_count: Some(5),
            ..EngineConfig::conventional()
        },
    )
    .unwrap_err();
    assert!(error.to_string().contains("table_page_count"), "{error}");
}

/// Where [`FlipByte`] flips a byte: the LPA and the byte offset in the page.
type FlipSwitch = Rc<Cell<Option<(Lpa, usize)>>>;

/// A device that flips one byte of what it returns for one LPA once armed (test double).
#[derive(Debug)]
struct FlipByte<D> {
    inner: D,
    armed: FlipSwitch,
}

impl<D: BlockDevice> BlockDevice for FlipByte<D> {
    fn page_size_bytes(&self) -> usize {
        self.inner.page_size_bytes()
    }
    fn logical_page_count(&self) -> u64 {
        self.inner.logical_page_count()
    }
    fn read_page(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<(), EngineError> {
        self.inner.read_page(lpa, buf)?;
        if let Some((target, byte)) = self.armed.get()
            && target == lpa
        {
            buf[byte] ^= 0x20;
        }
        Ok(())
    }
    /// Compares what [`FlipByte::read_page`] returns (as a device comparing in place would),
    /// so the engine's consecutive writes of one page meet the flip here too.
    fn read_page_expecting(&mut self, lpa: Lpa, buf: &mut [u8]) -> Result<bool, EngineError> {
        let mut read = vec![0; buf.len()];
        self.read_page(lpa, &mut read)?;
        if read == buf {
            return Ok(true);
        }
        buf.copy_from_slice(&read);
        Ok(false)
    }
    fn write_page(&mut self, lpa: Lpa, data: &[u8]) -> Result<(), EngineError> {
        self.inner.write_page(lpa, data)
    }
    fn trim_page(&mut self, lpa: Lpa) -> Result<(), EngineError> {
        self.inner.trim_page(lpa)
    }
    fn now(&self) -> SimTime {
        self.inner.now()
    }
}

impl<D: CoDesignHints> CoDesignHints for FlipByte<D> {
    fn next_erase_block_valid_lpas(&self, lpas_out: &mut Vec<Lpa>) {
        self.inner.next_erase_block_valid_lpas(lpas_out)
    }
}

fn corrupting_engine(verify: bool) -> (Engine<FlipByte<MemFtl>>, FlipSwitch) {
    let armed = Rc::new(Cell::new(None));
    let device = FlipByte {
        inner: small_ftl(),
        armed: Rc::clone(&armed),
    };
    let engine = Engine::new(
        device,
        EngineConfig {
            verify,
            ..config(false, false, 16)
        },
    )
    .unwrap();
    (engine, armed)
}

#[test]
fn verification_catches_a_flipped_byte_in_a_neighbouring_row() {
    let (mut engine, armed) = corrupting_engine(true);
    let first = engine.insert().unwrap();
    engine.insert().unwrap();
    // Byte 45 lies in the second row (slot 1 holds bytes 40..80 of the page).
    armed.set(Some((Lpa(0), 45)));
    let error = engine.update(first).unwrap_err();
    match &error {
        EngineError::Corruption {
            lpa, slot_in_page, ..
        } => {
            assert_eq!((*lpa, *slot_in_page), (Lpa(0), 1));
        }
        other => panic!("expected corruption, got {other}"),
    }
    assert!(error.to_string().contains("LPA 0 slot 1"), "{error}");
}

#[test]
fn read_row_always_checks_the_row_it_returns() {
    let (mut engine, armed) = corrupting_engine(false);
    let row = engine.insert().unwrap();
    engine.insert().unwrap();
    armed.set(Some((Lpa(0), 45)));
    // Without verify the neighbour's damage goes unnoticed by a read-modify-write ...
    engine.update(row).unwrap();
    // ... but the damaged row itself is always checked when read.
    armed.set(Some((Lpa(0), 20)));
    assert!(matches!(
        engine.read_row(row),
        Err(EngineError::Corruption { .. })
    ));
}

#[test]
fn damage_to_a_free_slot_passes_and_later_damage_to_a_live_row_is_caught() {
    let (mut engine, armed) = corrupting_engine(true);
    let row_bytes = engine.layout().row_size_bytes();
    let first = engine.insert().unwrap();
    engine.insert().unwrap();
    let third = engine.insert().unwrap();
    engine.delete(third).unwrap();
    // the third slot is free: its damage misses the page digest, the row-by-row check passes
    // (as before page digests), and the damaged bytes are written back with the update
    armed.set(Some((Lpa(0), 2 * row_bytes + 5)));
    engine.update(first).unwrap();
    armed.set(None);
    engine.update(first).unwrap();
    // the digest now describes the page as written: damage to a live row is still caught
    armed.set(Some((Lpa(0), row_bytes + 5)));
    match engine.update(first).unwrap_err() {
        EngineError::Corruption {
            lpa, slot_in_page, ..
        } => assert_eq!((lpa, slot_in_page), (Lpa(0), 1)),
        other => panic!("expected corruption, got {other}"),
    }
    assert_eq!(engine.row_version(first), Some(3));
}
