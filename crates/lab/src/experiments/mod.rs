//! Paper reproductions: each experiment is a configuration sweep over the stack whose outputs
//! are a flat `summary.json` (`"experiment": id` plus named numeric metrics) and CSV curves.

mod ctrl;
mod dftl;
mod fdp;
mod ftl;
pub mod gc_policies;
pub mod measure;
mod miyaji;
mod nfs;
mod paper;
mod parallel;
mod pcm;
mod pcm_join;
mod pcm_join_users;
pub mod pcm_run;
pub mod pcm_tpcc;
pub mod points;
mod sim;
mod sim_ssd;
mod slc_cliff;
mod tail;
pub mod workers;
mod zns;

pub use paper::{Paper, PaperValue};

use crate::control::Control;
use crate::error::{LabError, LabResult};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How big a run is: `quick` for tests and demos, `full` for the paper-scale numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scale {
    Quick,
    #[default]
    Standard,
    Full,
}

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub scale: Scale,
    pub seed: u64,
    /// Progress (points done) and cancellation: a cancelled experiment stops between points
    /// (or inside a point's long loops, dropping that point) and returns what it has, marked
    /// [`ExperimentResult::interrupted`].
    pub control: Control,
    /// Where finished points are cached (`OUT/cache` for `nandlab reproduce`; `None`: no
    /// cache). Keyed by the point's config, the version and the build, so a rerun with the same
    /// binary skips the points it finished and a rebuilt one recomputes them.
    pub cache_dir: Option<PathBuf>,
    /// A dry run: the points of registered measures not in the cache are recorded here instead
    /// of measured (see [`measure::Plan`]); every other point is skipped.
    pub plan: Option<std::sync::Arc<measure::Plan>>,
}

/// A table of numbers with named columns (one CSV file).
#[derive(Clone, Debug, Serialize)]
pub struct Curve {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<CurveValue>>,
}

/// A CSV cell: a number or a label.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(untagged)]
pub enum CurveValue {
    Number(f64),
    Label(String),
}

impl From<f64> for CurveValue {
    fn from(v: f64) -> Self {
        CurveValue::Number(v)
    }
}
impl From<u32> for CurveValue {
    fn from(v: u32) -> Self {
        CurveValue::Number(f64::from(v))
    }
}
impl From<&str> for CurveValue {
    fn from(v: &str) -> Self {
        CurveValue::Label(v.to_string())
    }
}

impl Curve {
    pub fn new(name: &str, columns: &[&str]) -> Self {
        Curve {
            name: name.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }
    pub fn push(&mut self, row: Vec<CurveValue>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row width of {}", self.name);
        self.rows.push(row);
    }
    pub fn to_csv(&self) -> String {
        let mut out = crate::output::CsvText::new(&self.columns);
        for row in &self.rows {
            out.row(row.iter().map(|v| match v {
                CurveValue::Number(n) => format_number(*n),
                CurveValue::Label(s) => s.clone(),
            }));
        }
        out.finish()
    }
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.6}")
    }
}

/// What an experiment produced.
#[derive(Clone, Debug, Default)]
pub struct ExperimentResult {
    pub metrics: BTreeMap<String, f64>,
    pub curves: Vec<Curve>,
    /// The run was cancelled: the metrics and curve rows are those of the points finished.
    pub interrupted: bool,
    /// The paper's values (the experiment's declaration; set by [`reproduce`]).
    pub paper: Paper,
}

impl ExperimentResult {
    pub fn metric(&mut self, name: &str, value: f64) {
        self.metrics.insert(name.to_string(), value);
    }
    /// Sets the paper's values: `paper_NAME` metrics beside nandlab's, and the declaration.
    pub fn add_paper(&mut self, paper: Paper) {
        for v in paper.values() {
            self.metrics.insert(format!("paper_{}", v.name), v.value);
        }
        self.paper = paper;
    }
    pub fn get(&self, name: &str) -> f64 {
        self.metrics[name]
    }

    /// Rows over every curve (the points measured).
    pub fn rows(&self) -> usize {
        self.curves.iter().map(|c| c.rows.len()).sum()
    }

