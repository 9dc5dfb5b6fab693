//! Counters the simulator keeps (SPEC N11): per-op latency, per-stage time and energy by op
//! kind, bus waiting (contention), busy time of channels and dies.

use crate::op::OpKind;
use crate::stage::{PerStage, Stage};
use nandlab_core::{LatencyHistogram, SimTime};
use serde::Serialize;

/// One finished op, as returned to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Completion {
    pub tag: u64,
    pub kind: OpKind,
    pub planes: u32,
    pub submitted: SimTime,
    pub completed: SimTime,
    /// Time spent ready for the bus but waiting for another die to release it.
    pub bus_wait: SimTime,
    pub read_retries: u32,
    /// The read did not decode even after the last read-retry level.
    pub uncorrectable: bool,
}

impl Completion {
    pub fn latency(&self) -> SimTime {
        self.completed - self.submitted
    }
}

#[derive(Clone, Debug, Default)]
pub struct KindStats {
    pub ops: u64,
    /// Pages (or blocks for erases) touched: a 2-plane op counts 2.
    pub units: u64,
    pub bytes_transferred: u64,
    pub latency: LatencyHistogram,
    pub stage_time: PerStage<SimTime>,
    /// Stage time × planes working in it, of the cell stages (cell stages of multiplane ops
    /// work on every plane): energy is this times the stage's power. Bus stages count once, so
    /// their plane time is their `stage_time` and is not kept here (zero).
    pub stage_plane_time: PerStage<SimTime>,
    pub bus_wait: SimTime,
    pub latency_sum: SimTime,
}

#[derive(Clone, Debug, Default)]
pub struct NandStats {
    pub by_kind: [KindStats; OpKind::COUNT],
    /// Power of each stage (W = pJ/ps), from the energy model: energies are computed from the
    /// stage times when asked, so the event loop does no floating-point work.
    stage_watts: PerStage<f64>,
    /// Power of each stage of SiM ops (match-mode bus).
    match_stage_watts: PerStage<f64>,
    pub events: u64,
    pub read_retries: u64,
    pub uncorrectable_reads: u64,
    pub erased_page_reads: u64,
    /// Programs and erases suspended for reads (suspend commands; `[suspend]`).
    pub suspensions: u64,
    /// Reads served ahead of a program or erase by suspending it or joining its suspension.
    pub suspended_reads: u64,
    pub channel_busy: Vec<SimTime>,
    pub die_busy: Vec<SimTime>,
}

impl NandStats {
    pub(crate) fn new(
        channels: usize,
        dies: usize,
        stage_watts: PerStage<f64>,
        match_stage_watts: PerStage<f64>,
    ) -> Self {
        NandStats {
            stage_watts,
            match_stage_watts,
            channel_busy: vec![SimTime::ZERO; channels],
            die_busy: vec![SimTime::ZERO; dies],
            ..NandStats::default()
        }
    }

    pub fn kind(&self, kind: OpKind) -> &KindStats {
        &self.by_kind[kind.index()]
    }

    pub(crate) fn kind_mut(&mut self, kind: OpKind) -> &mut KindStats {
        &mut self.by_kind[kind.index()]
    }

    pub fn ops_completed(&self) -> u64 {
        self.by_kind.iter().map(|k| k.ops).sum()
    }

    /// Time per stage summed over op kinds.
    pub fn stage_time(&self) -> PerStage<SimTime> {
        let mut total = PerStage::<SimTime>::default();
        for k in &self.by_kind {
            total.merge(&k.stage_time);
        }
        total
    }

    /// Energy per stage summed over op kinds, in picojoules.
    pub fn stage_energy_pj(&self) -> PerStage<f64> {
        let mut total = PerStage::<f64>::default();
        for k in OpKind::ALL {
            total.merge(&self.kind_stage_energy_pj(k));
        }
        total
    }

