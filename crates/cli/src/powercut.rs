//! `nandlab powercut`: cut the power of a small simulated SSD, mount it from its pages' OOB
//! and check every LPA with the crash oracle (docs/power.md); or sweep cut points; or time the
//! mount scan against capacity.

use crate::crash::violations_found;
use crate::usage;
use clap::Args;
use nandlab_lab::control::Control;
use nandlab_lab::power::scaling::recovery_scaling_checkpointed;
use nandlab_lab::power::sweep::SweepMode;
use nandlab_lab::power::{CrashCase, CrashDevice, CrashWorkload, CutPoint, ps_to_us, run_case};
use nandlab_lab::power::{RecoveryVariant, parse_config_name};
use nandlab_lab::power::{device_config, sweep_progress};
use nandlab_lab::{LabError, LabResult};

#[derive(Args, Debug)]
pub struct PowercutArgs {
    /// NAND preset of the device (slc, mlc1, mlc2, tlc-b17a, qlc-n18a, ...).
    #[arg(long, default_value = "slc")]
    preset: String,
    #[arg(long, default_value_t = 2)]
    dies: u32,
    /// Planes per die.
    #[arg(long, default_value_t = 1)]
    planes: u32,
    /// Blocks per plane.
    #[arg(long, default_value_t = 12)]
    blocks: u32,
    /// Pages per block.
    #[arg(long, default_value_t = 8)]
    pages: u32,
    #[arg(long, default_value_t = 512)]
    page_size: u32,
    /// Over-provisioning (spare / logical).
    #[arg(long, default_value_t = 0.5)]
    op: f64,
    /// DRAM write buffer pages (volatile unless --hold-up-uj).
    #[arg(long, default_value_t = 0)]
    buffer_pages: u32,
    /// GC moves within a plane by copyback.
    #[arg(long)]
    copyback: bool,
    /// Turn paired-page padding off (the "paired pages ignored" mutation: MLC/TLC/QLC lose
    /// durable lower pages to torn upper-page programs).
    #[arg(long)]
    no_paired_padding: bool,
    /// Map checkpoints every N pages decided (0: none, the mount scans everything; page
    /// mapping only).
    #[arg(long, default_value_t = 0)]
    checkpoint_interval: u32,
    /// The checkpoint-before-data mutation: a checkpoint commits before the data it maps.
    #[arg(long)]
    checkpoint_before_data: bool,
    /// The trim-log-skipped mutation: a Flush does not log the trims before it (trimmed
    /// LPAs' older pages come back after a flushed trim).
    #[arg(long)]
    no_trim_log: bool,
    /// Host queue depth: the driver keeps this many requests outstanding.
    #[arg(long, default_value_t = 1)]
    queue_depth: u32,
    /// GC scheduling: blocking or interleaved (host ops pass queued GC ops).
    #[arg(long, default_value = "blocking")]
    gc_scheduling: String,
    /// Interleaved GC: GC goes before host ops while a plane has fewer free blocks than this
    /// (0: only when a host op needs it).
    #[arg(long, default_value_t = 0)]
    gc_urgent_free_blocks: u32,
    /// Merge ops of one die on other planes into multiplane ops.
    #[arg(long)]
    multiplane: bool,
    /// Reads and programs in cache mode.
    #[arg(long)]
    cache_mode: bool,
    /// Superblocks of this many planes (needs --multiplane, the page mapping, no copyback).
    #[arg(long, default_value_t = 1)]
    superpage_planes: u32,
    /// page, block or hybrid.
    #[arg(long, default_value = "page")]
    mapping: String,
    /// greedy (the default), fifo, cost-benefit or random (page mapping).
    #[arg(long)]
    gc_policy: Option<String>,
    /// Host requests (closed loop at --queue-depth).
    #[arg(long, default_value_t = 400)]
    requests: u32,
    /// Write only the first N LPAs (0: all).
    #[arg(long, default_value_t = 40)]
    lpa_span: u32,
    #[arg(long, default_value_t = 0.1)]
    flush_probability: f64,
    #[arg(long, default_value_t = 0.03)]
    trim_probability: f64,
    #[arg(long, default_value_t = 0.1)]
    read_probability: f64,
    /// Probability that a write carries FUA (durable once it completes).
    #[arg(long, default_value_t = 0.0)]
    fua_probability: f64,
    /// Pages per write, 1 to N.
    #[arg(long, default_value_t = 2)]
    write_pages_max: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Probability that a torn program damages each lower page of its word line.
    #[arg(long, default_value_t = 0.5)]
    paired_damage: f64,
    /// Power-loss protection: hold-up energy in µJ (absent: none).
    #[arg(long)]
    hold_up_uj: Option<f64>,
    /// correct, ignore-crc, lowest-sequence-wins or no-sequence (all but the first are
    /// deliberately broken).
    #[arg(long, default_value = "correct")]
    recovery: String,
    /// Sweep cut points: events, chip-ops or times (default: one cut, see --cut-*).
    #[arg(long)]
    sweep: Option<String>,
    /// Sweep step (events, ops, or picoseconds for times).
    #[arg(long, default_value_t = 1)]
    stride: u64,
    /// Most cuts of a sweep (evenly spaced beyond).
    #[arg(long, default_value_t = 100_000)]
    cuts: u64,
    /// One cut after this many world events.
    #[arg(long, conflicts_with_all = ["cut_after_ops", "cut_at_us"])]
    cut_after_events: Option<u64>,
    /// One cut once this many chip ops completed.
    #[arg(long, conflicts_with = "cut_at_us")]
    cut_after_ops: Option<u64>,
    /// One cut at this simulated time (µs).
    #[arg(long)]
    cut_at_us: Option<f64>,
    /// Instead: time the mount of the preset at these blocks-per-plane counts
    /// (comma-separated), filled to 100 %: a full scan, or with --checkpoint-interval N a
    /// mount from a checkpoint of the filled device after N-1 page writes since (the worst
    /// case of that interval), beside the full scan of the same array.
    #[arg(long, value_delimiter = ',')]
    scan_blocks: Vec<u32>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl PowercutArgs {
    /// Whether Ctrl-C can stop the command between units of work (a `--sweep`, between its
    /// cuts); one case or the mount-scan table stop at once.
    pub fn keeps_partial(&self) -> bool {
        self.sweep.is_some()
    }
}

pub fn powercut(args: PowercutArgs, control: &Control) -> LabResult<()> {
    if !args.scan_blocks.is_empty() {
        let points = recovery_scaling_checkpointed(
            &args.preset,
            &args.scan_blocks,
            1.0,
            args.checkpoint_interval,
        )
        .map_err(usage)?;
        if args.json {
            crate::print_json(&points)?;
            return Ok(());
        }
        if args.checkpoint_interval > 0 {
            out!(
                "mount of {} from a map checkpoint, {} pages written after it (100 % filled)",
                args.preset,
                args.checkpoint_interval - 1
            );
            out!(
                "{:>8} {:>12} {:>5} {:>11} {:>12} {:>12} {:>12} {:>12}",
                "blocks",
                "capacity MiB",
                "dies",
                "ckpt pages",
                "pages read",
                "time ms",
                "full pages",
                "full ms"
            );
            for p in points {
                out!(
                    "{:>8} {:>12.1} {:>5} {:>11} {:>12} {:>12.2} {:>12} {:>12.1}{}",
                    p.blocks_per_plane,
                    p.capacity_bytes as f64 / (1 << 20) as f64,
                    p.dies,
                    p.checkpoint_pages,
                    p.pages_read,
                    p.recovery_time_ms,
                    p.full_scan_pages_read,
                    p.full_scan_time_ms,
                    if p.checkpoint_used {
                        ""
                    } else {
                        " (no checkpoint: full scan)"
                    }
                );
            }
            return Ok(());
        }
        out!(
            "mount scan of {} (full OOB scan, 100 % filled)",
            args.preset
        );
        out!(
            "{:>8} {:>12} {:>12} {:>5} {:>12} {:>12}",
            "blocks",
            "capacity MiB",
            "pages",
            "dies",
            "pages read",
            "time ms"
        );
        for p in points {
            out!(
                "{:>8} {:>12.1} {:>12} {:>5} {:>12} {:>12.1}",
                p.blocks_per_plane,
                p.capacity_bytes as f64 / (1 << 20) as f64,
                p.physical_pages,
                p.dies,
                p.pages_read,
                p.recovery_time_ms
            );
        }
        return Ok(());
    }
    let cut_point = match (args.cut_after_events, args.cut_after_ops, args.cut_at_us) {
        (Some(n), _, _) => CutPoint::AfterEvents(n),
        (_, Some(n), _) => CutPoint::AfterChipOps(n),
        (_, _, Some(us)) if us.is_finite() && us >= 0.0 => {
            CutPoint::AtTimePs((us * 1e6).round() as u64)
        }
        (_, _, Some(us)) => {
            return Err(usage(format!(
                "--cut-at-us {us}: must be a finite number >= 0"
            )));
        }
        _ => CutPoint::End,
    };
    let case = CrashCase {
        device: device(&args)?,
        workload: CrashWorkload {
            requests: args.requests,
            lpa_span: args.lpa_span,
            flush_probability: args.flush_probability,
            trim_probability: args.trim_probability,
            read_probability: args.read_probability,
            write_pages_max: args.write_pages_max,
            fua_probability: args.fua_probability,
        },
        seed: args.seed,
        cut_point,
        paired_damage_probability: args.paired_damage,
        hold_up_energy_uj: args.hold_up_uj,
        recovery: RecoveryVariant::parse(&args.recovery).map_err(|m| usage(format!("--{m}")))?,
    };
    if let Some(mode) = &args.sweep {
        let mode: SweepMode = parse_config_name("--sweep", mode)?;
        let mut progress = nandlab_lab::progress::step_progress("cuts", control);
        let s = sweep_progress(&case, mode, args.stride, args.cuts, &mut |done, total| {
            progress(done, total)
        })
        .map_err(|m| usage(format!("--{m}")))?;
        drop(progress);
        if s.interrupted {
            eprintln!("interrupted: kept results of {} cuts", s.cuts);
        }
        if args.json {
            crate::print_json(&s)?;
            return failing_cuts(s.failing_cuts);
        }
        out!(
            "{} cuts over {} {mode:?} boundaries: {} failing",
            s.cuts,
            s.boundaries,
            s.failing_cuts
        );
        out!(
            "violations: lost {}  resurrected {}  corrupted {}",
            s.violations.lost,
            s.violations.resurrected,
            s.violations.corrupted
        );
        out!(
            "summed over cuts: torn programs {}  damaged lower pages {}  interrupted erases {}  volatile pages lost {}",
            s.torn_programs,
            s.damaged_lower_pages,
            s.interrupted_erases,
            s.volatile_pages_lost
        );
        out!(
            "largest mount: {} pages read, {:.1} µs",
            s.recovery_pages_read_max,
            s.recovery_time_us_max
        );
        if s.checkpoint_mounts + s.checkpoint_cuts_mid_write > 0 {
            out!(
                "map checkpoints: {} mounts from a checkpoint, {} cuts mid-checkpoint; pages read {} against {} by full scans ({:.0} %)",
                s.checkpoint_mounts,
                s.checkpoint_cuts_mid_write,
                s.recovery_pages_read,
                s.full_scan_pages_read,
                100.0 * s.recovery_pages_read as f64 / s.full_scan_pages_read.max(1) as f64
            );
        }
        if let Some(first) = s.first_failing {
            out!("first failing cut: {first:?}");
        }
        for e in &s.violations.examples {
            out!("  {e}");
        }
        return failing_cuts(s.failing_cuts);
    }
    let o = run_case(&case).map_err(usage)?;
    if args.json {
        crate::print_json(&o)?;
        return violations_found(o.violations.total(), "the cut");
    }
    out!(
        "cut at {:.1} µs after {} events, {} chip ops; {} requests completed, {} LPAs durable",
        ps_to_us(o.cut.time_ps),
        o.events,
        o.cut.chip_ops_completed,
        o.requests_completed,
        o.durable_lpas
    );
    out!(
        "cut: torn programs {}  damaged lower pages {}  interrupted erases {}  ops not run {}  volatile pages lost {}  dumped {}",
        o.cut.torn_programs,
        o.cut.damaged_lower_pages,
        o.cut.interrupted_erases,
        o.cut.ops_not_run,
        o.cut.volatile_pages_lost,
        o.cut.pages_dumped
    );
    out!(
        "mount: {} of {} pages read in {:.1} µs, {} discarded, {} LPAs mapped, {} free blocks, {} to erase",
        o.recovery.pages_read,
        o.recovery.physical_pages,
        ps_to_us(o.recovery.time_ps),
        o.recovery.pages_discarded,
        o.recovery.lpas_mapped,
        o.recovery.blocks_free,
        o.recovery.blocks_to_erase
    );
    if o.recovery.checkpoint_used || o.cut.checkpoint_lost {
        out!(
            "map checkpoint: {} committed{}, mount from the newest: {}; a full scan reads {} pages in {:.1} µs",
            o.cut.checkpoints_committed,
            if o.cut.checkpoint_lost {
                ", one lost mid-write"
            } else {
                ""
            },
            if o.recovery.checkpoint_used {
                "yes"
            } else {
                "no"
            },
            o.recovery.full_scan_pages_read,
            ps_to_us(o.recovery.full_scan_time_ps)
        );
    }
    out!(
        "violations: lost {}  resurrected {}  corrupted {}",
        o.violations.lost,
        o.violations.resurrected,
        o.violations.corrupted
    );
    for e in &o.violations.examples {
        out!("  {e}");
    }
    violations_found(o.violations.total(), "the cut")
}

/// The device of the flags: the crash device's stack config with each flag's key set; the
/// stack builder parses the names (an error names the key and its flag).
fn device(args: &PowercutArgs) -> LabResult<CrashDevice> {
    let mut d = CrashDevice {
        checkpoint_before_data: args.checkpoint_before_data,
        trim_log_skipped: args.no_trim_log,
        ..CrashDevice::default()
    };
    // away from the page mapping, the crash device's GC policy and paired-page padding go
    d.set_mapping(parse_config_name("--mapping", &args.mapping)?);
    let keys = flag_keys(args);
    for (_, key, value) in &keys {
        d.set(key, value);
    }
    // resolved here so that an error names the flag beside the key
    device_config(&d).map_err(|e| {
        match keys
            .iter()
            .find(|(_, key, _)| e.contains(&format!("`{key}`")))
        {
            Some((flag, _, _)) => usage(format!("{flag}: {e}")),
            None => usage(e),
        }
    })?;
    Ok(d)
}

/// The device flags of `args` as stack-config keys: (flag, key, value).
fn flag_keys(args: &PowercutArgs) -> Vec<(&'static str, &'static str, toml::Value)> {
    use toml::Value;
    let mut keys = vec![
        ("--preset", "nand.preset", Value::from(args.preset.clone())),
        ("--dies", "nand.geometry.dies_per_chip", args.dies.into()),
        (
            "--planes",
            "nand.geometry.planes_per_die",
            args.planes.into(),
        ),
        (
            "--blocks",
            "nand.geometry.blocks_per_plane",
            args.blocks.into(),
        ),
        (
            "--pages",
            "nand.geometry.pages_per_block",
            args.pages.into(),
        ),
        (
            "--page-size",
            "nand.geometry.page_size_bytes",
            args.page_size.into(),
        ),
        ("--op", "ssd.op_fraction", args.op.into()),
        (
            "--buffer-pages",
            "ssd.buffer.pages",
            args.buffer_pages.into(),
        ),
        ("--copyback", "ssd.gc.copyback", args.copyback.into()),
        (
            "--checkpoint-interval",
            "ssd.mapping.map_checkpoint_interval_pages",
            args.checkpoint_interval.into(),
        ),
        (
            "--queue-depth",
            "ssd.host.queue_depth",
            args.queue_depth.into(),
        ),
        (
            "--gc-scheduling",
            "ssd.gc.scheduling",
            args.gc_scheduling.clone().into(),
        ),
        (
            "--multiplane",
            "ssd.scheduler.multiplane",
            args.multiplane.into(),
        ),
        (
            "--cache-mode",
            "ssd.scheduler.cache",
            args.cache_mode.into(),
        ),
        (
            "--superpage-planes",
            "ssd.scheduler.superpage_planes",
            args.superpage_planes.into(),
        ),
    ];
    if let Some(policy) = &args.gc_policy {
        keys.push(("--gc-policy", "ssd.gc.policy", policy.clone().into()));
    }
    if args.no_paired_padding {
        let key = "ssd.mapping.paired_page_padding";
        keys.push(("--no-paired-padding", key, false.into()));
    }
    if args.gc_urgent_free_blocks > 0 {
        let key = "ssd.gc.urgent_free_blocks";
        keys.push((
            "--gc-urgent-free-blocks",
            key,
            args.gc_urgent_free_blocks.into(),
        ));
    }
    keys
}

/// `Ok` when no cut failed; else the error that gives exit status 1.
fn failing_cuts(failing: u64) -> LabResult<()> {
    if failing == 0 {
        return Ok(());
    }
    Err(LabError::Failed(format!(
        "the crash oracle found violations after {failing} cut{}",
        if failing == 1 { "" } else { "s" }
    )))
}
