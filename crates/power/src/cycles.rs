//! Cut–recover–continue cycles (issue 14): a device runs a segment of its workload, loses
//! power at a random event, is mounted from its OOB and checked by the oracle; the mounted
//! state is loaded into a new device ([`nandlab_ftl::Ssd::load_recovered`]) that runs the
//! next segment, and so on. Each cycle is checked against the contract with the state the
//! previous mount left as its durable baseline; the first failing cycle stops the run.

use super::oracle::{Oracle, Violations};
use super::{BuildSsd, CrashCase, CutPoint, Run, validate};
use nandlab_core::SimRng;
use nandlab_ftl::Ssd;
use serde::Serialize;

/// What a run of cycles found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CyclesOutcome {
    /// Cycles run (cut, mount, check).
    pub cycles: u64,
    /// The first cycle that broke the contract (0-based), and its cut.
    pub failing_cycle: Option<u64>,
    pub failing_cut: Option<CutPoint>,
    pub violations: Violations,
    /// Sums over the cycles.
    pub torn_programs: u64,
    pub damaged_lower_pages: u64,
    pub interrupted_erases: u64,
    /// Pages of the volatile write buffer lost (acknowledged, not yet on flash).
    pub volatile_pages_lost: u64,
    /// Largest mount scan (simulated µs).
    pub recovery_time_us_max: f64,
    /// Mounts that started from a map checkpoint (each cycle's device writes one of the state
    /// it was loaded with, so later cycles use checkpoints too), pages the mounts read, and
    /// what full scans of the same arrays read.
    pub checkpoint_mounts: u64,
    pub recovery_pages_read: u64,
    pub full_scan_pages_read: u64,
    /// Trim-log records written (summed over the cycles).
    pub trim_records_written: u64,
    /// GC ops that passed a waiting host op because GC was urgent (summed over the cycles).
    pub urgent_gc_passes: u64,
    /// On a zoned device, the zones the mounts rebuilt (summed over the cycles; left out of
    /// the JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones: Option<super::zoned::ZoneCounts>,
}

