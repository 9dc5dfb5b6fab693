//! A JSON-in, JSON-out facade over the runner for the Python bindings (`crates/py`), so that the
//! bindings hold no logic and both fronts produce byte-identical results for the same inputs.

use crate::chip::ChipRunSpec;
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::experiments::{self, RunOptions, Scale};
use crate::stack::{
    ConstantFreeSpaceWorkload, DriftingFreeSpaceWorkload, EngineSection, Stack, StackOutcome,
    TraceWorkload, WorkloadSection, device_stack_from_table, device_stack_from_text,
};
use std::path::Path;

/// Runs a chip-level workload described by a JSON [`ChipRunSpec`] under `control` (a cancel
/// stops issuing requests: the report covers those issued, with `"interrupted": true`); returns
/// `{"spec": …, "report": …, "read_cdf": […], "write_cdf": […]}`.
pub fn run_chip_json(spec_json: &str, control: &Control) -> LabResult<String> {
    let spec: ChipRunSpec = from_json("chip spec", spec_json)?;
    let (report, interrupted) = spec.run_controlled(control)?;
    let mut value = serde_json::json!({
        "spec": spec,
        "report": report,
        "read_cdf": report.read_cdf,
        "write_cdf": report.write_cdf,
    });
    if interrupted {
        value["interrupted"] = serde_json::Value::Bool(true);
    }
    Ok(serde_json::to_string(&value).expect("reports serialize"))
}

/// Runs experiment `id` into `out` and returns the text of its `summary.json` (with
/// `"interrupted": true` when `control` was cancelled before it finished). With `cache_dir`,
/// points whose outputs are there (see [`plan_json`]) are read back instead of measured.
pub fn reproduce_json(
    id: &str,
    out: &Path,
    scale: &str,
    seed: u64,
    cache_dir: Option<&Path>,
    control: &Control,
) -> LabResult<String> {
    let options = RunOptions {
        control: control.clone(),
        // the Python extension cannot tell its own build apart: a cache only where the caller
        // made a fresh one for this run
        cache_dir: cache_dir.map(Path::to_path_buf),
        ..run_options(scale, seed)?
    };
    experiments::reproduce(id, &options, out)?;
    std::fs::read_to_string(out.join("summary.json")).map_err(|source| LabError::Read {
        path: out.join("summary.json").display().to_string(),
        source,
    })
}

fn run_options(scale: &str, seed: u64) -> LabResult<RunOptions> {
    let scale = match scale {
        "quick" => Scale::Quick,
        "standard" => Scale::Standard,
        "full" => Scale::Full,
        other => {
            return Err(LabError::Usage(format!(
                "scale `{other}`: expected quick, standard or full"
            )));
        }
    };
    Ok(RunOptions {
        scale,
        seed,
        ..RunOptions::default()
    })
}

/// The points of experiment `id` not yet in `cache_dir`, as JSON
/// `[{"measure", "point", "key"}, …]`: measure each anywhere with [`measure_point_json`], write
/// its output to `cache_dir/KEY.json`, plan again until the list is empty, then
/// [`reproduce_json`] with the same `cache_dir` reads them all.
pub fn plan_json(id: &str, scale: &str, seed: u64, cache_dir: &Path) -> LabResult<String> {
    let options = RunOptions {
        cache_dir: Some(cache_dir.to_path_buf()),
        ..run_options(scale, seed)?
    };
    let tasks = experiments::workers::plan(id, &options)?;
    Ok(serde_json::to_string(&tasks).expect("tasks serialize"))
}

/// One planned point measured (a registered measure's name and the point's JSON text): the
/// output's JSON text, `None` if `control` cancelled it.
pub fn measure_point_json(
    measure: &str,
    point: &str,
    control: &Control,
) -> LabResult<Option<String>> {
    experiments::measure::measure_json(measure, point, control)
}

