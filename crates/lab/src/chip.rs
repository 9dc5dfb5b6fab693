//! Chip-level runs: a preset (or config file) with overrides, a chip workload, a scheduler.

use crate::error::{LabError, LabResult};
use crate::output::CsvText;
use crate::stack::{
    ChipWorkloadSpec, RunSection, Source, Stack, StackConfig, StackOutcome, StackRun,
    WorkloadSection,
};
use nandlab_ftl::sched::DriverConfig;
use nandlab_nand::NandConfig;
use serde::{Deserialize, Serialize};

/// The chip-level types the front ends name (workload kinds, scheduler policies, the report).
pub use nandlab_ftl::sched::{ChipReport, ChipWorkloadKind, SchedulerPolicy};
/// The NAND chip presets (`nandlab presets`).
pub use nandlab_nand::{preset as nand_preset, preset_names as nand_preset_names};

/// Everything a chip-level run needs. Geometry overrides apply on top of the preset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipRunSpec {
    pub preset: String,
    /// A full chip config (TOML file contents, parsed); replaces `preset` when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<NandConfig>,
    #[serde(default)]
    pub channels: Option<u32>,
    /// Dies per channel: each channel gets one chip of this many dies (an error when the chip
    /// config has more than one chip per channel).
    #[serde(default)]
    pub dies: Option<u32>,
    #[serde(default)]
    pub planes: Option<u32>,
    #[serde(default)]
    pub page_size_bytes: Option<u32>,
    #[serde(default)]
    pub bus_data_rate_mts: Option<f64>,
    /// Per-page spread of TIN within a page type (`timing.program_variation`; none = the
    /// chip config's, 0 in every preset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_variation: Option<f64>,
    pub workload: ChipWorkloadKind,
    pub requests: u64,
    /// Request size of swr/srd (the paper uses 2 KB); 0 = one page.
    #[serde(default)]
    pub request_bytes: u32,
    #[serde(default)]
    pub driver: DriverConfig,
    #[serde(default)]
    pub seed: u64,
}

pub use crate::stack::CHIP_POLL_REQUESTS;

/// Dies per channel (`dies`) set one chip of that many dies on each channel: an error when the
/// chip config has more than one chip per channel.
fn check_dies(dies: Option<u32>, c: &NandConfig) -> LabResult<()> {
    if dies.is_some() && c.geometry.chips_per_channel != 1 {
        return Err(LabError::Usage(format!(
            "dies: sets the dies of a one-chip channel, but the chip config has chips_per_channel = {}; set geometry.dies_per_chip in a chip config instead",
            c.geometry.chips_per_channel
        )));
    }
    Ok(())
}

/// The chip report of a `kind = "chip"` stack run, with whether a cancel cut it short.
pub fn chip_outcome(run: StackRun) -> LabResult<(ChipReport, bool)> {
    match run.outcome {
        StackOutcome::Chip {
            report,
            interrupted,
        } => Ok((*report, interrupted)),
        _ => Err(LabError::Usage(
            "workload.kind: a chip report needs `kind = \"chip\"`".into(),
        )),
    }
}

impl ChipRunSpec {
    pub fn new(preset: &str, workload: ChipWorkloadKind, requests: u64) -> Self {
        ChipRunSpec {
            preset: preset.to_string(),
            device: None,
            channels: None,
            dies: None,
            planes: None,
            page_size_bytes: None,
            bus_data_rate_mts: None,
            program_variation: None,
            workload,
            requests,
            request_bytes: 0,
            driver: DriverConfig::default(),
            seed: 0,
        }
    }

