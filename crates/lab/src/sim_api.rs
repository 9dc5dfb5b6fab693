//! JSON-in, JSON-out facade over `nandlab-search` for the Python bindings (`nandlab.sim`): the
//! evaluation harness (paper 004 §VI: [`run_eval`], the deadline-batched readers
//! [`run_batched`], Table I) and the secondary index of bit-packed rows with its equality and
//! range queries (§V-B, §V-C). The bindings hold no logic; every key is checked and a bad one
//! is named.

use crate::error::{LabError, LabResult};
use crate::sim_eval::{BatchConfig, EvalConfig, EvalMode, run_batched, run_eval, table1};
use nandlab_core::SimTime;
use nandlab_ftl::search::{SearchStore, StoreConfig};
use nandlab_nand::{NandConfig, NandSim, PageAddress};
use nandlab_search::index::{
    ChipMeter, FieldRange, Predicate, RangeMethod, RowLayout, SecondaryIndex,
};
use nandlab_search::{ChipDevice, SearchDevice};
use nandlab_workload::ycsb::YcsbDistribution;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn usage(what: &str, message: impl std::fmt::Display) -> LabError {
    LabError::Usage(format!("{what}: {message}"))
}

fn search_error(what: &str, e: nandlab_search::SearchError) -> LabError {
    usage(what, e)
}

/// A YCSB request distribution: `"uniform"`, `"zipfian"`, `"latest"`, `"hotspot"` (with
/// `hot_data_fraction`, `hot_op_fraction`) or `"zipf"` (with `alpha`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DistributionSpec {
    name: String,
    #[serde(default)]
    alpha: Option<f64>,
    #[serde(default)]
    hot_data_fraction: Option<f64>,
    #[serde(default)]
    hot_op_fraction: Option<f64>,
}

impl DistributionSpec {
    fn parse(&self, key: &str) -> LabResult<YcsbDistribution> {
        let need = |v: Option<f64>, field: &str| {
            v.ok_or_else(|| usage(key, format!("{:?} needs {field}", self.name)))
        };
        Ok(match self.name.as_str() {
            "uniform" => YcsbDistribution::Uniform,
            "zipfian" => YcsbDistribution::Zipfian,
            "latest" => YcsbDistribution::Latest,
            "hotspot" => YcsbDistribution::Hotspot {
                data_fraction: need(self.hot_data_fraction, "hot_data_fraction")?,
                op_fraction: need(self.hot_op_fraction, "hot_op_fraction")?,
            },
            "zipf" => YcsbDistribution::Zipf {
                alpha: need(self.alpha, "alpha")?,
            },
            other => {
                return Err(usage(
                    key,
                    format!(
                        "unknown distribution {other:?} (uniform, zipfian, latest, hotspot, zipf)"
                    ),
                ));
            }
        })
    }
}

fn default_preset() -> String {
    "sim2024".into()
}

/// The chip of a harness run, through the stack's one chip builder: `[nand] preset = …`, with
/// the raw bit error rates set to 0 unless `bit_errors`.
fn chip(preset: &str, bit_errors: bool) -> LabResult<NandConfig> {
    use crate::experiments::points::set;
    let mut nand = toml::Table::new();
    set(&mut nand, "preset", preset.into());
    if !bit_errors {
        set(&mut nand, "reliability.rber_base", 0.0.into());
        set(
            &mut nand,
            "reliability.rber_retention_coeff_per_day",
            0.0.into(),
        );
    }
    let config = crate::stack::chip_from_table("sim harness", &nand)?;
    if config.search.is_none() {
        return Err(usage(
            "preset",
            format!("{preset:?} has no [search] section (use sim2024)"),
        ));
    }
    Ok(config)
}

/// One point of the evaluation harness (defaults: `EvalConfig::new`'s).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EvalSpec {
    #[serde(default = "default_preset")]
    preset: String,
    /// `"sim"` or `"baseline"`.
    mode: String,
    read_share: f64,
    cache_coverage: f64,
    distribution: DistributionSpec,
    #[serde(default)]
    leaves: Option<u32>,
    #[serde(default)]
    fill_slots: Option<usize>,
    #[serde(default)]
    queries: Option<u64>,
    #[serde(default)]
    warmup_share: Option<f64>,
    #[serde(default)]
    sim_read_share: Option<f64>,
    #[serde(default)]
    seed: Option<u64>,
}

