//! The engine's B+tree on a SiM store (sim2024 chip model, randomized chunks, bit errors off):
//! random inserts and deletes (splits, borrows, merges) against a `BTreeMap`, with every
//! lookup answered both by the tree's own reads and by the SiM search of the leaf.

use super::*;
use crate::index::{ChipCost, ChipMeter};
use nandlab_core::SimRng;
use nandlab_engine::BTreeConfig;
use nandlab_ftl::search::{SearchStore, StoreConfig};
use nandlab_nand::NandSim;
use nandlab_nand::{PageAddress, preset};
use std::collections::BTreeMap;

fn tree() -> BTree<SearchBlockDevice> {
    let mut config = preset("sim2024").unwrap();
    config.reliability.rber_base = 0.0;
    config.reliability.rber_retention_coeff_per_day = 0.0;
    let mut sim = NandSim::new(config, 1).unwrap();
    let blocks = (0..64)
        .map(|b| PageAddress {
            block: b % 32,
            die: b / 32,
            ..PageAddress::default()
        })
        .collect();
    let store = SearchStore::new(&mut sim, blocks, StoreConfig::default()).unwrap();
    let device = SearchBlockDevice::new(ChipDevice::new(sim, store));
    BTree::create(
        device,
        BTreeConfig {
            leaf_keys_max: 12,
            inner_keys_max: 4,
        },
    )
    .unwrap()
}

fn check_all(
    tree: &mut BTree<SearchBlockDevice>,
    reference: &BTreeMap<u64, u64>,
    rng: &mut SimRng,
) {
    let probes: Vec<u64> = reference
        .keys()
        .copied()
        .chain((0..20).map(|_| rng.below(3_000)))
        .collect();
    for key in probes {
        let expected = reference.get(&key).copied();
        assert_eq!(get_on_chip(tree, key).unwrap(), expected, "SiM get {key}");
        assert_eq!(tree.get(key).unwrap(), expected, "tree get {key}");
    }
    for _ in 0..5 {
        let a = rng.below(3_000);
        let b = rng.below(3_000);
        let (low, high) = (a.min(b), a.max(b));
        let expected: Vec<(u64, u64)> = reference.range(low..high).map(|(k, v)| (*k, *v)).collect();
        assert_eq!(
            tree.range(low, high).unwrap(),
            expected,
            "range {low}..{high}"
        );
    }
}

#[test]
fn the_device_names_bad_pages_and_buffers() {
    let mut tree = tree();
    let device = tree.device_mut();
    let mut buf = vec![0u8; 4032];
    let beyond = device.read_page(Lpa(1024), &mut buf).unwrap_err();
    assert!(beyond.to_string().contains("LPA 1024"), "{beyond}");
    let short = device.write_page(Lpa(3), &[0u8; 4096]).unwrap_err();
    assert!(short.to_string().contains("4096 B"), "{short}");
    // a page never written reads as zeros, a trimmed page too
    device.read_page(Lpa(500), &mut buf).unwrap();
    assert!(buf.iter().all(|b| *b == 0));
    device.write_page(Lpa(500), &[7u8; 4032]).unwrap();
    device.read_page(Lpa(500), &mut buf).unwrap();
    assert!(buf.iter().all(|b| *b == 7));
    device.trim_page(Lpa(500)).unwrap();
    device.read_page(Lpa(500), &mut buf).unwrap();
    assert!(buf.iter().all(|b| *b == 0));
    assert_eq!(device.counters().host_trims, 1);
}

#[test]
fn the_engine_btree_on_sim_pages_equals_a_btreemap() {
    for seed in 0..3 {
        let mut tree = tree();
        let mut rng = SimRng::seed_from_u64(100 + seed);
        let mut reference = BTreeMap::new();
        for op in 0..500 {
            let key = rng.below(3_000);
            if rng.chance(0.3) && !reference.is_empty() {
                let victim = *reference
                    .range(key..)
                    .next()
                    .or_else(|| reference.iter().next())
                    .unwrap()
                    .0;
                assert_eq!(tree.delete(victim).unwrap(), reference.remove(&victim));
            } else {
                let value = rng.below(u64::MAX);
                assert_eq!(
                    tree.insert(key, value).unwrap(),
                    reference.insert(key, value)
                );
            }
            if op % 125 == 124 {
                check_all(&mut tree, &reference, &mut rng);
            }
        }
        assert!(tree.height() >= 2, "seed {seed}: inner levels were built");
        assert_eq!(tree.len(), reference.len() as u64);
        assert!(tree.device().device().store.stats().opens_on_chip > 0);
    }
}

#[test]
fn sim_lookups_move_fewer_bytes_than_the_trees_own_reads() {
    let mut tree = tree();
    for key in 0..200u64 {
        tree.insert(key * 7, key).unwrap();
    }
    let (mut sim_cost, mut read_cost) = (ChipCost::default(), ChipCost::default());
    for key in (0..200u64).step_by(9) {
        let meter = ChipMeter::start(tree.device().device());
        assert_eq!(get_on_chip(&mut tree, key * 7).unwrap(), Some(key));
        let cost = meter.finish(&mut tree.device_mut().device);
        sim_cost.bus_bytes += cost.bus_bytes;
        sim_cost.energy_nj += cost.energy_nj;
        let meter = ChipMeter::start(tree.device().device());
        assert_eq!(tree.get(key * 7).unwrap(), Some(key));
        let cost = meter.finish(&mut tree.device_mut().device);
        read_cost.bus_bytes += cost.bus_bytes;
        read_cost.energy_nj += cost.energy_nj;
    }
    println!(
        "23 lookups, height {}: SiM leaf {} B, {:.0} nJ; tree reads {} B, {:.0} nJ",
        tree.height(),
        sim_cost.bus_bytes,
        sim_cost.energy_nj,
        read_cost.bus_bytes,
        read_cost.energy_nj
    );
    // the inner levels are read in full either way; the leaf's two pages are not with SiM
    assert!(sim_cost.bus_bytes < read_cost.bus_bytes);
}
