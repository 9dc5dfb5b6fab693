//! The host side of a chip-level experiment (`nandlab chip`, the NANDFlashSim reproductions):
//! chip-level workloads, the driver that queues their page ops per die and hands them to the
//! chip through the controller's scheduler rules ([`crate::sched`]), and the chip report.

mod driver;
mod report;
mod workload;

pub use driver::{DriverConfig, DriverStats, run_requests};
pub use report::{ChipReport, KindReport, StageRow, chip_report};
pub use workload::{ChipRequest, ChipWorkload, ChipWorkloadKind};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::policy::SchedulerPolicy;
    use nandlab_core::SimTime;
    use nandlab_nand::{NandSim, OpKind, preset};

    fn run(
        name: &str,
        kind: ChipWorkloadKind,
        dies: u32,
        config: DriverConfig,
        n: u64,
    ) -> ChipReport {
        let mut c = preset(name).unwrap();
        c.geometry.dies_per_chip = dies;
        let mut sim = NandSim::new(c, 1).unwrap();
        let span = sim.geometry().capacity_bytes();
        let w = ChipWorkload::new(kind, n, 2048, span, 1);
        let stats = run_requests(&mut sim, &config, w).unwrap();
        assert!(sim.is_idle());
        chip_report(&sim, &stats)
    }

    #[test]
    fn single_die_legacy_reads_take_the_hand_computed_time() {
        let cfg = DriverConfig {
            queue_depth: 1,
            ..DriverConfig::default()
        };
        let r = run("mlc1", ChipWorkloadKind::Srd, 1, cfg, 10);
        // each read: 175 ns commands + 50 us TON + 51.2 us TOR, back to back
        assert!(
            (r.sim_time_us - 10.0 * 101.375).abs() < 1e-6,
            "{}",
            r.sim_time_us
        );
        assert_eq!(r.read_requests, 10);
        assert!((r.read_latency.p50_us - 101.375).abs() < 0.2);
    }

    #[test]
    fn every_request_completes_under_every_policy_and_mode() {
        for policy in [
            SchedulerPolicy::DieFirst,
            SchedulerPolicy::PlaneFirst,
            SchedulerPolicy::Fcfs,
        ] {
            for cache in [false, true] {
                for interleave in [false, true] {
                    for kind in [
                        ChipWorkloadKind::Swr,
                        ChipWorkloadKind::Srd,
                        ChipWorkloadKind::Msnfs,
                    ] {
                        let cfg = DriverConfig {
                            policy,
                            cache,
                            interleave,
                            queue_depth: 8,
                            max_planes_per_op: 0,
                        };
                        let r = run("qdp-slc", kind, 4, cfg, 200);
                        assert_eq!(
                            r.requests, 200,
                            "{policy:?} cache={cache} interleave={interleave} {kind:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn writes_wrap_the_log_with_erases() {
        let mut c = preset("slc").unwrap();
        c.geometry.blocks_per_plane = 2;
        c.geometry.pages_per_block = 4;
        let mut sim = NandSim::new(c, 1).unwrap();
        let w = ChipWorkload::new(ChipWorkloadKind::Swr, 40, 2048, 1 << 30, 1);
        let stats = run_requests(&mut sim, &DriverConfig::default(), w).unwrap();
        // 16 pages in the device: 40 writes wrap twice, erasing every block before reuse
        assert_eq!(stats.write_requests, 40);
        assert_eq!(stats.erases_inserted, 4 + 2);
        assert_eq!(sim.stats().kind(OpKind::Erase).ops, 6);
        assert!(stats.end > SimTime::ZERO);
    }

    #[test]
    fn plane_first_builds_multiplane_ops_from_sequential_requests() {
        let cfg = DriverConfig {
            policy: SchedulerPolicy::PlaneFirst,
            ..DriverConfig::default()
        };
        let r = run("mlc1", ChipWorkloadKind::Swr, 1, cfg, 64);
        assert_eq!(r.multiplane_ops, 32);
    }

    /// Regression (issue 13, R-N3): page ops of different transfer sizes obey the plane
    /// addressing rule and form one multiplane op; its data moves the members' total.
    #[test]
    fn plane_first_merges_page_ops_of_different_transfer_sizes() {
        let mut sim = NandSim::new(preset("mlc1").unwrap(), 1).unwrap();
        let cfg = DriverConfig {
            policy: SchedulerPolicy::PlaneFirst,
            ..DriverConfig::default()
        };
        let requests = [2048u32, 512].map(|size_bytes| ChipRequest {
            write: true,
            offset_bytes: 0,
            size_bytes,
        });
        let stats = run_requests(&mut sim, &cfg, requests).unwrap();
        assert_eq!((stats.ops, stats.multiplane_ops), (1, 1));
        let r = chip_report(&sim, &stats);
        let tir = r.stages.iter().find(|s| s.stage == "TIR").unwrap().time_us;
        // 2,560 bytes at 25 ns each over the 8-bit bus
        assert!((tir - 64.0).abs() < 1e-9, "{tir}");
        assert_eq!(r.write_requests, 2);
    }

    /// Regression (issue 11): `nandlab chip --queue-depth 4294967295` aborted on allocating the
    /// driver's request table; the depth is now bounded with the key named.
    #[test]
    fn an_absurd_queue_depth_is_refused() {
        let mut sim = NandSim::new(preset("slc").unwrap(), 1).unwrap();
        let cfg = DriverConfig {
            queue_depth: u32::MAX,
            ..DriverConfig::default()
        };
        let w = ChipWorkload::new(ChipWorkloadKind::Swr, 4, 2048, 1 << 20, 1);
        let e = run_requests(&mut sim, &cfg, w).unwrap_err().to_string();
        assert!(e.contains("driver.queue_depth"), "{e}");
    }
}
