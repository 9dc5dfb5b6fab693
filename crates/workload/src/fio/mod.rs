//! fio job files, a stated subset, turned into synthetic request streams.
//!
//! # Syntax
//! INI sections: `[global]` and job sections. A job starts from the `[global]` options in force
//! at its header (a later `[global]` affects only later jobs, as in fio) and its own options
//! override them. `key=value` or a bare flag (`norandommap`); comments start with `;` or `#`,
//! on their own line or after whitespace.
//!
//! # Supported keys
//! `name`, `rw`/`readwrite` (`read`, `write`, `trim`, `randread`, `randwrite`, `randtrim`,
//! `rw`/`readwrite`, `randrw`), `bs`/`blocksize`, `bsrange` (`N-N` only), `blockalign`/`ba`,
//! `iodepth`, `size`, `offset` (both also as `N%`), `offset_increment`, `io_size`/`io_limit`,
//! `loops`, `rwmixread`, `rwmixwrite`, `random_distribution` (`random` or `zipf:θ`),
//! `norandommap`, `number_ios`, `numjobs`, `randseed`, `stonewall`/`wait_for_previous`,
//! `wait_for` (of the whole group before), `exitall`, `time_based`, `runtime`/`timeout`,
//! `ramp_time` (simulated time, with a clock), `filename` and `filesize` (files get separate
//! ranges of the device, see `layout.rs`), `fill_device`, `verify`/`do_verify` (read-back
//! phase), `rate`/`rate_iops`/`rate_process` (one-stream files), `ioengine` (storage engines
//! only), `fdp`/`fdp_pli`, `bssplit`, sequential `rw=read:N` modifiers,
//! `random_distribution=zoned:…`/`sequence:…` (`random_sequence_stride`), `flow`,
//! `verify_backlog`, `write_mode`, `nrfiles` (see `extras.rs`), `sprandom` with `spr_op`,
//! `spr_num_regions`, `spr_cs` (see `sprandom.rs`); keys that change only fio's
//! host are accepted with a note (`keys::NOTED_KEYS`). Sizes follow fio's default `kb_base=1024`: `4k` = 4096, and (fio's
//! compatibility rule) `4kib` = 4000. `${VAR}` is substituted from the environment.
//!
//! # Ignored keys
//! Accepted and ignored, because they change the host (engine, page cache, CPUs) or the report,
//! not the block requests ([`IGNORED_KEYS`]): `allow_mounted_write`, `buffered`,
//! `clat_percentiles`, `cpumask`, `cpus_allowed`, `description`, `direct`, `directory`,
//! `disable_bw_measurement`, `disable_clat`, `disable_lat`, `disable_slat`,
//! `fadvise_hint`, `group_reporting`, `gtod_reduce`, `invalidate`, `iodepth_batch`,
//! `iodepth_batch_complete`, `iodepth_batch_complete_max`, `iodepth_batch_complete_min`,
//! `iodepth_batch_submit`, `iodepth_low`, `ioscheduler`, `lat_percentiles`,
//! `log_avg_msec`, `nice`, `per_job_logs`, `percentile_list`, `prio`, `random_generator`,
//! `randrepeat`, `thread`, `unified_rw_reporting`, `write_bw_log`, `write_iops_log`,
//! `write_lat_log`; and the engine, payload, error-handling and priority keys of
//! `keys::HARMLESS_KEYS`.
//!
//! Every other key is an error naming the key and line, with the reason for common ones
//! (`keys::REFUSED_WITH_REASON`).
//!
//! # Semantics and simplifications
//! - The region is `[offset, offset + size)`, `size` defaulting to the rest of the device. A job
//!   issues `min(number_ios, io_size / bs)` requests, `io_size` defaulting to `size * loops`.
//! - Sequential jobs wrap at the end of the region. Uniform random jobs visit every block once per
//!   pass in a fresh pseudo-random order (fio's random map); with `norandommap` or a Zipf
//!   distribution, offsets are drawn with replacement. Zipf ranks are scattered over the region
//!   by a fixed bijection, so all clones agree on which blocks are hot.
//! - `rw`/`randrw` draw each request's direction independently (probability `rwmixread`);
//!   `rw` keeps one sequential position per direction as fio does, `randrw` one random map.
//! - Time limits apply with a clock ([`FioJobFile::generator_with_clock`]), measured from the
//!   start of the job's stonewall group; without one a time-based job issues one pass.
//! - Regions beyond the device fold into it (offset modulo capacity), with a note.
//! - `numjobs=N` gives N independent streams with distinct seeds derived from the run's seed
//!   (or `randseed`) and the stream's index in the file.
//! - Concurrent jobs are merged into one closed-loop stream by smooth weighted round-robin with
//!   weight `iodepth` (see [`FioGenerator`]); stonewalled groups follow each other. The runner
//!   should give the host a queue depth of [`FioGenerator::queue_depth`] (the sum of the
//!   iodepths of the largest group). What is lost: per-job queues — in fio a job with a slow
//!   request stalls only its own `iodepth` slots, here one shared queue of that total depth.

