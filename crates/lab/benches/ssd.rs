//! Controller speed (not asserted anywhere): `cargo bench -p nandlab-lab --bench ssd`.
//! The standard configuration of `nandlab bench ssd` (4 ch × 2 chips × 2 dies × 2 planes,
//! MLC, 25 % OP, greedy GC, QD 32), in steady state: the device is preconditioned full and
//! fragmented, so every measured write pays its share of GC.

use nandlab_ftl::{HostRequest, Precondition, Ssd};
use nandlab_lab::bench::bench_ssd_config;
use nandlab_workload::UniformRandomWrites;

fn main() {
    divan::main();
}

fn steady_ssd() -> Ssd {
    let mut ssd = Ssd::new(bench_ssd_config(), 0).unwrap();
    let p = Precondition::full_and_fragmented(ssd.logical_pages());
    ssd.precondition(&p).unwrap();
    ssd
}

#[divan::bench(args = [50_000, 200_000], sample_count = 10)]
fn random_8k_writes_steady_state(bencher: divan::Bencher, requests: u64) {
    bencher
        .counter(divan::counter::ItemsCount::new(requests))
        .with_inputs(steady_ssd)
        .bench_local_values(|mut ssd| {
            let capacity = ssd.logical_capacity_bytes();
            ssd.run(UniformRandomWrites::new(1, requests, capacity, 8192))
                .unwrap()
        });
}

#[divan::bench(args = [200_000], sample_count = 10)]
fn random_8k_reads_steady_state(bencher: divan::Bencher, requests: u64) {
    bencher
        .counter(divan::counter::ItemsCount::new(requests))
        .with_inputs(steady_ssd)
        .bench_local_values(|mut ssd| {
            let pages = ssd.logical_pages();
            let reads = (0..requests).map(move |i| {
                // a fixed odd multiplier walks every page in a scattered order
                let lpa = (i.wrapping_mul(2_654_435_761)) % pages;
                HostRequest::read(lpa * 8192, 8192)
            });
            ssd.run(reads).unwrap()
        });
}
