//! Running a resolved [`Stack`]: the one builder every front uses. An SSD workload (synthetic,
//! trace, fio) gives an SSD report; an engine workload gives the engine's run metrics. Either
//! way the run also gives a flat row of named metrics ([`SSD_METRICS`], [`ENGINE_METRICS`],
//! declared here once), what sweeps and plots read.

use super::Stack;
use super::footprint::{Footprint, furthest_byte};
use super::sections::TraceWorkload;
use super::sections::WorkloadSection;
use crate::codesign::SsdDevice;
use crate::control::Control;
use crate::error::LabResult;
use crate::progress::{step_progress, with_progress};
use crate::ssd::{Capture, Fold, SsdRun};
use nandlab_engine::{Engine, EngineConfig, RunMetrics};
use nandlab_ftl::{Ssd, SsdConfig, SsdReport};
use nandlab_workload::{
    ArrivalMode, BlkparseAction, BlockRequest, TraceFormat, TraceOptions, WorkloadError,
};
use serde::Serialize;
use std::path::Path;

/// A parsed fio job file, its context and the zoned namespace `zonemode=zbd` sees.
type FioSetup = (
    nandlab_workload::fio::FioJobFile,
    nandlab_workload::fio::FioContext,
    Option<nandlab_workload::fio::ZbdDevice>,
);

/// A metric a run reports: its name (the CSV column and JSON key), unit and meaning.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MetricDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub description: &'static str,
}

pub(super) const fn metric(
    name: &'static str,
    unit: &'static str,
    description: &'static str,
) -> MetricDef {
    MetricDef {
        name,
        unit,
        description,
    }
}

/// The metrics of an SSD workload, in column order.
pub const SSD_METRICS: &[MetricDef] = &[
    metric("sim_time_us", "us", "simulated time of the measured run"),
    metric("requests", "1", "host requests completed"),
    metric(
        "read_iops",
        "1/s",
        "host read requests per simulated second",
    ),
    metric("read_bw_mib_s", "MiB/s", "host read bandwidth"),
    metric("read_lat_p50_us", "us", "median read latency"),
    metric("read_lat_p99_us", "us", "99th percentile read latency"),
    metric(
        "write_iops",
        "1/s",
        "host write requests per simulated second",
    ),
    metric("write_bw_mib_s", "MiB/s", "host write bandwidth"),
    metric("write_lat_p50_us", "us", "median write latency"),
    metric("write_lat_p99_us", "us", "99th percentile write latency"),
    metric("write_lat_p999_us", "us", "99.9th percentile write latency"),
    metric("write_lat_max_us", "us", "maximum write latency"),
    metric(
        "waf",
        "1",
        "write amplification: flash pages programmed per host page",
    ),
    metric("gc_page_copies", "1", "pages moved by garbage collection"),
    metric("erases", "1", "blocks erased"),
    metric(
        "erase_count_max",
        "1",
        "largest erase count of a block (device lifetime)",
    ),
    metric(
        "energy_mj",
        "mJ",
        "chip energy of the run (operations and idle)",
    ),
    metric(
        "folded_requests",
        "1",
        "trace requests beyond the logical capacity, folded into it",
    ),
];

/// The metrics of an engine workload, in column order.
pub const ENGINE_METRICS: &[MetricDef] = &[
    metric("queries", "1", "measured queries"),
    metric("queries_per_s", "1/s", "queries per simulated second"),
    metric("mj_per_query", "mJ", "device energy per query"),
    metric(
        "we_cycles_per_block",
        "1",
        "mean write/erase cycles per block in the window",
    ),
    metric("page_copies", "1", "pages copied by garbage collection"),
    metric("erases", "1", "blocks erased"),
    metric("sim_time_us", "us", "simulated time of the measured window"),
    metric(
        "free_space_end",
        "1",
        "free space (fraction of row slots) at the end",
    ),
];

