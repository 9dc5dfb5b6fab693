//! Report text for the front ends: what `nandlab chip`, `run` / `replay` / `fio`, `bench` and
//! `demo` print, written to any `std::io::Write` (the CLI passes standard output). The CLI parses
//! arguments and prints what this module formats.

use crate::chip::{ChipReport, ChipRunSpec};
use crate::error::{LabError, LabResult};
use crate::experiments::{self, CurveValue, RunOptions, Scale};
use crate::stack::{
    ChipWorkloadSpec, PcmStageReport, Stack, StackOutcome, StackRun, WorkloadSection,
};
use std::io::Write;
use std::path::PathBuf;

/// `writeln!` into `w`; a write error is returned as a [`LabError::Write`] to standard output.
macro_rules! say {
    ($w:expr, $($arg:tt)*) => {
        writeln!($w, $($arg)*).map_err(stdout_error)?
    };
}

/// `write!` into `w` (see `say!`).
macro_rules! say_raw {
    ($w:expr, $($arg:tt)*) => {
        write!($w, $($arg)*).map_err(stdout_error)?
    };
}

fn stdout_error(source: std::io::Error) -> LabError {
    LabError::Write {
        path: "standard output".into(),
        source,
    }
}

/// The chip-level run's report (`nandlab chip`).
pub fn chip_report(w: &mut dyn Write, spec: &ChipRunSpec, r: &ChipReport) -> LabResult<()> {
    let workload = ChipWorkloadSpec::with_driver(
        spec.workload,
        spec.requests,
        spec.request_bytes,
        &spec.driver,
    );
    chip_run_report(w, &spec.preset, &workload, r)
}

/// The report of a chip workload (`kind = "chip"`) on chip `name`.
pub fn chip_run_report(
    w: &mut dyn Write,
    name: &str,
    workload: &ChipWorkloadSpec,
    r: &ChipReport,
) -> LabResult<()> {
    say!(
        w,
        "chip run: preset {} | workload {} | {} requests | scheduler {} | cache {} | interleave {}",
        name,
        workload.pattern.name(),
        r.requests,
        workload.scheduler.name(),
        workload.cache,
        workload.interleave
    );
    say!(
        w,
        "simulated {:.3} ms | throughput {:.2} MB/s ({:.0} IOPS) | bus contention {:.1} % | bus utilization {:.1} %",
        r.sim_time_us / 1e3,
        r.throughput_mb_per_s,
        r.iops,
        100.0 * r.bus_contention_fraction,
        100.0 * r.bus_utilization
    );
    say!(
        w,
        "\nlatency (us)    count       p50       p90       p99     p99.9       max"
    );
    for (name, l) in [("read", &r.read_latency), ("write", &r.write_latency)] {
        if l.count > 0 {
            say!(
                w,
                "{name:10} {:>10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                l.count,
                l.p50_us,
                l.p90_us,
                l.p99_us,
                l.p999_us,
                l.max_us
            );
        }
    }
    chip_stage_tables(w, r)?;
    say!(
        w,
        "\nenergy {:.1} uJ (+ {:.1} uJ idle) | {} flash ops ({} multiplane) | {} events",
        r.energy_uj,
        r.idle_energy_uj,
        r.flash_ops,
        r.multiplane_ops,
        r.events
    );
    Ok(())
}

/// The stage and op-kind tables of a chip report.
fn chip_stage_tables(w: &mut dyn Write, r: &ChipReport) -> LabResult<()> {
    say!(
        w,
        "\nstage       time (ms)   time %   energy (uJ)  energy %"
    );
    for s in &r.stages {
        say!(
            w,
            "{:8} {:>12.3} {:>8.1} {:>13.2} {:>9.1}",
            s.stage,
            s.time_us / 1e3,
            100.0 * s.time_fraction,
            s.energy_uj,
            100.0 * s.energy_fraction
        );
    }
    say!(
        w,
        "\nop kind        ops   energy/op (uJ)   bus-stage %   mean latency (us)"
    );
    for k in &r.op_kinds {
        say!(
            w,
            "{:10} {:>8} {:>16.2} {:>13.1} {:>19.1}",
            k.kind,
            k.ops,
            k.energy_per_op_uj,
            100.0 * k.bus_stage_fraction,
            k.latency.mean_us
        );
    }
    Ok(())
}

