//! Building the [`SsdReport`] of a run from the measurement, the FTL counters and the chip
//! model's statistics.

use super::Ssd;
use crate::flash::blocks::BlockUse;
use crate::host::HostOp;
use crate::stats::{
    ChipOpModes, EnergySection, EraseBin, EraseSummary, IoSection, Measure, SsdReport,
    ValidPageMap, op_index,
};
use nandlab_core::LatencyHistogram;
use nandlab_core::stats::CdfPoint;
use nandlab_nand::OpKind;

impl Ssd {
    /// Chip ops submitted so far, by mode: the chip model counts ops per kind, the controller
    /// the multiplane ones it formed. With `ftl.cache_mode` every single-plane read and program
    /// is a cache-mode op. A multiplane op counts once, as multiplane, whatever its kind and
    /// mode (a 2-plane copyback is multiplane, not copyback), so the modes partition the ops.
    fn chip_ops_now(&self) -> ChipOpModes {
        let stats = self.nand.stats();
        let ops = |kind: OpKind| stats.kind(kind).ops;
        let sched = self.sched.counters();
        let merged = |kind: OpKind| sched.multiplane_ops[kind.index()];
        let multiplane: u64 = sched.multiplane_ops.iter().sum();
        let copyback = ops(OpKind::Copyback) - merged(OpKind::Copyback);
        let all: u64 = OpKind::ALL.iter().map(|&k| ops(k)).sum();
        let cache = if self.config.ftl.cache_mode {
            ops(OpKind::Read) + ops(OpKind::Program)
                - merged(OpKind::Read)
                - merged(OpKind::Program)
        } else {
            0
        };
        ChipOpModes {
            legacy: all - ops(OpKind::Copyback) - (multiplane - merged(OpKind::Copyback)) - cache,
            multiplane,
            copyback,
            cache,
            multiplane_reads: merged(OpKind::Read),
            multiplane_programs: merged(OpKind::Program),
            multiplane_erases: merged(OpKind::Erase),
            multiplane_copybacks: merged(OpKind::Copyback),
            multiplane_plane_ops: sched.multiplane_plane_ops,
            multiplane_from_queue: sched.queued_merges,
        }
    }
}

/// Most points a report's CDF carries.
const CDF_POINTS_MAX: usize = 100;

impl Ssd {
    /// Starts a new measurement: the next report covers what happens from now on.
    pub fn reset_measurement(&mut self) {
        let mut energy = [0.0; OpKind::COUNT];
        for kind in OpKind::ALL {
            energy[kind.index()] = self.nand.stats().energy_uj(kind) * 1e6;
        }
        self.measure = Measure {
            started: self.now,
            last_completion: self.now,
            counters_at_start: self.flash.counters.clone(),
            energy_pj_at_start: energy,
            idle_energy_pj_at_start: self.nand.idle_energy_pj(),
            ..Measure::default()
        };
        self.flash.gc_latency = LatencyHistogram::new();
        if let Some(c) = &self.controller {
            self.controller_start = c.totals();
        }
        self.placement_start = self.flash.placement.snapshot();
        self.chip_ops_start = self.chip_ops_now();
    }

    /// The report of the current measurement.
    pub fn report(&self) -> SsdReport {
        let m = &self.measure;
        let elapsed_s = (m.last_completion - m.started).as_s_f64();
        let section = |op: HostOp| {
            let o = &m.by_op[op_index(op)];
            let per_s = |v: f64| if elapsed_s > 0.0 { v / elapsed_s } else { 0.0 };
            IoSection {
                requests: o.requests,
                bytes: o.bytes,
                iops: per_s(o.requests as f64),
                bw_mib_s: per_s(o.bytes as f64 / (1024.0 * 1024.0)),
                lat: o.latency.summary(),
                cdf: thin(o.latency.cdf()),
            }
        };
        let counters = self.flash.counters.since(&m.counters_at_start);
        let stats = self.nand.stats();
        let mj =
            |kind: OpKind| (stats.energy_uj(kind) * 1e6 - m.energy_pj_at_start[kind.index()]) / 1e9;
        let idle_mj = (self.nand.idle_energy_pj() - m.idle_energy_pj_at_start) / 1e9;
        let energy = EnergySection {
            read_mj: mj(OpKind::Read),
            program_mj: mj(OpKind::Program),
            erase_mj: mj(OpKind::Erase),
            copyback_mj: mj(OpKind::Copyback),
            idle_mj,
            total_mj: OpKind::ALL.iter().map(|k| mj(*k)).sum::<f64>() + idle_mj,
        };
        let blocks = &self.flash.blocks;
        let controller = self.controller.as_ref().map(|c| {
            c.section(
                &self.controller_start,
                m.last_completion - m.started,
                energy.total_mj,
            )
        });
        SsdReport {
            seed: self.seed,
            submitted: m.submitted,
            completed: m.completed,
            sim_time_us: elapsed_s * 1e6,
            read: section(HostOp::Read),
            write: section(HostOp::Write),
            trim: section(HostOp::Trim),
            flush: section(HostOp::Flush),
            waf: counters.waf(),
            counters,
            gc_latency: self.flash.gc_latency.summary(),
            erase_counts: erase_summary(blocks.erase_counts()),
            chip_ops: {
                let (now, start) = (self.chip_ops_now(), &self.chip_ops_start);
                now.since(start)
            },
            energy,
            valid_page_map: ValidPageMap {
                rows: blocks.planes(),
                cols: blocks.blocks_per_plane(),
                pages_per_block: blocks.pages_per_block(),
                valid_pages: blocks.valid_counts().to_vec(),
            },
            logical_pages: u64::from(self.logical_pages),
            physical_pages: self.geometry.total_pages(),
            page_size_bytes: self.page_size_bytes,
            placement: self.flash.placement.report(
                &self.placement_start,
                |b| blocks.states()[b] != BlockUse::Free,
                |b| blocks.valid_counts()[b],
            ),
            controller,
            sim: self.sim.as_ref().map(|s| crate::stats::SimSection {
                search: section(HostOp::Search),
                gather: section(HostOp::Gather),
                counters: s.counters,
            }),
        }
    }
}

fn erase_summary(counts: &[u32]) -> EraseSummary {
    let min = counts.iter().copied().min().unwrap_or(0);
    let max = counts.iter().copied().max().unwrap_or(0);
    let mut bins = vec![0u32; (max - min) as usize + 1];
    for &c in counts {
        bins[(c - min) as usize] += 1;
    }
    EraseSummary {
        min,
        max,
        mean: counts.iter().map(|&c| f64::from(c)).sum::<f64>() / counts.len().max(1) as f64,
        histogram: bins
            .iter()
            .enumerate()
            .filter(|(_, b)| **b > 0)
            .map(|(i, &b)| EraseBin {
                erase_count: min + i as u32,
                blocks: b,
            })
            .collect(),
    }
}

/// Keeps at most [`CDF_POINTS_MAX`] points, always including the last.
fn thin(points: Vec<CdfPoint>) -> Vec<CdfPoint> {
    if points.len() <= CDF_POINTS_MAX {
        return points;
    }
    let step = points.len().div_ceil(CDF_POINTS_MAX);
    let last = *points.last().expect("non-empty");
    let mut out: Vec<CdfPoint> = points.into_iter().step_by(step).collect();
    if out.last() != Some(&last) {
        out.push(last);
    }
    out
}
