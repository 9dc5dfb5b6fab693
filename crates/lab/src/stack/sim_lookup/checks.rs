//! The sim-lookup workload's keys checked against the device: each check names its key.

use super::{CacheSpec, Expected, HEADER_SLOTS, Layout, PAGE_SLOTS, RECORDS_MAX, REQUESTS_MAX};
use crate::error::LabResult;
use crate::stack::Source;
use crate::stack::sections::SimLookupWorkload;
use nandlab_core::{SimRng, SimTime};
use nandlab_ftl::FtlConfig;
use nandlab_workload::ycsb::{YcsbDistribution, YcsbSpec};

/// Checks a sim-lookup workload against the device's FTL config; errors name the key.
pub(in crate::stack) fn check(
    w: &SimLookupWorkload,
    ftl: &FtlConfig,
    source: Source<'_>,
) -> LabResult<()> {
    if ftl.search.pages == 0 {
        return Err(source.error(
            "workload.kind",
            "`sim-lookup` runs on the SSD's SiM region: add [ssd.sim] with `pages` (docs/sim.md)",
        ));
    }
    if ftl.payload != nandlab_ftl::PayloadMode::Full {
        return Err(source.error(
            "ssd.payload",
            "`sim-lookup` searches the bytes it wrote: it needs `payload = \"full\"`",
        ));
    }
    let l = layout(w, ftl).map_err(|(key, m)| source.error(key, m))?;
    cache_spec(w, l.leaves).map_err(|(key, m)| source.error(key, m))?;
    check_updates(w, ftl).map_err(|(key, m)| source.error(key, m))?;
    distribution(w).map_err(|(key, m)| source.error(key, m))?;
    arrivals(w).map_err(|(key, m)| source.error(key, m))?;
    full_page(w).map_err(|(key, m)| source.error(key, m))?;
    if !(1..=REQUESTS_MAX).contains(&w.request_count) {
        return Err(source.error(
            "workload.request_count",
            format!(
                "{} is not in 1..={REQUESTS_MAX} (the lookups and their results are held in memory)",
                w.request_count
            ),
        ));
    }
    if !(0.0..=1.0).contains(&w.miss_fraction) {
        return Err(source.error(
            "workload.miss_fraction",
            format!("{} is not in [0, 1]", w.miss_fraction),
        ));
    }
    Ok(())
}

pub(super) type KeyError = (&'static str, String);

pub(super) fn layout(w: &SimLookupWorkload, ftl: &FtlConfig) -> Result<Layout, KeyError> {
    let first_slot = if ftl.search.integrity {
        HEADER_SLOTS
    } else {
        0
    };
    let searchable = PAGE_SLOTS - first_slot;
    let slots_per_leaf = match w.slots_per_leaf {
        0 => searchable,
        n if n <= searchable => n,
        n => {
            return Err((
                "workload.slots_per_leaf",
                format!(
                    "{n}: a page has {searchable} searchable slots{}",
                    if ftl.search.integrity {
                        " (chunk 0 is the integrity header)"
                    } else {
                        ""
                    }
                ),
            ));
        }
    };
    if !(2..=RECORDS_MAX).contains(&w.records) {
        return Err((
            "workload.records",
            format!("{} is not in 2..={RECORDS_MAX}", w.records),
        ));
    }
    let leaves = w.records.div_ceil(u64::from(slots_per_leaf));
    if 2 * leaves > u64::from(ftl.search.pages) {
        return Err((
            "workload.records",
            format!(
                "{} records take {leaves} leaves of {slots_per_leaf} slots, {} pages (a key and a value page each); the SiM region has ssd.sim.pages = {}",
                w.records,
                2 * leaves,
                ftl.search.pages
            ),
        ));
    }
    Ok(Layout {
        first_slot,
        slots_per_leaf,
        leaves: leaves as u32,
    })
}

pub(super) fn distribution(w: &SimLookupWorkload) -> Result<YcsbDistribution, KeyError> {
    let d = match w.distribution.as_str() {
        "uniform" => YcsbDistribution::Uniform,
        "zipfian" => YcsbDistribution::Zipfian,
        "hotspot" => YcsbDistribution::HOTSPOT,
        "zipf" => {
            let alpha = w.zipf_alpha.ok_or((
                "workload.zipf_alpha",
                "distribution = \"zipf\" needs zipf_alpha".to_string(),
            ))?;
            if !(alpha.is_finite() && alpha > 0.0) {
                return Err(("workload.zipf_alpha", format!("{alpha} is not > 0")));
            }
            YcsbDistribution::Zipf { alpha }
        }
        other => {
            return Err((
                "workload.distribution",
                format!("unknown distribution {other:?} (uniform, zipfian, hotspot, zipf)"),
            ));
        }
    };
    if w.zipf_alpha.is_some() && w.distribution != "zipf" {
        return Err((
            "workload.zipf_alpha",
            format!(
                "applies to distribution = \"zipf\", not {:?}",
                w.distribution
            ),
        ));
    }
    let spec = YcsbSpec::read_update(1.0, d, w.records as i64);
    spec.validate()
        .map_err(|e| ("workload.distribution", e.to_string()))?;
    Ok(d)
}

/// How lookups arrive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Arrivals {
    /// Open loop: one every this long from the start.
    Every(SimTime),
    /// Closed loop: this many clients with one lookup in flight each.
    Clients(u32),
}

