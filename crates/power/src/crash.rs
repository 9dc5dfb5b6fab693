//! The crash harness (`nandlab crash`, issue 14): seeded random stack configs (cell type,
//! mapping, GC policy, write buffer and power-loss protection, over-provisioning, dies,
//! planes, copyback) × random workloads × random cut points × repeated cut–recover–continue
//! cycles ([`super::cycles`]), checked by the oracle. Case `i` of seed `s` is drawn from
//! `(s, i)` alone, so a failing case reproduces exactly (`nandlab crash --seed s --case i`);
//! it is shrunk by halving its requests and cycles while it still fails.
//!
//! Mutations ([`Mutation`]) are deliberately broken firmware variants the oracle must catch.

use super::cycles::{CyclesOutcome, run_cycles};
use super::oracle::Violations;
use super::{BuildSsd, CrashCase, CrashDevice, CrashWorkload, CutPoint, GcScheduling, MappingKind};
use nandlab_core::SimRng;
use nandlab_ftl::power::RecoveryVariant;
use serde::Serialize;

/// A deliberately broken firmware variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mutation {
    /// The real FTL.
    None,
    /// The OOB carries no sequence number: the mount keeps the last copy it finds.
    NoSequence,
    /// No paired-page protection on MLC/TLC (the cases are drawn on those cells).
    PairedPagesIgnored,
    /// Writes are acknowledged from a volatile buffer as if durable: the device declares
    /// power-loss protection without the hold-up energy to back it.
    AckBeforeDurable,
    /// A map checkpoint is recorded as committed once its pages are written, before the data
    /// it maps is on flash (cases drawn with the page mapping and frequent checkpoints).
    CheckpointBeforeData,
    /// A Flush does not log the trims decided before it (the firmware keeps deallocations in
    /// DRAM only): a trimmed LPA's older page comes back after a flush (cases drawn with
    /// frequent trims and flushes).
    TrimLogSkipped,
    /// The mount leaves out each open block's newest page holding data (an off-by-one at the
    /// write pointer): the newest acknowledged write of an LPA there is lost.
    SkipNewestPage,
}

impl Mutation {
    /// Parses `none`, `no-sequence`, `paired-pages-ignored`, `ack-before-durable`,
    /// `checkpoint-before-data`, `trim-log-skipped` or `skip-newest-page`.
    pub fn parse(text: &str) -> Result<Self, String> {
        Ok(match text {
            "none" => Mutation::None,
            "no-sequence" => Mutation::NoSequence,
            "paired-pages-ignored" => Mutation::PairedPagesIgnored,
            "ack-before-durable" => Mutation::AckBeforeDurable,
            "checkpoint-before-data" => Mutation::CheckpointBeforeData,
            "trim-log-skipped" => Mutation::TrimLogSkipped,
            "skip-newest-page" => Mutation::SkipNewestPage,
            _ => {
                return Err(format!(
                    "--mutation {text:?}: expected none, no-sequence, paired-pages-ignored, ack-before-durable, checkpoint-before-data, trim-log-skipped or skip-newest-page"
                ));
            }
        })
    }
}

/// One drawn case and its number of cycles.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DrawnCase {
    pub index: u64,
    pub case: CrashCase,
    pub cycles: u64,
}

pub(crate) fn pick<T: Copy>(rng: &mut SimRng, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize]
}

