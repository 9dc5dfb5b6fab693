//! The result of a chip-level run (SPEC N11): throughput, latency percentiles and CDF, cycle
//! breakdown by stage, bus contention, energy by stage and by op kind, erase counts.

use super::driver::DriverStats;
use nandlab_core::stats::CdfPoint;
use nandlab_core::{LatencySummary, SimTime};
use nandlab_nand::{NandSim, OpKind, Stage};
use serde::Serialize;

/// Time and energy of one stage.
#[derive(Clone, Debug, Serialize)]
pub struct StageRow {
    /// Stage name (CLE, ALE, TIR, ...).
    pub stage: &'static str,
    /// Time spent in the stage, summed over ops.
    pub time_us: f64,
    /// Share of all stage time (the paper's "breakdown of cycles").
    pub time_fraction: f64,
    /// Energy, µJ.
    pub energy_uj: f64,
    /// Share of all stage energy.
    pub energy_fraction: f64,
}

/// Results per op kind.
#[derive(Clone, Debug, Serialize)]
pub struct KindReport {
    /// Op kind.
    pub kind: &'static str,
    /// Ops of the kind.
    pub ops: u64,
    /// Pages (or blocks for erases) touched: a 2-plane op counts 2.
    pub units: u64,
    /// Energy, µJ.
    pub energy_uj: f64,
    /// Energy per op, µJ.
    pub energy_per_op_uj: f64,
    /// Share of the kind's stage time spent in bus stages (paper 003 §8.4).
    pub bus_stage_fraction: f64,
    /// Op latency summary.
    pub latency: LatencySummary,
}

/// The report of a chip-level run.
#[derive(Clone, Debug, Serialize)]
pub struct ChipReport {
    /// Simulated time of the run.
    pub sim_time_us: f64,
    /// Requests completed.
    pub requests: u64,
    /// Read requests completed.
    pub read_requests: u64,
    /// Write requests completed.
    pub write_requests: u64,
    /// Read throughput.
    pub read_mb_per_s: f64,
    /// Write throughput.
    pub write_mb_per_s: f64,
    /// Read plus write throughput.
    pub throughput_mb_per_s: f64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Read request latency.
    pub read_latency: LatencySummary,
    /// Write request latency.
    pub write_latency: LatencySummary,
    /// Ops submitted to the chip.
    pub flash_ops: u64,
    /// Ops with more than one plane.
    pub multiplane_ops: u64,
    /// Erases the driver inserted before reusing a block.
    pub erases_inserted: u64,
    /// Chip-model events processed.
    pub events: u64,
    /// Share of the ops' execution time spent waiting for the shared bus (paper 003 §8.7).
    pub bus_contention_fraction: f64,
    /// Share of the run the buses were busy.
    pub bus_utilization: f64,
    /// Energy, µJ.
    pub energy_uj: f64,
    /// Idle (standby) energy of every die, µJ.
    pub idle_energy_uj: f64,
    /// Time and energy per stage.
    pub stages: Vec<StageRow>,
    /// Per op kind.
    pub op_kinds: Vec<KindReport>,
    /// Highest erase count of a block.
    pub erase_count_max: u32,
    /// Mean erase count per block.
    pub erase_count_mean: f64,
    /// Read retries (reliability model).
    pub read_retries: u64,
    /// Reads beyond ECC after every retry.
    pub uncorrectable_reads: u64,
    /// Read latency CDF.
    #[serde(skip)]
    pub read_cdf: Vec<CdfPoint>,
    /// Write latency CDF.
    #[serde(skip)]
    pub write_cdf: Vec<CdfPoint>,
}

/// Summarises a finished run.
pub fn chip_report(sim: &NandSim, driver: &DriverStats) -> ChipReport {
    let st = sim.stats();
    let seconds = driver.end.as_s_f64();
    let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
    let stage_time = st.stage_time();
    let stage_energy = st.stage_energy_pj();
    let time_total: f64 = stage_time.iter().map(|(_, t)| t.as_us_f64()).sum();
    let energy_total_pj: f64 = stage_energy.iter().map(|(_, e)| e).sum();
    let stages = Stage::ALL
        .iter()
        // the SiM matching stage appears only in runs that match (reports without SiM unchanged)
        .filter(|s| **s != Stage::Match || stage_time.get(Stage::Match) > SimTime::ZERO)
        .map(|s| StageRow {
            stage: s.name(),
            time_us: stage_time.get(*s).as_us_f64(),
            time_fraction: ratio(stage_time.get(*s).as_us_f64(), time_total),
            energy_uj: stage_energy.get(*s) / 1e6,
            energy_fraction: ratio(stage_energy.get(*s), energy_total_pj),
        })
        .collect();
    let op_kinds = OpKind::ALL
        .iter()
        .filter(|k| st.kind(**k).ops > 0)
        .map(|k| {
            let ks = st.kind(*k);
            KindReport {
                kind: k.name(),
                ops: ks.ops,
                units: ks.units,
                energy_uj: st.energy_uj(*k),
                energy_per_op_uj: st.energy_uj(*k) / ks.ops as f64,
                bus_stage_fraction: st.bus_stage_fraction(*k),
                latency: ks.latency.summary(),
            }
        })
        .collect();
    let channel_busy: f64 = st.channel_busy.iter().map(|t| t.as_s_f64()).sum();
    let erase_counts: Vec<u32> = sim.blocks().erase_counts().collect();
    let requests = driver.read_requests + driver.write_requests;
    ChipReport {
        sim_time_us: driver.end.as_us_f64(),
        requests,
        read_requests: driver.read_requests,
        write_requests: driver.write_requests,
        read_mb_per_s: per_s(driver.read_bytes as f64) / 1e6,
        write_mb_per_s: per_s(driver.write_bytes as f64) / 1e6,
        throughput_mb_per_s: per_s((driver.read_bytes + driver.write_bytes) as f64) / 1e6,
        iops: per_s(requests as f64),
        read_latency: driver.read_latency.summary(),
        write_latency: driver.write_latency.summary(),
        flash_ops: driver.ops,
        multiplane_ops: driver.multiplane_ops,
        erases_inserted: driver.erases_inserted,
        events: st.events,
        bus_contention_fraction: st.bus_contention_fraction(),
        bus_utilization: ratio(channel_busy, seconds * sim.geometry().channels as f64),
        energy_uj: energy_total_pj / 1e6,
        idle_energy_uj: sim.idle_energy_pj() / 1e6,
        stages,
        op_kinds,
        erase_count_max: erase_counts.iter().copied().max().unwrap_or(0),
        erase_count_mean: erase_counts.iter().map(|c| f64::from(*c)).sum::<f64>()
            / erase_counts.len().max(1) as f64,
        read_retries: st.read_retries,
        uncorrectable_reads: st.uncorrectable_reads,
        read_cdf: driver.read_latency.cdf(),
        write_cdf: driver.write_latency.cdf(),
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}
