//! Runs the `nandlab bench ssd` standard configuration:
//! `cargo run --release -p nandlab-lab --example bench_ssd -- [REQUESTS] [SEED] [--steady]`.
//! With `--steady` the device is first preconditioned full and fragmented (timed separately),
//! so every measured write pays its share of GC.

use nandlab_ftl::FtlResult;
use nandlab_lab::bench::{bench_ssd, bench_ssd_steady};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steady = args.iter().any(|a| a == "--steady");
    let mut numbers = args.iter().filter(|a| !a.starts_with("--"));
    let requests: u64 = numbers
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    let seed: u64 = numbers.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let outcome = if steady {
        steady_state(requests, seed)
    } else {
        fresh(requests, seed)
    };
    if let Err(e) = outcome {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn fresh(requests: u64, seed: u64) -> FtlResult<()> {
    let r = bench_ssd(requests, seed)?;
    println!(
        "requests {} wall {:.3} s -> {:.0} host requests/wall-s; simulated write IOPS {:.0}; WAF {:.3}; erases {}; gc copies {}; p99 {:.0} us",
        r.requests,
        r.wall_seconds,
        r.host_requests_per_wall_second,
        r.sim_iops,
        r.waf,
        r.report.counters.erases,
        r.report.counters.gc_page_copies,
        r.report.write.lat.p99_us
    );
    Ok(())
}

fn steady_state(requests: u64, seed: u64) -> FtlResult<()> {
    let r = bench_ssd_steady(requests, seed)?;
    println!(
        "precondition {:.3} s; requests {requests} wall {:.3} s -> {:.0} host requests/wall-s; simulated write IOPS {:.0}; WAF {:.3}",
        r.precondition_wall_seconds,
        r.wall_seconds,
        r.host_requests_per_wall_second,
        r.sim_iops,
        r.waf
    );
    Ok(())
}
