//! The stack config: one TOML file describes a whole run, chip to workload, and one builder
//! ([`Stack`]) turns it into a running stack for the CLI, Python, every experiment and every
//! benchmark.
//!
//! ```toml
//! [run]          seed
//! [nand]         preset = "mlc1" | file = "chip.toml" | a whole chip config, then typed
//!                overrides by section ([nand.geometry], [nand.timing], …; the chip-config layout)
//! [ssd]          preset = "bench-ssd" (an SSD preset: presets/ssd/), op_fraction, payload,
//!                [ssd.host] [ssd.mapping] [ssd.gc] [ssd.wear] [ssd.buffer] [ssd.hints]
//!                [ssd.scheduler] [ssd.slc_cache] [ssd.sim] [ssd.controller] [ssd.nvme], each
//!                the typed config of its component (`nandlab_ftl::GcConfig`, …)
//! [engine]       optional: paper 000's row store (iaa, u2di, row_size_bytes, …)
//! [precondition] optional: fill_fraction, random_overwrites
//! [workload]     kind = "synthetic" | "trace" | "fio" | "constant-free-space" |
//!                "drifting-free-space" | "sim-lookup" | "chip" (bare chips: [nand] only),
//!                with that kind's keys
//! ```
//! Unknown keys and keys that do not apply (e.g. a GC policy under the block mapping) are
//! errors; every error names the key path and, when the key is in the file, its line
//! (docs/stack.md is the reference of every key).

mod chip;
mod footprint;
mod locate;
mod nvme;
mod pcm;
mod presets;
mod run;
mod sections;
mod sim_lookup;
mod ssd;
mod written;

pub use chip::{CHIP_METRICS, CHIP_POLL_REQUESTS, chip_metrics};
pub use locate::Source;
/// What a `[pcm]` stage reports, and the trace formats of `[workload] kind = "trace"`.
pub use nandlab_ftl::PcmStageReport;
pub use nandlab_workload::TraceFormat;
pub use pcm::{PcmDedupSection, PcmSection, new_ssd_with_pcm};
pub use presets::{SsdPreset, ssd_preset, ssd_preset_names};
pub use run::{
    ENGINE_METRICS, MetricDef, SIM_LOOKUP_METRICS, SSD_METRICS, engine_metrics, ssd_metrics,
};
pub use run::{StackOutcome, StackRun};
pub use sections::{
    ChipWorkloadSpec, ConstantFreeSpaceWorkload, DriftingFreeSpaceWorkload, EngineSection,
    FioWorkload, RunSection, SimLookupWorkload, TraceWorkload, WorkloadSection,
};
pub use sim_lookup::{EMPTY_KEY, SimLookupReport, sim_lookup_metrics};
pub use ssd::SsdSection;
pub use written::Written;

use crate::error::{LabError, LabResult};
use nandlab_ftl::{FtlConfig, Precondition, SsdConfig};
use nandlab_nand::NandConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A stack config as written (after an SSD preset is merged in), every section typed except
/// `[nand]`, which stays a table until [`Stack::resolve`] merges it over its chip preset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    #[serde(default)]
    pub run: RunSection,
    pub nand: toml::Table,
    #[serde(default)]
    pub ssd: SsdSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<Precondition>,
    /// Optional PCM front end (dedup and/or a log buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcm: Option<PcmSection>,
    /// Generated page content for the writes of a block workload (needed by `[pcm]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<nandlab_workload::content::ContentSpec>,
    pub workload: WorkloadSection,
}

/// A resolved, validated stack: the config plus the chip and FTL configs it describes and the
/// folder relative paths are read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub config: StackConfig,
    pub nand: NandConfig,
    pub ftl: FtlConfig,
    pub base_dir: PathBuf,
}

/// Old run-config sections and the keys that replace them.
const OLD_SECTIONS: &[(&str, &str)] = &[
    (
        "device",
        "[nand] (preset = …, overrides as [nand.geometry] …)",
    ),
    ("ftl", "[ssd] with [ssd.gc], [ssd.host], … (docs/stack.md)"),
    ("seed", "[run] seed"),
];