/// `nandlab presets`: every NAND chip preset and every SSD preset with its description and
/// source.
pub fn presets_text() -> LabResult<String> {
    use std::fmt::Write as _;
    let mut s =
        String::from("NAND chip presets ([nand] preset = NAME, nandlab chip --preset NAME):\n\n");
    for name in crate::chip::nand_preset_names() {
        let c = crate::chip::nand_preset(name)?;
        let _ = writeln!(
            s,
            "{name:14} {}\n               source: {}\n",
            c.description, c.source
        );
    }
    s.push_str("SSD presets ([ssd] preset = NAME, --device NAME):\n\n");
    for name in crate::stack::ssd_preset_names() {
        let p = crate::stack::ssd_preset(name).map_err(LabError::Usage)?;
        let _ = writeln!(
            s,
            "{name:14} {}\n               source: {}\n",
            p.description, p.source
        );
    }
    Ok(s)
}

/// The main demo: paper 000's co-design experiment (R-E1) at quick scale, as a table.
pub fn demo(w: &mut dyn Write) -> LabResult<()> {
    say!(
        w,
        "nandlab demo: a database storage engine on a simulated SSD (Miyaji et al. 2014, Fig. 12)"
    );
    say!(
        w,
        "119-byte rows; random Insert/Delete/Update (30/30/40) at constant free space;"
    );
    say!(
        w,
        "conventional engine vs co-designed engine (Insert Address Assist + Update-to-Delete+Insert)"
    );
    say!(
        w,
        "on paper 000's SSD emulator scaled to 4 channels, 128 MB (NAND: 100 us read, 1.6 ms program,"
    );
    say!(
        w,
        "8.5 ms erase; buffered host writes striped over dies, blocking GC; 40 uJ controller energy"
    );
    say!(w, "per host command, fitted: preset miyaji2014-emulator)\n");
    let options = RunOptions {
        scale: Scale::Quick,
        seed: 0,
        ..RunOptions::default()
    };
    let experiment = experiments::find("miyaji-freespace")?;
    let result = (experiment.run)(&options)?;
    let curve = &result.curves[0];
    let num = |v: &CurveValue| match v {
        CurveValue::Number(n) => *n,
        CurveValue::Label(_) => f64::NAN,
    };
    say!(
        w,
        "{:>6} | {:>21} | {:>21} | {:>21} | {:>19}",
        "free",
        "queries/s",
        "mJ/query",
        "W/E cycles/block",
        "GC page copies"
    );
    say!(
        w,
        "{:>6} | {:>10} {:>10} | {:>10} {:>10} | {:>10} {:>10} | {:>9} {:>9}",
        "space",
        "conv.",
        "co-design",
        "conv.",
        "co-design",
        "conv.",
        "co-design",
        "conv.",
        "co-des."
    );
    for pair in curve.rows.chunks(2) {
        let (c, d) = (&pair[0], &pair[1]);
        say!(
            w,
            "{:>5}% | {:>10.0} {:>10.0} | {:>10.3} {:>10.3} | {:>10.1} {:>10.1} | {:>9.0} {:>9.0}",
            num(&c[1]),
            num(&c[2]),
            num(&d[2]),
            num(&c[3]),
            num(&d[3]),
            num(&c[4]),
            num(&d[4]),
            num(&c[5]),
            num(&d[5])
        );
    }
    say!(
        w,
        "\nAt 20 % free space the co-designed engine runs {:.1}x the queries per second with {:.0} % less energy",
        result.get("speedup_at_20pct"),
        100.0 * result.get("energy_reduction_at_20pct")
    );
    say!(
        w,
        "and {:.0} % fewer erase cycles per block (paper: 3.8x, -46 %, -62 %). Its inserts go to pages the FTL",
        100.0 * result.get("we_reduction_at_20pct")
    );
    say!(
        w,
        "is about to erase, so garbage collection finds nothing left to copy; with more free space the"
    );
    say!(
        w,
        "conventional engine catches up. More: `nandlab reproduce --list`, docs/experiments.md."
    );
    Ok(())
}