    /// The `[nand]` table of a stack config that describes this spec's chip: its preset (or
    /// its whole chip config) with the overrides as that table's keys (`geometry.channels`,
    /// `timing.bus_data_rate_mts`, …).
    pub fn nand_table(&self) -> LabResult<toml::Table> {
        use toml::Value;
        let mut table = match &self.device {
            Some(device) => match Value::try_from(device) {
                Ok(Value::Table(t)) => t,
                Ok(_) => unreachable!("a chip config serializes as a table"),
                Err(e) => return Err(LabError::Usage(format!("device: {e}"))),
            },
            None => toml::Table::from_iter([("preset".into(), Value::String(self.preset.clone()))]),
        };
        let overrides = [
            (
                "geometry.channels",
                self.channels.map(|v| Value::Integer(v.into())),
            ),
            (
                "geometry.dies_per_chip",
                self.dies.map(|v| Value::Integer(v.into())),
            ),
            (
                "geometry.planes_per_die",
                self.planes.map(|v| Value::Integer(v.into())),
            ),
            (
                "geometry.page_size_bytes",
                self.page_size_bytes.map(|v| Value::Integer(v.into())),
            ),
            (
                "timing.bus_data_rate_mts",
                self.bus_data_rate_mts.map(Value::Float),
            ),
            (
                "timing.program_variation",
                self.program_variation.map(Value::Float),
            ),
        ];
        for (key, value) in overrides {
            if let Some(value) = value {
                crate::stack::set_key(&mut table, key, value);
            }
        }
        Ok(table)
    }

    /// The chip config: [`ChipRunSpec::nand_table`] resolved and checked by the stack
    /// config's builder (errors name the `nand.` key).
    pub fn nand_config(&self) -> LabResult<NandConfig> {
        let c = crate::stack::chip_from_table("chip run", &self.nand_table()?)?;
        check_dies(self.dies, &c)?;
        Ok(c)
    }

    /// The stack config of this run: [`ChipRunSpec::nand_table`] as `[nand]`, the seed as
    /// `[run] seed` and a `kind = "chip"` workload of the spec's requests and scheduler.
    pub fn stack_config(&self) -> LabResult<StackConfig> {
        Ok(StackConfig {
            run: RunSection { seed: self.seed },
            nand: self.nand_table()?,
            ssd: Default::default(),
            engine: None,
            precondition: None,
            pcm: None,
            content: None,
            workload: WorkloadSection::Chip(ChipWorkloadSpec::with_driver(
                self.workload,
                self.requests,
                self.request_bytes,
                &self.driver,
            )),
        })
    }

    /// The stack of this run, resolved and checked by the stack config's builder.
    pub fn stack(&self) -> LabResult<Stack> {
        if self.requests == 0 {
            return Err(LabError::Usage("requests must be at least 1".into()));
        }
        let source = Source {
            origin: "chip run",
            text: "",
        };
        let stack = Stack::resolve(source, self.stack_config()?, std::path::Path::new("."))?;
        check_dies(self.dies, &stack.nand)?;
        Ok(stack)
    }

    pub fn run(&self) -> LabResult<ChipReport> {
        Ok(self.run_controlled(&crate::control::Control::new())?.0)
    }

    /// [`ChipRunSpec::run`] under `control`: it stops issuing requests once the control is
    /// cancelled (checked every [`CHIP_POLL_REQUESTS`] requests; the requests issued complete)
    /// and returns the report of those, with whether it was cut short.
    pub fn run_controlled(
        &self,
        control: &crate::control::Control,
    ) -> LabResult<(ChipReport, bool)> {
        chip_outcome(self.stack()?.run(None, control)?)
    }