impl Stack {
    /// Reads and resolves a stack config file.
    pub fn load(path: &Path) -> LabResult<Stack> {
        let text = std::fs::read_to_string(path).map_err(|source| LabError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let base_dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Stack::from_toml(&path.display().to_string(), &text, &base_dir, &[])
    }

    /// Parses `text` (named `origin` in errors), applies `overrides` (dot key path = value, as
    /// a sweep point sets them), merges the SSD preset, and resolves and checks everything.
    pub fn from_toml(
        origin: &str,
        text: &str,
        base_dir: &Path,
        overrides: &[(String, toml::Value)],
    ) -> LabResult<Stack> {
        let source = Source { origin, text };
        let mut table: toml::Table = toml::from_str(text).map_err(|e| source.syntax_error(&e))?;
        for (path, value) in overrides {
            set_path(&mut table, path).map_err(|m| source.error(path, m))?;
            *get_path_mut(&mut table, path).expect("just created") = value.clone();
        }
        Stack::from_table(source, table, base_dir)
    }

    /// [`Stack::from_toml`] on a table already parsed (errors are located in `source`).
    pub fn from_table(source: Source<'_>, table: toml::Table, base_dir: &Path) -> LabResult<Stack> {
        let mut table = with_ssd_preset(source, table)?;
        seed_the_generator(&mut table);
        check_workload_keys(source, &table)?;
        let config: StackConfig = deserialize(source, "", toml::Value::Table(table))?;
        Stack::resolve(source, config, base_dir)
    }

    /// Resolves `[nand]` and `[ssd]` of a typed config and checks the whole stack.
    pub fn resolve(source: Source<'_>, config: StackConfig, base_dir: &Path) -> LabResult<Stack> {
        if let WorkloadSection::Chip(_) = &config.workload {
            return Stack::resolve_chip(source, config, base_dir);
        }
        let device = DeviceFile {
            nand: config.nand.clone(),
            ssd: config.ssd.clone(),
            pcm: None, // checked with the whole stack below
        };
        let (nand, ftl) = device.resolve(source, base_dir)?;
        let stack = Stack {
            config,
            nand,
            ftl,
            base_dir: base_dir.to_path_buf(),
        };
        stack.check(source)?;
        Ok(stack)
    }

    /// A `kind = "chip"` stack: the chips of `[nand]` alone (no SSD: the other sections do
    /// not apply, and the FTL config is the unused default).
    fn resolve_chip(source: Source<'_>, config: StackConfig, base_dir: &Path) -> LabResult<Stack> {
        for (key, present) in [
            ("ssd", config.ssd != SsdSection::default()),
            ("engine", config.engine.is_some()),
            ("precondition", config.precondition.is_some()),
            ("pcm", config.pcm.is_some()),
            ("content", config.content.is_some()),
        ] {
            if present {
                return Err(source.error(
                    key,
                    "does not apply to `chip`, which runs on the bare chips of [nand] (no SSD)",
                ));
            }
        }
        if let WorkloadSection::Chip(w) = &config.workload
            && w.request_count == 0
        {
            return Err(source.error("workload.request_count", "must be at least 1"));
        }
        let nand = resolve_nand(source, &config.nand, base_dir)?;
        Ok(Stack {
            config,
            nand,
            ftl: FtlConfig::default(),
            base_dir: base_dir.to_path_buf(),
        })
    }

    /// The SSD of this stack.
    pub fn ssd_config(&self) -> SsdConfig {
        SsdConfig {
            ftl: self.ftl.clone(),
            ..SsdConfig::from_nand(self.nand.clone())
        }
    }

    /// A path named in the config, relative to the config file's folder.
    pub fn path(&self, written: &str) -> PathBuf {
        let p = Path::new(written);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// The config with every default filled in, as JSON (what a result records, and what a
    /// result cache hashes).
    pub fn resolved_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(&self.config).expect("configs serialize");
        value["nand"] = serde_json::to_value(&self.nand).expect("configs serialize");
        value["ssd"] = serde_json::to_value(&self.ftl).expect("configs serialize");
        value
    }

    fn check(&self, source: Source<'_>) -> LabResult<()> {
        if let WorkloadSection::SimLookup(w) = &self.config.workload {
            // the workload writes its own leaf pages on a SiM device
            for (key, present) in [
                ("content", self.config.content.is_some()),
                ("pcm", self.config.pcm.is_some()),
                ("precondition", self.config.precondition.is_some()),
            ] {
                if present {
                    return Err(source.error(
                        key,
                        "does not apply to `sim-lookup`, which writes its own leaf pages to the SiM region",
                    ));
                }
            }
            sim_lookup::check(w, &self.ftl, source)?;
        }
        self.check_pcm(source)?;
        self.check_content(source)?;
        if let Some(p) = &self.config.precondition {
            p.validate().map_err(|e| match e {
                nandlab_ftl::FtlError::Config { key, message } => source.error(
                    &format!("precondition.{}", key.trim_start_matches("precondition.")),
                    message,
                ),
                other => other.into(),
            })?;
        }
        let workload = &self.config.workload;
        match (&self.config.engine, workload.needs_engine()) {
            (None, true) => {
                return Err(source.error(
                    "workload.kind",
                    format!(
                        "`{}` runs queries on the storage engine: add an [engine] section",
                        workload.kind()
                    ),
                ));
            }
            (Some(_), false) => {
                return Err(source.error(
                    "engine",
                    format!("the `{}` workload does not use the storage engine (engine workloads: constant-free-space, drifting-free-space)", workload.kind()),
                ));
            }
            _ => {}
        }
        if self.config.engine.is_some() && self.config.precondition.is_some() {
            return Err(source.error(
                "precondition",
                "the engine's protocols fill the device themselves; remove [precondition]",
            ));
        }
        if let WorkloadSection::Synthetic(spec) = workload {
            // checked against the page mapping's logical capacity (the run checks it again
            // against the exact capacity of the chosen mapping)
            let mut spec = spec.clone();
            if spec.span_bytes == 0 {
                let capacity =
                    nandlab_ftl::logical_pages(&self.nand.geometry, self.ftl.op_fraction)
                        * u64::from(self.nand.geometry.page_size_bytes);
                spec.span_bytes = capacity.saturating_sub(spec.offset_bytes);
            }
            spec.validate().map_err(|e| match e {
                nandlab_workload::WorkloadError::Invalid { key, message } => {
                    source.error(&format!("workload.{key}"), message)
                }
                other => other.into(),
            })?;
        }
        if let WorkloadSection::Trace(t) = workload {
            let format = t
                .format
                .parse::<nandlab_workload::TraceFormat>()
                .map_err(|e| source.error("workload.format", e))?;
            if t.queue_events && format != nandlab_workload::TraceFormat::Blkparse {
                return Err(source.error(
                    "workload.queue_events",
                    format!("applies to blkparse traces (Q lines), not {format} traces"),
                ));
            }
        }
        if self.config.engine.is_some() && self.ftl.payload != nandlab_ftl::PayloadMode::Full {
            return Err(source.error(
                "ssd.payload",
                "the storage engine keeps rows in pages: it needs `payload = \"full\"`",
            ));
        }
        Ok(())
    }
}

/// A device: the `[nand]`, `[ssd]` and optional `[pcm]` of a stack config alone (what
/// `--device FILE` of `nandlab sql` and `tpcc` reads, and what an SSD preset holds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    #[serde(default)]
    pub nand: toml::Table,
    #[serde(default)]
    pub ssd: SsdSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcm: Option<PcmSection>,
}