/// `nandlab bench pcm`: the whole SSD with dedup + the PCM log region (the measurement), then
/// labelled variants.
fn bench_pcm(w: &mut dyn Write, requests: u64, json: bool) -> LabResult<()> {
    if requests == 0 {
        return Err(LabError::Usage("--requests must be at least 1".into()));
    }
    let b = crate::bench::bench_pcm(requests)?;
    if json {
        let main = &b.rows[0];
        let line = serde_json::json!({
            "target": "pcm",
            "requests": main.requests,
            "writes_per_wall_s": main.writes_per_wall_s,
            "writes_per_cpu_s": main.writes_per_cpu_s,
            "wall_s": main.wall_s,
            "cpu_s": main.cpu_s,
            "sha1_pages_per_cpu_s": b.sha1_pages_per_cpu_s,
            "rows": b.rows,
            "peak_rss_mb": peak_rss_kb().map(|kb| kb as f64 / 1024.0),
        });
        say!(w, "{line}");
        return Ok(());
    }
    say!(
        w,
        "nandlab bench pcm: bench-ssd, full payloads; 16 MiB cidr11 PCM: 4 MiB fingerprint store"
    );
    say!(
        w,
        "(16 segments, binary search) + 8 MiB log region; desktop content over {} pages (half whole",
        b.span_pages
    );
    say!(
        w,
        "8 KiB pages, half small updates), one write request at a time; first row: the measurement"
    );
    say!(
        w,
        "  {:<26} {:>9} {:>8} {:>8} {:>13} {:>12} {:>10} {:>9}",
        "row",
        "requests",
        "wall s",
        "CPU s",
        "writes/wall-s",
        "writes/CPU-s",
        "to dedup/r",
        "SHA-1/r"
    );
    let na = |x: Option<f64>, digits: usize| {
        x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"))
    };
    for r in &b.rows {
        say!(
            w,
            "  {:<26} {:>9} {:>8.3} {:>8} {:>13.0} {:>12} {:>10.2} {:>9.2}",
            r.label,
            r.requests,
            r.wall_s,
            na(r.cpu_s, 2),
            r.writes_per_wall_s,
            na(r.writes_per_cpu_s, 0),
            r.pages_to_dedup_per_request,
            r.sha1_computed_per_request
        );
    }
    say!(
        w,
        "  SHA-1 of an 8 KiB page alone: {} pages/CPU-s",
        na(b.sha1_pages_per_cpu_s, 0)
    );
    say!(
        w,
        "  (CPU s: the process's user + system time, all threads, 10 ms ticks; to dedup/r: pages"
    );
    say!(
        w,
        "  sent towards flash through dedup per request; SHA-1/r: hashes the simulator computed"
    );
    say!(
        w,
        "  per request, the others' SHA-1s remembered while their bytes were unchanged)"
    );
    let failures: u64 = b.rows.iter().map(|r| r.check_failures).sum();
    if failures > 0 {
        return Err(LabError::Failed(format!(
            "bench pcm: {failures} internal check failures in the PCM stage"
        )));
    }
    Ok(())
}

