//! The result of a chip-level run (SPEC N11): throughput, latency percentiles and CDF, cycle
//! breakdown by stage, bus contention, energy by stage and by op kind, erase counts.

use super::driver::DriverStats;
use crate::op::OpKind;
use crate::sim::NandSim;
use crate::stage::Stage;
use nandlab_core::stats::CdfPoint;
use nandlab_core::{LatencySummary, SimTime};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct StageRow {
    pub stage: &'static str,
    pub time_us: f64,
    /// Share of all stage time (the paper's "breakdown of cycles").
    pub time_fraction: f64,
    pub energy_uj: f64,
    pub energy_fraction: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct KindReport {
    pub kind: &'static str,
    pub ops: u64,
    pub units: u64,
    pub energy_uj: f64,
    pub energy_per_op_uj: f64,
    pub bus_stage_fraction: f64,
    pub latency: LatencySummary,
}

#[derive(Clone, Debug, Serialize)]
pub struct ChipReport {
    pub sim_time_us: f64,
    pub requests: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    pub throughput_mb_per_s: f64,
    pub iops: f64,
    pub read_latency: LatencySummary,
    pub write_latency: LatencySummary,
    pub flash_ops: u64,
    pub multiplane_ops: u64,
    pub erases_inserted: u64,
    pub events: u64,
    pub bus_contention_fraction: f64,
    pub bus_utilization: f64,
    pub energy_uj: f64,
    pub idle_energy_uj: f64,
    pub stages: Vec<StageRow>,
    pub op_kinds: Vec<KindReport>,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    pub read_retries: u64,
    pub uncorrectable_reads: u64,
    #[serde(skip)]
    pub read_cdf: Vec<CdfPoint>,
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