/// Runs one point of the evaluation harness ([`crate::sim_eval::run_eval`]); returns the
/// `EvalResult` as JSON.
pub fn sim_eval_json(spec_json: &str) -> LabResult<String> {
    let spec: EvalSpec = crate::api::from_json("sim eval spec", spec_json)?;
    let mode = match spec.mode.as_str() {
        "sim" => EvalMode::Sim,
        "baseline" => EvalMode::Baseline,
        other => return Err(usage("mode", format!("{other:?} (use sim or baseline)"))),
    };
    let distribution = spec.distribution.parse("distribution")?;
    let base = EvalConfig::new(mode, spec.read_share, spec.cache_coverage, distribution);
    let config = EvalConfig {
        leaves: spec.leaves.unwrap_or(base.leaves),
        fill_slots: spec.fill_slots.unwrap_or(base.fill_slots),
        queries: spec.queries.unwrap_or(base.queries),
        warmup_share: spec.warmup_share.unwrap_or(base.warmup_share),
        sim_read_share: spec.sim_read_share.unwrap_or(base.sim_read_share),
        seed: spec.seed.unwrap_or(base.seed),
        ..base
    };
    let chip = chip(&spec.preset, true)?;
    let r = run_eval(&chip, &config).map_err(|e| search_error("sim eval", e))?;
    let value = json!({
        "mode": mode.label(),
        "queries_measured": r.queries_measured,
        "elapsed_ns": r.elapsed_ns,
        "qps": r.qps,
        "nand_energy_nj": r.nand_energy_nj,
        "read_latency_ns": quartiles_json(&r.read_latency_ns),
        "internal_bus_bytes": r.internal_bus_bytes,
        "host_bus_bytes": r.host_bus_bytes,
        "write_backs": r.write_backs,
        "full_page_reads": r.full_page_reads,
        "chip_lookups": r.chip_lookups,
        "cache_served_reads": r.cache_served_reads,
        "wrong_values": r.wrong_values,
        "concentration_percent": r.concentration,
    });
    Ok(value.to_string())
}

/// Closed-loop readers through the deadline batch scheduler (§IV-E).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchSpec {
    #[serde(default = "default_preset")]
    preset: String,
    leaves: u32,
    fill_slots: usize,
    clients: u32,
    queries: u64,
    #[serde(default = "default_warmup")]
    warmup_share: f64,
    distribution: DistributionSpec,
    /// Batching deadline in ns (`null`: no batching).
    deadline_ns: Option<f64>,
    #[serde(default = "default_seed")]
    seed: u64,
}

fn default_warmup() -> f64 {
    0.3
}

fn default_seed() -> u64 {
    1
}

/// Runs the deadline-batched readers ([`crate::sim_eval::run_batched`]).
pub fn sim_batch_json(spec_json: &str) -> LabResult<String> {
    let spec: BatchSpec = crate::api::from_json("sim batch spec", spec_json)?;
    let deadline = match spec.deadline_ns {
        Some(ns) if !(ns.is_finite() && ns >= 0.0) => {
            return Err(usage("deadline_ns", format!("{ns} is not a time")));
        }
        Some(ns) => Some(SimTime::from_ns_f64(ns)),
        None => None,
    };
    let config = BatchConfig {
        leaves: spec.leaves,
        fill_slots: spec.fill_slots,
        clients: spec.clients,
        queries: spec.queries,
        warmup_share: spec.warmup_share,
        distribution: spec.distribution.parse("distribution")?,
        deadline,
        seed: spec.seed,
    };
    let chip = chip(&spec.preset, true)?;
    let r = run_batched(&chip, &config).map_err(|e| search_error("sim batch", e))?;
    Ok(json!({
        "queries_measured": r.queries_measured,
        "qps": r.qps,
        "merge_probability": r.merge_probability,
        "batch_size_mean": r.batch_size_mean,
        "read_latency_ns": quartiles_json(&r.read_latency_ns),
    })
    .to_string())
}