    /// Loads a chip config file (the preset TOML format) as this run's device.
    pub fn load_device(&mut self, path: &std::path::Path) -> LabResult<()> {
        let text = std::fs::read_to_string(path).map_err(|source| LabError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let config = nandlab_nand::preset::parse_config(&path.display().to_string(), &text)?;
        self.preset = config.name.clone();
        self.device = Some(config);
        Ok(())
    }

    pub fn with_policy(mut self, policy: SchedulerPolicy) -> Self {
        self.driver.policy = policy;
        self
    }
}

/// Writes `report.json` (spec and report), `stages.csv`, `latency_cdf.csv` and `op_kinds.csv`
/// of a chip run into `dir` (`nandlab chip --out`).
pub fn write_chip_report(
    spec: &ChipRunSpec,
    r: &ChipReport,
    dir: &std::path::Path,
) -> LabResult<()> {
    let json = serde_json::json!({ "spec": spec, "report": r });
    crate::output::write_file(
        &dir.join("report.json"),
        &(serde_json::to_string_pretty(&json).expect("report serializes") + "\n"),
    )?;
    write_chip_tables(r, dir)
}

/// `stages.csv`, `latency_cdf.csv` and `op_kinds.csv` of a chip run into `dir`.
pub fn write_chip_tables(r: &ChipReport, dir: &std::path::Path) -> LabResult<()> {
    let mut stages = CsvText::new([
        "stage",
        "time_us",
        "time_fraction",
        "energy_uj",
        "energy_fraction",
    ]);
    for s in &r.stages {
        stages.row([
            s.stage.to_string(),
            s.time_us.to_string(),
            s.time_fraction.to_string(),
            s.energy_uj.to_string(),
            s.energy_fraction.to_string(),
        ]);
    }
    crate::output::write_file(&dir.join("stages.csv"), &stages.finish())?;
    let mut cdf = CsvText::new(["kind", "latency_us", "fraction"]);
    for (kind, points) in [("read", &r.read_cdf), ("write", &r.write_cdf)] {
        for p in points {
            cdf.row([
                kind.to_string(),
                p.latency_us.to_string(),
                p.fraction.to_string(),
            ]);
        }
    }
    crate::output::write_file(&dir.join("latency_cdf.csv"), &cdf.finish())?;
    let mut kinds = CsvText::new([
        "kind",
        "ops",
        "energy_uj",
        "energy_per_op_uj",
        "p50_us",
        "p99_us",
        "max_us",
    ]);
    for k in &r.op_kinds {
        kinds.row([
            k.kind.to_string(),
            k.ops.to_string(),
            k.energy_uj.to_string(),
            k.energy_per_op_uj.to_string(),
            k.latency.p50_us.to_string(),
            k.latency.p99_us.to_string(),
            k.latency.max_us.to_string(),
        ]);
    }
    let kinds = kinds.finish();
    crate::output::write_file(&dir.join("op_kinds.csv"), &kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_validated_with_their_key() {
        let mut s = ChipRunSpec::new("mlc1", ChipWorkloadKind::Swr, 10);
        s.planes = Some(0);
        let err = s.run().unwrap_err().to_string();
        assert!(err.contains("planes_per_die"), "{err}");
        let s = ChipRunSpec::new("nope", ChipWorkloadKind::Swr, 10);
        assert!(s.run().unwrap_err().to_string().contains("unknown preset"));
    }

    #[test]
    fn the_stack_builder_gives_the_chip_of_a_preset_or_a_whole_config() {
        for name in nand_preset_names() {
            let preset = nand_preset(name).unwrap();
            let mut s = ChipRunSpec::new(name, ChipWorkloadKind::Swr, 10);
            assert_eq!(s.nand_config().unwrap(), preset, "{name}");
            s.device = Some(preset.clone());
            s.preset = "not read".into();
            assert_eq!(s.nand_config().unwrap(), preset, "{name} as a whole config");
        }
    }

    #[test]
    fn overrides_land_on_their_keys() {
        let mut s = ChipRunSpec::new("mlc1", ChipWorkloadKind::Swr, 10);
        s.channels = Some(3);
        s.dies = Some(2);
        s.planes = Some(4);
        s.page_size_bytes = Some(4096);
        s.bus_data_rate_mts = Some(400.5);
        s.program_variation = Some(0.25);
        let mut want = nand_preset("mlc1").unwrap();
        want.geometry.channels = 3;
        want.geometry.dies_per_chip = 2;
        want.geometry.planes_per_die = 4;
        want.geometry.page_size_bytes = 4096;
        want.timing.bus_data_rate_mts = 400.5;
        want.timing.program_variation = 0.25;
        assert_eq!(s.nand_config().unwrap(), want);
    }
}