mod extras;
mod job;
mod keys;
mod layout;
mod parse;
mod phases;
mod sprandom;
mod stream;
mod zbd;
mod zoned;

pub use sprandom::SpRandomOptions;

pub use extras::{BlockSplit, StreamShape, WriteModes, Zones};
pub use job::{
    FioAmount, FioJob, FioRw, MAX_IODEPTH, MAX_NUMJOBS, parse_fio_size, parse_fio_time_ns,
};
pub use parse::IGNORED_KEYS;
pub use stream::{FioGenerator, FioStream, StreamPlan};
pub use zoned::{ZbdDevice, ZonedOptions};

use nandlab_core::SimClock;

use crate::WorkloadError;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Most writes all `verify_backlog`s of a file hold together (`verify_backlog` x `numjobs`).
pub const MAX_VERIFY_BACKLOG_TOTAL: u64 = 1 << 20;

/// Most streams (jobs times `numjobs`) in one job file.
pub const MAX_STREAMS: u64 = 4_096;

/// What a job file needs from the run: the simulated device and the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FioContext {
    /// Capacity of the device, the default region of every job.
    pub device_size_bytes: u64,
    /// Base seed of every stream without a `randseed`.
    pub seed: u64,
}

/// A parsed fio job file.
#[derive(Clone, Debug, PartialEq)]
pub struct FioJobFile {
    /// Where it was read from (for error messages).
    pub path: PathBuf,
    /// The job sections in file order, `[global]` applied.
    pub jobs: Vec<FioJob>,
    /// Keys accepted with a note (`line N: what the simulation does instead`), in file order.
    pub key_notes: Vec<String>,
}