/// The metrics of a `sim-lookup` workload, in column order.
pub const SIM_LOOKUP_METRICS: &[MetricDef] = &[
    metric("lookups", "1", "point lookups completed and checked"),
    metric("hits", "1", "lookups whose search matched a slot"),
    metric("lookups_per_s", "1/s", "lookups per simulated second"),
    metric(
        "lookup_lat_p50_us",
        "us",
        "median lookup latency (arrival to its last command's completion)",
    ),
    metric("lookup_lat_p99_us", "us", "99th percentile lookup latency"),
    metric("lookup_lat_max_us", "us", "maximum lookup latency"),
    metric(
        "chip_searches",
        "1",
        "search commands run on the chip (page-open, search, page-close)",
    ),
    metric("chip_gathers", "1", "gather commands run on the chip"),
    metric(
        "keys_searched",
        "1",
        "keys searched (a batch counts each key)",
    ),
    metric(
        "batches",
        "1",
        "search commands the deadline batch scheduler dispatched",
    ),
    metric(
        "merged_searches",
        "1",
        "searches that joined an earlier search's batch",
    ),
    metric(
        "fallback_reads",
        "1",
        "full-page reads after a failed integrity check",
    ),
    metric(
        "controller_answers",
        "1",
        "commands the controller answered from its own copy (write buffer)",
    ),
    metric(
        "energy_mj",
        "mJ",
        "chip energy of the run (operations and idle)",
    ),
    metric(
        "verification_failures",
        "1",
        "answers that differ from the loaded records (0 when correct)",
    ),
    metric("sim_time_us", "us", "simulated time of the measured run"),
    metric(
        "updates",
        "1",
        "updates completed and checked (`update_fraction`)",
    ),
    metric(
        "queries_per_s",
        "1/s",
        "lookups and updates per simulated second (paper 004's QPS)",
    ),
    metric(
        "write_backs",
        "1",
        "dirty pages the host page cache evicted and wrote back",
    ),
];

/// What a stack run produced.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StackOutcome {
    /// A block workload on the SSD.
    Ssd {
        run: Box<SsdRun>,
        folded_requests: u64,
        /// Pages the workload reads before writing them, written before the timed run.
        #[serde(skip_serializing_if = "is_zero")]
        read_preconditioned_pages: u64,
        /// `nand.geometry.blocks_per_plane` of a device grown to fit the trace.
        #[serde(skip_serializing_if = "Option::is_none")]
        fitted_blocks_per_plane: Option<u32>,
        /// The `[pcm]` stage's report at the end of the run (preconditioning included), if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        pcm: Option<Box<nandlab_ftl::PcmStageReport>>,
    },
    /// Queries on the storage engine.
    Engine {
        metrics: Box<RunMetrics>,
        /// The SSD's report at the end of the run (over its whole life: fill and queries),
        /// e.g. its valid-page map (paper 000 Fig. 13).
        device: Box<SsdReport>,
        /// The `[pcm]` stage's report at the end of the run (fill and queries), if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        pcm: Option<Box<nandlab_ftl::PcmStageReport>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        interrupted: bool,
    },
    /// Point lookups on the SSD's SiM region (`kind = "sim-lookup"`).
    SimLookup {
        report: Box<super::SimLookupReport>,
        /// The SSD's report over the lookups (its `sim` section: the search and gather
        /// commands as I/O sections).
        device: Box<SsdReport>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        interrupted: bool,
    },
    /// Requests on the bare chips (`kind = "chip"`).
    Chip {
        report: Box<nandlab_ftl::sched::ChipReport>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        interrupted: bool,
    },
}

/// A finished (or interrupted) stack run with its metric row.
#[derive(Clone, Debug, Serialize)]
pub struct StackRun {
    pub outcome: StackOutcome,
    /// `(name, value)` in the declared order of [`SSD_METRICS`], [`ENGINE_METRICS`],
    /// [`SIM_LOOKUP_METRICS`] or [`super::CHIP_METRICS`].
    pub metrics: Vec<(&'static str, f64)>,
}

impl StackRun {
    /// Whether a cancel stopped the run early.
    pub fn interrupted(&self) -> bool {
        match &self.outcome {
            StackOutcome::Ssd { run, .. } => run.interrupted,
            StackOutcome::Engine { interrupted, .. } => *interrupted,
            StackOutcome::SimLookup { interrupted, .. } => *interrupted,
            StackOutcome::Chip { interrupted, .. } => *interrupted,
        }
    }

