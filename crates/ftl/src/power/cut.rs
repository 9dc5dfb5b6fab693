//! What a power cut does to the array, given the ops in flight and queued at that instant.
//!
//! * Completed ops are durable (already folded into the image).
//! * A program (or copyback) whose cell stage has begun leaves its page torn (bytes partly
//!   programmed, CRC failing); on MLC/TLC/QLC each lower page of its word line is damaged too
//!   with probability [`CutConfig::paired_damage_probability`].
//! * An erase whose cell stage has begun leaves its block unreliable until erased again.
//! * Ops not started (still in the controller's die queues, or in the chip before their cell
//!   stage) never happen; volatile front-end copies (the DRAM write buffer) are lost.
//! * With power-loss protection (a hold-up energy budget) the device first finishes the ops it
//!   decided (in per-die order) and then writes its volatile pages to a dump area, each page
//!   program paid from the budget; what the budget does not cover is cut as above.
//!
//! Deterministic: the only randomness (which lower pages, which bits) comes from
//! [`CutConfig::seed`].

use super::image::FlashImage;
use super::trace::{PageContent, TracedOp};
use crate::address::{Lpa, Ppa};
use nandlab_core::{SimRng, SimTime};
use nandlab_nand::sim::paired_lower_pages;
use nandlab_nand::{OpKind, PageLayout};

/// How a cut behaves.
#[derive(Clone, Debug, PartialEq)]
pub struct CutConfig {
    /// Probability that a torn program damages each lower page of its word line (0 to 1).
    pub paired_damage_probability: f64,
    /// Power-loss protection: the hold-up energy (µJ) available after the cut; `None`: none.
    pub hold_up_energy_uj: Option<f64>,
    /// Seed of the cut's random choices.
    pub seed: u64,
}

impl Default for CutConfig {
    fn default() -> Self {
        CutConfig {
            paired_damage_probability: 0.5,
            hold_up_energy_uj: None,
            seed: 1,
        }
    }
}

impl CutConfig {
    /// Checks the values; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let p = self.paired_damage_probability;
        if !(0.0..=1.0).contains(&p) {
            return Err(format!(
                "paired_damage_probability = {p}: must be between 0 and 1"
            ));
        }
        if let Some(e) = self.hold_up_energy_uj
            && !(e.is_finite() && e >= 0.0)
        {
            return Err(format!(
                "hold_up_energy_uj = {e}: must be a finite number >= 0"
            ));
        }
        Ok(())
    }
}

/// A page the device wrote to its dump area on hold-up power, or held in a non-volatile
/// front-end stage: read back at mount, newer than any flash copy of its LPA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpedPage {
    /// The logical page.
    pub lpa: Lpa,
    /// Sequence number given at the dump (above every flash copy's).
    pub sequence: u64,
    /// Its bytes (full payload mode).
    pub data: Option<Box<[u8]>>,
}

/// What the cut did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CutReport {
    /// Simulated time of the cut (ps).
    pub time_ps: u64,
    /// Chip ops completed since the trace started.
    pub chip_ops_completed: u64,
    /// Programs torn (cell stage begun).
    pub torn_programs: u64,
    /// Lower pages of torn word lines damaged.
    pub damaged_lower_pages: u64,
    /// Erases interrupted (their blocks are unreliable).
    pub interrupted_erases: u64,
    /// Decided ops that never ran (queued, or in the chip before their cell stage).
    pub ops_not_run: u64,
    /// Pages in volatile front-end stages lost.
    pub volatile_pages_lost: u64,
    /// Ops finished and pages dumped on hold-up energy.
    pub plp_ops_finished: u64,
    /// Volatile pages saved to the dump area on hold-up energy (or kept by non-volatile
    /// stages).
    pub pages_dumped: u64,
    /// Hold-up energy used (µJ).
    pub plp_energy_used_uj: f64,
    /// Map checkpoints committed before the cut (the mount starts from the newest).
    pub checkpoints_committed: u64,
    /// A checkpoint was being written, or waited for its data, at the cut: it is lost.
    pub checkpoint_lost: bool,
    /// Trim-log records written before the cut.
    pub trim_records_written: u64,
    /// Trim-log records being written at the cut (lost; their flushes had not completed).
    pub trim_records_lost: u64,
}

/// A cut device: its array, its dump area, and what happened.
#[derive(Clone, Debug)]
pub struct PowerCut {
    /// The array as the cut left it.
    pub image: FlashImage,
    /// Pages recovered from the dump area / non-volatile stages.
    pub dump: Vec<DumpedPage>,
    /// What happened.
    pub report: CutReport,
}

