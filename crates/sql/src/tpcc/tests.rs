//! The TPC-C-like run: the mix, rollbacks, consistency conditions 1–4, determinism, errors.

use super::*;
use crate::db::{JournalMode, SqlOptions};
use crate::disk::tests::SMALL_DEVICE;

fn config(transactions: u64) -> TpccConfig {
    TpccConfig {
        warehouses: 2,
        terminals: 20,
        transactions,
        seed: 5,
        scale: TpccScale::small(),
    }
}

fn run(mode: JournalMode, c: &TpccConfig) -> TpccReport {
    let options = SqlOptions {
        journal_mode: mode,
        ..SqlOptions::default()
    };
    let mut db = crate::device::named::open(SMALL_DEVICE, Some(1), options).unwrap();
    run_tpcc(&mut db, c).unwrap()
}

#[test]
fn a_run_keeps_conditions_1_to_4_and_follows_the_mix() {
    let r = run(JournalMode::Wal, &config(400));
    assert!(
        r.consistency_violations.is_empty(),
        "{:?}",
        r.consistency_violations
    );
    let count = |name: &str| r.transactions.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(r.transactions.iter().map(|(_, n)| n).sum::<u64>(), 400);
    assert!(
        (140..=220).contains(&count("new_order")),
        "{:?}",
        r.transactions
    );
    assert!(
        (130..=210).contains(&count("payment")),
        "{:?}",
        r.transactions
    );
    for kind in ["order_status", "delivery", "stock_level"] {
        assert!(
            (3..=35).contains(&count(kind)),
            "{kind}: {:?}",
            r.transactions
        );
    }
    assert!(r.tpmc > 0.0 && r.sim_time_s > 0.0);
    assert!(r.metrics.write_transactions > 300, "{:?}", r.metrics);
}

#[test]
fn every_journal_mode_stays_consistent_and_runs_are_deterministic() {
    for mode in [JournalMode::Delete, JournalMode::Truncate] {
        let a = run(mode, &config(60));
        assert!(
            a.consistency_violations.is_empty(),
            "{mode}: {:?}",
            a.consistency_violations
        );
        let b = run(mode, &config(60));
        assert_eq!(
            (a.tpmc, a.metrics.totals, a.transactions),
            (b.tpmc, b.metrics.totals, b.transactions)
        );
    }
}

#[test]
fn conditions_catch_a_broken_database() {
    let options = SqlOptions::default();
    let mut db = crate::device::named::open(SMALL_DEVICE, Some(1), options).unwrap();
    run_tpcc(&mut db, &config(10)).unwrap();
    db.run_script("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1; DELETE FROM order_line WHERE ol_o_id = 3;")
        .unwrap();
    let v = check::check_consistency(&db).unwrap();
    assert!(v.iter().any(|m| m.starts_with("condition 1")), "{v:?}");
    assert!(v.iter().any(|m| m.starts_with("condition 4")), "{v:?}");
}

#[test]
fn bad_configs_name_the_field() {
    let mut c = config(10);
    c.terminals = 21;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("terminals 21")
    );
    c = config(10);
    c.warehouses = 0;
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("warehouses 0")
    );
    c = config(0);
    assert!(
        c.validate()
            .unwrap_err()
            .to_string()
            .contains("transactions 0")
    );
}

/// A device file's `[pcm]` stage sits in front of the SSD that SQLite runs on: a dPRAM log
/// buffer (thesis 001's baseline, Sun et al.) absorbs page updates as logged deltas and the
/// flash gets fewer programs; SHA-1 dedup finds nothing to share in WAL mode, because a WAL frame
/// (24 B header + a 4 KiB page, after a 32 B file header) never lines up with an 8 KiB flash
/// page. The runs stay consistent and the energy includes the PCM's.
#[test]
fn a_pcm_stage_in_the_device_file_serves_sqlite() {
    let c = config(300);
    let run = |pcm: &str| {
        let device = format!("{SMALL_DEVICE}{pcm}");
        let mut db = crate::device::named::open(&device, Some(1), SqlOptions::default()).unwrap();
        let r = run_tpcc(&mut db, &c).unwrap();
        assert!(r.consistency_violations.is_empty(), "{pcm}");
        r.metrics.totals
    };
    let device = "[pcm]\npreset = \"cidr11\"\ncapacity_bytes = 4194304\n";
    let none = run("");
    let dedup = run(&format!(
        "{device}[pcm.dedup]\nstore_size_bytes = 1048576\n"
    ));
    let dpram = run(&format!(
        "{device}[pcm.log]\nkind = \"dpram\"\nregion_size_bytes = 2097152\n"
    ));
    assert_eq!(none.host_pages_written, dpram.host_pages_written);
    // dedup finds (almost) nothing to share (a few identical pages, e.g. of the file table)
    assert!(
        dedup.nand_pages_programmed <= none.nand_pages_programmed
            && dedup.nand_pages_programmed * 100 >= none.nand_pages_programmed * 99,
        "{dedup:?} vs {none:?}"
    );
    assert!(
        (dpram.nand_pages_programmed as f64) < 0.8 * none.nand_pages_programmed as f64,
        "{} vs {} flash programs",
        dpram.nand_pages_programmed,
        none.nand_pages_programmed
    );
    assert!(dedup.pcm_energy_uj > 0.0 && dpram.pcm_energy_uj > 0.0);
    assert_eq!(none.pcm_energy_uj, 0.0);
    assert!(dpram.energy_uj < none.energy_uj);
}

#[test]
fn a_device_file_with_a_bad_pcm_section_names_the_key() {
    let device = format!("{SMALL_DEVICE}[pcm]\npreset = \"cidr11\"\n[pcm.dedup]\nsegments = 0\n");
    let Err(e) = crate::device::named::open(&device, Some(1), SqlOptions::default()) else {
        panic!("a bad [pcm] section was accepted");
    };
    let e = e.to_string();
    assert!(e.contains("pcm.dedup"), "{e}");
}
