//! Thesis 001 §5.1 on the full stack (SPEC P1–P5, R-P1, R-P2): the PCM stage in front of the
//! SSD, driven by the desktop workload with real content (`pcm_run`). PCM preset `cidr11`
//! everywhere (CIDR'11 timings and energies at 2 GHz, as the thesis's Table 5.3).
//!
//! - `pcm-dedup` (Figs. 5.1–5.3): duplicates present and removed, search time per lookup and
//!   detection rate against the fingerprint store size, flash space saved.
//! - `pcm-buffer` (Figs. 5.4–5.7): merges, erases, flash writes, write time, energy and the
//!   share of sequential flushes for the thesis's log region, dPRAM and IPL over PCM sizes.
//! - `pcm-combined` (Fig. 5.8): dedup + the log region against no PCM: lifetime (erases) and
//!   energy.

use super::paper::{Paper, PaperValue, pv};
use super::pcm_run::{PAGES_PER_BLOCK, PcmDesktop, PcmMeasure, PcmPoint, stack, table};
use super::{Curve, CurveValue, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;
use crate::stack::Stack;
use nandlab_workload::content::DesktopSpec;

/// Thesis 001 Fig. 5.8 (R-P1): dedup + a PCM log region (16 MB of PCM) against no PCM.
const COMBINED_PAPER: &[PaperValue] = &[
    pv(
        "lifetime_ratio",
        "lifetime_ratio",
        4.0,
        "x",
        "Fig. 5.8",
        "dedup + log region, 16 MB PCM",
    ),
    pv(
        "energy_ratio_max",
        "energy_ratio",
        0.8,
        "x",
        "Fig. 5.8",
        "dedup + log region, 16 MB PCM",
    ),
];

pub(super) static EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "pcm-dedup",
        reference: "thesis 001 Figs. 5.1-5.3 (SPEC P2)",
        title: "dedup: duplicates removed, search time and detection rate vs fingerprint store size, flash space saved",
        run: dedup,
        paper: Paper::None(
            "thesis Figs. 5.1-5.3 are read for their shape (SPEC P2): a larger fingerprint store finds more duplicates and searches longer; no number taken",
        ),
    },
    Experiment {
        id: "pcm-buffer",
        reference: "thesis 001 Figs. 5.4-5.7, R-P2",
        title: "log buffers (thesis region, dPRAM, IPL): merges, erases, write time, energy, sequential flushes vs PCM size",
        run: buffer,
        paper: Paper::None(
            "R-P2 (thesis Fig. 5.5) is an ordering: merges, erases and write time of the thesis's log region < dPRAM < IPL; no number",
        ),
    },
    Experiment {
        id: "pcm-combined",
        reference: "thesis 001 Fig. 5.8, R-P1",
        title: "dedup + PCM log region vs no PCM: SSD lifetime and energy",
        run: combined,
        paper: Paper::Values(COMBINED_PAPER),
    },
];

/// Device size and workload length by scale.
struct Size {
    blocks_per_plane: u32,
    requests: u64,
}

fn size(scale: Scale) -> Size {
    match scale {
        Scale::Quick => Size {
            blocks_per_plane: 48,
            requests: 12_000,
        },
        Scale::Standard => Size {
            blocks_per_plane: 128,
            requests: 60_000,
        },
        Scale::Full => Size {
            blocks_per_plane: 512,
            requests: 300_000,
        },
    }
}

/// The desktop workload over 80 % of the logical pages.
fn workload(s: &Size) -> DesktopSpec {
    let logical = (f64::from(2 * s.blocks_per_plane * PAGES_PER_BLOCK) / 1.25).floor() as u32;
    DesktopSpec::new(logical * 4 / 5, s.requests)
}