/// The paper's Table I recomputed from its stated bus rates and currents.
pub fn sim_table1_json() -> String {
    let t = table1();
    let column = |c: &crate::sim_eval::Table1Column| {
        json!({
            "io_bytes": c.io_bytes,
            "bus_mts": c.bus_mts,
            "current_ma": c.current_ma,
            "voltage_v": c.voltage_v,
            "latency_us": c.latency_us(),
            "energy_nj": c.energy_nj(),
        })
    };
    json!({
        "sim": column(&t.sim),
        "full_page": column(&t.full),
        "window_bytes": t.window_bytes,
        "host_reduction": t.host_reduction(),
        "internal_reduction": t.internal_reduction(),
    })
    .to_string()
}

/// A query of the secondary index.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuerySpec {
    #[serde(default)]
    equal: BTreeMap<String, u64>,
    #[serde(default)]
    range: Option<RangeSpec>,
    /// `"approximate"` (default), `"aligned_blocks"`, `"full_page"` (the baseline) or
    /// `{"searches_at_most": n}`.
    #[serde(default)]
    method: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeSpec {
    attribute: String,
    lo: u64,
    hi: u64,
}

/// Rows, their layout and the queries to run on a fresh SiM chip.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexSpec {
    #[serde(default = "default_preset")]
    preset: String,
    #[serde(default = "default_seed")]
    seed: u64,
    /// `[[name, bits], …]`, most significant first.
    attributes: Vec<(String, u32)>,
    /// Bits of the row id (the row's position); default: enough for the rows.
    #[serde(default)]
    row_id_bits: Option<u32>,
    /// One list of attribute values per row.
    rows: Vec<Vec<u64>>,
    queries: Vec<QuerySpec>,
    /// Keep the preset's raw bit errors (default: off, so queries are exact).
    #[serde(default)]
    bit_errors: bool,
}

enum Method {
    Chip(RangeMethod),
    FullPage,
}

fn method(value: &Option<Value>, key: &str) -> LabResult<Method> {
    let bad = || {
        usage(
            key,
            "use \"approximate\", \"aligned_blocks\", \"full_page\" or {\"searches_at_most\": n}",
        )
    };
    Ok(match value {
        None => Method::Chip(RangeMethod::Approximate),
        Some(Value::String(s)) => match s.as_str() {
            "approximate" => Method::Chip(RangeMethod::Approximate),
            "aligned_blocks" => Method::Chip(RangeMethod::AlignedBlocks),
            "full_page" => Method::FullPage,
            _ => return Err(bad()),
        },
        Some(Value::Object(o)) if o.len() == 1 => {
            let n = o
                .get("searches_at_most")
                .and_then(Value::as_u64)
                .filter(|n| (1..=u64::from(u32::MAX)).contains(n))
                .ok_or_else(bad)?;
            Method::Chip(RangeMethod::SearchesAtMost(n as u32))
        }
        Some(_) => return Err(bad()),
    })
}