    /// Energy per stage of one kind of op, in picojoules.
    pub fn kind_stage_energy_pj(&self, kind: OpKind) -> PerStage<f64> {
        let mut energy = PerStage::<f64>::default();
        let watts = if kind.is_search() {
            &self.match_stage_watts
        } else {
            &self.stage_watts
        };
        let k = self.kind(kind);
        for (stage, plane_time) in k.stage_plane_time.iter() {
            // (bus stages count once: their plane time is their time)
            let time = if stage.is_bus() {
                k.stage_time.get(stage)
            } else {
                plane_time
            };
            energy.add(stage, watts.get(stage) * time.as_ps() as f64);
        }
        energy
    }

    /// Fraction of the ops' execution time spent waiting for the shared bus (paper §8.7).
    pub fn bus_contention_fraction(&self) -> f64 {
        let wait: u64 = self.by_kind.iter().map(|k| k.bus_wait.as_ps()).sum();
        let total: u64 = self.by_kind.iter().map(|k| k.latency_sum.as_ps()).sum();
        if total == 0 {
            0.0
        } else {
            wait as f64 / total as f64
        }
    }

    /// Fraction of stage time spent in bus stages for one op kind (paper §8.4).
    pub fn bus_stage_fraction(&self, kind: OpKind) -> f64 {
        let t = &self.kind(kind).stage_time;
        let all: u64 = t.iter().map(|(_, v)| v.as_ps()).sum();
        let bus: u64 = t
            .iter()
            .filter(|(s, _)| s.is_bus())
            .map(|(_, v)| v.as_ps())
            .sum();
        if all == 0 {
            0.0
        } else {
            bus as f64 / all as f64
        }
    }

    pub fn cell_stage_fraction(&self, kind: OpKind) -> f64 {
        if self
            .kind(kind)
            .stage_time
            .iter()
            .all(|(_, v)| v == SimTime::ZERO)
        {
            0.0
        } else {
            1.0 - self.bus_stage_fraction(kind)
        }
    }

    /// Energy of one kind of op, in microjoules.
    pub fn energy_uj(&self, kind: OpKind) -> f64 {
        self.kind_stage_energy_pj(kind)
            .iter()
            .map(|(_, e)| e)
            .sum::<f64>()
            / 1e6
    }

    /// Accounts `time` of cell stage `stage` on `planes` planes.
    #[inline]
    pub(crate) fn add_stage(&mut self, kind: OpKind, stage: Stage, time: SimTime, planes: u32) {
        debug_assert!(!stage.is_bus(), "bus stages go through add_bus_stages");
        let k = self.kind_mut(kind);
        k.stage_time.add(stage, time);
        k.stage_plane_time.add(stage, time * u64::from(planes));
    }

    /// Accounts the bus stages of one burst: CLE, ALE, TIR, TOR and status time in
    /// picoseconds (bus stages count once, whatever the planes).
    #[inline]
    pub(crate) fn add_bus_stages(&mut self, kind: OpKind, parts: [u64; 5]) {
        const STAGES: [usize; 5] = [
            Stage::Cle as usize,
            Stage::Ale as usize,
            Stage::Tir as usize,
            Stage::Tor as usize,
            Stage::Status as usize,
        ];
        // (a total of picoseconds: plain adds, far from overflowing; bus stages' plane time is
        // their time, see `KindStats::stage_plane_time`)
        let k = self.kind_mut(kind);
        for (i, time) in STAGES.into_iter().zip(parts) {
            let total = &mut k.stage_time.0[i];
            *total = SimTime::from_ps(total.as_ps().wrapping_add(time));
        }
    }

    /// Takes back `time` of a cell stage counted whole when it started but cut short (a
    /// suspended program or erase: the rest is counted again when it resumes).
    pub(crate) fn remove_stage(&mut self, kind: OpKind, stage: Stage, time: SimTime, planes: u32) {
        let k = self.kind_mut(kind);
        let i = stage.index();
        k.stage_time.0[i] -= time;
        k.stage_plane_time.0[i] -= time * u64::from(planes);
    }
}