/// `[[id, reference, title], …]` of every experiment.
pub fn experiments_json() -> String {
    let list: Vec<[&str; 3]> = experiments::registry()
        .map(|e| [e.id, e.reference, e.title])
        .collect();
    serde_json::to_string(&list).expect("strings serialize")
}

/// The TOML text of a NAND preset.
pub fn preset_toml(name: &str) -> LabResult<String> {
    Ok(nandlab_nand::preset::preset_toml(name)?.to_string())
}

pub fn preset_names() -> Vec<String> {
    nandlab_nand::preset_names()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The folder relative paths of a config are read from: the config file's folder when
/// `origin` names an existing file, else the working directory.
fn base_dir_of(origin: &str) -> std::path::PathBuf {
    let path = Path::new(origin);
    match path.parent() {
        Some(parent) if path.is_file() => parent.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// Runs a stack config given as TOML text with a block workload (the `nandlab run` format);
/// returns the report JSON (the same bytes `nandlab run --out` writes to report.json, without
/// the final newline) and, with `out`, writes the same files as `nandlab run --out`. A cancelled
/// `control` stops the run early: the report then covers the requests admitted and has
/// `"interrupted": true`.
pub fn run_ssd_toml(
    origin: &str,
    text: &str,
    out: Option<&Path>,
    control: &Control,
) -> LabResult<String> {
    let stack = Stack::from_toml(origin, text, &base_dir_of(origin), &[])?;
    if stack.config.workload.needs_engine() {
        return Err(LabError::Usage(format!(
            "{origin}: the `{}` workload runs the storage engine: use nandlab.run()",
            stack.config.workload.kind()
        )));
    }
    if let WorkloadSection::SimLookup(_) = &stack.config.workload {
        return Err(LabError::Usage(format!(
            "{origin}: the `sim-lookup` workload runs SiM commands, not block requests: use nandlab.run()"
        )));
    }
    if let WorkloadSection::Chip(_) = &stack.config.workload {
        return Err(LabError::Usage(format!(
            "{origin}: the `chip` workload runs on the bare chips, not an SSD: use nandlab.run()"
        )));
    }
    let run = stack.run(None, control)?;
    if let Some(dir) = out {
        crate::ssd::write_stack_results(&stack, &run, dir)?;
    }
    match &run.outcome {
        StackOutcome::Ssd { run, .. } => Ok(run.to_json_pretty()),
        StackOutcome::Engine { .. }
        | StackOutcome::SimLookup { .. }
        | StackOutcome::Chip { .. } => {
            unreachable!("checked above")
        }
    }
}

/// Runs a stack config given as TOML text, with `overrides_json` (`{"key.path": value, …}`)
/// applied, and returns `{"metrics": {name: value, …}, "interrupted": bool, "outcome": …}`;
/// with `out`, writes the files of `nandlab run --out`. What a sweep point runs.
pub fn run_stack_json(
    origin: &str,
    text: &str,
    overrides_json: &str,
    out: Option<&Path>,
    control: &Control,
) -> LabResult<String> {
    let overrides = crate::sweep::parse_overrides(overrides_json)?;
    let stack = Stack::from_toml(origin, text, &base_dir_of(origin), &overrides)?;
    let run = stack.run(None, control)?;
    if let Some(dir) = out {
        crate::ssd::write_stack_results(&stack, &run, dir)?;
    }
    let value = serde_json::json!({
        "metrics": run.metrics_json(),
        "interrupted": run.interrupted(),
        "outcome": run.outcome,
    });
    Ok(serde_json::to_string(&value).expect("results serialize"))
}

/// Checks a stack config given as TOML text (with `overrides_json` applied, `{"key.path":
/// value}` or empty) as `nandlab run` does before running; returns the config as JSON with
/// every default filled in.
pub fn check_run_config_toml(origin: &str, text: &str, overrides_json: &str) -> LabResult<String> {
    let overrides = crate::sweep::parse_overrides(overrides_json)?;
    let stack = Stack::from_toml(origin, text, &base_dir_of(origin), &overrides)?;
    Ok(serde_json::to_string(&stack.resolved_json()).expect("configs serialize"))
}

/// Replays a trace file on an SSD (`device`: a device file's TOML text, an SSD preset name, or
/// empty for the `bench-ssd` preset); returns `{"report": …, "folded_requests": N}` and, with
/// `out`, writes the files of `nandlab replay --out`. `control` as in [`run_ssd_toml`].
/// The result also has `read_preconditioned_pages` and `fitted_blocks_per_plane` (null when
/// the device was not grown).
pub fn replay_json(
    trace: &Path,
    format: &str,
    device: &str,
    options: ReplayOptions,
    out: Option<&Path>,
    control: &Control,
) -> LabResult<String> {
    let seed = options.seed;
    let workload = WorkloadSection::Trace(TraceWorkload {
        path: trace.display().to_string(),
        format: format.to_string(),
        closed_loop: options.closed_loop,
        queue_events: false,
        disk: None,
        precondition_reads: options.precondition_reads,
        fit_device: options.fit_device,
    });
    let stack = device_stack_text(device, &workload, None, seed)?;
    let run = stack.run(None, control)?;
    if let Some(dir) = out {
        crate::ssd::write_stack_results(&stack, &run, dir)?;
    }
    let StackOutcome::Ssd {
        run: ssd_run,
        folded_requests,
        read_preconditioned_pages,
        fitted_blocks_per_plane,
        ..
    } = &run.outcome
    else {
        unreachable!("a trace workload runs on the SSD")
    };
    let value = serde_json::json!({
        "report": ssd_run,
        "folded_requests": folded_requests,
        "read_preconditioned_pages": read_preconditioned_pages,
        "fitted_blocks_per_plane": fitted_blocks_per_plane,
    });
    Ok(serde_json::to_string(&value).expect("reports serialize"))
}

/// Parses the JSON spec `text` of `what`; an error names the field's path (`chip spec: key
/// `requests`: invalid value: integer `-1`, expected u64`), not a column of the JSON text.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> LabResult<T> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.to_string();
        // serde_json appends the position in the JSON text, meaningless to a caller
        let message = match message.rfind(" at line ") {
            Some(at) if inner.line() > 0 => message[..at].to_string(),
            _ => message,
        };
        if path == "." || path.is_empty() {
            LabError::Usage(format!("{what}: {message}"))
        } else {
            LabError::Usage(format!("{what}: key `{path}`: {message}"))
        }
    })
}