impl DeviceFile {
    /// Parses a device file or an SSD preset name, resolved and checked as an SSD config; a
    /// `[pcm]` section is refused (see [`DeviceFile::load_with_pcm`]).
    pub fn load(origin: &str, text: &str, base_dir: &Path) -> LabResult<SsdConfig> {
        let (config, pcm) = DeviceFile::load_with_pcm(origin, text, base_dir, false)?;
        if pcm.is_some() {
            return Err(Source { origin, text }.error(
                "pcm",
                "this device takes no PCM stage (a device for `nandlab sql` or `tpcc` does)",
            ));
        }
        Ok(config)
    }

    /// Parses a device file or an SSD preset name, resolved and checked as an SSD config, and
    /// the PCM stage of its `[pcm]` section, checked against it; `full_payload` sets
    /// `payload = "full"` whatever the file says (for users that read back what they wrote).
    pub fn load_with_pcm(
        origin: &str,
        text: &str,
        base_dir: &Path,
        full_payload: bool,
    ) -> LabResult<(SsdConfig, Option<nandlab_ftl::PcmStageConfig>)> {
        let source = Source { origin, text };
        let table: toml::Table = toml::from_str(text).map_err(|e| source.syntax_error(&e))?;
        let table = with_ssd_preset(source, table)?;
        let device: DeviceFile = deserialize(source, "", toml::Value::Table(table))?;
        let (nand, mut ftl) = device.resolve(source, base_dir)?;
        if full_payload {
            ftl.payload = nandlab_ftl::PayloadMode::Full;
        }
        let pcm = pcm::checked_stage(device.pcm.as_ref(), &nand, &ftl, source)?;
        Ok((
            SsdConfig {
                ftl,
                ..SsdConfig::from_nand(nand)
            },
            pcm,
        ))
    }

