//! SSD-level results: the run record of a block workload ([`SsdRun`]), the stream adapters a run
//! passes its requests through ([`Fold`] into the logical capacity, [`Capture`] to a native
//! trace), and the report files and text of `nandlab run|replay|fio`. The runs themselves are
//! built from a stack config ([`crate::stack::Stack`]).

use crate::error::LabResult;
use crate::output::{CsvText, write_file};
use crate::stack::{Stack, StackOutcome, StackRun};
use nandlab_ftl::SsdReport;
use nandlab_workload::{BlockRequest, NativeCsvWriter, WorkloadError};
use serde::Serialize;
use std::path::Path;

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
    /// The NVMe host interface's report, when the stack has `[ssd.nvme]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvme: Option<Box<nandlab_ftl::nvme::NvmeReport>>,
}

impl SsdRun {
    /// The text of `report.json` (without the final newline).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }
}

/// Folds requests beyond the logical capacity back into it (traces often come from larger
/// disks) and counts how many were folded.
#[derive(Debug)]
pub struct Fold<I> {
    inner: I,
    capacity_bytes: u64,
    /// Requests taken so far (to name one in an error).
    seen: u64,
    pub folded: u64,
}

impl<I> Fold<I> {
    /// Folds `inner`'s requests into `capacity_bytes` (`u64::MAX`: nothing is folded).
    pub fn new(inner: I, capacity_bytes: u64) -> Self {
        Fold {
            inner,
            capacity_bytes,
            seen: 0,
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
        self.seen += 1;
        let seen = self.seen;
        let capacity_bytes = self.capacity_bytes;
        let item = item.and_then(|r| {
            if r.size_bytes > capacity_bytes {
                return Err(WorkloadError::Invalid {
                    key: format!("request {seen}"),
                    message: format!(
                        "{} bytes is larger than the SSD's logical capacity of {capacity_bytes} bytes (use a larger --device)",
                        r.size_bytes
                    ),
                });
            }
            Ok(r)
        });
        Some(item.map(|mut r| {
            let size = r.size_bytes;
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

/// Writes `report.json` (fio-like sections), `latency_cdf.csv`, `erase_histogram.csv`,
/// `valid_page_map.csv` and `timeseries.csv` (the run per interval of simulated time) into
/// `dir`.
pub fn write_ssd_results(run: &SsdRun, dir: &Path) -> LabResult<()> {
    write_file(&dir.join("report.json"), &(run.to_json_pretty() + "\n"))?;
    let report = &run.report;
    let mut cdf = CsvText::new(["op", "latency_us", "fraction"]);
    for (op, section) in [
        ("read", &report.read),
        ("write", &report.write),
        ("trim", &report.trim),
    ] {
        for p in &section.cdf {
            cdf.row([
                op.to_string(),
                p.latency_us.to_string(),
                p.fraction.to_string(),
            ]);
        }
    }
    write_file(&dir.join("latency_cdf.csv"), &cdf.finish())?;
    let mut hist = CsvText::new(["erase_count", "blocks"]);
    for bin in &report.erase_counts.histogram {
        hist.row([bin.erase_count.to_string(), bin.blocks.to_string()]);
    }
    write_file(&dir.join("erase_histogram.csv"), &hist.finish())?;
    write_file(
        &dir.join("timeseries.csv"),
        &timeseries_csv(&report.timeseries),
    )?;
    let map = &report.valid_page_map;
    let mut csv = CsvText::new(["plane", "block", "valid_pages"]);
    for row in 0..map.rows {
        for col in 0..map.cols {
            csv.row([
                row.to_string(),
                col.to_string(),
                map.get(row, col).to_string(),
            ]);
        }
    }
    let csv = csv.finish();
    write_file(&dir.join("valid_page_map.csv"), &csv)
}

/// `timeseries.csv`: one row per interval of simulated time (`nandlab_ftl::TimeSeriesRow`).
pub fn timeseries_csv(rows: &[nandlab_ftl::TimeSeriesRow]) -> String {
    // the SLC cache's occupancy column only when the device has one (other runs unchanged)
    let slc = rows.iter().any(|r| r.slc_occupancy_pages.is_some());
    let mut header = vec![
        "t_end_s",
        "read_iops",
        "write_iops",
        "read_mib_s",
        "write_mib_s",
        "read_p50_us",
        "read_p99_us",
        "write_p50_us",
        "write_p99_us",
        "write_p999_us",
        "waf",
        "free_blocks",
    ];
    if slc {
        header.push("slc_occupancy_pages");
    }
    let mut csv = CsvText::new(header);
    for r in rows {
        let mut fields = vec![
            r.t_end_s.to_string(),
            r.read_iops.to_string(),
            r.write_iops.to_string(),
            r.read_mib_s.to_string(),
            r.write_mib_s.to_string(),
            r.read_p50_us.to_string(),
            r.read_p99_us.to_string(),
            r.write_p50_us.to_string(),
            r.write_p99_us.to_string(),
            r.write_p999_us.to_string(),
            r.waf.to_string(),
            r.free_blocks.to_string(),
        ];
        if slc {
            fields.push(r.slc_occupancy_pages.unwrap_or(0).to_string());
        }
        csv.row(fields);
    }
    csv.finish()
}

/// Writes the files of `nandlab run --out` for any stack run: `config.json` (the resolved
/// stack config, the nandlab version and the seed), `metrics.json` (the run's metric row), and
/// for a block workload the SSD files of [`write_ssd_results`], for an engine workload
/// `report.json` with the engine's run metrics, for a sim-lookup workload `report.json` with
/// the lookups' report (`sim_lookup`) and the SSD's report over them (`ssd`).
pub fn write_stack_results(stack: &Stack, run: &StackRun, dir: &Path) -> LabResult<()> {
    let mut config = serde_json::json!({
        "nandlab_version": crate::version(),
        "seed": stack.config.run.seed,
        "config": stack.resolved_json(),
    });
    if let StackOutcome::Ssd {
        fitted_blocks_per_plane: Some(blocks),
        ..
    } = &run.outcome
    {
        // the device the run used: grown to fit the trace
        config["config"]["nand"]["geometry"]["blocks_per_plane"] = serde_json::json!(blocks);
    }
    write_json(&dir.join("config.json"), &config)?;
    write_json(&dir.join("metrics.json"), &run.metrics_json())?;
    match &run.outcome {
        StackOutcome::Ssd { run, .. } => write_ssd_results(run, dir),
        StackOutcome::Engine {
            metrics,
            device,
            pcm,
            interrupted,
        } => {
            let mut report = serde_json::json!({
                "metrics": metrics,
                "queries_per_s": metrics.queries_per_s(),
                "mj_per_query": metrics.energy_mj_per_query(),
                "we_cycles_per_block": metrics.erases_per_block_mean(),
            });
            // the SSD's whole life (fill and queries), e.g. the flash side of a PCM stage
            let c = &device.counters;
            report["ssd"] = serde_json::json!({
                "host_pages_written": c.host_pages_written,
                "flash_pages_programmed": c.flash_pages_programmed,
                "waf": device.waf,
                "erases": c.erases,
            });
            if let Some(pcm) = pcm {
                report["pcm"] = serde_json::to_value(pcm).expect("reports serialize");
            }
            if *interrupted {
                report["interrupted"] = serde_json::Value::Bool(true);
            }
            write_json(&dir.join("report.json"), &report)
        }
        StackOutcome::SimLookup {
            report,
            device,
            interrupted,
        } => {
            let mut value = serde_json::json!({
                "sim_lookup": report,
                "ssd": device,
            });
            if *interrupted {
                value["interrupted"] = serde_json::Value::Bool(true);
            }
            write_json(&dir.join("report.json"), &value)
        }
        StackOutcome::Chip {
            report,
            interrupted,
        } => {
            let mut value = serde_json::json!({ "chip": report });
            if *interrupted {
                value["interrupted"] = serde_json::Value::Bool(true);
            }
            write_json(&dir.join("report.json"), &value)?;
            crate::chip::write_chip_tables(report, dir)
        }
    }
}

fn write_json(path: &Path, value: &serde_json::Value) -> LabResult<()> {
    write_file(
        path,
        &(serde_json::to_string_pretty(value).expect("JSON values serialize") + "\n"),
    )
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
    if let Some(c) = &report.cmt {
        out += &format!(
            "mapping cache {} entries | hit ratio {:.4} | translation reads {} | translation writes {} ({} by GC)\n",
            c.cache_entries,
            c.hit_ratio(),
            c.translation_reads,
            c.translation_writes,
            c.gc_translation_writes
        );
    }
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
    if let Some(c) = &report.controller {
        out += &format!(
            "busy us: firmware {:.1} | DRAM {:.1} | host link {:.1} | ECC {:.1}
",
            c.busy.firmware_us, c.busy.dram_us, c.busy.host_link_us, c.busy.ecc_us
        );
        out += &format!(
            "energy mJ: chip {:.3} | controller {:.3} | DRAM {:.3} | host link {:.3} | idle {:.3} | total {:.3}
",
            report.energy.total_mj,
            c.energy.controller_mj,
            c.energy.dram_mj,
            c.energy.host_link_mj,
            c.energy.idle_mj,
            c.device_total_mj
        );
    }
    out
}