/// Case `index` of `seed` under `mutation`.
pub fn draw_case(seed: u64, index: u64, mutation: Mutation) -> DrawnCase {
    let mut rng = SimRng::stream(
        seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        "power.crash",
    );
    let mapping = pick(
        &mut rng,
        &[
            MappingKind::Page,
            MappingKind::Page,
            MappingKind::Page,
            MappingKind::Block,
            MappingKind::Hybrid,
        ],
    );
    let page = mapping == MappingKind::Page;
    let mut preset = pick(&mut rng, &["slc", "slc", "mlc1", "tlc-b17a"]);
    if mutation == Mutation::PairedPagesIgnored {
        preset = pick(&mut rng, &["mlc1", "tlc-b17a"]);
    }
    let mapping = if matches!(
        mutation,
        Mutation::PairedPagesIgnored | Mutation::CheckpointBeforeData
    ) {
        MappingKind::Page
    } else {
        mapping
    };
    let page = page || mapping == MappingKind::Page;
    // (paired-page padding wastes up to the distance between a word line's lower and upper
    // pages per flush or GC erase: on an 8-page MLC block that is most of the block, which
    // starves GC on these tiny devices; 16 pages keep it to a few)
    let pages_per_block = match preset {
        "tlc-b17a" => 9,
        "mlc1" => 16,
        _ => 8,
    };
    let mut buffer = pick(&mut rng, &[0, 0, 4, 8, 16]);
    let mut hold_up = (buffer > 0 && rng.chance(0.3)).then_some(1e6);
    if mutation == Mutation::AckBeforeDurable {
        buffer = buffer.max(8);
        hold_up = Some(0.0);
    }
    let dies = 1 + rng.below(2) as i64;
    let planes = if page { 1 + rng.below(2) as i64 } else { 1 };
    let blocks = if page { 12 + rng.below(5) as i64 } else { 16 };
    let op_fraction = if page {
        0.5 + 0.1 * rng.below(5) as f64
    } else {
        0.5
    };
    let copyback = rng.chance(0.5);
    let gc_policy = pick(&mut rng, &["greedy", "fifo", "cost-benefit", "random"]);
    // the device as a stack config, over the default crash device (checkpoints, queue depth,
    // GC scheduling and urgency, multiplane merging, cache mode and superblocks start at its
    // values and are drawn below)
    let mut device = CrashDevice {
        checkpoint_before_data: mutation == Mutation::CheckpointBeforeData,
        trim_log_skipped: mutation == Mutation::TrimLogSkipped,
        ..CrashDevice::default()
    };
    device.set("nand.preset", preset);
    device.set("nand.geometry.dies_per_chip", dies);
    device.set("nand.geometry.planes_per_die", planes);
    device.set("nand.geometry.blocks_per_plane", blocks);
    device.set("nand.geometry.pages_per_block", pages_per_block);
    device.set("ssd.op_fraction", op_fraction);
    device.set("ssd.buffer.pages", i64::from(buffer));
    device.set("ssd.gc.copyback", copyback);
    device.set_mapping(mapping);
    if page {
        device.set("ssd.gc.policy", gc_policy);
        device.set(
            "ssd.mapping.paired_page_padding",
            mutation != Mutation::PairedPagesIgnored,
        );
    }
    // paired-page padding covers the page mapping; block and hybrid mappings program a page
    // at its LPA's offset, so their lower pages are not protected: no paired damage there
    let paired_damage = if page {
        pick(&mut rng, &[0.5, 1.0])
    } else {
        0.0
    };
    let workload = CrashWorkload {
        requests: 40 + rng.below(161) as u32,
        lpa_span: 10 + rng.below(31) as u32,
        flush_probability: pick(&mut rng, &[0.05, 0.1, 0.2]),
        trim_probability: pick(&mut rng, &[0.0, 0.03]),
        read_probability: 0.1,
        write_pages_max: 1 + rng.below(3) as u32,
        fua_probability: pick(&mut rng, &[0.0, 0.0, 0.2]),
    };
    let mut drawn = DrawnCase {
        index,
        case: CrashCase {
            device,
            workload,
            seed: rng.below(u64::MAX) | 1,
            cut_point: CutPoint::End,
            paired_damage_probability: paired_damage,
            hold_up_energy_uj: hold_up,
            recovery: match mutation {
                Mutation::NoSequence => RecoveryVariant::NoSequence,
                Mutation::SkipNewestPage => RecoveryVariant::SkipNewestPage,
                _ => RecoveryVariant::Correct,
            },
        },
        cycles: 1 + rng.below(4),
    };
    // map checkpoints (page mapping), drawn last so the draws above stay as they were
    let device = &mut drawn.case.device;
    if page {
        let interval = if mutation == Mutation::CheckpointBeforeData {
            pick(&mut rng, &[2, 4, 8])
        } else {
            pick(&mut rng, &[0, 0, 4, 16, 32])
        };
        device.set("ssd.mapping.map_checkpoint_interval_pages", interval);
    }
    // host queue depth, drawn after everything else (the draws above stay as they were)
    device.set("ssd.host.queue_depth", pick(&mut rng, &[1, 1, 2, 4]));
    // GC scheduling, drawn after the queue depth (the draws above stay as they were):
    // interleaved in one case out of three (it was kept blocking here while interleaved GC
    // could program a block out of order, fixed in `sched/queues.rs`)
    let interleaved = pick(&mut rng, &[false, false, true]);
    device.set(
        "ssd.gc.scheduling",
        if interleaved {
            "interleaved"
        } else {
            "blocking"
        },
    );
    // urgent GC (interleaved only), drawn after the scheduling (the draws above stay as they
    // were): GC goes before host ops while a plane has fewer free blocks than this; on these
    // 12-16-block planes 2-4 makes it urgent much of the time, so cuts fall on that path
    if interleaved {
        device.set("ssd.gc.urgent_free_blocks", pick(&mut rng, &[0, 2, 3, 4]));
    }
    // multiplane merging and cache mode, drawn after the urgency (the draws above stay as they
    // were): merging in a third of the cases with two planes, cache mode in a quarter of all
    // cases
    let multiplane = planes > 1 && rng.chance(1.0 / 3.0);
    if multiplane {
        device.set("ssd.scheduler.multiplane", true);
    }
    device.set("ssd.scheduler.cache", rng.chance(0.25));
    // superblocks, drawn last (the draws above stay as they were): half the merging cases
    // whose device allows them (page mapping, no copyback, two planes forming the superblock)
    if multiplane && page && !copyback && planes == 2 && rng.chance(0.5) {
        device.set("ssd.scheduler.superpage_planes", 2);
    }
    if mutation == Mutation::TrimLogSkipped {
        let w = &mut drawn.case.workload;
        w.trim_probability = 0.15;
        w.flush_probability = w.flush_probability.max(0.1);
    }
    drawn
}