/// The options of [`replay_json`] (`nandlab replay`'s flags).
#[derive(Clone, Copy, Debug)]
pub struct ReplayOptions {
    pub closed_loop: bool,
    pub seed: u64,
    /// Precondition the pages the trace reads before writing them.
    pub precondition_reads: bool,
    /// Grow the device to the trace instead of folding it.
    pub fit_device: bool,
}

/// A stack from a device given as TOML text or an SSD preset name (empty: `bench-ssd`).
fn device_stack_text(
    device: &str,
    workload: &WorkloadSection,
    engine: Option<&EngineSection>,
    seed: u64,
) -> LabResult<Stack> {
    let device = device.trim();
    let preset = if device.is_empty() {
        Some("bench-ssd")
    } else {
        Some(device).filter(|d| crate::stack::ssd_preset_names().contains(d))
    };
    if let Some(name) = preset {
        let source = crate::stack::Source {
            origin: "device",
            text: "",
        };
        let table = crate::stack::preset_device_table(name);
        return device_stack_from_table(source, table, Path::new("."), workload, engine, seed);
    }
    device_stack_from_text("device", device, Path::new("."), workload, engine, seed)
}

/// An engine run as the Python `nandlab.engine()` sends it: by default on the `miyaji2014-ssd`
/// preset scaled by `channels`, `blocks_per_plane` and `pages_per_block`; with `device` (a device
/// file's TOML text or an SSD preset name) on that SSD instead.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineRunSpec {
    /// Insert Address Assist on/off.
    pub iaa: bool,
    /// Update-to-Delete+Insert on/off.
    pub u2di: bool,
    #[serde(default = "default_row_size")]
    pub row_size_bytes: usize,
    #[serde(default)]
    pub channels: Option<u32>,
    #[serde(default)]
    pub blocks_per_plane: Option<u32>,
    #[serde(default)]
    pub pages_per_block: Option<u32>,
    /// A device file's TOML text or an SSD preset name (replaces the scaled miyaji2014 SSD).
    #[serde(default)]
    pub device: Option<String>,
    /// `{"constant": {…}}` (paper 000 Fig. 12) or `{"drifting": {…}}` (Table I).
    pub protocol: EngineProtocol,
    #[serde(default)]
    pub seed: u64,
}