/// Builds a secondary index of `rows` on a fresh chip and runs `queries` on it; returns
/// `{"pages": …, "rows": …, "queries": [{"row_ids": […], "stats": {…}, "cost": {…}}]}`.
pub fn sim_index_json(spec_json: &str) -> LabResult<String> {
    let spec: IndexSpec = crate::api::from_json("sim index spec", spec_json)?;
    let names: Vec<(&str, u32)> = spec
        .attributes
        .iter()
        .map(|(n, b)| (n.as_str(), *b))
        .collect();
    let rows = spec.rows.len() as u64;
    let row_id_bits = spec
        .row_id_bits
        .unwrap_or_else(|| (64 - rows.saturating_sub(1).leading_zeros()).max(1));
    let layout = RowLayout::new(&names, row_id_bits).map_err(|e| search_error("attributes", e))?;
    let mut packed = Vec::with_capacity(spec.rows.len());
    for (i, values) in spec.rows.iter().enumerate() {
        if values.len() != names.len() {
            return Err(usage(
                &format!("rows[{i}]"),
                format!("{} values for {} attributes", values.len(), names.len()),
            ));
        }
        packed.push(
            layout
                .pack(values, i as u64)
                .map_err(|e| search_error(&format!("rows[{i}]"), e))?,
        );
    }
    let config = chip(&spec.preset, spec.bit_errors)?;
    let mut sim = NandSim::new(config, spec.seed).map_err(|e| usage("preset", e))?;
    let g = sim.geometry().clone();
    let pages = packed
        .len()
        .div_ceil(nandlab_search::index::secondary::ROWS_PER_PAGE);
    let blocks_needed = pages.div_ceil(g.pages_per_block as usize).max(1);
    let blocks: Vec<PageAddress> = (0..g.total_blocks())
        .take(blocks_needed)
        .map(|b| g.block_address(nandlab_nand::BlockId(b)))
        .collect::<Result<_, _>>()
        .map_err(|e| usage("preset", e))?;
    if blocks.len() < blocks_needed {
        return Err(usage(
            "rows",
            format!(
                "{} rows need {blocks_needed} blocks; the chip has {}",
                rows,
                blocks.len()
            ),
        ));
    }
    let store_config = StoreConfig {
        logical_pages: pages.max(1) as u32,
        ..StoreConfig::default()
    };
    let store = SearchStore::new(&mut sim, blocks, store_config)
        .map_err(|e| search_error("store", e.into()))?;
    let mut sim = ChipDevice::new(sim, store);
    let now = sim.now();
    let mut index = SecondaryIndex::build(&mut sim, now, layout, &packed)
        .map_err(|e| search_error("rows", e))?;
    ChipMeter::start(&sim).finish(&mut sim);
    let mut results = Vec::with_capacity(spec.queries.len());
    for (q, query) in spec.queries.iter().enumerate() {
        let key = format!("queries[{q}]");
        let equal: Vec<(&str, u64)> = query.equal.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let predicate = Predicate {
            equal: &equal,
            range: query.range.as_ref().map(|r| FieldRange {
                attribute: &r.attribute,
                lo: r.lo,
                hi: r.hi,
            }),
        };
        let meter = ChipMeter::start(&sim);
        let now = sim.now();
        let selection = match method(&query.method, &format!("{key}.method"))? {
            Method::Chip(m) => index.select(&mut sim, now, &predicate, m),
            Method::FullPage => index.select_full_page(&mut sim, now, &predicate),
        }
        .map_err(|e| search_error(&key, e))?;
        let cost = meter.finish(&mut sim);
        let s = selection.stats;
        results.push(json!({
            "row_ids": selection.row_ids,
            "stats": {
                "pages": s.pages,
                "searches": s.searches,
                "search_commands": s.search_commands,
                "candidates": s.candidates,
                "refined_out": s.refined_out,
                "chunks_gathered": s.chunks_gathered,
                "full_reads": s.full_reads,
            },
            "cost": {
                "bus_bytes": cost.bus_bytes,
                "energy_nj": cost.energy_nj,
                "elapsed_ns": cost.elapsed_ns,
            },
        }));
    }
    Ok(json!({
        "pages": index.page_count(),
        "rows": index.rows(),
        "queries": results,
    })
    .to_string())
}

/// The harness's read-latency percentiles (p25, p50, p75, p99, in that order) as a JSON object.
fn quartiles_json(latency_ns: &[f64; 4]) -> serde_json::Value {
    json!({
        "p25": latency_ns[0],
        "p50": latency_ns[1],
        "p75": latency_ns[2],
        "p99": latency_ns[3],
    })
}

#[cfg(test)]
mod tests {
    use super::chip;

    /// The harness's chip comes from the stack's chip builder: the preset as it is with bit
    /// errors, the raw bit error rates 0 without; a chip without Search-in-Memory or an
    /// unknown preset is a one-line error naming the key.
    #[test]
    fn the_chip_is_the_presets_through_the_builder() {
        let preset = nandlab_nand::preset("sim2024").unwrap();
        assert_eq!(chip("sim2024", true).unwrap(), preset);
        let quiet = chip("sim2024", false).unwrap();
        assert_eq!(quiet.reliability.rber_base, 0.0);
        assert_eq!(quiet.reliability.rber_retention_coeff_per_day, 0.0);
        assert_eq!(quiet.timing, preset.timing);
        let e = chip("mlc1", false).unwrap_err().to_string();
        assert!(e.contains("no [search] section"), "{e}");
        let e = chip("no-such", false).unwrap_err().to_string();
        assert!(e.contains("nand.preset") && !e.contains('\n'), "{e}");
    }
}