    /// The metric row as a JSON object (what `metrics.json`, `--json` and Python read).
    pub fn metrics_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.metrics
                .iter()
                .map(|(k, v)| ((*k).to_string(), serde_json::json!(v)))
                .collect(),
        )
    }

    /// A metric by name.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

/// Engine inserts and queries between two progress updates.
const ENGINE_POLL_EVERY: u64 = 64;

impl Stack {
    /// Builds the stack and runs its workload; `capture` writes the SSD's request stream as a
    /// native trace (block workloads only). `control` gets progress and may cancel: the run
    /// then keeps what it finished, marked interrupted.
    pub fn run(&self, capture: Option<&Path>, control: &Control) -> LabResult<StackRun> {
        let seed = self.config.run.seed;
        match &self.config.workload {
            WorkloadSection::ConstantFreeSpace(_) | WorkloadSection::DriftingFreeSpace(_) => {
                if capture.is_some() {
                    return Err(crate::LabError::Usage(
                        "--capture records block requests; engine workloads are not captured"
                            .into(),
                    ));
                }
                self.run_engine(seed, control)
            }
            WorkloadSection::SimLookup(w) => {
                if capture.is_some() {
                    return Err(crate::LabError::Usage(
                        "--capture records block requests; sim-lookup commands are not captured"
                            .into(),
                    ));
                }
                self.run_sim_lookup(w, control)
            }
            WorkloadSection::Chip(w) => {
                if capture.is_some() {
                    return Err(crate::LabError::Usage(
                        "--capture records block requests; chip requests are not captured".into(),
                    ));
                }
                self.run_chip(w, control)
            }
            workload => self.run_block(workload, capture, control),
        }
    }

