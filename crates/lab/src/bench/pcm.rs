//! `nandlab bench pcm`: write requests per wall-second through dedup + the PCM log region
//! (issue 15's speed target, ≥ 500 k/s) on the bench device: the `bench-ssd` SSD with full
//! payloads and a 16 MiB `cidr11` PCM (4 MiB fingerprint store in 16 segments, binary search;
//! 8 MiB log region), the desktop content workload (half whole 8 KiB pages, half small in-page
//! updates, over 16,384 pages), one request at a time (`Ssd::execute`, the way a request gets
//! its bytes). The first row is the measurement; the others are labelled variants (another log
//! buffer, dedup alone, no PCM, the stage alone) that show where the time goes. Measured,
//! never asserted in tests.

use crate::error::{LabError, LabResult};
use crate::stack::Stack;
use nandlab_ftl::{FrontEnd, FtlCounters, HostRequest, Lpa, PageWrite, PageWrites, PcmStage, Ssd};
use nandlab_workload::IoOp;
use nandlab_workload::content::{DesktopGenerator, DesktopSpec};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Pages the desktop workload writes over (covered by the log region's P-blocks).
pub const PCM_BENCH_SPAN_PAGES: u32 = 16_384;

/// One measured row.
#[derive(Clone, Debug, Serialize)]
pub struct PcmBenchRow {
    /// What ran (`ssd dedup+region` is the measurement).
    pub label: &'static str,
    /// Write requests simulated.
    pub requests: u64,
    pub wall_s: f64,
    /// CPU time of the process over the row (user + system, all threads; `None` off Linux).
    pub cpu_s: Option<f64>,
    pub writes_per_wall_s: f64,
    pub writes_per_cpu_s: Option<f64>,
    /// Pages the stage sent towards flash through dedup, per request (a log merge's flush
    /// sends a whole block).
    pub pages_to_dedup_per_request: f64,
    /// SHA-1s the simulator computed per request (a flushed page whose bytes did not change
    /// since it was hashed reuses its SHA-1; the simulated hashing is charged per page all the
    /// same).
    pub sha1_computed_per_request: f64,
    /// The stage's internal checks that failed (0).
    pub check_failures: u64,
}

/// What `nandlab bench pcm` measured.
#[derive(Clone, Debug, Serialize)]
pub struct PcmBench {
    pub requests: u64,
    pub span_pages: u32,
    /// The measurement first, then the variants.
    pub rows: Vec<PcmBenchRow>,
    /// SHA-1 of one 8 KiB page alone on this machine, pages per CPU-second (the bound real
    /// fingerprinting puts on a path hashing every page).
    pub sha1_pages_per_cpu_s: Option<f64>,
}

const PCM: &str = r#"
[pcm]
preset = "cidr11"
capacity_bytes = 16777216
[pcm.dedup]
store_size_bytes = 4194304
segments = 16
search = "binary"
"#;

const LOG: &str = r#"
[pcm.log]
kind = "KIND"
region_size_bytes = 8388608
"#;

/// The bench stack: `bench-ssd` with full payloads, `pcm` (a `[pcm]` section or nothing).
fn stack(pcm: &str) -> LabResult<Stack> {
    let text = format!(
        "[ssd]\npreset = \"bench-ssd\"\npayload = \"full\"\n[workload]\nkind = \"synthetic\"\n\
         pattern = \"random\"\nread_fraction = 0.0\nrequest_size_bytes = 8192\nspan_bytes = 0\n\
         request_count = 1\n[content]\n{pcm}"
    );
    // (the bench feeds the desktop generator's bytes; `[content]` satisfies the stack's rule
    // that `[pcm]` needs page bytes)
    Stack::from_toml("bench-pcm", &text, Path::new("."), &[])
}

/// The bench's stack with its `[pcm]` section: dedup plus the log buffer `log_kind`
/// (`region`, `dpram`, …), or dedup alone (`None`) (also the `pcm_throughput` example's).
pub fn pcm_bench_stack(log_kind: Option<&str>) -> LabResult<Stack> {
    stack(&pcm_section(log_kind))
}

fn pcm_section(log: Option<&str>) -> String {
    match log {
        Some(kind) => format!("{PCM}{}", LOG.replace("KIND", kind)),
        None => PCM.to_string(),
    }
}

fn spec(requests: u64) -> DesktopSpec {
    pcm_bench_spec(PCM_BENCH_SPAN_PAGES, requests)
}

/// The bench's desktop workload over `span_pages`: half whole pages, half small updates, no
/// fill, no TRIM.
pub fn pcm_bench_spec(span_pages: u32, requests: u64) -> DesktopSpec {
    let mut spec = DesktopSpec::new(span_pages, requests);
    spec.fill = false;
    spec.page_write_fraction = 0.5;
    spec.update_fraction = 0.5;
    spec.trim_fraction = 0.0;
    spec
}

/// CPU time of this process so far (user + system of all its threads, living or ended),
/// seconds: `/proc/self/stat` fields 14 and 15, in clock ticks of 10 ms.
pub fn process_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the fields after the command name (which is in parentheses and may hold spaces)
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

struct Clock {
    wall: Instant,
    cpu: Option<f64>,
}

impl Clock {
    fn start() -> Self {
        Clock {
            wall: Instant::now(),
            cpu: process_cpu_s(),
        }
    }
    fn row(
        &self,
        label: &'static str,
        requests: u64,
        stage: Option<&PcmStage>,
        to_dedup: u64,
    ) -> PcmBenchRow {
        let wall_s = self.wall.elapsed().as_secs_f64();
        let cpu_s = self
            .cpu
            .zip(process_cpu_s())
            .map(|(a, b)| b - a)
            .filter(|&c| c > 0.0);
        let n = requests.max(1) as f64;
        PcmBenchRow {
            label,
            requests,
            wall_s,
            cpu_s,
            writes_per_wall_s: requests as f64 / wall_s.max(1e-9),
            writes_per_cpu_s: cpu_s.map(|c| requests as f64 / c),
            pages_to_dedup_per_request: to_dedup as f64 / n,
            sha1_computed_per_request: stage.map_or(0, PcmStage::sha1_computed) as f64 / n,
            check_failures: stage.map_or(0, |s| s.report().check_failures),
        }
    }
}

fn pages_checked(stage: Option<&PcmStage>) -> u64 {
    stage
        .and_then(|s| s.report().dedup)
        .map_or(0, |d| d.pages_checked)
}

/// The whole SSD with the stage built from `pcm` (no stage when empty), one desktop write
/// request at a time.
fn whole_ssd(label: &'static str, pcm: &str, requests: u64) -> LabResult<PcmBenchRow> {
    let stack = stack(pcm)?;
    let page = stack.nand.geometry.page_size_bytes;
    let mut ssd = stack.new_ssd(stack.ssd_config(), 1)?;
    let mut generator = DesktopGenerator::new(spec(requests), page, 1)
        .map_err(|e| LabError::Usage(format!("bench pcm: {e}")))?;
    let clock = Clock::start();
    let writes = drive_ssd(&mut ssd, &mut generator)?;
    let stage = ssd.front_end::<PcmStage>();
    Ok(clock.row(label, writes, stage, pages_checked(stage)))
}

/// The stage alone, fed whole pages (a small update applied to the page's bytes first).
fn stage_alone(label: &'static str, pcm: &str, requests: u64) -> LabResult<PcmBenchRow> {
    let stack = stack(pcm)?;
    let g = &stack.nand.geometry;
    let page = g.page_size_bytes;
    let config = stack
        .pcm_stage()?
        .ok_or_else(|| LabError::Usage("bench pcm: the stage needs [pcm]".into()))?;
    let logical = nandlab_ftl::logical_pages(g, stack.ftl.op_fraction) as u32;
    let mut stage = PcmStage::new(config, logical, page, g.pages_per_block, 1)?;
    let mut generator = DesktopGenerator::new(spec(requests), page, 1)
        .map_err(|e| LabError::Usage(format!("bench pcm: {e}")))?;
    let mut pages = vec![0u8; PCM_BENCH_SPAN_PAGES as usize * page as usize];
    let clock = Clock::start();
    let writes = drive_stage(&mut stage, &mut generator, &mut pages, page);
    Ok(clock.row(label, writes, Some(&stage), pages_checked(Some(&stage))))
}

/// Runs the generator's write requests on `ssd` one at a time (each completes before the
/// next; reads are skipped): the writes run. Shared with the `pcm_throughput` example.
pub fn drive_ssd(ssd: &mut Ssd, generator: &mut DesktopGenerator) -> LabResult<u64> {
    let mut writes = 0u64;
    while let Some((r, data)) = generator.next_request() {
        if r.op != IoOp::Write {
            continue;
        }
        let mut r: HostRequest = r.into();
        r.arrival = None;
        ssd.execute(&r, Some(data))?;
        writes += 1;
    }
    Ok(writes)
}

/// Feeds the generator's write requests to `stage` alone as whole pages: each is applied to
/// the host's copy of its page in `pages` (the span's pages of `page` bytes each), then the
/// whole page is written. The writes run. Shared with the `pcm_throughput` example.
pub fn drive_stage(
    stage: &mut PcmStage,
    generator: &mut DesktopGenerator,
    pages: &mut [u8],
    page: u32,
) -> u64 {
    let size = page as usize;
    let mut out = PageWrites::new(page, true);
    let mut counters = FtlCounters::default();
    let (mut writes, mut sequence) = (0u64, 0u64);
    while let Some((r, data)) = generator.next_request() {
        if r.op != IoOp::Write {
            continue;
        }
        let lpa = (r.offset_bytes / u64::from(page)) as usize;
        let at = (r.offset_bytes % u64::from(page)) as usize;
        let p = &mut pages[lpa * size..(lpa + 1) * size];
        p[at..at + data.len()].copy_from_slice(data);
        sequence += 1;
        out.clear();
        let w = PageWrite {
            lpa: Lpa(lpa as u32),
            sequence,
            data: Some(p),
            placement: 0,
            request: 3 << 62,
        };
        stage.write(nandlab_core::SimTime::ZERO, w, &mut out, &mut counters);
        writes += 1;
    }
    writes
}

/// SHA-1 of an 8 KiB page alone, pages per CPU-second.
fn sha1_alone() -> Option<f64> {
    let mut page = vec![0x5Au8; 8192];
    let pages = 20_000u32;
    let cpu = process_cpu_s()?;
    let mut x = 0u8;
    for i in 0..pages {
        page[..4].copy_from_slice(&i.to_le_bytes());
        x ^= nandlab_pcm::Fingerprint::of(std::hint::black_box(&page)).0[0];
    }
    std::hint::black_box(x);
    let s = process_cpu_s()? - cpu;
    (s > 0.0).then(|| f64::from(pages) / s)
}

/// Runs the measurement (whole SSD, dedup + log region) and its variants, `requests` write
/// requests each.
pub fn bench_pcm(requests: u64) -> LabResult<PcmBench> {
    let requests = requests.max(1);
    let region = pcm_section(Some("region"));
    let rows = vec![
        whole_ssd("ssd dedup+region", &region, requests)?,
        whole_ssd("ssd dedup+dpram", &pcm_section(Some("dpram")), requests)?,
        whole_ssd("ssd dedup only", &pcm_section(None), requests)?,
        whole_ssd("ssd no pcm", "", requests)?,
        stage_alone("stage alone dedup+region", &region, requests)?,
    ];
    Ok(PcmBench {
        requests,
        span_pages: PCM_BENCH_SPAN_PAGES,
        rows,
        sha1_pages_per_cpu_s: sha1_alone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_bench_runs_every_row_with_no_check_failures() {
        let b = bench_pcm(300).unwrap();
        assert_eq!(b.rows.len(), 5);
        assert_eq!(b.rows[0].label, "ssd dedup+region");
        for r in &b.rows {
            assert!(r.requests > 0 && r.requests <= 300, "{r:?}");
            assert_eq!(r.check_failures, 0, "{r:?}");
            assert!(r.writes_per_wall_s > 0.0, "{r:?}");
        }
        // dedup sees pages in every row with a stage, none without one
        assert!(b.rows[0].pages_to_dedup_per_request > 0.0);
        assert_eq!(b.rows[3].pages_to_dedup_per_request, 0.0);
        assert!(b.rows[0].sha1_computed_per_request <= b.rows[0].pages_to_dedup_per_request);
    }
}
