//! Simulator speed (not asserted anywhere): `cargo bench -p nandlab-nand`.
//! The same standard configuration as `nandlab bench chip`: mlc1 timing, 8 dies interleaved on
//! one channel, 2 KB legacy writes, die-first scheduling, queue depth 64.

use nandlab_core::SimTime;
use nandlab_ftl::sched::{ChipWorkload, ChipWorkloadKind, DriverConfig, run_requests};
use nandlab_nand::{FlashOp, NandSim, PageAddress, preset};

fn main() {
    divan::main();
}

fn eight_die_sim() -> NandSim {
    let mut c = preset("mlc1").unwrap();
    c.geometry.dies_per_chip = 8;
    NandSim::new(c, 0).unwrap()
}

#[divan::bench(args = [10_000, 100_000])]
fn interleaved_writes_through_scheduler(bencher: divan::Bencher, requests: u64) {
    bencher
        .counter(divan::counter::ItemsCount::new(requests))
        .with_inputs(eight_die_sim)
        .bench_local_values(|mut sim| {
            let w = ChipWorkload::new(ChipWorkloadKind::Swr, requests, 2048, 1 << 40, 0);
            let config = DriverConfig {
                queue_depth: 64,
                ..DriverConfig::default()
            };
            run_requests(&mut sim, &config, w).unwrap()
        });
}

#[divan::bench]
fn raw_transaction_interface_reads(bencher: divan::Bencher) {
    const OPS: u32 = 50_000;
    bencher
        .counter(divan::counter::ItemsCount::new(OPS))
        .with_inputs(eight_die_sim)
        .bench_local_values(|mut sim| {
            let mut done = Vec::with_capacity(64);
            for i in 0..OPS {
                let address = PageAddress {
                    die: i % 8,
                    page: (i / 8) % 128,
                    block: i / 1024,
                    ..PageAddress::default()
                };
                sim.submit(sim.now(), &FlashOp::read(address)).unwrap();
                if i % 64 == 63 {
                    while sim.next_event_time().is_some() && sim.ops_in_flight() > 32 {
                        done.clear();
                        sim.process_next(&mut done);
                    }
                }
            }
            sim.run_until_idle(&mut done);
            sim.now() > SimTime::ZERO
        });
}