/// `nandlab bench TARGET` for the targets chip, ssd, engine, sim and pcm (`sql` runs in the SQL
/// crate): a readable table, or one JSON line with `json`.
pub fn bench(
    w: &mut dyn Write,
    target: &str,
    requests: Option<u64>,
    steady: bool,
    scale: u32,
    json: bool,
) -> LabResult<()> {
    match target {
        "ssd" => {
            let requests = requests.unwrap_or(4_000_000);
            let b = if steady {
                crate::bench::bench_ssd_steady_scaled(requests, 0, scale)?
            } else {
                crate::bench::bench_ssd_scaled(requests, 0, scale)?
            };
            if json {
                let mut line = serde_json::json!({
                    "target": "ssd",
                    "steady": steady,
                    "requests": b.requests,
                    "wall_s": b.wall_seconds,
                    "precondition_wall_s": b.precondition_wall_seconds,
                    "host_requests_per_wall_s": b.host_requests_per_wall_second,
                    "sim_write_iops": b.sim_iops,
                    "waf": b.waf,
                    "peak_rss_mb": peak_rss_kb().map(|kb| kb as f64 / 1024.0),
                });
                if scale != 1 {
                    line["scale"] = scale.into();
                }
                say!(w, "{line}");
                return Ok(());
            }
            say!(
                w,
                "nandlab bench ssd: 4 ch x 2 chips x 2 dies x 2 planes x {} blocks x 256 pages x 8 KiB,",
                128 * scale
            );
            say!(
                w,
                "MLC 75/750/3800 us, 25 % OP, greedy GC, QD 32, uniform random 8 KiB writes, timing-only"
            );
            if steady {
                say!(
                    w,
                    "  precondition              full and fragmented, {:.3} s",
                    b.precondition_wall_seconds
                );
            }
            say!(w, "  requests                  {}", b.requests);
            say!(w, "  wall time                 {:.3} s", b.wall_seconds);
            say!(
                w,
                "  host requests / wall-s    {:.0}",
                b.host_requests_per_wall_second
            );
            say!(w, "  simulated write IOPS      {:.0}", b.sim_iops);
            say!(w, "  WAF                       {:.3}", b.waf);
            if let Some(kb) = peak_rss_kb() {
                say!(
                    w,
                    "  peak memory (VmHWM)       {:.1} MB",
                    kb as f64 / 1024.0
                );
            }
            Ok(())
        }
        "chip" => {
            let b = crate::bench::bench_chip(requests.unwrap_or(2_000_000))?;
            if json {
                say!(w, "{}", json_line("chip", &b));
                return Ok(());
            }
            say!(
                w,
                "nandlab bench chip: 8 interleaved dies, 2 KB legacy writes (mlc1)"
            );
            say!(w, "  requests            {}", b.requests);
            say!(w, "  flash ops           {}", b.flash_ops);
            say!(w, "  events              {}", b.events);
            say!(w, "  wall time           {:.3} s", b.wall_s);
            say!(w, "  flash ops / wall-s  {:.0}", b.ops_per_wall_s);
            say!(w, "  events / wall-s     {:.0}", b.events_per_wall_s);
            say!(w, "  simulated time      {:.3} s", b.simulated_s);
            Ok(())
        }
        "engine" => {
            let b = crate::bench::bench_engine(requests.unwrap_or(200_000))?;
            if json {
                say!(w, "{}", json_line("engine", &b));
                return Ok(());
            }
            say!(
                w,
                "nandlab bench engine: co-designed engine on the miyaji2014 SSD (1 channel, 32 MB),"
            );
            say!(
                w,
                "fill to 20 % free space, then random Insert/Delete/Update 30/30/40"
            );
            say!(w, "  fill inserts              {}", b.fill_inserts);
            say!(w, "  queries                   {}", b.queries);
            say!(w, "  wall time                 {:.3} s", b.wall_s);
            say!(w, "  queries / wall-s          {:.0}", b.queries_per_wall_s);
            say!(
                w,
                "  engine ops / wall-s       {:.0} (fill inserts + queries)",
                b.engine_ops_per_wall_s
            );
            say!(
                w,
                "  simulated queries / s     {:.0}",
                b.simulated_queries_per_s
            );
            Ok(())
        }
        "sim" => {
            let b = crate::bench::bench_sim(requests.unwrap_or(300_000))?;
            if json {
                say!(w, "{}", json_line("sim", &b));
                return Ok(());
            }
            say!(
                w,
                "nandlab bench sim: YCSB workload C (zipfian) as SiM lookups on sim2024,"
            );
            say!(
                w,
                "2,000 leaves x 480 keys, no page cache, one query at a time"
            );
            say!(w, "  queries                   {}", b.requests);
            say!(w, "  wall time                 {:.3} s", b.wall_s);
            say!(w, "  queries / wall-s          {:.0}", b.queries_per_wall_s);
            say!(w, "  simulated queries / s     {:.0}", b.simulated_qps);
            Ok(())
        }
        "pcm" => bench_pcm(w, requests.unwrap_or(100_000), json),
        other => Err(LabError::Usage(format!(
            "unknown bench target `{other}` (expected: chip, ssd, engine, sim, sql or pcm)"
        ))),
    }
}

/// `{"target": target, ...fields of value}` on one line.
fn json_line(target: &str, value: &impl serde::Serialize) -> String {
    let mut object = serde_json::Map::new();
    object.insert("target".into(), target.into());
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(value) {
        object.extend(fields);
    }
    serde_json::Value::Object(object).to_string()
}

/// The process's peak resident memory (VmHWM), KiB.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One line on what a `[pcm]` stage did.
pub fn pcm_summary(r: &PcmStageReport) -> String {
    let energy_mj = (r.device.read_energy_pj
        + r.device.write_energy_pj
        + r.finder.as_ref().map_or(0.0, |f| f.hash_energy_pj))
        / 1e9;
    let mut line = format!(
        "pcm ({}, log {}): {energy_mj:.3} mJ",
        r.preset,
        r.log_kind.unwrap_or("none")
    );
    if let Some(d) = &r.dedup {
        line += &format!(
            " | dedup: {} of {} pages to flash shared, {} unchanged",
            d.duplicates_shared, d.pages_checked, d.duplicates_unchanged
        );
    }
    if let Some(l) = &r.log {
        line += &format!(
            " | log: {} of {} updates logged ({} B), {} merges, {} pages to flash",
            l.new_log_block + l.existing_sector + l.new_sector,
            l.writes,
            l.log_bytes_written,
            l.merges,
            l.flash_page_writes()
        );
    }
    if r.check_failures > 0 {
        line += &format!(" | {} CHECK FAILURES", r.check_failures);
    }
    line
}