/// The `[pcm]` section of a point, as a typed TOML table (no config text assembled by hand).
pub(super) fn pcm_section(
    capacity_bytes: u64,
    dedup_bytes: Option<u64>,
    log: Option<(&str, u64)>,
) -> toml::Table {
    use toml::Value;
    let int = |v: u64| Value::Integer(i64::try_from(v).expect("PCM sizes fit in an i64"));
    let mut pcm = table([
        ("preset", Value::from("cidr11")),
        ("capacity_bytes", int(capacity_bytes)),
    ]);
    if let Some(b) = dedup_bytes {
        let dedup = table([
            ("store_size_bytes", int(b)),
            ("segments", Value::Integer(4)),
            ("search", Value::from("binary")),
        ]);
        pcm.insert("dedup".into(), Value::Table(dedup));
    }
    if let Some((kind, bytes)) = log {
        // `region-logged`: the thesis's region flushing only the logged pages of a block
        let mut section = table([("kind", Value::from(kind.trim_end_matches("-logged")))]);
        if kind != "ipl" {
            section.insert("region_size_bytes".into(), int(bytes));
        }
        if kind == "region-logged" {
            section.insert("flush_whole_block".into(), Value::Boolean(false));
        }
        pcm.insert("log".into(), Value::Table(section));
    }
    pcm
}

fn n(v: impl Into<f64>) -> CurveValue {
    CurveValue::Number(v.into())
}

/// Runs `points` through the point runner (the registered measure [`PcmDesktop`]: progress,
/// the machine's cores or worker processes, the result cache); `None` when cancelled (the
/// finished points stay cached).
fn run_points(
    options: &RunOptions,
    points: &[(String, Stack)],
    spec: &DesktopSpec,
) -> LabResult<Option<Vec<PcmMeasure>>> {
    let points: Vec<PcmPoint> = points
        .iter()
        .map(|(_, stack)| PcmPoint {
            stack: stack.config.clone(),
            desktop: spec.clone(),
            seed: options.seed,
        })
        .collect();
    let out = super::measure::run_measure::<PcmDesktop>(options, &points)?;
    Ok(out.into_iter().collect())
}

fn dedup(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options.scale);
    let mut spec = workload(&s);
    spec.update_fraction = 0.2;
    spec.page_write_fraction = 0.6;
    let bucket = 4096u64;
    let stores: &[u64] = match options.scale {
        Scale::Quick => &[4, 16, 64],
        _ => &[4, 16, 64, 256],
    };
    let mut points = vec![("none".to_string(), stack(s.blocks_per_plane, "page", None)?)];
    for &b in stores {
        let pcm = pcm_section(16 << 20, Some(b * bucket), None);
        points.push((
            format!("{b}"),
            stack(s.blocks_per_plane, "page", Some(pcm))?,
        ));
    }
    let mut result = ExperimentResult::default();
    let Some(m) = run_points(options, &points, &spec)? else {
        result.interrupted = true;
        return Ok(result);
    };
    let mut curve = Curve::new(
        "dedup",
        &[
            "store_buckets",
            "store_size_bytes",
            "pages_checked",
            "duplicates_removed",
            "detection_rate",
            "search_ns_per_lookup",
            "flash_pages_programmed",
            "space_saved_fraction",
        ],
    );
    let best = m.last().expect("points").dedup_shared + m.last().expect("points").dedup_unchanged;
    for (&b, p) in stores.iter().zip(&m[1..]) {
        let removed = p.dedup_shared + p.dedup_unchanged;
        curve.push(vec![
            n(b as f64),
            n((b * bucket) as f64),
            n(p.dedup_checked as f64),
            n(removed as f64),
            n(removed as f64 / best.max(1) as f64),
            n(p.search_ns_per_lookup),
            n(p.flash_pages_programmed as f64),
            n(p.space_saved_fraction),
        ]);
    }
    let (small, large) = (&m[1], m.last().expect("points"));
    result.metric(
        "duplicates_present_fraction",
        best as f64 / large.dedup_checked.max(1) as f64,
    );
    result.metric(
        "detection_rate_smallest_store",
        (small.dedup_shared + small.dedup_unchanged) as f64 / best.max(1) as f64,
    );
    result.metric("search_ns_smallest_store", small.search_ns_per_lookup);
    result.metric("search_ns_largest_store", large.search_ns_per_lookup);
    result.metric("space_saved_fraction", large.space_saved_fraction);
    result.metric("flash_pages_no_dedup", m[0].flash_pages_programmed as f64);
    result.metric(
        "flash_pages_largest_store",
        large.flash_pages_programmed as f64,
    );
    result.metric(
        "check_failures",
        m.iter().map(|p| p.check_failures as f64).sum(),
    );
    result.curves.push(curve);
    Ok(result)
}