    /// A block workload: the SSD (sized to the trace with `fit_device`, with the host queue
    /// depth of a fio job file), the explicit `[precondition]`, then the pages the workload
    /// reads before writing them (trace and fio, unless `precondition_reads = false`), then
    /// the timed run.
    fn run_block(
        &self,
        workload: &WorkloadSection,
        capture: Option<&Path>,
        control: &Control,
    ) -> LabResult<StackRun> {
        let seed = self.config.run.seed;
        let mut config = self.ssd_config();
        let mut ssd = self.new_ssd(config.clone(), seed)?;
        let mut prepared = Prepared::default();
        if let WorkloadSection::Trace(t) = workload
            && t.fit_device
        {
            match self.fit_device(&mut config, &mut ssd, t, control)? {
                Some(blocks) => prepared.fitted_blocks_per_plane = blocks,
                None => return Ok(stopped_before_workload(&ssd, prepared)),
            }
        }
        let capacity_bytes = ssd.logical_capacity_bytes();
        let fio = match workload {
            WorkloadSection::Fio(f) => {
                let zbd = self
                    .config
                    .ssd
                    .nvme
                    .as_ref()
                    .and_then(|n| super::nvme::zbd_device(n, &ssd));
                let job = nandlab_workload::fio::FioJobFile::open_selected(
                    self.path(&f.path),
                    &f.sections,
                )?
                .with_device_zones(zbd.as_ref())?;
                job.check_placement_ids(ssd.placement_ids())?;
                for note in job.zoned_notes(zbd.as_ref()) {
                    eprintln!("note: {note}");
                }
                let context = nandlab_workload::fio::FioContext {
                    device_size_bytes: capacity_bytes,
                    seed,
                };
                // the job's iodepth is the host queue depth
                let depth = u32::try_from(job.generator(&context)?.queue_depth())
                    .unwrap_or(u32::MAX)
                    .max(1);
                for note in job.notes(&context)? {
                    eprintln!("note: {note}");
                }
                if depth != config.ftl.host.queue_depth {
                    config.ftl.host.queue_depth = depth;
                    ssd = self.new_ssd(config, seed)?;
                }
                Some((job, context, zbd))
            }
            _ => None,
        };
        if let Some(p) = &self.config.precondition {
            // with a zoned namespace each namespace is filled as its host writes it
            // (crates/ftl/src/nvme/precondition.rs)
            let zoned = (self.config.ssd.nvme.as_ref())
                .filter(|n| nandlab_ftl::nvme::has_zoned_namespace(n));
            let progress = step_progress("precondition", control);
            let filled = match zoned {
                Some(nvme) => nandlab_ftl::nvme::precondition(nvme, &mut ssd, p, progress),
                None => ssd
                    .precondition_with_progress(p, progress)
                    .map(|()| std::iter::once(0..p.filled_pages(ssd.logical_pages())).collect()),
            };
            match filled {
                // stopped before the workload: nothing was measured
                Err(nandlab_ftl::FtlError::Interrupted { .. }) => {
                    return Ok(stopped_before_workload(&ssd, prepared));
                }
                Err(e) => return Err(e.into()),
                Ok(filled) => {
                    tell_pcm_preconditioned(&mut ssd, filled.into_iter().flatten());
                }
            }
        }
        let precondition_reads = match workload {
            WorkloadSection::Trace(t) => t.precondition_reads,
            // in zonemode=zbd fio reads only what it has written
            WorkloadSection::Fio(f) => {
                f.precondition_reads && !fio.as_ref().is_some_and(|f| f.0.zoned())
            }
            _ => false,
        };
        if precondition_reads {
            let mut footprint = Footprint::new(ssd.logical_pages(), ssd.page_size_bytes());
            let (source, fold) = self.block_source(workload, capacity_bytes, fio.as_ref(), None)?;
            let mut scan = with_progress(source, None, "scan", control);
            footprint.scan(Fold::new(&mut scan, fold.unwrap_or(u64::MAX)))?;
            if scan.cut_short() {
                return Ok(stopped_before_workload(&ssd, prepared));
            }
            drop(scan);
            let pages = footprint.read_first_pages();
            if pages > 0 {
                match ssd.precondition_pages_with_progress(
                    footprint.read_first(),
                    pages,
                    step_progress("precondition reads", control),
                ) {
                    Err(nandlab_ftl::FtlError::Interrupted { .. }) => {
                        return Ok(stopped_before_workload(&ssd, prepared));
                    }
                    other => prepared.read_preconditioned_pages = other?,
                }
                tell_pcm_preconditioned(&mut ssd, footprint.read_first().map(|i| i as u32));
            }
        }
        // fio's runtime and ramp_time read the simulated time the run loop publishes
        let clock = fio.is_some().then(nandlab_core::SimClock::new);
        let (source, fold) =
            self.block_source(workload, capacity_bytes, fio.as_ref(), clock.as_ref())?;
        let total = match workload {
            WorkloadSection::Synthetic(spec) => spec.request_count,
            _ => None,
        };
        let what = match workload {
            WorkloadSection::Synthetic(_) => "run",
            WorkloadSection::Trace(_) => "replay",
            _ => "fio",
        };
        let requests = with_progress(source, total, what, control);
        let content = self.config.content.as_ref().map(|spec| (spec, seed));
        let (run, folded) = match &self.config.ssd.nvme {
            Some(nvme) if capture.is_none() && content.is_none() && fold.is_none() => (
                super::nvme::drive(&mut ssd, nvme, requests, clock.as_ref())?,
                0,
            ),
            Some(_) => {
                return Err(crate::LabError::Usage(
                    "ssd.nvme: runs synthetic and fio workloads without --capture or [content]"
                        .into(),
                ));
            }
            None => drive(&mut ssd, requests, capture, fold, content, clock.as_ref())?,
        };
        let metrics = ssd_metrics(&run.report, folded);
        Ok(StackRun {
            outcome: StackOutcome::Ssd {
                run: Box::new(run),
                folded_requests: folded,
                read_preconditioned_pages: prepared.read_preconditioned_pages,
                fitted_blocks_per_plane: prepared.fitted_blocks_per_plane,
                pcm: pcm_report(&ssd),
            },
            metrics,
        })
    }