/// What `nandlab run`, `replay` and `fio` print after a run (a table, or the metrics as one
/// JSON line with `json`), writing report.json and the CSVs into `out` when given.
pub fn finish(
    w: &mut dyn Write,
    stack: &Stack,
    run: &StackRun,
    out: Option<PathBuf>,
    json: bool,
) -> LabResult<()> {
    if json {
        say!(w, "{}", run.metrics_json());
    }
    match &run.outcome {
        _ if json => {}
        StackOutcome::Ssd {
            run: ssd_run,
            folded_requests,
            read_preconditioned_pages,
            fitted_blocks_per_plane,
            pcm,
        } => {
            if let Some(pcm) = pcm {
                say!(w, "{}", pcm_summary(pcm));
            }
            if let Some(blocks) = fitted_blocks_per_plane {
                // notes go to stderr, beside warnings (stdout keeps the report)
                eprintln!(
                    "note: grew the device to {blocks} blocks per plane ({} bytes logical) to hold the trace",
                    ssd_run.report.logical_pages * u64::from(ssd_run.report.page_size_bytes)
                );
            }
            if *read_preconditioned_pages > 0 {
                let what = match &stack.config.workload {
                    WorkloadSection::Fio(_) => "the jobs read",
                    _ => "the trace reads",
                };
                eprintln!(
                    "note: preconditioned {read_preconditioned_pages} pages {what} before writing"
                );
            }
            if *folded_requests > 0 {
                eprintln!(
                    "note: {folded_requests} requests beyond the SSD's logical capacity were folded into it"
                );
            }
            say_raw!(w, "{}", crate::ssd::summary_text(&ssd_run.report));
            if let Some(nvme) = &ssd_run.nvme {
                say_raw!(w, "{}", nvme.summary());
            }
        }
        StackOutcome::Engine { device, pcm, .. } => {
            if let Some(pcm) = pcm {
                say!(w, "{}", pcm_summary(pcm));
                let c = &device.counters;
                say!(
                    w,
                    "ssd (fill and queries): {} host page writes, {} flash programs (WAF {:.3}), {} erases",
                    c.host_pages_written,
                    c.flash_pages_programmed,
                    device.waf,
                    c.erases
                );
            }
            let engine = stack
                .config
                .engine
                .as_ref()
                .expect("engine workloads have [engine]");
            say!(
                w,
                "engine: IAA {} | U2DI {} | {}-byte rows | workload {}",
                engine.iaa,
                engine.u2di,
                engine.row_size_bytes,
                stack.config.workload.kind()
            );
        }
        StackOutcome::SimLookup { .. } => {}
        StackOutcome::Chip { report, .. } => {
            if let WorkloadSection::Chip(workload) = &stack.config.workload {
                chip_run_report(w, &stack.nand.name, workload, report)?;
            }
        }
    }
    if let (StackOutcome::SimLookup { report: r, .. }, false) = (&run.outcome, json) {
        say!(
            w,
            "sim-lookup: {} records in {} leaves ({} slots each, {} of {} SiM pages) | {} lookups, {} of loaded keys, {} hits, {} value gathers",
            r.records,
            r.leaves,
            r.slots_per_leaf,
            r.region_pages_used,
            r.region_pages,
            r.lookups,
            r.present_lookups,
            r.hits,
            r.gathers
        );
        if let Some(failure) = &r.first_failure {
            say!(
                w,
                "VERIFICATION FAILURES: {} (first: {failure})",
                r.verification_failures
            );
        }
    }
    if let (StackOutcome::Engine { .. } | StackOutcome::SimLookup { .. }, false) =
        (&run.outcome, json)
    {
        for (name, value) in &run.metrics {
            say!(w, "  {name:24} {value:.4}");
        }
    }
    if let Some(dir) = out {
        crate::ssd::write_stack_results(stack, run, &dir)?;
        if !json {
            say!(w, "wrote {}", dir.display());
        }
    }
    if run.interrupted() {
        match &run.outcome {
            StackOutcome::Ssd { run, .. } => {
                eprintln!(
                    "interrupted: kept results of {} requests",
                    run.report.completed
                )
            }
            StackOutcome::Engine { metrics, .. } => eprintln!(
                "interrupted: kept results of {} queries",
                metrics.queries.total().count
            ),
            StackOutcome::SimLookup { .. } => {
                eprintln!("interrupted before the lookups: nothing measured")
            }
            StackOutcome::Chip { report, .. } => {
                eprintln!("interrupted: kept results of {} requests", report.requests)
            }
        }
    }
    Ok(())
}