    /// The SSD of a device given as a table (`[nand]` and `[ssd]`, built as typed values;
    /// errors name the key in `origin`).
    pub fn from_table(origin: &str, table: toml::Table) -> LabResult<SsdConfig> {
        let source = Source { origin, text: "" };
        let table = with_ssd_preset(source, table)?;
        let device: DeviceFile = deserialize(source, "", toml::Value::Table(table))?;
        if device.pcm.is_some() {
            return Err(source.error("pcm", "this device takes no PCM stage"));
        }
        let (nand, ftl) = device.resolve(source, Path::new("."))?;
        Ok(SsdConfig {
            ftl,
            ..SsdConfig::from_nand(nand)
        })
    }

    /// The SSD of preset `name` alone.
    pub fn preset(name: &str) -> LabResult<SsdConfig> {
        DeviceFile::from_table("preset", preset_device_table(name))
    }

    /// The chip and FTL configs, checked together (errors name the stack-config key).
    fn resolve(&self, source: Source<'_>, base_dir: &Path) -> LabResult<(NandConfig, FtlConfig)> {
        let nand = resolve_nand(source, &self.nand, base_dir)?;
        let ftl = self
            .ssd
            .to_ftl()
            .map_err(|(key, message)| source.error(&key, message))?;
        let config = SsdConfig {
            ftl,
            ..SsdConfig::from_nand(nand)
        };
        config.validate().map_err(|e| match &e {
            nandlab_ftl::FtlError::Config { key, message } => {
                let key = ssd::stack_key(key);
                let key = if key.starts_with("ssd.") || key == "nand" {
                    key.to_string()
                } else {
                    format!("nand.{key}")
                };
                source.error(&key, message)
            }
            _ => LabError::from(e),
        })?;
        let SsdConfig { device, ftl } = config;
        Ok((device.nand.expect("built from a chip config"), ftl))
    }
}

/// The device of SSD preset `name` as a table: `[ssd] preset = NAME`.
pub fn preset_device_table(name: &str) -> toml::Table {
    let mut table = toml::Table::new();
    set_key(&mut table, "ssd.preset", name.into());
    table
}

/// The stack of `nandlab replay` / `fio`: `device` is an SSD preset name or a device file
/// (`[nand]` and `[ssd]`, default: the `bench-ssd` preset), with the given workload and seed.
/// Paths in the workload are taken as written (relative to the working directory).
pub fn device_stack(
    device: Option<&str>,
    workload: &WorkloadSection,
    seed: u64,
) -> LabResult<Stack> {
    let preset = match device {
        None => Some("bench-ssd"),
        Some(name) if ssd_preset_names().contains(&name) => Some(name),
        Some(_) => None,
    };
    if let Some(name) = preset {
        let source = Source {
            origin: "--device",
            text: "",
        };
        let table = preset_device_table(name);
        return device_stack_from_table(source, table, Path::new("."), workload, None, seed);
    }
    let path = device.expect("a device that is not a preset is a path");
    let text = std::fs::read_to_string(path).map_err(|source| LabError::Read {
        path: format!(
            "{path} (--device takes a device file or an SSD preset: {})",
            ssd_preset_names().join(", ")
        ),
        source,
    })?;
    let dir = Path::new(path).parent().unwrap_or(Path::new("."));
    device_stack_from_text(path, &text, dir, workload, None, seed)
}

/// A stack of the device in `text` (`[nand]` and `[ssd]` only; `base_dir` for a `nand.file`)
/// with `workload`, an optional `[engine]` and `seed`.
pub fn device_stack_from_text(
    origin: &str,
    text: &str,
    base_dir: &Path,
    workload: &WorkloadSection,
    engine: Option<&EngineSection>,
    seed: u64,
) -> LabResult<Stack> {
    let source = Source { origin, text };
    let table: toml::Table = toml::from_str(text).map_err(|e| source.syntax_error(&e))?;
    device_stack_from_table(source, table, base_dir, workload, engine, seed)
}

