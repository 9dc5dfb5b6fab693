//! SSD-level runs: `nandlab run CONFIG.toml`, `nandlab replay TRACE`, `nandlab fio JOBFILE`.
//!
//! A run config is one TOML file with the device, the FTL, an optional preconditioning step and
//! the workload; unknown keys are rejected with their name. Without `--device`, replay and fio
//! use the documented default SSD ([`default_device`]).

use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::output::write_file;
use crate::progress::with_progress;
use nandlab_ftl::{DeviceConfig, FtlConfig, Precondition, Ssd, SsdConfig, SsdReport};
use nandlab_workload::{BlockRequest, NativeCsvWriter, SyntheticSpec, WorkloadError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `nandlab run` config: `[device]`, `[ftl]`, `[precondition]`, `[workload]`, `seed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    #[serde(default)]
    pub seed: u64,
    pub device: DeviceConfig,
    #[serde(default)]
    pub ftl: FtlConfig,
    #[serde(default)]
    pub precondition: Option<Precondition>,
    /// A synthetic block workload; `span_bytes = 0` means the whole logical capacity.
    pub workload: SyntheticSpec,
}

impl RunConfig {
    pub fn from_toml(origin: &str, text: &str) -> LabResult<Self> {
        toml::from_str(text).map_err(|e| {
            LabError::Usage(format!(
                "{origin}: {}{}",
                e.message(),
                e.span()
                    .map(|s| format!(" (line {})", line_of(text, s.start)))
                    .unwrap_or_default()
            ))
        })
    }

    pub fn ssd_config(&self) -> SsdConfig {
        SsdConfig {
            device: self.device.clone(),
            ftl: self.ftl.clone(),
        }
    }

    /// Checks the config as `nandlab run` does before running (the device and FTL keys by
    /// building the SSD, the workload against its capacity) without running anything; the
    /// errors name the offending key. (The precondition's keys are checked when it runs.)
    pub fn check(&self) -> LabResult<()> {
        if let Some(p) = &self.precondition {
            p.validate()?;
        }
        let ssd = Ssd::new(self.ssd_config(), self.seed)?;
        self.workload_on(&ssd).map(drop)
    }

    /// The workload with `span_bytes = 0` resolved to `ssd`'s logical capacity, checked.
    fn workload_on(&self, ssd: &Ssd) -> LabResult<SyntheticSpec> {
        let mut spec = self.workload.clone();
        if spec.span_bytes == 0 {
            spec.span_bytes = ssd
                .logical_capacity_bytes()
                .saturating_sub(spec.offset_bytes);
        }
        spec.validate().map_err(|e| e.within("workload"))?;
        Ok(spec)
    }
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// The SSD replay and fio use without `--device`: the `nandlab bench ssd` standard device
/// (4 channels x 2 chips x 2 dies x 2 planes x 128 blocks x 256 pages x 8 KiB, MLC timing of
/// 75 us read / 750 us program / 3.8 ms erase, 25 % over-provisioning, greedy GC, queue depth 32).
pub fn default_device() -> SsdConfig {
    crate::bench::bench_ssd_config()
}

/// Loads an SSD config file (the `[device]` and `[ftl]` sections of a run config).
pub fn load_device(path: &Path) -> LabResult<SsdConfig> {
    let text = read(path)?;
    SsdConfig::from_toml(&text).map_err(|e| LabError::Usage(format!("{}: {e}", path.display())))
}

fn read(path: &Path) -> LabResult<String> {
    std::fs::read_to_string(path).map_err(|source| LabError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Writes every request that passes through to a native CSV trace (`--capture`), so any run
/// can be replayed later with `nandlab replay FILE --format native`.
#[derive(Debug)]
pub struct Capture<I> {
    inner: I,
    writer: Option<NativeCsvWriter<std::io::BufWriter<std::fs::File>>>,
    failure: Option<WorkloadError>,
}

impl<I> Capture<I> {
    pub fn new(inner: I, path: Option<&Path>) -> LabResult<Self> {
        let writer = path.map(NativeCsvWriter::create).transpose()?;
        Ok(Capture {
            inner,
            writer,
            failure: None,
        })
    }

    /// Flushes the trace; the first write error, if any.
    pub fn finish(self) -> LabResult<()> {
        if let Some(e) = self.failure {
            return Err(e.into());
        }
        if let Some(w) = self.writer {
            w.finish()?;
        }
        Ok(())
    }
}

impl<I: Iterator<Item = Result<BlockRequest, WorkloadError>>> Iterator for Capture<I> {
    type Item = Result<BlockRequest, WorkloadError>;
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.inner.next()?;
        if let (Ok(request), Some(writer)) = (&item, self.writer.as_mut())
            && let Err(e) = writer.write(request)
        {
            self.failure.get_or_insert(e);
            self.writer = None;
        }
        Some(item)
    }
}

/// The report of an SSD run and whether it was interrupted: then the report covers the
/// requests admitted before the cancel (all of them completed). Serializes as the report's
/// fields plus `"interrupted": true` when interrupted, so uninterrupted runs give the plain
/// report's bytes.
#[derive(Clone, Debug, Serialize)]
pub struct SsdRun {
    #[serde(flatten)]
    pub report: SsdReport,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl SsdRun {
    /// The text of `report.json` (without the final newline).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }
}

/// Runs a run config: builds the SSD, preconditions it, runs the workload.
pub fn run_config(config: &RunConfig) -> LabResult<SsdReport> {
    Ok(run_config_captured(config, None, &Control::new())?.report)
}

/// [`run_config`], writing the request stream to `capture` as a native CSV trace, reporting
/// progress (requests admitted) to `control` and stopping early when it is cancelled.
pub fn run_config_captured(
    config: &RunConfig,
    capture: Option<&Path>,
    control: &Control,
) -> LabResult<SsdRun> {
    let mut ssd = Ssd::new(config.ssd_config(), config.seed)?;
    if let Some(p) = &config.precondition {
        ssd.precondition(p)?;
    }
    let spec = config.workload_on(&ssd)?;
    let total = spec.request_count;
    let generator = spec.generator()?;
    let mut requests = with_progress(generator.map(Ok), total, "run", control);
    let mut captured = Capture::new(&mut requests, capture)?;
    let report = ssd.run_source(&mut captured)?;
    captured.finish()?;
    Ok(SsdRun {
        report,
        interrupted: requests.cut_short(),
    })
}

/// Folds requests beyond the logical capacity back into it (traces often come from larger
/// disks) and counts how many were folded.
#[derive(Debug)]
pub struct Fold<I> {
    inner: I,
    capacity_bytes: u64,
    pub folded: u64,
}

impl<I> Fold<I> {
    /// Folds `inner`'s requests into `capacity_bytes` (`u64::MAX`: nothing is folded).
    pub fn new(inner: I, capacity_bytes: u64) -> Self {
        Fold {
            inner,
            capacity_bytes,
            folded: 0,
        }
    }

    /// The wrapped source.
    pub fn inner(&self) -> &I {
        &self.inner
    }
}

impl<I: Iterator<Item = Result<BlockRequest, WorkloadError>>> Iterator for Fold<I> {
    type Item = Result<BlockRequest, WorkloadError>;
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.inner.next()?;
        Some(item.map(|mut r| {
            let size = r.size_bytes.min(self.capacity_bytes);
            r.size_bytes = size;
            if r.offset_bytes.saturating_add(size) > self.capacity_bytes {
                self.folded += 1;
                r.offset_bytes %= self.capacity_bytes;
                if r.offset_bytes + size > self.capacity_bytes {
                    r.offset_bytes = self.capacity_bytes - size;
                }
            }
            r
        }))
    }
}

/// Replays any request source on `config`, folding out-of-range requests and optionally
/// capturing the (folded) stream, reporting progress to `control` and stopping early when it
/// is cancelled; returns the run and the number of folded requests.
pub fn run_source(
    config: SsdConfig,
    seed: u64,
    source: impl Iterator<Item = Result<BlockRequest, WorkloadError>>,
    capture: Option<&Path>,
    control: &Control,
) -> LabResult<(SsdRun, u64)> {
    let mut ssd = Ssd::new(config, seed)?;
    let mut fold = Fold {
        inner: with_progress(source, None, "replay", control),
        capacity_bytes: ssd.logical_capacity_bytes(),
        folded: 0,
    };
    let mut captured = Capture::new(&mut fold, capture)?;
    let report = ssd.run_source(&mut captured)?;
    captured.finish()?;
    let run = SsdRun {
        report,
        interrupted: fold.inner.cut_short(),
    };
    Ok((run, fold.folded))
}

/// Writes `report.json` (fio-like sections), `latency_cdf.csv`, `erase_histogram.csv` and
/// `valid_page_map.csv` into `dir`.
pub fn write_ssd_results(run: &SsdRun, dir: &Path) -> LabResult<()> {
    write_file(&dir.join("report.json"), &(run.to_json_pretty() + "\n"))?;
    let report = &run.report;
    let mut cdf = String::from("op,latency_us,fraction\n");
    for (op, section) in [
        ("read", &report.read),
        ("write", &report.write),
        ("trim", &report.trim),
    ] {
        for p in &section.cdf {
            cdf += &format!("{op},{},{}\n", p.latency_us, p.fraction);
        }
    }
    write_file(&dir.join("latency_cdf.csv"), &cdf)?;
    let mut hist = String::from("erase_count,blocks\n");
    for bin in &report.erase_counts.histogram {
        hist += &format!("{},{}\n", bin.erase_count, bin.blocks);
    }
    write_file(&dir.join("erase_histogram.csv"), &hist)?;
    let map = &report.valid_page_map;
    let mut csv = String::from("plane,block,valid_pages\n");
    for row in 0..map.rows {
        for col in 0..map.cols {
            csv += &format!("{row},{col},{}\n", map.get(row, col));
        }
    }
    write_file(&dir.join("valid_page_map.csv"), &csv)
}

/// A one-screen summary of an SSD report.
pub fn summary_text(report: &SsdReport) -> String {
    let mut out = format!(
        "simulated {:.3} ms | {} requests | WAF {:.3} | GC page copies {} | erases {}\n",
        report.sim_time_us / 1e3,
        report.completed,
        report.waf,
        report.counters.gc_page_copies,
        report.counters.erases
    );
    out += "op        requests       IOPS      MiB/s     p50 us     p99 us   p99.9 us     max us\n";
    for (name, s) in [
        ("read", &report.read),
        ("write", &report.write),
        ("trim", &report.trim),
    ] {
        if s.requests > 0 {
            out += &format!(
                "{name:6} {:>11} {:>10.0} {:>10.2} {:>10.1} {:>10.1} {:>10.1} {:>10.1}\n",
                s.requests,
                s.iops,
                s.bw_mib_s,
                s.lat.p50_us,
                s.lat.p99_us,
                s.lat.p999_us,
                s.lat.max_us
            );
        }
    }
    out
}
