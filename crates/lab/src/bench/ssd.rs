//! `nandlab bench ssd`: the controller's speed on its standard configuration.

use nandlab_ftl::{
    FtlConfig, FtlResult, GcPolicy, PayloadMode, Precondition, Ssd, SsdConfig, SsdReport,
};
use nandlab_nand::config::{
    CellConfig, ElectricalConfig, PerPageType, ReliabilityConfig, TimingConfig,
};
use nandlab_nand::{Geometry, NandConfig, PageLayout};
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

/// The chip config of the standard configuration: 4 channels × 2 chips × 2 dies × 2 planes ×
/// 128 blocks × 256 pages × 8 KiB, MLC, 75 µs read, 750 µs program, 3.8 ms erase ("nandlab
/// bench ssd standard configuration, MQSim-like MLC timings"; bus 333 MT/s as MQSim's default
/// channel rate).
pub fn bench_ssd_nand_config() -> NandConfig {
    NandConfig {
        name: "bench-ssd-mlc".into(),
        description: "nandlab bench ssd standard configuration".into(),
        source: "nandlab bench ssd standard configuration, MQSim-like MLC timings".into(),
        geometry: Geometry {
            channels: 4,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 128,
            pages_per_block: 256,
            page_size_bytes: 8192,
            spare_bytes_per_page: 448,
        },
        cell: CellConfig {
            layout: PageLayout::MlcPaired,
        },
        timing: TimingConfig {
            read_us: PerPageType::One(75.0),
            program_us: PerPageType::One(750.0),
            erase_us: 3800.0,
            bus_data_rate_mts: 333.0,
            bus_width_bits: 8,
            command_cycle_ns: 20.0,
            page_address_cycles: 5,
            block_address_cycles: 3,
        },
        electrical: ElectricalConfig {
            supply_voltage_v: 3.3,
            array_current_ma: 25.0,
            read_current_ma: None,
            program_current_ma: None,
            erase_current_ma: None,
            interface_current_ma: 5.0,
            standby_current_ua: 0.0,
        },
        reliability: ReliabilityConfig {
            endurance_cycles: 10_000,
            ..ReliabilityConfig::default()
        },
    }
}

/// The standard SSD configuration: 25 % over-provisioning, greedy GC, queue depth 32,
/// timing-only payloads, no co-design hint (a conventional controller; the hint costs ~6 %
/// of the run time when refreshed every 16 requests).
pub fn bench_ssd_config() -> SsdConfig {
    SsdConfig {
        ftl: FtlConfig {
            op_fraction: 0.25,
            gc_policy: GcPolicy::Greedy,
            queue_depth: 32,
            payload: PayloadMode::TimingOnly,
            hint_refresh_ops: 0,
            ..FtlConfig::default()
        },
        ..SsdConfig::from_nand(bench_ssd_nand_config())
    }
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
