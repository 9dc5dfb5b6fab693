//! `[workload] kind = "chip"`: a chip-level workload on the bare chips of `[nand]`, issued by
//! the host-side chip scheduler (`nandlab chip`, the `nfs-*` experiments, `bench chip`).

use super::Stack;
use super::run::{MetricDef, StackOutcome, StackRun, metric};
use super::sections::ChipWorkloadSpec;
use crate::control::Control;
use crate::error::LabResult;
use nandlab_ftl::sched::{ChipReport, ChipWorkload, chip_report, run_requests};
use nandlab_nand::NandSim;

/// Chip requests between two polls of a run's control.
pub const CHIP_POLL_REQUESTS: u64 = 1024;

/// The metrics of a `chip` workload, in column order.
pub const CHIP_METRICS: &[MetricDef] = &[
    metric("sim_time_us", "us", "simulated time of the run"),
    metric("requests", "1", "requests completed"),
    metric("iops", "1/s", "requests per simulated second"),
    metric("throughput_mb_per_s", "MB/s", "read plus write throughput"),
    metric("read_lat_p50_us", "us", "median read latency"),
    metric("read_lat_p99_us", "us", "99th percentile read latency"),
    metric("write_lat_p50_us", "us", "median write latency"),
    metric("write_lat_p99_us", "us", "99th percentile write latency"),
    metric("flash_ops", "1", "operations submitted to the chips"),
    metric(
        "bus_contention_fraction",
        "1",
        "share of the ops' time spent waiting for the shared bus",
    ),
    metric(
        "energy_mj",
        "mJ",
        "chip energy of the run (operations and idle)",
    ),
];

/// The metric row of a chip report, in [`CHIP_METRICS`] order.
pub fn chip_metrics(r: &ChipReport) -> Vec<(&'static str, f64)> {
    let values = [
        r.sim_time_us,
        r.requests as f64,
        r.iops,
        r.throughput_mb_per_s,
        r.read_latency.p50_us,
        r.read_latency.p99_us,
        r.write_latency.p50_us,
        r.write_latency.p99_us,
        r.flash_ops as f64,
        r.bus_contention_fraction,
        r.energy_uj / 1000.0,
    ];
    CHIP_METRICS.iter().map(|m| m.name).zip(values).collect()
}

impl Stack {
    /// The chip workload on fresh chips (seeded with `run.seed`): it stops issuing requests
    /// once `control` is cancelled (checked every [`CHIP_POLL_REQUESTS`] requests; the requests
    /// issued complete) and reports those, marked interrupted.
    pub(super) fn run_chip(&self, w: &ChipWorkloadSpec, control: &Control) -> LabResult<StackRun> {
        let seed = self.config.run.seed;
        let request_bytes = if w.request_bytes == 0 {
            self.nand.geometry.page_size_bytes
        } else {
            w.request_bytes
        };
        control.start(Some(w.request_count));
        let mut sim = NandSim::new(self.nand.clone(), seed)?;
        let span = sim.geometry().capacity_bytes();
        let workload = ChipWorkload::new(w.pattern, w.request_count, request_bytes, span, seed);
        let mut issued = 0u64;
        let keep_going = |_: &_| {
            issued += 1;
            !issued.is_multiple_of(CHIP_POLL_REQUESTS) || control.advance(CHIP_POLL_REQUESTS)
        };
        let stats = run_requests(&mut sim, &w.driver(), workload.take_while(keep_going))?;
        control.finish();
        let report = chip_report(&sim, &stats);
        Ok(StackRun {
            metrics: chip_metrics(&report),
            outcome: StackOutcome::Chip {
                report: Box::new(report),
                interrupted: control.is_cancelled(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandlab_ftl::sched::{ChipWorkloadKind, DriverConfig, SchedulerPolicy};

    const CONFIG: &str = r#"
[run]
seed = 7
[nand]
preset = "mlc1"
[nand.geometry]
dies_per_chip = 4
[workload]
kind = "chip"
pattern = "msnfs"
request_count = 300
scheduler = "plane-first"
queue_depth = 8
"#;

    fn run(text: &str) -> LabResult<StackRun> {
        Stack::from_toml("chip.toml", text, std::path::Path::new("."), &[])?
            .run(None, &Control::new())
    }

    #[test]
    fn a_chip_workload_runs_the_bare_chips_of_its_nand_section() {
        let run = run(CONFIG).unwrap();
        let StackOutcome::Chip {
            report,
            interrupted,
        } = &run.outcome
        else {
            panic!("a chip outcome")
        };
        assert!(!interrupted);
        // the same run on the chip model directly
        let mut chip = nandlab_nand::preset("mlc1").unwrap();
        chip.geometry.dies_per_chip = 4;
        let page = chip.geometry.page_size_bytes;
        let mut sim = NandSim::new(chip, 7).unwrap();
        let span = sim.geometry().capacity_bytes();
        let driver = DriverConfig {
            policy: SchedulerPolicy::PlaneFirst,
            queue_depth: 8,
            ..DriverConfig::default()
        };
        let requests = ChipWorkload::new(ChipWorkloadKind::Msnfs, 300, page, span, 7);
        let stats = run_requests(&mut sim, &driver, requests).unwrap();
        let want = chip_report(&sim, &stats);
        assert_eq!(
            serde_json::to_value(report.as_ref()).unwrap(),
            serde_json::to_value(&want).unwrap()
        );
        assert_eq!(run.metric("requests"), Some(300.0));
        assert_eq!(run.metric("flash_ops"), Some(want.flash_ops as f64));
        assert_eq!(run.metrics.len(), CHIP_METRICS.len());
    }

    #[test]
    fn ssd_sections_and_bad_keys_are_named() {
        let with_ssd = format!("{CONFIG}[ssd]\nop_fraction = 0.1\n");
        let err = run(&with_ssd).unwrap_err().to_string();
        assert!(err.contains("`ssd`") && err.contains("bare chips"), "{err}");
        let err = run(&CONFIG.replace("queue_depth", "depth"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("workload.depth"), "{err}");
        let err = run(&CONFIG.replace("request_count = 300", "request_count = 0"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("workload.request_count"), "{err}");
        let err = run(&CONFIG.replace("\"msnfs\"", "\"tpcc\""))
            .unwrap_err()
            .to_string();
        assert!(err.contains("workload.pattern"), "{err}");
    }

    #[test]
    fn a_cancelled_control_keeps_the_requests_issued() {
        let control = Control::new();
        control.cancel();
        let stack = Stack::from_toml(
            "chip.toml",
            &CONFIG.replace("300", "5000"),
            std::path::Path::new("."),
            &[],
        )
        .unwrap();
        let run = stack.run(None, &control).unwrap();
        assert!(run.interrupted());
        let requests = run.metric("requests").unwrap();
        assert!(requests > 0.0 && requests < 5000.0, "{requests}");
    }
}