const KINDS: [&str; 4] = ["region", "region-logged", "dpram", "ipl"];

fn buffer_sizes(scale: Scale) -> &'static [u64] {
    match scale {
        Scale::Quick => &[256 << 10, 1 << 20],
        _ => &[256 << 10, 1 << 20, 4 << 20],
    }
}

/// The FTL mappings `pcm-buffer` runs on: the page mapping (random page writes are cheap) and
/// the hybrid log-block mapping (the thesis's setting: a random page write costs a merge).
const MAPPINGS: [&str; 2] = ["page", "hybrid"];

fn buffer(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options.scale);
    let spec = workload(&s);
    let sizes = buffer_sizes(options.scale);
    let mut points = Vec::new();
    for mapping in MAPPINGS {
        points.push((
            format!("{mapping}-none"),
            stack(s.blocks_per_plane, mapping, None)?,
        ));
        for &bytes in sizes {
            for kind in KINDS {
                let pcm = pcm_section(bytes.max(64 << 10), None, Some((kind, bytes)));
                points.push((
                    format!("{mapping}-{kind}-{bytes}"),
                    stack(s.blocks_per_plane, mapping, Some(pcm))?,
                ));
            }
        }
    }
    let mut result = ExperimentResult::default();
    let Some(m) = run_points(options, &points, &spec)? else {
        result.interrupted = true;
        return Ok(result);
    };
    let mut curve = Curve::new(
        "buffers",
        &[
            "mapping",
            "buffer",
            "pcm_bytes",
            "merges",
            "erases",
            "flash_pages_programmed",
            "log_sector_writes",
            "gc_page_copies",
            "ftl_merges_switch",
            "ftl_merges_partial",
            "ftl_merges_full",
            "write_time_s",
            "nand_energy_mj",
            "pcm_read_energy_mj",
            "pcm_write_energy_mj",
            "sequential_share",
            "pcm_wear_max_over_mean",
        ],
    );
    let per_mapping = 1 + sizes.len() * KINDS.len();
    for (j, mapping) in MAPPINGS.iter().enumerate() {
        let m = &m[j * per_mapping..(j + 1) * per_mapping];
        let mut row = |name: &str, bytes: u64, p: &PcmMeasure| {
            curve.push(vec![
                (*mapping).into(),
                name.into(),
                n(bytes as f64),
                n(p.merges as f64),
                n(p.erases as f64),
                n(p.flash_pages_programmed as f64),
                n(p.log_sector_writes as f64),
                n(p.gc_page_copies as f64),
                n(p.ftl_merges_switch as f64),
                n(p.ftl_merges_partial as f64),
                n(p.ftl_merges_full as f64),
                n(p.write_time_s),
                n(p.nand_energy_mj),
                n(p.pcm_read_energy_mj),
                n(p.pcm_write_energy_mj),
                n(p.sequential_share),
                n(p.pcm_wear_max_over_mean),
            ]);
        };
        row("none", 0, &m[0]);
        for (i, &bytes) in sizes.iter().enumerate() {
            for (k, kind) in KINDS.iter().enumerate() {
                row(kind, bytes, &m[1 + i * KINDS.len() + k]);
            }
        }
        // the summary at the largest size
        let last = 1 + (sizes.len() - 1) * KINDS.len();
        for (k, kind) in KINDS.iter().enumerate() {
            let p = &m[last + k];
            let kind = kind.replace('-', "_");
            let key = |what: &str| format!("{what}_{kind}_{mapping}");
            result.metric(&key("merges"), p.merges as f64);
            result.metric(&key("erases"), p.erases as f64);
            result.metric(&key("flash_pages"), p.flash_pages_programmed as f64);
            result.metric(&key("write_time_s"), p.write_time_s);
            result.metric(&key("energy_mj"), p.energy_mj());
            result.metric(&key("sequential_share"), p.sequential_share);
        }
        // IPL's log area on the chip: sectors programmed, moved on reclaim, log-block erases
        let ipl = &m[last + KINDS.len() - 1];
        result.metric(
            &format!("log_sector_writes_ipl_{mapping}"),
            ipl.log_sector_writes as f64,
        );
        result.metric(
            &format!("log_sector_copies_ipl_{mapping}"),
            ipl.log_sector_copies as f64,
        );
        result.metric(
            &format!("log_area_erases_ipl_{mapping}"),
            ipl.log_area_erases as f64,
        );
        result.metric(&format!("erases_none_{mapping}"), m[0].erases as f64);
        result.metric(
            &format!("flash_pages_none_{mapping}"),
            m[0].flash_pages_programmed as f64,
        );
        result.metric(&format!("write_time_s_none_{mapping}"), m[0].write_time_s);
    }
    result.metric(
        "check_failures",
        m.iter().map(|p| p.check_failures as f64).sum(),
    );
    result.curves.push(curve);
    Ok(result)
}

