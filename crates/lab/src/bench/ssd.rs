//! `nandlab bench ssd`: the controller's speed on its standard configuration.

use nandlab_ftl::{FtlResult, Precondition, Ssd, SsdConfig, SsdReport};
use nandlab_workload::UniformRandomWrites;
use serde::Serialize;
use std::time::Instant;

/// What the benchmark measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Host requests simulated.
    pub requests: u64,
    /// Wall-clock time of the run.
    pub wall_seconds: f64,
    /// Wall-clock time of the functional precondition (steady-state runs; 0 otherwise).
    pub precondition_wall_seconds: f64,
    /// Host requests simulated per wall-clock second.
    pub host_requests_per_wall_second: f64,
    /// Host write IOPS in simulated time.
    pub sim_iops: f64,
    /// Write amplification of the run.
    pub waf: f64,
    /// The full report.
    pub report: SsdReport,
}

/// The standard configuration: the `bench-ssd` SSD preset (presets/ssd/bench-ssd.toml: 4
/// channels × 2 chips × 2 dies × 2 planes × 128 blocks × 256 pages × 8 KiB, MLC 75 µs / 750 µs /
/// 3.8 ms, 25 % over-provisioning, greedy GC, queue depth 32, timing-only payloads, no co-design
/// hint).
pub fn bench_ssd_config() -> SsdConfig {
    crate::stack::DeviceFile::preset("bench-ssd").expect("the bench-ssd preset resolves")
}

/// Runs `requests` uniformly random, aligned 8 KiB writes on a fresh device of the standard
/// configuration and times the simulation.
pub fn bench_ssd(requests: u64, seed: u64) -> FtlResult<BenchResult> {
    let ssd = Ssd::new(bench_ssd_config(), seed)?;
    time_writes(ssd, requests, seed, 0.0)
}

/// [`bench_ssd`] in steady state: the device is first preconditioned full and fragmented
/// (functionally, timed separately), so every measured write pays its share of GC.
pub fn bench_ssd_steady(requests: u64, seed: u64) -> FtlResult<BenchResult> {
    let mut ssd = Ssd::new(bench_ssd_config(), seed)?;
    let started = Instant::now();
    ssd.precondition(&Precondition::full_and_fragmented(ssd.logical_pages()))?;
    let precondition = started.elapsed().as_secs_f64();
    time_writes(ssd, requests, seed, precondition)
}

fn time_writes(
    mut ssd: Ssd,
    requests: u64,
    seed: u64,
    precondition_wall_seconds: f64,
) -> FtlResult<BenchResult> {
    let writes = UniformRandomWrites::new(seed, requests, ssd.logical_capacity_bytes(), 8192);
    let started = Instant::now();
    let report = ssd.run(writes)?;
    let wall_seconds = started.elapsed().as_secs_f64();
    Ok(BenchResult {
        requests,
        wall_seconds,
        precondition_wall_seconds,
        host_requests_per_wall_second: requests as f64 / wall_seconds.max(1e-9),
        sim_iops: report.write.iops,
        waf: report.waf,
        report,
    })
}