/// splitmix64 finalizer: distinct, well-mixed seeds for consecutive stream indices.
fn mix_seed(base: u64, index: u64) -> u64 {
    let mut z = base ^ index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FioJobFile {
    /// Parses a job file from `reader`; `path` labels error messages.
    pub fn parse<R: BufRead>(reader: R, path: impl Into<PathBuf>) -> Result<Self, WorkloadError> {
        Self::parse_selected(reader, path, &[])
    }

    /// Parses only the job sections named in `sections` (all when empty), as fio's
    /// `--section` does: the other job sections are skipped unread; `[global]` applies.
    pub fn parse_selected<R: BufRead>(
        reader: R,
        path: impl Into<PathBuf>,
        sections: &[String],
    ) -> Result<Self, WorkloadError> {
        let path = path.into();
        let parse::Sections {
            jobs: raw_jobs,
            last_line,
            notes: key_notes,
        } = parse::parse_sections(reader, &path, sections)?;
        if raw_jobs.is_empty() {
            return Err(WorkloadError::parse(
                &path,
                last_line,
                "no job section: a job file needs at least one [jobname] section",
            ));
        }
        let jobs = raw_jobs
            .into_iter()
            .map(|raw| FioJob::from_raw(raw, &path))
            .collect::<Result<Vec<_>, _>>()?;
        for job in &jobs {
            job.check_combinations(&path)?;
        }
        Ok(FioJobFile {
            path,
            jobs,
            key_notes: key_notes
                .into_iter()
                .map(|(line, note)| format!("line {line}: {note}"))
                .collect(),
        })
    }

    /// Opens and parses the job file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, WorkloadError> {
        Self::open_selected(path, &[])
    }

    /// Opens and parses the job sections `sections` (all when empty) of the file at `path`
    /// ([`FioJobFile::parse_selected`]).
    pub fn open_selected(
        path: impl AsRef<Path>,
        sections: &[String],
    ) -> Result<Self, WorkloadError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| WorkloadError::Io {
            path: path.to_owned(),
            source,
        })?;
        FioJobFile::parse_selected(BufReader::new(file), path, sections)
    }

    /// The writes `verify_backlog` holds over all jobs' clones stay within
    /// [`MAX_VERIFY_BACKLOG_TOTAL`].
    fn check_verify_backlog(&self) -> Result<(), WorkloadError> {
        let held: u64 = self
            .jobs
            .iter()
            .map(|j| j.plan().verify_backlog.unwrap_or(0) * u64::from(j.numjobs))
            .sum();
        if held <= MAX_VERIFY_BACKLOG_TOTAL {
            return Ok(());
        }
        let line = self
            .jobs
            .iter()
            .find(|j| j.verify_backlog.is_some())
            .map_or(0, |j| j.line_of("verify_backlog"));
        Err(WorkloadError::parse(
            &self.path,
            line,
            format!(
                "verify_backlog x numjobs holds {held} writes in all; at most {MAX_VERIFY_BACKLOG_TOTAL}"
            ),
        ))
    }

    /// Rate limits (`rate`, `rate_iops`): one stream, or open-loop streams only, in one group
    /// (they merge by arrival, fio's 1mbs_clients.fio); a timed stream beside closed-loop
    /// ones, or in a later group, would queue behind them.
    fn check_rate_limits(&self, total: u64) -> Result<(), WorkloadError> {
        let one_open_loop_group = self.jobs.iter().all(|j| j.requests_per_s().is_some())
            && self
                .jobs
                .iter()
                .skip(1)
                .all(|j| !j.stonewall && j.wait_for.is_none());
        if total > 1
            && !one_open_loop_group
            && let Some(job) = self.jobs.iter().find(|j| j.requests_per_s().is_some())
        {
            let key = if job.key_lines_has("rate_iops") {
                "rate_iops"
            } else {
                "rate"
            };
            return Err(WorkloadError::parse(
                &self.path,
                job.line_of(key),
                format!(
                    "{key}: a rate limit is supported for one stream, or when every job of the file has one and they run together (no stonewall), not for {total} streams with closed-loop ones or later groups: their timed requests would queue behind each other in one merged stream"
                ),
            ));
        }
        Ok(())
    }

    /// Every stream of the file: each job's `numjobs` clones, in file order.
    pub fn streams(&self, context: &FioContext) -> Result<Vec<FioStream>, WorkloadError> {
        if context.device_size_bytes == 0 {
            return Err(WorkloadError::invalid("device_size_bytes", "must be > 0"));
        }
        let total: u64 = self.jobs.iter().map(|j| u64::from(j.numjobs)).sum();
        if total > MAX_STREAMS {
            let line = self.jobs.last().map_or(0, |j| j.line_of("numjobs"));
            return Err(WorkloadError::parse(
                &self.path,
                line,
                format!("{total} streams (jobs x numjobs) exceed the limit of {MAX_STREAMS}"),
            ));
        }
        self.check_rate_limits(total)?;
        self.check_verify_backlog()?;
        self.check_zone_units()?;
        let mut streams = Vec::with_capacity(total as usize);
        let places = layout::place_files(&self.jobs, context.device_size_bytes);
        let mut group_index = 0;
        let mut group_depth = 0u64;
        let mut group_first_job = 0;
        for (job_index, job) in self.jobs.iter().enumerate() {
            let waits = self.waits_for_group(job_index, group_first_job)?;
            if (job.stonewall || waits) && job_index > 0 {
                group_index += 1;
                group_depth = 0;
                group_first_job = job_index;
            }
            // the jobs of a group run concurrently: their depths add up in the host queue
            group_depth += u64::from(job.iodepth) * u64::from(job.numjobs);
            if group_depth > u64::from(MAX_IODEPTH) {
                return Err(WorkloadError::parse(
                    &self.path,
                    job.line_of("iodepth"),
                    format!(
                        "concurrent jobs up to \"{}\" keep {group_depth} requests in flight (iodepth x numjobs, summed until the next stonewall); the host queue holds at most {MAX_IODEPTH}",
                        job.name
                    ),
                ));
            }
            let base_seed = job.randseed.unwrap_or(context.seed);
            for clone_index in 0..job.numjobs {
                let seed = mix_seed(base_seed, streams.len() as u64);
                let spec = job.to_spec_at(
                    &self.path,
                    context.device_size_bytes,
                    seed,
                    places[job_index],
                    clone_index,
                )?;
                streams.push(FioStream {
                    job_name: job.name.clone(),
                    clone_index,
                    group_index,
                    iodepth: job.iodepth,
                    shape: job.shape(&spec),
                    spec,
                    plan: job.plan(),
                    flow: job.flow,
                });
            }
        }
        Ok(streams)
    }

    /// Whether job `job_index` waits (`wait_for`) for exactly the jobs of the group that
    /// starts at `group_first_job`, which makes it a stonewall; any other wait is an error.
    fn waits_for_group(
        &self,
        job_index: usize,
        group_first_job: usize,
    ) -> Result<bool, WorkloadError> {
        let job = &self.jobs[job_index];
        let Some(name) = job.wait_for.as_deref() else {
            return Ok(false);
        };
        let error = |message: String| {
            Err(WorkloadError::parse(
                &self.path,
                job.line_of("wait_for"),
                message,
            ))
        };
        if !self.jobs[..job_index].iter().any(|j| j.name == name) {
            return error(format!("wait_for=\"{name}\": no earlier job has that name"));
        }
        let group = &self.jobs[group_first_job..job_index];
        if group.iter().all(|j| j.name == name) {
            return Ok(true);
        }
        // a second job waiting for the job the current group waited for starts with that
        // group (fio's zbd-rand-write-trim-gc.fio: two jobs wait_for=warmup)
        let first = &self.jobs[group_first_job];
        if group_first_job < job_index
            && !first.stonewall
            && first.wait_for.as_deref() == Some(name)
        {
            return Ok(false);
        }
        error(format!(
            "wait_for=\"{name}\": waiting for one job while others of its group run on is not supported; only a wait for the whole group before (as stonewall)"
        ))
    }

    /// Refuses a placement id (`fdp_pli`) that a device of `device_ids` placement ids does not
    /// have, naming the key's line (the SSD would otherwise fail the first tagged write).
    pub fn check_placement_ids(&self, device_ids: u16) -> Result<(), WorkloadError> {
        for job in self.jobs.iter().filter(|j| j.fdp) {
            let mut ids = job.fdp_pli.iter().chain(&job.zoned.plis);
            if let Some(id) = ids.find(|&&id| id >= device_ids) {
                return Err(WorkloadError::parse(
                    &self.path,
                    job.line_of("fdp_pli"),
                    format!(
                        "fdp_pli: placement id {id}, but the device has {device_ids} (ids 0 to {}; \
                         set ssd.mapping.placement_ids for more)",
                        device_ids.saturating_sub(1)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// What the simulation does differently from fio for this file, one sentence each, for
    /// the user's terminal (the CLI prints them as `note:` lines).
    pub fn notes(&self, context: &FioContext) -> Result<Vec<String>, WorkloadError> {
        let mut notes = Vec::new();
        let engines: Vec<&str> = self.jobs.iter().filter_map(|j| j.ioengine.as_deref()).fold(
            Vec::new(),
            |mut seen, e| {
                if !seen.contains(&e) {
                    seen.push(e);
                }
                seen
            },
        );
        if !engines.is_empty() {
            notes.push(format!(
                "ioengine={}: the simulation models the device, not the engine; the jobs' requests reach the simulated SSD as issued",
                engines.join(",")
            ));
        }
        notes.extend(self.key_notes.iter().cloned());
        if let Some(job) = self
            .jobs
            .iter()
            .find(|j| j.write_modes.as_ref().is_some_and(|m| m.zone_append))
        {
            notes.push(format!(
                "line {}: write_mode=zone_append: each write is a write at its zone's write pointer, as zonemode=zbd places every write (the device does not pick the offset)",
                job.line_of("write_mode")
            ));
        }
        if let Some(job) = self
            .jobs
            .iter()
            .find(|j| j.write_modes.as_ref().is_some_and(|m| !m.zone_append))
        {
            notes.push(format!(
                "line {}: write_mode: Write Zeroes is simulated as a write of the range, Write Uncorrectable as a trim (the data is gone), Verify as a read of the range (the device reads the media)",
                job.line_of("write_mode")
            ));
        }
        let streams = self.streams(context)?;
        let end = streams
            .iter()
            .map(|s| s.spec.offset_bytes.saturating_add(s.spec.span_bytes))
            .max()
            .unwrap_or(0);
        if end > context.device_size_bytes {
            notes.push(format!(
                "the jobs' files and regions need {end} bytes but the device holds {}: requests beyond it fold into it (offset modulo capacity)",
                context.device_size_bytes
            ));
        }
        if let Some(job) = self
            .jobs
            .iter()
            .find(|j| j.time_based && !j.is_time_based())
        {
            notes.push(format!(
                "line {}: time_based without runtime is ignored, as fio ignores it (\"fio: time_based requires a runtime/timeout setting\"): one pass of the region",
                job.line_of("time_based")
            ));
        }
        if self.jobs.iter().any(|j| j.ramp_time_ns.is_some()) {
            notes.push(
                "ramp_time: the warm-up's requests are simulated and counted in the report (fio leaves them out of its statistics)".to_owned(),
            );
        }
        Ok(notes)
    }

    /// [`FioJobFile::generator_with_clock`] (or without a clock) whose requests are rewritten
    /// as fio's `zonemode=zbd` and placement-id lists do on `device` (see `zoned.rs`); the
    /// file must have passed [`FioJobFile::with_device_zones`].
    pub fn zoned_generator(
        &self,
        context: &FioContext,
        clock: Option<SimClock>,
        device: Option<&ZbdDevice>,
    ) -> Result<FioGenerator, WorkloadError> {
        let streams = self.streams(context)?;
        let generator = match clock {
            Some(clock) => self.generator_with_clock(context, clock)?,
            None => self.generator(context)?,
        };
        Ok(match zoned::ZoneHost::new(self, &streams, device) {
            Some(host) => generator.with_zones(host),
            None => generator,
        })
    }

    /// The merged request stream of every job (see the module documentation).
    /// Offsets beyond the device fold into it; without a clock time limits do not apply
    /// (see [`FioJobFile::generator_with_clock`]).
    pub fn generator(&self, context: &FioContext) -> Result<FioGenerator, WorkloadError> {
        Ok(FioGenerator::new(&self.streams(context)?)?.folded_into(context.device_size_bytes))
    }

    /// [`FioJobFile::generator`] that reads simulated time from `clock` (published by the
    /// SSD's run loop), so that `runtime`, `time_based` and `ramp_time` take effect.
    pub fn generator_with_clock(
        &self,
        context: &FioContext,
        clock: SimClock,
    ) -> Result<FioGenerator, WorkloadError> {
        Ok(self.generator(context)?.with_clock(clock))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod compat_tests;
#[cfg(test)]
mod direction_tests;

#[cfg(test)]
mod zoned_tests;
