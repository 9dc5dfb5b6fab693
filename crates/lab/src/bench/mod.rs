//! `nandlab bench chip|ssd|engine|sim|pcm`: simulator speed, measured, never asserted in
//! tests.
//!
//! `nandlab bench chip`: simulator speed on the standard chip configuration (8 dies
//! interleaved on one channel, 2 KB legacy writes, mlc1 timing), in flash operations and
//! events per wall-second. Measured, never asserted in tests.

use crate::chip::ChipRunSpec;
use crate::error::LabResult;
use nandlab_ftl::sched::ChipWorkloadKind;
use serde::Serialize;
use std::time::Instant;

mod pcm;
mod ssd;
pub use pcm::{
    PCM_BENCH_SPAN_PAGES, PcmBench, PcmBenchRow, bench_pcm, drive_ssd, drive_stage, pcm_bench_spec,
    pcm_bench_stack, process_cpu_s,
};
pub use ssd::{
    BenchResult, bench_ssd, bench_ssd_config, bench_ssd_config_scaled, bench_ssd_scaled,
    bench_ssd_steady, bench_ssd_steady_scaled,
};

#[derive(Clone, Debug, Serialize)]
pub struct ChipBench {
    pub requests: u64,
    pub flash_ops: u64,
    pub events: u64,
    pub wall_s: f64,
    pub ops_per_wall_s: f64,
    pub events_per_wall_s: f64,
    pub simulated_s: f64,
}

pub fn bench_chip(requests: u64) -> LabResult<ChipBench> {
    let mut spec = ChipRunSpec::new("mlc1", ChipWorkloadKind::Swr, requests);
    spec.dies = Some(8);
    spec.request_bytes = 2048;
    spec.driver.queue_depth = 64;
    let start = Instant::now();
    let report = spec.run()?;
    let wall_s = start.elapsed().as_secs_f64();
    Ok(ChipBench {
        requests,
        flash_ops: report.flash_ops,
        events: report.events,
        wall_s,
        ops_per_wall_s: report.flash_ops as f64 / wall_s,
        events_per_wall_s: report.events as f64 / wall_s,
        simulated_s: report.sim_time_us / 1e6,
    })
}

/// `nandlab bench engine`: queries per wall-second of the co-designed storage engine on the
/// `miyaji2014` SSD (1 channel, 32 blocks x 32 pages per plane), fill to 20 % free space then
/// `queries` random Insert/Delete/Update (30/30/40). Measured, never asserted in tests.
#[derive(Clone, Debug, Serialize)]
pub struct EngineBench {
    pub fill_inserts: u64,
    pub queries: u64,
    pub wall_s: f64,
    pub queries_per_wall_s: f64,
    pub engine_ops_per_wall_s: f64,
    pub simulated_queries_per_s: f64,
}

pub fn bench_engine(queries: u64) -> LabResult<EngineBench> {
    use crate::experiments::points::{EngineDevice, constant_free_space, engine};
    use nandlab_engine::QueryMix;
    use nandlab_engine::workload::{QueryGenerator, fill_to_free_space, run_queries};
    let device = EngineDevice {
        preset: "miyaji2014-ssd",
        channels: 1,
        blocks_per_plane: 32,
        pages_per_block: 32,
        planes_per_die: None,
        extra: &[],
    };
    // the stack of the measurement (its workload section is not run: the bench times the fill
    // and the queries itself)
    let stack = device.stack(
        &engine(true, true, 119),
        &constant_free_space(0.2, 0, queries),
        0,
    )?;
    let mut engine = stack.build_engine()?;
    let start = Instant::now();
    let fill_inserts = fill_to_free_space(&mut engine, 0.2)?;
    let mut generator = QueryGenerator::new(QueryMix::constant_free_space(0.4)?, 0)?;
    let metrics = run_queries(&mut engine, &mut generator, queries)?;
    let wall_s = start.elapsed().as_secs_f64();
    Ok(EngineBench {
        fill_inserts,
        queries,
        wall_s,
        queries_per_wall_s: queries as f64 / wall_s,
        engine_ops_per_wall_s: (fill_inserts + queries) as f64 / wall_s,
        simulated_queries_per_s: metrics.queries_per_s(),
    })
}

/// `nandlab bench sim`: YCSB workload C (read-only, scrambled Zipfian) as SiM point lookups
/// (page-open, search, gather, page-close) on the `sim2024` chip through the evaluation harness
/// of [`crate::sim_eval`] (2,000 leaves of 480 keys, no page cache).
#[derive(Clone, Debug, Serialize)]
pub struct SimBench {
    /// Queries run (YCSB operations).
    pub requests: u64,
    pub wall_s: f64,
    /// Queries (load and warm-up included) per wall-second.
    pub queries_per_wall_s: f64,
    pub simulated_qps: f64,
}

pub fn bench_sim(queries: u64) -> LabResult<SimBench> {
    use crate::sim_eval::{EvalConfig, EvalMode, run_eval};
    use nandlab_workload::ycsb::YcsbDistribution;
    let config = EvalConfig {
        leaves: 2000,
        fill_slots: 480,
        queries: queries.max(1),
        ..EvalConfig::new(EvalMode::Sim, 1.0, 0.0, YcsbDistribution::Zipfian)
    };
    let chip = crate::stack::preset_chip("bench sim", "sim2024")?;
    let start = Instant::now();
    let result = run_eval(&chip, &config)
        .map_err(|e| crate::error::LabError::Usage(format!("bench sim: {e}")))?;
    let wall_s = start.elapsed().as_secs_f64();
    Ok(SimBench {
        requests: config.queries,
        wall_s,
        queries_per_wall_s: config.queries as f64 / wall_s,
        simulated_qps: result.qps,
    })
}