/// [`device_stack_from_text`] of a device given as a table (built as typed values; errors
/// are located in `source`).
pub fn device_stack_from_table(
    source: Source<'_>,
    mut table: toml::Table,
    base_dir: &Path,
    workload: &WorkloadSection,
    engine: Option<&EngineSection>,
    seed: u64,
) -> LabResult<Stack> {
    // only a device: [nand] and [ssd]
    let _: DeviceFile = deserialize(
        source,
        "",
        toml::Value::Table(with_ssd_preset(source, table.clone())?),
    )?;
    table.insert("workload".into(), to_toml_value("workload", workload)?);
    if let Some(engine) = engine {
        table.insert("engine".into(), to_toml_value("engine", engine)?);
    }
    let mut run = toml::Table::new();
    run.insert("seed".into(), toml::Value::Integer(seed_i64(seed)?));
    table.insert("run".into(), toml::Value::Table(run));
    let mut stack = Stack::from_table(source, table, base_dir)?;
    // workload paths are relative to the working directory, not to the device file
    stack.base_dir = PathBuf::from(".");
    Ok(stack)
}

fn to_toml_value(key: &str, value: &impl Serialize) -> LabResult<toml::Value> {
    toml::Value::try_from(value).map_err(|e| LabError::Usage(format!("{key}: {e}")))
}

/// A seed as a TOML integer (TOML has no unsigned 64-bit integers).
fn seed_i64(seed: u64) -> LabResult<i64> {
    i64::try_from(seed).map_err(|_| LabError::Usage(format!("seed {seed}: at most {}", i64::MAX)))
}

/// Refuses the old run-config layout, and merges the table over its SSD preset when
/// `[ssd] preset` names one.
fn with_ssd_preset(source: Source<'_>, table: toml::Table) -> LabResult<toml::Table> {
    for (old, new) in OLD_SECTIONS {
        if table.contains_key(*old) {
            return Err(source.error(
                old,
                format!("the old run-config layout; the stack config uses {new}"),
            ));
        }
    }
    let preset = table
        .get("ssd")
        .and_then(|s| s.get("preset"))
        .map(|p| p.as_str().map(str::to_string));
    let Some(name) = preset else {
        return Ok(table);
    };
    let name = name.ok_or_else(|| source.error("ssd.preset", "must be a string"))?;
    let preset = ssd_preset(&name).map_err(|m| source.error("ssd.preset", m))?;
    let mut merged = preset.table.clone();
    // a chip given in the config replaces the preset's chip instead of merging into it
    if let Some(nand) = table.get("nand").and_then(toml::Value::as_table)
        && (nand.contains_key("preset") || nand.contains_key("file"))
    {
        merged.remove("nand");
    }
    merge_tables(&mut merged, &table);
    Ok(merged)
}

/// A chip config from a `[nand]` table (`preset`, `file` relative to the working folder, and
/// keys over them), checked as a stack config's; errors name `nand.KEY` in `origin`.
pub(crate) fn chip_from_table(origin: &str, nand: &toml::Table) -> LabResult<NandConfig> {
    let source = Source { origin, text: "" };
    resolve_nand(source, nand, Path::new("."))
}

/// The chip of a NAND preset through the stack config's one chip builder (`[nand] preset =
/// name`): what an experiment or a benchmark that drives a bare chip runs on.
pub(crate) fn preset_chip(origin: &str, name: &str) -> LabResult<NandConfig> {
    let nand = toml::Table::from_iter([("preset".to_string(), toml::Value::from(name))]);
    chip_from_table(origin, &nand)
}

/// `[nand]`: `preset` or `file` (or neither: the table is a whole chip config), then the rest
/// of the table merged over it and checked as a chip config.
fn resolve_nand(source: Source<'_>, nand: &toml::Table, base_dir: &Path) -> LabResult<NandConfig> {
    let mut overrides = nand.clone();
    let preset = overrides.remove("preset");
    let file = overrides.remove("file");
    let base_text = match (preset, file) {
        (Some(_), Some(_)) => {
            return Err(source.error("nand.file", "give `preset` or `file`, not both"));
        }
        // the table is a whole chip config
        (None, None) => String::new(),
        (Some(p), None) => {
            let name = p
                .as_str()
                .ok_or_else(|| source.error("nand.preset", "must be a string"))?;
            nandlab_nand::preset::preset_toml(name)
                .map_err(|e| source.error("nand.preset", e))?
                .to_string()
        }
        (None, Some(f)) => {
            let written = f
                .as_str()
                .ok_or_else(|| source.error("nand.file", "must be a string"))?;
            let path = base_dir.join(written);
            std::fs::read_to_string(&path).map_err(|e| {
                source.error("nand.file", format!("cannot read {}: {e}", path.display()))
            })?
        }
    };
    let mut table: toml::Table = toml::from_str(&base_text).map_err(|e| {
        source.error(
            "nand",
            format!("the chip config does not parse: {}", e.message()),
        )
    })?;
    merge_tables(&mut table, &overrides);
    let config: NandConfig = deserialize(source, "nand", toml::Value::Table(table))?;
    config.validate().map_err(|e| match e {
        nandlab_nand::NandError::Config { key, message } => {
            source.error(&format!("nand.{key}"), message)
        }
        other => LabError::from(other),
    })?;
    Ok(config)
}

