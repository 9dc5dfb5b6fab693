//! Cut sweeps: the same seeded run cut at every event (or every completed chip op) in turn,
//! optionally with a stride, and the violations summed by class.

use super::oracle::Violations;
use super::{BuildSsd, CrashCase, CutPoint, run_case};
use serde::{Deserialize, Serialize};

/// Which boundaries a sweep cuts at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepMode {
    /// Every world event: inside ops (between their stages) as well as between them.
    Events,
    /// Every completed chip op.
    ChipOps,
    /// Evenly spaced instants of simulated time (`stride` picoseconds apart at least; with
    /// `cuts_max` cuts over the run): cuts land inside bursts and cell stages.
    Times,
}

/// A sweep's totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SweepSummary {
    /// Cuts made (recoveries checked).
    pub cuts: u64,
    /// Events (or chip ops) of the uncut run.
    pub boundaries: u64,
    /// Cuts that found at least one violation.
    pub failing_cuts: u64,
    /// The first failing cut point.
    pub first_failing: Option<CutPoint>,
    pub violations: Violations,
    /// Sums over the cuts.
    pub torn_programs: u64,
    pub damaged_lower_pages: u64,
    pub interrupted_erases: u64,
    pub volatile_pages_lost: u64,
    /// Largest recovery scan (pages read, simulated µs).
    pub recovery_pages_read_max: u64,
    pub recovery_time_us_max: f64,
    /// Map checkpoints: cuts whose mount started from one, cuts that fell while one was being
    /// written (or waited for its data), and the pages the mounts read against what full
    /// scans would have read (summed over the cuts).
    pub checkpoint_mounts: u64,
    pub checkpoint_cuts_mid_write: u64,
    pub recovery_pages_read: u64,
    pub full_scan_pages_read: u64,
    /// The sweep was stopped early (Ctrl-C): `cuts` counts those made.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// Cuts `base` (its cut point ignored) at every `stride`-th boundary of `mode`, from the
/// first to the end of the run. Bounded by `cuts_max` cuts (evenly spaced when the run has
/// more boundaries).
pub fn sweep(
    base: &CrashCase,
    mode: SweepMode,
    stride: u64,
    cuts_max: u64,
    build: BuildSsd,
) -> Result<SweepSummary, String> {
    sweep_progress(base, mode, stride, cuts_max, build, &mut |_, _| {
        std::ops::ControlFlow::Continue(())
    })
}

/// [`sweep`] calling `progress(cuts done, cuts planned)` before each cut; `Break` (Ctrl-C)
/// ends the sweep there: the summary covers the cuts made and says `interrupted`.
pub fn sweep_progress(
    base: &CrashCase,
    mode: SweepMode,
    stride: u64,
    cuts_max: u64,
    build: BuildSsd,
    progress: &mut dyn FnMut(u64, u64) -> std::ops::ControlFlow<()>,
) -> Result<SweepSummary, String> {
    if stride == 0 {
        return Err("stride = 0: must be at least 1".into());
    }
    if cuts_max == 0 {
        return Err("cuts = 0: must be at least 1".into());
    }
    let whole = run_case(
        &CrashCase {
            cut_point: CutPoint::End,
            ..base.clone()
        },
        build,
    )?;
    let boundaries = match mode {
        SweepMode::Events => whole.events,
        SweepMode::ChipOps => whole.cut.chip_ops_completed,
        SweepMode::Times => whole.cut.time_ps,
    };
    let stride = stride.max(boundaries.div_ceil(cuts_max));
    let mut s = SweepSummary {
        boundaries,
        ..SweepSummary::default()
    };
    let planned = boundaries / stride + 1;
    let mut at = 0;
    while at <= boundaries {
        if progress(s.cuts, planned).is_break() {
            s.interrupted = true;
            return Ok(s);
        }
        let cut_point = match mode {
            SweepMode::Events => CutPoint::AfterEvents(at),
            SweepMode::ChipOps => CutPoint::AfterChipOps(at),
            SweepMode::Times => CutPoint::AtTimePs(at),
        };
        let o = run_case(
            &CrashCase {
                cut_point,
                ..base.clone()
            },
            build,
        )?;
        s.cuts += 1;
        if o.violations.total() > 0 {
            s.failing_cuts += 1;
            s.first_failing.get_or_insert(cut_point);
            let mut v = o.violations.clone();
            for e in &mut v.examples {
                *e = format!("{cut_point:?}: {e}");
            }
            s.violations.add(&v);
        }
        s.torn_programs += o.cut.torn_programs;
        s.damaged_lower_pages += o.cut.damaged_lower_pages;
        s.interrupted_erases += o.cut.interrupted_erases;
        s.volatile_pages_lost += o.cut.volatile_pages_lost;
        s.recovery_pages_read_max = s.recovery_pages_read_max.max(o.recovery.pages_read);
        s.checkpoint_mounts += u64::from(o.recovery.checkpoint_used);
        s.checkpoint_cuts_mid_write += u64::from(o.cut.checkpoint_lost);
        s.recovery_pages_read += o.recovery.pages_read;
        s.full_scan_pages_read += o.recovery.full_scan_pages_read;
        s.recovery_time_us_max = s
            .recovery_time_us_max
            .max(super::ps_to_us(o.recovery.time_ps));
        at += stride;
    }
    let _ = progress(s.cuts, planned);
    Ok(s)
}