    /// The request stream of a block workload and the capacity it is folded into (traces);
    /// a fio stream reads simulated time from `clock` if given.
    fn block_source(
        &self,
        workload: &WorkloadSection,
        capacity_bytes: u64,
        fio: Option<&FioSetup>,
        clock: Option<&nandlab_core::SimClock>,
    ) -> LabResult<(BlockSource, Option<u64>)> {
        match workload {
            WorkloadSection::Synthetic(spec) => {
                let mut spec = spec.clone();
                if spec.span_bytes == 0 {
                    spec.span_bytes = capacity_bytes.saturating_sub(spec.offset_bytes);
                }
                spec.validate().map_err(|e| e.within("workload"))?;
                if spec.offset_bytes >= capacity_bytes {
                    return Err(crate::LabError::Usage(format!(
                        "workload.offset_bytes: {} is beyond the SSD's logical capacity of {capacity_bytes} bytes",
                        spec.offset_bytes
                    )));
                }
                if spec.offset_bytes.saturating_add(spec.span_bytes) > capacity_bytes {
                    return Err(crate::LabError::Usage(format!(
                        "workload.span_bytes: offset_bytes + span_bytes = {} is beyond the SSD's logical capacity of {capacity_bytes} bytes",
                        spec.offset_bytes.saturating_add(spec.span_bytes)
                    )));
                }
                Ok((Box::new(spec.generator()?.map(Ok)), None))
            }
            WorkloadSection::Trace(t) => Ok((self.open_trace(t)?, Some(capacity_bytes))),
            WorkloadSection::Fio(_) => {
                let (job, context, zbd) = fio.expect("a fio workload has its job file");
                let generator = match clock {
                    Some(clock) => {
                        job.zoned_generator(context, Some(clock.clone()), zbd.as_ref())?
                    }
                    // the read-before-write scan: only writes that surely happen count
                    None => job.generator(context)?.for_footprint(),
                };
                Ok((Box::new(generator.map(Ok)), None))
            }
            _ => unreachable!("engine and sim-lookup workloads have their own runners"),
        }
    }

    fn open_trace(&self, t: &TraceWorkload) -> LabResult<BlockSource> {
        let format: TraceFormat = t
            .format
            .parse()
            .map_err(|e: WorkloadError| crate::LabError::Usage(e.to_string()))?;
        let options = TraceOptions {
            arrival: if t.closed_loop {
                ArrivalMode::ClosedLoop
            } else {
                ArrivalMode::AsRecorded
            },
            device: t.disk.clone(),
            blkparse_action: if t.queue_events {
                BlkparseAction::Queue
            } else {
                BlkparseAction::Dispatch
            },
        };
        Ok(nandlab_workload::open_trace(
            self.path(&t.path),
            format,
            &options,
        )?)
    }

    /// `fit_device`: grows `blocks_per_plane` of `config` (rebuilding `ssd`) until the logical
    /// capacity covers the trace's furthest byte; the new value (None: the device was large
    /// enough), or None outside when a cancel stopped the scan.
    fn fit_device(
        &self,
        config: &mut SsdConfig,
        ssd: &mut Ssd,
        t: &TraceWorkload,
        control: &Control,
    ) -> LabResult<Option<Option<u32>>> {
        let mut scan = with_progress(self.open_trace(t)?, None, "scan", control);
        let end = furthest_byte(&mut scan)?;
        if scan.cut_short() {
            return Ok(None);
        }
        drop(scan);
        let mut nand = self.nand.clone();
        let g = &nand.geometry;
        let block_bytes =
            g.total_planes() as f64 * f64::from(g.pages_per_block) * f64::from(g.page_size_bytes);
        let mut fitted = None;
        // page mapping: exact after one step; block and hybrid mappings keep blocks in reserve
        for _ in 0..64 {
            let capacity = ssd.logical_capacity_bytes();
            if capacity >= end {
                return Ok(Some(fitted));
            }
            let missing = (end - capacity) as f64 * (1.0 + config.ftl.op_fraction);
            let grow = ((missing / block_bytes).ceil() as u64).max(1);
            let blocks = u32::try_from(u64::from(nand.geometry.blocks_per_plane) + grow)
                .map_err(|_| {
                    crate::LabError::Usage(format!(
                        "workload.fit_device: the trace reaches byte {end}, beyond any device of this geometry (blocks_per_plane would exceed {})",
                        u32::MAX
                    ))
                })?;
            nand.geometry.blocks_per_plane = blocks;
            *config = SsdConfig {
                ftl: config.ftl.clone(),
                ..SsdConfig::from_nand(nand.clone())
            };
            *ssd = self
                .new_ssd(config.clone(), self.config.run.seed)
                .map_err(|e| fit_error(end, blocks, &e.to_string()))?;
            fitted = Some(blocks);
        }
        Err(fit_error(
            end,
            nand.geometry.blocks_per_plane,
            "no device found",
        ))
    }