/// A synthetic workload without its own `seed` takes `[run] seed`, so that the run's one seed
/// (`--seed`, a sweep over `run.seed`) drives the generator too; a `workload.seed` written in
/// the config is kept (a run seed of 0, the default, gives generator seed 0 as before). A run
/// seed that is not a non-negative integer is left for `[run]`'s own error to name.
fn seed_the_generator(table: &mut toml::Table) {
    let run_seed = table
        .get("run")
        .and_then(|run| run.get("seed"))
        .filter(|seed| seed.as_integer().is_some_and(|s| s >= 0))
        .cloned();
    let Some(toml::Value::Table(workload)) = table.get_mut("workload") else {
        return;
    };
    let synthetic =
        matches!(workload.get("kind"), Some(toml::Value::String(k)) if k == "synthetic");
    if let (true, false, Some(seed)) = (synthetic, workload.contains_key("seed"), run_seed) {
        workload.insert("seed".into(), seed);
    }
}

/// Deserializes `[workload]` as the type its `kind` names, so that an error names the key
/// inside it (`workload.request_count`): the `kind`-tagged enum alone reports every error at
/// `workload`. Nothing to check when the kind is missing or unknown (the whole config's
/// error names that).
fn check_workload_keys(source: Source<'_>, table: &toml::Table) -> LabResult<()> {
    let Some(toml::Value::Table(workload)) = table.get("workload") else {
        return Ok(());
    };
    let mut fields = workload.clone();
    let Some(toml::Value::String(kind)) = fields.remove("kind") else {
        return Ok(());
    };
    let value = toml::Value::Table(fields);
    match kind.as_str() {
        "synthetic" => {
            deserialize::<nandlab_workload::SyntheticSpec>(source, "workload", value).map(drop)
        }
        "trace" => deserialize::<TraceWorkload>(source, "workload", value).map(drop),
        "fio" => deserialize::<FioWorkload>(source, "workload", value).map(drop),
        "constant-free-space" => {
            deserialize::<ConstantFreeSpaceWorkload>(source, "workload", value).map(drop)
        }
        "drifting-free-space" => {
            deserialize::<DriftingFreeSpaceWorkload>(source, "workload", value).map(drop)
        }
        "sim-lookup" => deserialize::<SimLookupWorkload>(source, "workload", value).map(drop),
        "chip" => deserialize::<ChipWorkloadSpec>(source, "workload", value).map(drop),
        _ => Ok(()),
    }
}

/// Deserializes `value` (at key path `prefix`) with the failing key's path in the error.
fn deserialize<T: serde::de::DeserializeOwned>(
    source: Source<'_>,
    prefix: &str,
    value: toml::Value,
) -> LabResult<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = match (prefix.is_empty(), inner == ".") {
            (true, _) => inner.clone(),
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{inner}"),
        };
        let message = e.into_inner().message().trim_end().to_string();
        if path == "." || path.is_empty() {
            LabError::Usage(format!("{}: {message}", source.origin))
        } else {
            source.error(&path, message)
        }
    })
}

/// Deep merge: tables merge key by key, everything else in `overrides` replaces `base`.
pub(crate) fn merge_tables(base: &mut toml::Table, overrides: &toml::Table) {
    for (key, value) in overrides {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

pub use nandlab_ftl::config::set_key;

/// Makes sure every table on `path` exists (creating empty ones), so the leaf can be set.
fn set_path(table: &mut toml::Table, path: &str) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("not a dot-separated key path".into());
    }
    let mut t = table;
    for part in &parts[..parts.len() - 1] {
        let entry = t
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{part}` is a value, not a table"))?;
    }
    t.entry(parts[parts.len() - 1].to_string())
        .or_insert(toml::Value::Boolean(false));
    Ok(())
}

fn get_path_mut<'t>(table: &'t mut toml::Table, path: &str) -> Option<&'t mut toml::Value> {
    let mut parts = path.split('.').peekable();
    let mut t = table;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return t.get_mut(part);
        }
        t = t.get_mut(part)?.as_table_mut()?;
    }
    None
}

#[cfg(test)]
mod reclaim_example_tests;
#[cfg(test)]
mod tests;