fn default_row_size() -> usize {
    119
}

/// The two measurement protocols of paper 000 §4.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum EngineProtocol {
    Constant(nandlab_engine::workload::ConstantFreeSpace),
    Drifting(nandlab_engine::workload::DriftingFreeSpace),
}

impl EngineRunSpec {
    /// The stack this spec describes.
    fn stack(&self) -> LabResult<Stack> {
        let workload = match &self.protocol {
            EngineProtocol::Constant(p) => {
                check_protocol_seed(p.seed, self.seed)?;
                WorkloadSection::ConstantFreeSpace(ConstantFreeSpaceWorkload {
                    free_space_fraction: p.free_space_fraction,
                    update_fraction: p.update_fraction,
                    warmup_query_count: p.warmup_query_count,
                    query_count: p.query_count,
                    warmup_until_stationary: p.warmup_until_stationary,
                })
            }
            EngineProtocol::Drifting(p) => {
                check_protocol_seed(p.seed, self.seed)?;
                WorkloadSection::DriftingFreeSpace(DriftingFreeSpaceWorkload {
                    free_space_fraction_start: p.free_space_fraction_start,
                    free_space_fraction_end: p.free_space_fraction_end,
                    mix: p.mix,
                    query_count_max: p.query_count_max,
                })
            }
        };
        let scaled = [self.channels, self.blocks_per_plane, self.pages_per_block];
        let device = match &self.device {
            Some(device) => {
                if scaled.iter().any(Option::is_some) {
                    return Err(LabError::Usage(
                        "engine spec: `device` replaces the scaled miyaji2014 SSD; give channels, blocks_per_plane and pages_per_block in the device instead".into(),
                    ));
                }
                device.clone()
            }
            None => crate::experiments::points::EngineDevice {
                preset: "miyaji2014-ssd",
                channels: self.channels.unwrap_or(1),
                blocks_per_plane: self.blocks_per_plane.unwrap_or(32),
                pages_per_block: self.pages_per_block.unwrap_or(32),
                planes_per_die: None,
                extra: &[],
            }
            .text(),
        };
        let engine = EngineSection {
            iaa: self.iaa,
            u2di: self.u2di,
            row_size_bytes: self.row_size_bytes,
            ..EngineSection::default()
        };
        device_stack_text(&device, &workload, Some(&engine), self.seed)
    }
}

fn check_protocol_seed(protocol: u64, spec: u64) -> LabResult<()> {
    if protocol == spec {
        Ok(())
    } else {
        Err(LabError::Usage(format!(
            "engine spec: the protocol's seed {protocol} differs from the run's seed {spec} (one seed drives the run)"
        )))
    }
}