/// Which devices the harness draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Draw {
    /// The devices above ([`draw_case`]).
    #[default]
    Standard,
    /// The same cases, and on the page-mapping ones a cached mapping table (DFTL: 2-16
    /// entries in DRAM, dirty ones lost at a cut) and, on half of them, a 1-2-block SLC
    /// cache, each drawn from a stream of its own so every other draw stays as it was
    /// (`nandlab crash --controller`; issue 34 item 4).
    Controller,
    /// Zoned devices (`nandlab crash --zoned`): the zoned mapping under a workload that
    /// writes zones at their write pointers and resets them, drawn from a stream of their own
    /// ([`super::zoned::draw_zoned`]); the mounts rebuild every zone's write pointer and
    /// state.
    Zoned,
}

/// Case `index` of `seed` under `mutation`, drawn by `draw`.
pub fn draw_case_by(
    seed: u64,
    index: u64,
    mutation: Mutation,
    draw: Draw,
    build: BuildSsd,
) -> DrawnCase {
    if draw == Draw::Zoned {
        return super::zoned::draw_zoned(seed, index, mutation);
    }
    let mut drawn = draw_case(seed, index, mutation);
    if draw == Draw::Controller {
        draw_controller(seed, index, &mut drawn, build);
    }
    drawn
}

