//! `nandlab bench chip`: simulator speed on the standard chip configuration (8 dies
//! interleaved on one channel, 2 KB legacy writes, mlc1 timing), in flash operations and
//! events per wall-second. Measured, never asserted in tests.

use crate::chip::ChipRunSpec;
use crate::error::LabResult;
use nandlab_nand::sched::ChipWorkloadKind;
use serde::Serialize;
use std::time::Instant;

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