/// Runs an engine run spec; returns the run's metrics as JSON (per-query-type counts and
/// times, device counters, energy, erases per block) plus the derived `queries_per_s`,
/// `mj_per_query` and `we_cycles_per_block`. `control` counts the inserts and queries run; when
/// it is cancelled the run stops, the metrics cover the queries measured so far and the JSON
/// has `"interrupted": true`.
pub fn run_engine_json(spec_json: &str, control: &Control) -> LabResult<String> {
    let spec: EngineRunSpec = from_json("engine spec", spec_json)?;
    let run = spec.stack()?.run(None, control)?;
    let StackOutcome::Engine {
        metrics,
        interrupted: stopped,
        ..
    } = run.outcome
    else {
        unreachable!("an engine workload runs the engine")
    };
    let mut value = serde_json::json!({
        "metrics": metrics,
        "queries_per_s": metrics.queries_per_s(),
        "mj_per_query": metrics.energy_mj_per_query(),
        "we_cycles_per_block": metrics.erases_per_block_mean(),
    });
    if stopped {
        value["interrupted"] = serde_json::Value::Bool(true);
    }
    Ok(serde_json::to_string(&value).expect("metrics serialize"))
}

/// The points of a sweep over `grid_json` (`{"key.path": [values]}`): every combination, or
/// with `zip` the i-th values together; `[[[key, value], …], …]`.
pub fn sweep_points_json(grid_json: &str, zip: bool) -> LabResult<String> {
    let value: serde_json::Value = serde_json::from_str(grid_json)
        .map_err(|e| LabError::Usage(format!("grid: expected {{\"key.path\": [values]}}: {e}")))?;
    let table = match toml::Value::try_from(&value) {
        Ok(toml::Value::Table(t)) => t,
        _ => {
            return Err(LabError::Usage(
                "grid: expected {\"key.path\": [values]}".into(),
            ));
        }
    };
    let (what, points) = if zip {
        ("zip", crate::sweep::zip_points(&table))
    } else {
        ("grid", crate::sweep::grid_points(&table))
    };
    let points = points.map_err(|(key, message)| {
        LabError::Usage(if key.is_empty() {
            format!("{what}: {message}")
        } else {
            format!("{what}: key `{key}`: {message}")
        })
    })?;
    let json: Vec<Vec<(String, serde_json::Value)>> = points
        .iter()
        .map(|p| crate::sweep::settings_json(p))
        .collect();
    Ok(serde_json::to_string(&json).expect("points serialize"))
}

/// [`crate::sweep::csv`] from JSON (`keys_json`: the swept key paths; `rows_json`: point
/// results).
pub fn sweep_csv_json(keys_json: &str, rows_json: &str) -> LabResult<String> {
    let keys: Vec<String> =
        serde_json::from_str(keys_json).map_err(|e| LabError::Usage(format!("keys: {e}")))?;
    let rows: Vec<crate::sweep::PointResult> =
        serde_json::from_str(rows_json).map_err(|e| LabError::Usage(format!("rows: {e}")))?;
    Ok(crate::sweep::csv(&keys, &rows))
}

/// `[[name, description, source], …]` of every SSD preset.
pub fn ssd_presets_json() -> LabResult<String> {
    let list = crate::stack::ssd_preset_names()
        .into_iter()
        .map(|name| {
            let p = crate::stack::ssd_preset(name).map_err(LabError::Usage)?;
            Ok([p.name, p.description, p.source])
        })
        .collect::<LabResult<Vec<_>>>()?;
    Ok(serde_json::to_string(&list).expect("strings serialize"))
}

/// `{"ssd": [{name, unit, description}, …], "engine": […], "sim_lookup": […], "chip": […]}`:
/// the metric rows of stack runs, as declared once in [`crate::stack::SSD_METRICS`],
/// [`crate::stack::ENGINE_METRICS`], [`crate::stack::SIM_LOOKUP_METRICS`] and
/// [`crate::stack::CHIP_METRICS`].
pub fn metric_defs_json() -> String {
    let value = serde_json::json!({
        "ssd": crate::stack::SSD_METRICS,
        "engine": crate::stack::ENGINE_METRICS,
        "sim_lookup": crate::stack::SIM_LOOKUP_METRICS,
        "chip": crate::stack::CHIP_METRICS,
    });
    serde_json::to_string(&value).expect("metric definitions serialize")
}
