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
        let stats = self.chip.nand.stats();
        let ops = |kind: OpKind| stats.kind(kind).ops;
        let sched = self.sched.counters();
        let merged = |kind: OpKind| sched.multiplane_ops[kind.index()];
        let multiplane: u64 = sched.multiplane_ops.iter().sum();
        let copyback = ops(OpKind::Copyback) - merged(OpKind::Copyback);
        let all: u64 = OpKind::ALL.iter().map(|&k| ops(k)).sum();
        let cache = if self.sched.cache_mode() {
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
            reads_ahead: sched.reads_ahead,
            suspended_reads: stats.suspended_reads,
            reads_of_moving_pages: sched.reads_of_moving_pages,
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
            energy[kind.index()] = self.chip.nand.stats().energy_uj(kind) * 1e6;
        }
        self.measurement.measure = Measure {
            started: self.now,
            last_completion: self.now,
            counters_at_start: self.flash.counters.clone(),
            energy_pj_at_start: energy,
            idle_energy_pj_at_start: self.chip.nand.idle_energy_pj(),
            ..Measure::default()
        };
        self.measurement.series =
            crate::stats::timeseries::TimeSeries::new(self.now, self.series_state());
        self.flash.gc_latency = LatencyHistogram::new();
        if let Some(c) = &self.stages.controller {
            self.measurement.start.controller = c.totals();
        }
        self.measurement.start.placement = self.flash.placement.snapshot();
        self.measurement.start.chip_ops = self.chip_ops_now();
    }

    /// The report of the current measurement.
    pub fn report(&self) -> SsdReport {
        let m = &self.measurement.measure;
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
        let energy = self.energy_section();
        let blocks = &self.flash.blocks;
        let controller = self.stages.controller.as_ref().map(|c| {
            c.section(
                &self.measurement.start.controller,
                m.last_completion - m.started,
                energy.total_mj,
            )
        });
        SsdReport {
            seed: self.layout.seed,
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
            chip_ops: self.chip_ops_now().since(&self.measurement.start.chip_ops),
            energy,
            valid_page_map: ValidPageMap {
                rows: blocks.planes(),
                cols: blocks.blocks_per_plane(),
                pages_per_block: blocks.pages_per_block(),
                valid_pages: blocks.valid_counts().to_vec(),
            },
            logical_pages: u64::from(self.layout.logical_pages),
            physical_pages: self.layout.geometry.total_pages(),
            page_size_bytes: self.layout.page_size_bytes,
            placement: self.flash.placement.report(
                &self.measurement.start.placement,
                |b| !matches!(blocks.states()[b], BlockUse::Free | BlockUse::Bad),
                |b| blocks.valid_counts()[b],
            ),
            controller,
            sim: self
                .stages
                .search
                .as_ref()
                .map(|s| crate::stats::SimSection {
                    search: section(HostOp::Search),
                    gather: section(HostOp::Gather),
                    counters: s.counters,
                }),
            cmt: self.cmt.as_ref().map(|c| c.counters),
            bad_blocks: self.flash.bad_blocks.as_ref().map(|b| b.report()),
            read_reclaim: self.flash.read_reclaim.as_ref().map(|r| r.report()),
            timeseries: self
                .measurement
                .series
                .rows(m.last_completion, self.series_state()),
        }
    }

    /// The chip's energy since the measurement started.
    fn energy_section(&self) -> EnergySection {
        let m = &self.measurement.measure;
        let stats = self.chip.nand.stats();
        let mj =
            |kind: OpKind| (stats.energy_uj(kind) * 1e6 - m.energy_pj_at_start[kind.index()]) / 1e9;
        let idle_mj = (self.chip.nand.idle_energy_pj() - m.idle_energy_pj_at_start) / 1e9;
        EnergySection {
            read_mj: mj(OpKind::Read),
            program_mj: mj(OpKind::Program),
            erase_mj: mj(OpKind::Erase),
            copyback_mj: mj(OpKind::Copyback),
            idle_mj,
            total_mj: OpKind::ALL.iter().map(|k| mj(*k)).sum::<f64>() + idle_mj,
        }
    }

    /// The device state a time-series interval closes with.
    pub(super) fn series_state(&self) -> crate::stats::timeseries::DeviceState {
        let m = &self.measurement.measure;
        let (read, write) = (
            &m.by_op[op_index(HostOp::Read)],
            &m.by_op[op_index(HostOp::Write)],
        );
        crate::stats::timeseries::DeviceState {
            reads: read.requests,
            writes: write.requests,
            read_bytes: read.bytes,
            write_bytes: write.bytes,
            host_pages_written: self.flash.counters.host_pages_written,
            flash_pages_programmed: self.flash.counters.flash_pages_programmed,
            free_blocks: self.flash.blocks.free_total(),
            slc_pages: self.front.slc_occupancy(),
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

/// Thins a CDF to about [`CDF_POINTS_MAX`] points (at most twice that, plus the ends) without
/// losing a step: a point is kept when the fraction rose by at least 1/[`CDF_POINTS_MAX`]
/// since the last one kept, and a point whose own step is that large is kept with the point
/// before it, so the latency where most of the data sits is never skipped. The first and last
/// points are always kept.
fn thin(points: Vec<CdfPoint>) -> Vec<CdfPoint> {
    if points.len() <= CDF_POINTS_MAX {
        return points;
    }
    let min_rise = 1.0 / CDF_POINTS_MAX as f64;
    let mut out: Vec<CdfPoint> = Vec::with_capacity(2 * CDF_POINTS_MAX + 2);
    for (i, &p) in points.iter().enumerate() {
        let kept = out.last().map_or(0.0, |k| k.fraction);
        let step = if i == 0 {
            p.fraction
        } else {
            p.fraction - points[i - 1].fraction
        };
        let last = i + 1 == points.len();
        if i == 0 || last || p.fraction - kept >= min_rise {
            if i > 0 && step >= min_rise && out.last() != Some(&points[i - 1]) {
                out.push(points[i - 1]);
            }
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod thin_tests {
    use super::*;

    /// Guards against the CDF dropping the step that holds most of the data (p50 = p99 =
    /// 353 µs, but the thinned CDF jumped at 6,263 µs): every step of at least 1 % is kept with
    /// the point before it, and the thinned CDF stays bounded.
    #[test]
    fn thinning_keeps_every_large_step() {
        // 1,000 latencies: 300 small steps, one step of 60 % at 353 µs, then a long tail
        let mut points = Vec::new();
        let mut fraction = 0.0;
        for i in 0..1000 {
            let rise = if i == 350 { 0.6 } else { 0.4 / 999.0 };
            fraction += rise;
            points.push(CdfPoint {
                latency_us: 1.0 + i as f64,
                fraction,
            });
        }
        let thinned = thin(points.clone());
        assert!(thinned.len() <= 2 * CDF_POINTS_MAX + 2, "{}", thinned.len());
        assert!(thinned.contains(&points[350]) && thinned.contains(&points[349]));
        assert_eq!(thinned.first(), points.first());
        assert_eq!(thinned.last(), points.last());
        // no rise between two kept points hides more than 1 % plus one step
        for pair in thinned.windows(2) {
            let i = points.iter().position(|p| *p == pair[1]).unwrap();
            let hidden = points[i - 1].fraction - pair[0].fraction;
            assert!(hidden < 0.011, "{pair:?}");
        }
    }
}