    /// The storage engine of `[engine]` on a fresh SSD of this stack (what engine workloads
    /// and `nandlab bench engine` run).
    pub fn build_engine(&self) -> LabResult<Engine<SsdDevice>> {
        let e = self.config.engine.as_ref().ok_or_else(|| {
            crate::LabError::Usage("this stack config has no [engine] section".into())
        })?;
        let config = EngineConfig {
            row_size_bytes: e.row_size_bytes,
            hint_refresh_queries: e.hint_refresh_queries,
            verify: e.verify,
            conventional_insert: e.conventional_insert,
            codesign_fallback: e.codesign_fallback,
            ..EngineConfig::conventional().with_switches(e.iaa, e.u2di)
        };
        let ssd = self.new_ssd(self.ssd_config(), self.config.run.seed)?;
        let device = SsdDevice::new(ssd)
            .waiting_for_gc(e.wait_for_gc)
            .buffered_writes(e.write_buffer_pages);
        Ok(Engine::new(device, config)?)
    }

    fn run_engine(&self, seed: u64, control: &Control) -> LabResult<StackRun> {
        use nandlab_engine::workload::{ConstantFreeSpace, DriftingFreeSpace};
        let mut engine = self.build_engine()?;
        control.start(None);
        let mut calls = 0u64;
        let mut stopped = false;
        let mut keep_going = || {
            calls += 1;
            if calls.is_multiple_of(ENGINE_POLL_EVERY) {
                stopped |= !control.advance(ENGINE_POLL_EVERY);
            }
            !stopped
        };
        let metrics = match &self.config.workload {
            WorkloadSection::ConstantFreeSpace(w) => ConstantFreeSpace {
                free_space_fraction: w.free_space_fraction,
                update_fraction: w.update_fraction,
                warmup_query_count: w.warmup_query_count,
                query_count: w.query_count,
                warmup_until_stationary: w.warmup_until_stationary,
                seed,
            }
            .run_while(&mut engine, &mut keep_going)?,
            WorkloadSection::DriftingFreeSpace(w) => DriftingFreeSpace {
                free_space_fraction_start: w.free_space_fraction_start,
                free_space_fraction_end: w.free_space_fraction_end,
                mix: w.mix,
                query_count_max: w.query_count_max,
                seed,
            }
            .run_while(&mut engine, &mut keep_going)?,
            _ => unreachable!("block workloads are run by run_block"),
        };
        control.finish();
        let row = engine_metrics(&metrics);
        Ok(StackRun {
            outcome: StackOutcome::Engine {
                metrics: Box::new(metrics),
                device: Box::new(engine.device().ssd().report()),
                pcm: pcm_report(engine.device().ssd()),
                interrupted: stopped,
            },
            metrics: row,
        })
    }
}

/// The `[pcm]` stage's report, if the SSD has one.
fn pcm_report(ssd: &Ssd) -> Option<Box<nandlab_ftl::PcmStageReport>> {
    ssd.front_end::<nandlab_ftl::PcmStage>()
        .map(|stage| Box::new(stage.report()))
}

/// Tells the `[pcm]` stage, if any, that preconditioning wrote zero pages at `lpas` around it
/// (docs/stack.md `[precondition]`).
fn tell_pcm_preconditioned(ssd: &mut Ssd, lpas: impl Iterator<Item = u32>) {
    if let Some(stage) = ssd.front_end_mut::<nandlab_ftl::PcmStage>() {
        for lpa in lpas {
            stage.preconditioned(nandlab_ftl::Lpa(lpa));
        }
    }
}

/// A block workload's request stream.
type BlockSource = Box<dyn Iterator<Item = Result<BlockRequest, WorkloadError>>>;

