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

/// The standard configuration with `scale` times as many blocks per plane (same channels,
/// dies and planes, so the same parallelism; `scale` times the capacity): what a larger
/// device costs per request. `scale` is at least 1.
pub fn bench_ssd_config_scaled(scale: u32) -> SsdConfig {
    let mut config = bench_ssd_config();
    let nand = config
        .device
        .nand
        .as_mut()
        .expect("the bench-ssd preset is a full chip config");
    nand.geometry.blocks_per_plane *= scale.max(1);
    config
}

/// Runs `requests` uniformly random, aligned 8 KiB writes on a fresh device of the standard
/// configuration and times the simulation.
pub fn bench_ssd(requests: u64, seed: u64) -> FtlResult<BenchResult> {
    bench_ssd_scaled(requests, seed, 1)
}

/// [`bench_ssd`] on a device `scale` times larger ([`bench_ssd_config_scaled`]).
pub fn bench_ssd_scaled(requests: u64, seed: u64, scale: u32) -> FtlResult<BenchResult> {
    let ssd = Ssd::new(bench_ssd_config_scaled(scale), seed)?;
    time_writes(ssd, requests, seed, 0.0)
}

/// [`bench_ssd`] in steady state: the device is first preconditioned full and fragmented
/// (functionally, timed separately), so every measured write pays its share of GC.
pub fn bench_ssd_steady(requests: u64, seed: u64) -> FtlResult<BenchResult> {
    bench_ssd_steady_scaled(requests, seed, 1)
}

/// [`bench_ssd_steady`] on a device `scale` times larger ([`bench_ssd_config_scaled`]).
pub fn bench_ssd_steady_scaled(requests: u64, seed: u64, scale: u32) -> FtlResult<BenchResult> {
    let mut ssd = Ssd::new(bench_ssd_config_scaled(scale), seed)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scaled_device_has_more_blocks_and_the_same_parallelism() {
        let base = bench_ssd_config();
        let scaled = bench_ssd_config_scaled(16);
        let g = |c: &SsdConfig| c.device.nand.as_ref().unwrap().geometry.clone();
        let (b, s) = (g(&base), g(&scaled));
        assert_eq!(s.blocks_per_plane, 16 * b.blocks_per_plane);
        assert_eq!(s.total_dies(), b.total_dies());
        assert_eq!(
            (s.planes_per_die, s.pages_per_block, s.page_size_bytes),
            (b.planes_per_die, b.pages_per_block, b.page_size_bytes)
        );
        assert_eq!(bench_ssd_config_scaled(1), base);
        assert_eq!(scaled.ftl, base.ftl);
    }
}