/// Runs `cycles` cut–recover–continue cycles of `case` (its cut point ignored: each cycle
/// cuts after a random number of events drawn from the case's seed).
pub fn run_cycles(case: &CrashCase, cycles: u64, build: BuildSsd) -> Result<CyclesOutcome, String> {
    validate(case)?;
    let config = case.device.config(build)?;
    let ssd = Ssd::new(config.clone(), case.seed).map_err(|e| e.to_string())?;
    let logical = ssd.logical_pages() as u32;
    let plp = case.hold_up_energy_uj.is_some();
    let mut run = Run {
        ssd,
        oracle: Oracle::new(logical, plp),
        rng: SimRng::stream(case.seed, "power.workload"),
        version: 0,
        checkpoint_order: case.device.checkpoint_order(),
        trim_log_mode: case.device.trim_log_mode(),
        zoned: None,
    };
    run.zoned = super::zoned::ZonedHost::of(&run.ssd);
    let mut cut_rng = SimRng::stream(case.seed, "power.cycles");
    let mut out = CyclesOutcome::default();
    // a request takes a few events: the cut falls anywhere in the segment, or after it
    let events_max = u64::from(case.workload.requests) * 6 + 1;
    for cycle in 0..cycles {
        let cut_point = CutPoint::AfterEvents(1 + cut_rng.below(events_max));
        run.drive(&case.workload, cut_point)?;
        let (cut, recovered, report, violations) =
            run.cut_and_check(case, cut_point, case.seed ^ cycle.wrapping_mul(0x9E37))?;
        out.cycles += 1;
        out.urgent_gc_passes += run.ssd.urgent_gc_passes();
        out.torn_programs += report.torn_programs;
        out.damaged_lower_pages += report.damaged_lower_pages;
        out.interrupted_erases += report.interrupted_erases;
        out.volatile_pages_lost += report.volatile_pages_lost;
        out.trim_records_written += report.trim_records_written;
        out.checkpoint_mounts += u64::from(recovered.report.checkpoint_used);
        out.recovery_pages_read += recovered.report.pages_read;
        out.full_scan_pages_read += recovered.report.full_scan_pages_read;
        out.recovery_time_us_max = out
            .recovery_time_us_max
            .max(super::ps_to_us(recovered.report.time_ps));
        // a zoned device: the zones the mount rebuilt (write pointers, states, holes)
        let pointers = super::zoned::remount_pointers(&run.ssd, &recovered);
        if let Some(pointers) = &pointers {
            let counts = super::zoned::zone_counts(&run.ssd, &recovered, pointers)
                .map_err(|e| format!("cycle {cycle}: mount: {e}"))?;
            out.zones.get_or_insert_default().add(&counts);
        }
        if violations.total() > 0 {
            out.failing_cycle = Some(cycle);
            out.failing_cut = Some(cut_point);
            out.violations = violations;
            break;
        }
        if cycle + 1 < cycles {
            let mut ssd = Ssd::new(config.clone(), case.seed.wrapping_add(cycle + 1))
                .map_err(|e| e.to_string())?;
            ssd.load_recovered(&cut, &recovered)
                .map_err(|e| format!("cycle {cycle}: mount: {e}"))?;
            // the loaded zoned device holds the mount's write pointers, and its host starts
            // from them (Report Zones at power-on)
            if ssd.zone_write_pointers() != pointers {
                return Err(format!(
                    "cycle {cycle}: the loaded device's zone write pointers {:?} are not the mount's {pointers:?}",
                    ssd.zone_write_pointers()
                ));
            }
            run.zoned = super::zoned::ZonedHost::of(&ssd);
            run.oracle = Oracle::after_mount(logical, plp, |lpa| recovered.read(&cut, lpa));
            run.ssd = ssd;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{CrashWorkload, MappingKind, TEST_BUILD};
    use super::*;

    /// Repeated cycles on the mounted device keep the contract, on each mapping; new writes
    /// after a mount get sequence numbers above every page the mount saw (a mount that
    /// restarted them would let old pages win at the next mount: the no-sequence mutation
    /// shows what the oracle then sees).
    #[test]
    fn cycles_on_the_mounted_device_keep_the_contract() {
        for (mapping, blocks) in [
            (MappingKind::Page, 12),
            (MappingKind::Block, 16),
            (MappingKind::Hybrid, 16),
        ] {
            let mut case = CrashCase {
                workload: CrashWorkload {
                    requests: 120,
                    lpa_span: 30,
                    ..CrashWorkload::default()
                },
                ..CrashCase::default()
            };
            case.device.set_mapping(mapping);
            case.device.set("nand.geometry.blocks_per_plane", blocks);
            for seed in 1..=5 {
                case.seed = seed;
                let o = run_cycles(&case, 8, TEST_BUILD).unwrap();
                assert_eq!(o.cycles, 8, "{mapping:?} seed {seed}: {o:?}");
                assert_eq!(o.violations.total(), 0, "{mapping:?} seed {seed}: {o:?}");
            }
        }
    }

    /// With map checkpoints, every cycle's device writes a checkpoint of the state it was
    /// loaded with, so the mounts of later cycles start from a checkpoint too (not only once
    /// the interval's pages have been written) and read less than full scans; the contract
    /// holds across the cycles.
    #[test]
    fn later_cycles_mount_from_a_checkpoint() {
        let mut case = CrashCase {
            workload: CrashWorkload {
                requests: 120,
                lpa_span: 30,
                ..CrashWorkload::default()
            },
            ..CrashCase::default()
        };
        case.device
            .set("ssd.mapping.map_checkpoint_interval_pages", 64);
        let (mut mounts, mut cycles, mut read, mut full) = (0, 0, 0, 0);
        for seed in 1..=5 {
            case.seed = seed;
            let o = run_cycles(&case, 8, TEST_BUILD).unwrap();
            assert_eq!(o.violations.total(), 0, "seed {seed}: {o:?}");
            cycles += o.cycles;
            mounts += o.checkpoint_mounts;
            read += o.recovery_pages_read;
            full += o.full_scan_pages_read;
        }
        assert!(mounts * 4 >= cycles * 3, "{mounts} of {cycles} cycles");
        assert!(read < full, "{read} against {full}");
    }
}