    /// The flat `summary.json` object (`"interrupted": true` after the id when interrupted).
    pub fn summary_json(&self, id: &str) -> String {
        let mut map = serde_json::Map::new();
        map.insert("experiment".into(), serde_json::Value::String(id.into()));
        if self.interrupted {
            map.insert("interrupted".into(), serde_json::Value::Bool(true));
        }
        for (k, v) in &self.metrics {
            let value = serde_json::Number::from_f64(*v)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null);
            map.insert(k.clone(), value);
        }
        if let Some(paper) = self.paper.to_json(&self.metrics) {
            map.insert("paper".into(), paper);
        }
        serde_json::to_string_pretty(&serde_json::Value::Object(map))
            .expect("a JSON object always serializes")
            + "\n"
    }

    /// Writes `summary.json`, one CSV per curve and, when the paper gives values, `paper.csv`
    /// (the paper's values beside nandlab's: [`Paper::curve`]) into `dir`.
    pub fn write(&self, id: &str, dir: &Path) -> LabResult<()> {
        crate::output::write_file(&dir.join("summary.json"), &self.summary_json(id))?;
        for curve in &self.curves {
            crate::output::write_file(&dir.join(format!("{}.csv", curve.name)), &curve.to_csv())?;
        }
        let paper = self.paper.curve(&self.metrics);
        if !paper.rows.is_empty() {
            crate::output::write_file(&dir.join(format!("{}.csv", paper.name)), &paper.to_csv())?;
        }
        Ok(())
    }

    /// The short table `reproduce` ends with: metric | nandlab | paper | ratio.
    pub fn paper_table(&self) -> String {
        self.paper.table(&self.metrics)
    }

    /// nandlab's metrics as `reproduce` lists them, one a line (`  NAME VALUE`), by name:
    /// integers as integers, other values with four decimals; the paper's values (`paper_*`)
    /// are left to [`ExperimentResult::paper_table`].
    pub fn metrics_listing(&self) -> String {
        let mut out = String::new();
        for (k, v) in self
            .metrics
            .iter()
            .filter(|(k, _)| !k.starts_with("paper_"))
        {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                out += &format!("  {k:44} {v:.0}\n");
            } else {
                out += &format!("  {k:44} {v:.4}\n");
            }
        }
        out
    }
}

/// One registered experiment.
#[derive(Debug)]
pub struct Experiment {
    pub id: &'static str,
    pub reference: &'static str,
    pub title: &'static str,
    pub run: fn(&RunOptions) -> LabResult<ExperimentResult>,
    /// The paper's values, declared once: [`reproduce`] writes them beside nandlab's.
    pub paper: Paper,
}

/// Every experiment, in the order `--list` prints them.
pub fn registry() -> impl Iterator<Item = &'static Experiment> {
    miyaji::EXPERIMENTS
        .iter()
        .chain(ftl::EXPERIMENTS)
        .chain(ctrl::EXPERIMENTS)
        .chain(tail::EXPERIMENTS)
        .chain(slc_cliff::EXPERIMENTS)
        .chain(dftl::EXPERIMENTS)
        .chain(nfs::EXPERIMENTS)
        .chain(pcm::EXPERIMENTS)
        .chain(pcm_tpcc::EXPERIMENTS)
        .chain(pcm_join::EXPERIMENTS)
        .chain(pcm_join_users::EXPERIMENTS)
        .chain(sim::EXPERIMENTS)
        .chain(sim_ssd::EXPERIMENTS)
        .chain(zns::EXPERIMENTS)
        .chain(fdp::EXPERIMENTS)
}

pub fn find(id: &str) -> LabResult<&'static Experiment> {
    registry()
        .find(|e| e.id == id)
        .ok_or_else(|| LabError::UnknownExperiment { id: id.to_string() })
}

/// Runs experiment `id` and writes its outputs into `out` (those of the points finished, when
/// `options.control` is cancelled).
pub fn reproduce(id: &str, options: &RunOptions, out: &Path) -> LabResult<ExperimentResult> {
    let experiment = find(id)?;
    let result = match (experiment.run)(options) {
        // an experiment that keeps no partial points (the chip-level ones) stops this way
        Err(LabError::Interrupted) => ExperimentResult {
            interrupted: true,
            ..ExperimentResult::default()
        },
        other => other?,
    };
    let mut result = result;
    result.add_paper(experiment.paper);
    result.write(id, out)?;
    Ok(result)
}