/// What was done to the device before a block workload's timed run.
#[derive(Clone, Copy, Debug, Default)]
struct Prepared {
    read_preconditioned_pages: u64,
    fitted_blocks_per_plane: Option<u32>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The run of a block workload stopped by a cancel before its timed part: nothing measured.
fn stopped_before_workload(ssd: &Ssd, prepared: Prepared) -> StackRun {
    let run = SsdRun {
        report: ssd.report(),
        interrupted: true,
        nvme: None,
    };
    let metrics = ssd_metrics(&run.report, 0);
    StackRun {
        outcome: StackOutcome::Ssd {
            run: Box::new(run),
            folded_requests: 0,
            read_preconditioned_pages: prepared.read_preconditioned_pages,
            fitted_blocks_per_plane: prepared.fitted_blocks_per_plane,
            pcm: pcm_report(ssd),
        },
        metrics,
    }
}

fn fit_error(end: u64, blocks: u32, message: &str) -> crate::LabError {
    crate::LabError::Usage(format!(
        "workload.fit_device: the trace reaches byte {end}; a device that large needs nand.geometry.blocks_per_plane = {blocks}: {message}"
    ))
}

/// Runs `requests` on `ssd` (folding them into the logical capacity when `fold` gives it),
/// capturing them when asked; the run and the number of folded requests. With `content`
/// (`[content]` and the seed) every write carries generated bytes and requests run one at a
/// time at their arrival (queue depth 1, as the PCM experiments run): the open-loop runner
/// carries no bytes.
fn drive<I>(
    ssd: &mut Ssd,
    requests: crate::progress::Progress<I>,
    capture: Option<&Path>,
    fold: Option<u64>,
    content: Option<(&nandlab_workload::content::ContentSpec, u64)>,
    clock: Option<&nandlab_core::SimClock>,
) -> LabResult<(SsdRun, u64)>
where
    I: Iterator<Item = Result<nandlab_core::BlockRequest, nandlab_workload::WorkloadError>>,
{
    let mut fold = Fold::new(requests, fold.unwrap_or(u64::MAX));
    let mut captured = Capture::new(&mut fold, capture)?;
    let report = match content {
        None => ssd.run_source_clocked(&mut captured, clock)?,
        Some((spec, seed)) => {
            let mut content = nandlab_workload::content::BlockContent::new(
                spec.clone(),
                ssd.page_size_bytes(),
                seed,
            )
            .map_err(|e| e.within("content"))?;
            loop {
                if let Some(clock) = clock {
                    clock.set(ssd.now());
                }
                let Some(request) = captured.next() else {
                    break;
                };
                let request = request?;
                let data = content.bytes_of(&request);
                ssd.execute(&nandlab_ftl::HostRequest::from(request), data)?;
            }
            ssd.drain()?;
            ssd.report()
        }
    };
    captured.finish()?;
    let run = SsdRun {
        report,
        interrupted: fold.inner().cut_short(),
        nvme: None,
    };
    Ok((run, fold.folded))
}

/// The SSD metric row of a report.
pub fn ssd_metrics(r: &SsdReport, folded: u64) -> Vec<(&'static str, f64)> {
    let values = [
        r.sim_time_us,
        r.completed as f64,
        r.read.iops,
        r.read.bw_mib_s,
        r.read.lat.p50_us,
        r.read.lat.p99_us,
        r.write.iops,
        r.write.bw_mib_s,
        r.write.lat.p50_us,
        r.write.lat.p99_us,
        r.write.lat.p999_us,
        r.write.lat.max_us,
        r.waf,
        r.counters.gc_page_copies as f64,
        r.counters.erases as f64,
        f64::from(r.erase_counts.max),
        r.energy.total_mj,
        folded as f64,
    ];
    SSD_METRICS.iter().map(|m| m.name).zip(values).collect()
}

/// The engine metric row of a run.
pub fn engine_metrics(m: &RunMetrics) -> Vec<(&'static str, f64)> {
    let values = [
        m.queries.total().count as f64,
        m.queries_per_s(),
        m.energy_mj_per_query(),
        m.erases_per_block_mean(),
        m.device.page_copies as f64,
        m.device.erases as f64,
        m.elapsed.as_us_f64(),
        m.free_space_fraction_end,
    ];
    ENGINE_METRICS.iter().map(|m| m.name).zip(values).collect()
}