fn combined(options: &RunOptions) -> LabResult<ExperimentResult> {
    let s = size(options.scale);
    let spec = workload(&s);
    // 16 MiB of PCM (§5.1.2): a 1 MiB fingerprint store and the rest for the log region
    let (capacity, store) = (16u64 << 20, 1u64 << 20);
    let log = capacity - store - (store / 4096) * 170 * 16;
    let variants = [
        ("none", None),
        ("dedup", Some(pcm_section(capacity, Some(store), None))),
        (
            "log-region",
            Some(pcm_section(capacity, None, Some(("region", log)))),
        ),
        (
            "dedup+log-region",
            Some(pcm_section(capacity, Some(store), Some(("region", log)))),
        ),
    ];
    let points = variants
        .iter()
        .map(|(name, pcm)| {
            let stack = stack(s.blocks_per_plane, "page", pcm.clone())?;
            Ok((name.to_string(), stack))
        })
        .collect::<LabResult<Vec<_>>>()?;
    let mut result = ExperimentResult::default();
    let Some(m) = run_points(options, &points, &spec)? else {
        result.interrupted = true;
        return Ok(result);
    };
    let mut curve = Curve::new(
        "combined",
        &[
            "variant",
            "erases",
            "flash_pages_programmed",
            "lifetime_vs_none",
            "energy_mj",
            "energy_vs_none",
            "write_time_s",
        ],
    );
    let base = &m[0];
    for ((name, _), p) in variants.iter().zip(&m) {
        curve.push(vec![
            (*name).into(),
            n(p.erases as f64),
            n(p.flash_pages_programmed as f64),
            n(lifetime(base, p)),
            n(p.energy_mj()),
            n(p.energy_mj() / base.energy_mj()),
            n(p.write_time_s),
        ]);
    }
    let both = &m[3];
    result.metric("lifetime_ratio", lifetime(base, both));
    result.metric("energy_ratio", both.energy_mj() / base.energy_mj());
    result.metric(
        "flash_write_ratio",
        both.flash_pages_programmed as f64 / base.flash_pages_programmed.max(1) as f64,
    );
    result.metric("lifetime_ratio_dedup_only", lifetime(base, &m[1]));
    result.metric("lifetime_ratio_log_only", lifetime(base, &m[2]));
    result.metric(
        "check_failures",
        m.iter().map(|p| p.check_failures as f64).sum(),
    );
    result.curves.push(curve);
    Ok(result)
}

/// Lifetime relative to `base`: the same host work wears the flash by its erases (pages
/// programmed when a run is too short to erase).
fn lifetime(base: &PcmMeasure, p: &PcmMeasure) -> f64 {
    if base.erases > 0 && p.erases > 0 {
        base.erases as f64 / p.erases as f64
    } else {
        base.flash_pages_programmed as f64 / p.flash_pages_programmed.max(1) as f64
    }
}

#[cfg(test)]
mod tests;