/// What the chip model says of one die's ops at the cut: the ops given to the chip (in
/// submission order) and for each whether its cell stage has begun, then the ops still in
/// the controller's queue (never started).
pub(crate) struct DieAtCut<'a> {
    pub pending: &'a std::collections::VecDeque<TracedOp>,
    pub staged: &'a std::collections::VecDeque<TracedOp>,
    pub in_chip_cell_started: Vec<bool>,
}

/// Energy costs for power-loss protection (pJ).
pub(crate) struct EnergyCosts {
    pub program_pj: f64,
    pub erase_pj: f64,
}

/// Volatile or surviving front-end pages at the cut.
pub(crate) struct StagePage {
    pub lpa: Lpa,
    pub volatile: bool,
    pub data: Option<Box<[u8]>>,
}

/// The device facts a cut needs besides the array.
pub(crate) struct CutContext {
    pub layout: PageLayout,
    pub energy: EnergyCosts,
    /// The sequence number the first dumped page gets (above every write decided).
    pub next_sequence: u64,
    pub time: SimTime,
    /// Blocks in SLC mode (the SLC cache's): one page per word line, no paired lower pages.
    pub slc_blocks: Vec<u32>,
}

/// Applies a cut to `image` (already holding every completed op).
pub(crate) fn apply_cut(
    mut image: FlashImage,
    dies: Vec<DieAtCut<'_>>,
    stage_pages: Vec<StagePage>,
    context: &CutContext,
    config: &CutConfig,
) -> PowerCut {
    let CutContext {
        layout,
        ref energy,
        next_sequence,
        time,
        ref slc_blocks,
    } = *context;
    // a stream per (seed, instant): cuts at different instants draw differently
    let mut rng = SimRng::stream(
        config.seed ^ time.as_ps().wrapping_mul(0x9E37_79B9_7F4A_7C15),
        "power.cut",
    );
    let mut report = CutReport {
        time_ps: time.as_ps(),
        ..CutReport::default()
    };
    let mut budget_pj = config.hold_up_energy_uj.map(|uj| uj * 1e6);
    let ppb = image.pages_per_block;
    for die in dies {
        for (i, op) in die.pending.iter().chain(die.staged).enumerate() {
            let cost = match op.kind {
                OpKind::Program | OpKind::Copyback => energy.program_pj,
                OpKind::Erase => energy.erase_pj,
                _ => 0.0,
            };
            if let Some(b) = budget_pj.as_mut()
                && *b >= cost
            {
                // finished on hold-up power
                *b -= cost;
                report.plp_ops_finished += 1;
                image.apply(op.kind, op.source, op.programmed(), op.content.clone());
                continue;
            }
            let started = die.in_chip_cell_started.get(i).copied().unwrap_or(false);
            if !started {
                report.ops_not_run += 1;
                continue;
            }
            match op.kind {
                OpKind::Erase => {
                    report.interrupted_erases += 1;
                    image.unreliable[(op.source.0 / ppb) as usize] = true;
                }
                OpKind::Program | OpKind::Copyback => {
                    let ppa = op.programmed().expect("a program programs a page");
                    let intended = op.content.clone().or(Some(PageContent {
                        lpa: None,
                        sequence: 0,
                        crc: super::trace::unknown_crc(),
                        data: None,
                    }));
                    image.damage(ppa, intended, &mut rng);
                    report.torn_programs += 1;
                    let offset = ppa.0 % ppb;
                    let lowers = if slc_blocks.contains(&(ppa.0 / ppb)) {
                        Vec::new()
                    } else {
                        paired_lower_pages(layout, offset, ppb)
                    };
                    for lower in lowers {
                        if rng.chance(config.paired_damage_probability)
                            && image.damage(Ppa(ppa.0 - offset + lower), None, &mut rng)
                        {
                            report.damaged_lower_pages += 1;
                        }
                    }
                }
                _ => report.ops_not_run += 1,
            }
        }
    }
    let mut dump = Vec::new();
    for page in stage_pages {
        let saved = if !page.volatile {
            true
        } else if let Some(b) = budget_pj.as_mut()
            && *b >= energy.program_pj
        {
            *b -= energy.program_pj;
            true
        } else {
            false
        };
        if saved {
            dump.push(DumpedPage {
                lpa: page.lpa,
                sequence: next_sequence + dump.len() as u64,
                data: page.data,
            });
        } else {
            report.volatile_pages_lost += 1;
        }
    }
    report.pages_dumped = dump.len() as u64;
    if let (Some(total), Some(left)) = (config.hold_up_energy_uj, budget_pj) {
        report.plp_energy_used_uj = total - left / 1e6;
    }
    PowerCut {
        image,
        dump,
        report,
    }
}