/// The arrivals the workload gives: `clients` (closed loop) or the open-loop spacing.
pub(super) fn arrivals(w: &SimLookupWorkload) -> Result<Arrivals, KeyError> {
    match w.clients {
        None => interarrival(w).map(Arrivals::Every),
        Some(_) if w.interarrival_ns.is_some() || w.lookups_per_s.is_some() => Err((
            "workload.clients",
            "give clients (closed loop) or interarrival_ns / lookups_per_s (open loop), not both"
                .into(),
        )),
        Some(0) => Err(("workload.clients", "must be at least 1".into())),
        Some(n) => Ok(Arrivals::Clients(n)),
    }
}

/// What a page-cache hit costs when `page_cache_hit_ns` is not given: a `pread(2)` of a
/// cached 4 KiB page plus the scan of its 512 slots, of the order of a microsecond or two on
/// a current server (an assumption; paper 004 does not state it).
pub(super) const PAGE_CACHE_HIT_NS: u64 = 2_000;

/// The full-page path's page cache over `leaves` (checks its keys).
pub(super) fn cache_spec(w: &SimLookupWorkload, leaves: u32) -> Result<CacheSpec, KeyError> {
    let coverage = w.page_cache_coverage;
    if !(0.0..=1.0).contains(&coverage) {
        return Err((
            "workload.page_cache_coverage",
            format!("{coverage} is not in [0, 1]"),
        ));
    }
    if coverage > 0.0 && w.path != "full-page" && w.update_fraction == 0.0 {
        return Err((
            "workload.page_cache_coverage",
            "the SiM path's lookups bypass the page cache (paper 004 §VII): give path = \"full-page\", or updates (update_fraction) for it to buffer"
                .into(),
        ));
    }
    if w.page_cache_hit_ns.is_some() && coverage == 0.0 {
        return Err((
            "workload.page_cache_hit_ns",
            "applies with page_cache_coverage > 0".into(),
        ));
    }
    Ok(CacheSpec {
        pages: (coverage * f64::from(2 * leaves)).round() as usize,
        hit: SimTime::from_ns(w.page_cache_hit_ns.unwrap_or(PAGE_CACHE_HIT_NS)),
    })
}

/// Whether lookups read whole pages (the baseline) instead of searching; checks `path`.
pub(super) fn full_page(w: &SimLookupWorkload) -> Result<bool, KeyError> {
    match w.path.as_str() {
        "sim" => Ok(false),
        "full-page" if w.clients.is_none() => Err((
            "workload.path",
            "`full-page` lookups run closed loop: give clients".into(),
        )),
        "full-page" => Ok(true),
        other => Err((
            "workload.path",
            format!("`{other}` is not a lookup path (sim, full-page)"),
        )),
    }
}

/// The time between arrivals; all of them within [`ARRIVALS_SPAN_MAX`].
pub(super) fn interarrival(w: &SimLookupWorkload) -> Result<SimTime, KeyError> {
    let gap_ps = match (w.interarrival_ns, w.lookups_per_s) {
        (Some(ns), None) => ns.saturating_mul(1000),
        (None, Some(rate)) if rate.is_finite() && rate >= 1e-3 => (1e12 / rate).round() as u64,
        (None, Some(rate)) => {
            return Err((
                "workload.lookups_per_s",
                format!("{rate} is not a rate ≥ 0.001 per second"),
            ));
        }
        (Some(_), Some(_)) => {
            return Err((
                "workload.lookups_per_s",
                "give interarrival_ns or lookups_per_s, not both".into(),
            ));
        }
        (None, None) => {
            return Err((
                "workload.interarrival_ns",
                "give the open-loop arrivals (interarrival_ns or lookups_per_s) or clients".into(),
            ));
        }
    };
    let span = u128::from(gap_ps) * u128::from(w.request_count);
    if span > u128::from(ARRIVALS_SPAN_MAX.as_ps()) {
        let key = if w.interarrival_ns.is_some() {
            "workload.interarrival_ns"
        } else {
            "workload.lookups_per_s"
        };
        return Err((
            key,
            format!(
                "{} lookups at this spacing arrive over more than a simulated day",
                w.request_count
            ),
        ));
    }
    Ok(SimTime::from_ps(gap_ps))
}

/// Longest time the arrivals may take (a simulated day).
pub(super) const ARRIVALS_SPAN_MAX: SimTime = SimTime::from_ms(86_400_000);

/// Which operations are updates (empty without updates): each operation on a loaded key
/// with probability `update_fraction`, from its own random stream of the seed.
pub(super) fn updates(w: &SimLookupWorkload, expected: &[Expected], seed: u64) -> Vec<bool> {
    if w.update_fraction == 0.0 {
        return Vec::new();
    }
    let mut rng = SimRng::stream(seed, "sim-lookup.updates");
    expected
        .iter()
        .map(|e| e.is_some() && rng.chance(w.update_fraction))
        .collect()
}

/// Checks `update_fraction`: a share, with closed-loop clients, on the SiM path without the
/// deadline batcher (updates run on the open-loop interface, one command at a time).
pub(super) fn check_updates(w: &SimLookupWorkload, ftl: &FtlConfig) -> Result<(), KeyError> {
    let f = w.update_fraction;
    if !(0.0..=1.0).contains(&f) {
        return Err(("workload.update_fraction", format!("{f} is not in [0, 1]")));
    }
    if f > 0.0 && w.clients.is_none() {
        return Err((
            "workload.update_fraction",
            "updates run closed loop: give clients".into(),
        ));
    }
    if f > 0.0 && w.path == "sim" && ftl.search.batch_deadline_ns > 0 {
        return Err((
            "ssd.sim.batch_deadline_ns",
            "with update_fraction > 0 SiM commands are not batched: leave it 0".into(),
        ));
    }
    Ok(())
}