/// The cached mapping table of a [`Draw::Controller`] case (page mapping only, which DFTL
/// needs), from stream `power.crash.controller` of (seed, index).
fn draw_controller(seed: u64, index: u64, drawn: &mut DrawnCase, build: BuildSsd) {
    let device = &mut drawn.case.device;
    let page = device
        .config(build)
        .is_ok_and(|c| c.ftl.mapping.kind == MappingKind::Page);
    if !page {
        return;
    }
    let mut rng = SimRng::stream(
        seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        "power.crash.controller",
    );
    device.set("ssd.mapping.cache_entries", pick(&mut rng, &[2, 4, 8, 16]));
    // an SLC cache on half the page-mapping cases, from a stream of its own (the draws above,
    // and the cached tables of every case, stay as they were)
    let mut rng = SimRng::stream(
        seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        "power.crash.controller.slc",
    );
    if rng.chance(0.5) {
        with_slc_cache(device, pick(&mut rng, &[1, 1, 2]));
    }
}

/// Puts a `blocks`-block SLC cache on `device` (any preset: SLC-mode times of an SLC chip's
/// order).
pub(crate) fn with_slc_cache(device: &mut CrashDevice, blocks: i64) {
    device.set("ssd.slc_cache.blocks", blocks);
    device.set("nand.timing.slc_read_us", 25.0);
    device.set("nand.timing.slc_program_us", 200.0);
}

/// A failing case, as drawn and as shrunk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    pub drawn: DrawnCase,
    pub outcome: CyclesOutcome,
    /// The smallest still-failing version (fewer requests, fewer cycles).
    pub shrunk: DrawnCase,
    pub shrunk_outcome: CyclesOutcome,
}

/// The totals of a harness run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CrashSummary {
    pub seed: u64,
    pub mutation: Option<Mutation>,
    /// Cases drawn.
    pub cases: u64,
    /// Cut–recover cycles checked.
    pub cycles: u64,
    /// Cases with a violation.
    pub failing_cases: u64,
    pub violations: Violations,
    pub torn_programs: u64,
    pub damaged_lower_pages: u64,
    pub interrupted_erases: u64,
    pub volatile_pages_lost: u64,
    pub recovery_time_us_max: f64,
    /// Mounts from a map checkpoint, pages the mounts read and what full scans read.
    pub checkpoint_mounts: u64,
    pub recovery_pages_read: u64,
    pub full_scan_pages_read: u64,
    /// Trim-log records written.
    pub trim_records_written: u64,
    /// Cases run with a host queue depth above 1.
    pub cases_deep_queue: u64,
    /// Cases run with interleaved GC scheduling.
    pub cases_interleaved_gc: u64,
    /// Cases with urgent GC (`gc_urgent_free_blocks` > 0), and the GC ops that passed a
    /// waiting host op because of it (summed over the cycles).
    pub cases_urgent_gc: u64,
    pub urgent_gc_passes: u64,
    /// Cases with multiplane merging, with superblocks, with cache mode.
    pub cases_multiplane: u64,
    pub cases_superblock: u64,
    pub cases_cache_mode: u64,
    /// Cases with a cached mapping table ([`Draw::Controller`]; left out of the JSON when 0,
    /// so the standard draw's output stays as it was).
    #[serde(skip_serializing_if = "is_zero")]
    pub cases_dftl: u64,
    /// Cases with an SLC cache ([`Draw::Controller`]; left out of the JSON when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub cases_slc_cache: u64,
    /// Zoned cases ([`Draw::Zoned`]) and the zones their mounts rebuilt (left out of the JSON
    /// otherwise).
    #[serde(skip_serializing_if = "is_zero")]
    pub cases_zoned: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones: Option<super::zoned::ZoneCounts>,
    /// The first failing case (reproduce: `nandlab crash --seed SEED --case INDEX`).
    pub first_failure: Option<Box<Failure>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Runs one drawn case.
pub fn run_drawn(drawn: &DrawnCase, build: BuildSsd) -> Result<CyclesOutcome, String> {
    run_cycles(&drawn.case, drawn.cycles, build).map_err(|e| format!("case {}: {e}", drawn.index))
}

