//! Runs the `nandlab bench ssd` standard configuration:
//! `cargo run --release -p nandlab-ftl --example bench_ssd -- [REQUESTS] [SEED]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let requests: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    match nandlab_ftl::experiments::bench_ssd(requests, seed) {
        Ok(r) => println!(
            "requests {} wall {:.3} s -> {:.0} host requests/wall-s; simulated write IOPS {:.0}; WAF {:.3}; erases {}; gc copies {}; p99 {:.0} us",
            r.requests,
            r.wall_seconds,
            r.host_requests_per_wall_second,
            r.sim_iops,
            r.waf,
            r.report.counters.erases,
            r.report.counters.gc_page_copies,
            r.report.write.lat.p99_us
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