/// Halves the requests, then the cycles, while the case still fails.
fn shrink(
    drawn: &DrawnCase,
    outcome: &CyclesOutcome,
    build: BuildSsd,
) -> Result<(DrawnCase, CyclesOutcome), String> {
    let mut best = (drawn.clone(), outcome.clone());
    loop {
        let mut smaller = best.0.clone();
        if smaller.case.workload.requests > 4 {
            smaller.case.workload.requests /= 2;
        } else if smaller.cycles > 1 {
            smaller.cycles -= 1;
        } else {
            return Ok(best);
        }
        let o = run_drawn(&smaller, build)?;
        if o.violations.total() == 0 {
            // try fewer cycles with the requests kept
            let mut fewer = best.0.clone();
            if fewer.cycles > 1 {
                fewer.cycles -= 1;
                let o = run_drawn(&fewer, build)?;
                if o.violations.total() > 0 {
                    best = (fewer, o);
                    continue;
                }
            }
            return Ok(best);
        }
        best = (smaller, o);
    }
}

/// Draws and runs cases of `seed` until `cuts` cycles have been checked or `progress` breaks
/// (`progress(cycles)`
/// after each case).
pub fn crash(
    seed: u64,
    cuts: u64,
    mutation: Mutation,
    build: BuildSsd,
    progress: impl FnMut(u64) -> std::ops::ControlFlow<()>,
) -> Result<CrashSummary, String> {
    crash_by(seed, cuts, mutation, Draw::Standard, build, progress)
}

/// [`crash`] over the devices `draw` draws.
pub fn crash_by(
    seed: u64,
    cuts: u64,
    mutation: Mutation,
    draw: Draw,
    build: BuildSsd,
    mut progress: impl FnMut(u64) -> std::ops::ControlFlow<()>,
) -> Result<CrashSummary, String> {
    let mut s = CrashSummary {
        seed,
        mutation: (mutation != Mutation::None).then_some(mutation),
        ..CrashSummary::default()
    };
    let mut index = 0;
    while s.cycles < cuts {
        let drawn = draw_case_by(seed, index, mutation, draw, build);
        index += 1;
        let o = run_drawn(&drawn, build)?;
        s.cases += 1;
        s.cycles += o.cycles;
        s.torn_programs += o.torn_programs;
        s.damaged_lower_pages += o.damaged_lower_pages;
        s.interrupted_erases += o.interrupted_erases;
        s.volatile_pages_lost += o.volatile_pages_lost;
        s.recovery_time_us_max = s.recovery_time_us_max.max(o.recovery_time_us_max);
        s.checkpoint_mounts += o.checkpoint_mounts;
        s.recovery_pages_read += o.recovery_pages_read;
        s.full_scan_pages_read += o.full_scan_pages_read;
        s.trim_records_written += o.trim_records_written;
        let f = drawn.case.device.config(build)?.ftl;
        s.cases_deep_queue += u64::from(f.host.queue_depth > 1);
        s.cases_interleaved_gc += u64::from(f.gc.scheduling == GcScheduling::Interleaved);
        s.cases_urgent_gc += u64::from(f.gc.urgent_free_blocks > 0);
        s.urgent_gc_passes += o.urgent_gc_passes;
        s.cases_multiplane += u64::from(f.scheduler.multiplane);
        s.cases_superblock += u64::from(f.scheduler.superpage_planes > 1);
        s.cases_cache_mode += u64::from(f.scheduler.cache);
        s.cases_dftl += u64::from(f.mapping.cache_entries > 0);
        s.cases_slc_cache += u64::from(f.slc_cache.blocks > 0);
        s.cases_zoned += u64::from(f.mapping.kind == MappingKind::Zoned);
        if let Some(z) = &o.zones {
            s.zones.get_or_insert_default().add(z);
        }
        if o.violations.total() > 0 {
            s.failing_cases += 1;
            s.violations.add(&o.violations);
            if s.first_failure.is_none() {
                let (shrunk, shrunk_outcome) = shrink(&drawn, &o, build)?;
                s.first_failure = Some(Box::new(Failure {
                    drawn,
                    outcome: o,
                    shrunk,
                    shrunk_outcome,
                }));
            }
        }
        if progress(s.cycles).is_break() {
            break;
        }
    }
    Ok(s)
}
