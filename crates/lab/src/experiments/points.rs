//! Experiments as data: an experiment's points are stack configs; one runner measures them
//! (several at once, rows in point order) with progress (in points), Ctrl-C (stops between points and inside one, dropping it)
//! and a result cache keyed by the point's config hash (a rerun into the same folder, or a
//! resumed one, skips the points finished). Each point's measure is its metric row
//! ([`crate::stack::SSD_METRICS`] / [`crate::stack::ENGINE_METRICS`]); an experiment's summary
//! is computed from the rows.

use super::RunOptions;
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::ssd::SsdRun;
use crate::stack::{
    ConstantFreeSpaceWorkload, DriftingFreeSpaceWorkload, EngineSection, Stack, StackConfig,
    StackOutcome, WorkloadSection, device_stack_from_table,
};
use nandlab_engine::QueryMix;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// A measured point: its metric row, by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Row(pub Vec<(String, f64)>);

impl Row {
    /// A metric of the row (every engine and SSD row has the names declared for its kind).
    pub fn get(&self, name: &str) -> f64 {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("metric `{name}` is declared for this kind of run"))
    }
}

/// Runs `points` (several at once on the machine's cores, [`super::parallel`], or on workers:
/// the registered measure [`StackRun`]); the rows in point order, `None` in place of a point a
/// cancel cut short or stopped from starting. Progress counts points; the points of a run of
/// the same experiment already in the cache are read back instead of run.
pub fn run_points(options: &RunOptions, points: &[Stack]) -> LabResult<Vec<Option<Row>>> {
    let configs: Vec<StackConfig> = points.iter().map(|s| s.config.clone()).collect();
    let measured = super::measure::run_measure::<StackRun>(options, &configs)?;
    Ok(measured.into_iter().map(|m| m.map(Row)).collect())
}

/// The metric row of one stack config (its paths relative to the working folder), run to its
/// end: the measure of every stack point of an experiment.
#[derive(Debug)]
pub struct StackRun;

impl super::measure::Measure for StackRun {
    const NAME: &'static str = "stack-run";
    type Point = StackConfig;
    type Output = Vec<(String, f64)>;
    fn measure(config: &StackConfig, control: &Control) -> LabResult<Option<Self::Output>> {
        let run = resolve("experiment", config)?.run(None, control)?;
        Ok((!run.interrupted()).then(|| {
            run.metrics
                .iter()
                .map(|(k, v)| ((*k).to_string(), *v))
                .collect()
        }))
    }
}

/// The seed of a run as a stack-config value (`run.seed`).
pub fn seed_value(seed: u64) -> LabResult<toml::Value> {
    i64::try_from(seed)
        .map(toml::Value::Integer)
        .map_err(|_| LabError::Usage(format!("seed {seed} is beyond what a stack takes")))
}

/// The stack of one point of experiment `id`: its base config `text` (a constant of the
/// experiment) with the run's `seed`, the workload's `requests` and the point's own settings
/// (`extra`: dot key path = typed value) over it.
pub fn point_stack(
    id: &str,
    text: &str,
    seed: u64,
    requests: i64,
    extra: impl IntoIterator<Item = (&'static str, toml::Value)>,
) -> LabResult<Stack> {
    let mut overrides = vec![
        ("run.seed".to_string(), seed_value(seed)?),
        (
            "workload.request_count".to_string(),
            toml::Value::Integer(requests),
        ),
    ];
    overrides.extend(extra.into_iter().map(|(path, v)| (path.to_string(), v)));
    Stack::from_toml(id, text, Path::new("."), &overrides)
}

/// The stack of a point of experiment `id` given as its config (the point of a registered
/// measure), resolved and checked.
pub fn resolve(id: &str, config: &StackConfig) -> LabResult<Stack> {
    let origin = format!("{id} point");
    let source = crate::stack::Source {
        origin: &origin,
        text: "",
    };
    Stack::resolve(source, config.clone(), Path::new("."))
}

/// Runs `stack` (a point of experiment `id` with a block workload) to its end and measures its
/// run with `measure`; `None` if a cancel cut it short.
pub fn measure_ssd<M>(
    id: &str,
    stack: &Stack,
    control: &Control,
    measure: impl FnOnce(&SsdRun) -> LabResult<M>,
) -> LabResult<Option<M>> {
    let run = stack.run(None, control)?;
    if run.interrupted() {
        return Ok(None);
    }
    let StackOutcome::Ssd { run, .. } = &run.outcome else {
        return Err(LabError::Usage(format!("{id} runs a block workload")));
    };
    measure(run).map(Some)
}

/// The one point runner: `measure(point, control)` for every point (several at once on the
/// machine's cores, [`super::parallel`]), the measures in point order, `None` in place of a
/// point a cancel cut short (`measure` returns `None`) or stopped from starting. Progress
/// counts points. With a cache folder, a point whose `key` (see
/// [`crate::sweep::measure_cache_key`]) is cached is read back instead of measured, and each
/// point measured is cached as it finishes: a cancelled run keeps its finished points, and a
/// rerun into the same folder resumes.
pub fn run_measured<P, M, K, F>(
    options: &RunOptions,
    points: &[P],
    key: K,
    measure: F,
) -> LabResult<Vec<Option<M>>>
where
    P: Sync,
    M: Serialize + DeserializeOwned + Send,
    K: Fn(&P) -> String + Sync,
    F: Fn(&P, &Control) -> LabResult<Option<M>> + Sync,
{
    options.control.start(Some(points.len() as u64));
    let measures = measure_points(options, points, key, measure)?;
    options.control.finish();
    Ok(measures)
}

/// [`run_measured`] with the cache key every point-enum experiment uses:
/// `point=NAME scale=… seed=…` under the experiment's `id`.
pub fn run_named<P, M, N, F>(
    options: &RunOptions,
    id: &str,
    points: &[P],
    name: N,
    measure: F,
) -> LabResult<Vec<Option<M>>>
where
    P: Sync,
    M: Serialize + DeserializeOwned + Send,
    N: Fn(&P) -> String + Sync,
    F: Fn(&P, &Control) -> LabResult<Option<M>> + Sync,
{
    let (scale, seed) = (options.scale, options.seed);
    run_measured(
        options,
        points,
        |point| {
            let key = format!("point={} scale={scale:?} seed={seed}", name(point));
            crate::sweep::measure_cache_key(id, &key)
        },
        measure,
    )
}

/// The measured points before the first one missing (a cancel cut it short or stopped it from
/// starting), each with its point, and whether any point is missing (the run was interrupted).
pub fn measured_rows<P: Copy, M>(points: &[P], measured: Vec<Option<M>>) -> (Vec<(P, M)>, bool) {
    let rows: Vec<(P, M)> = points
        .iter()
        .zip(measured)
        .map_while(|(&p, m)| m.map(|m| (p, m)))
        .collect();
    let interrupted = rows.len() < points.len();
    (rows, interrupted)
}

/// [`run_measured`] for one of several sweeps of an experiment: the progress count goes on
/// from where it is (the experiment starts it once with its total).
pub fn measure_points<P, M, K, F>(
    options: &RunOptions,
    points: &[P],
    key: K,
    measure: F,
) -> LabResult<Vec<Option<M>>>
where
    P: Sync,
    M: Serialize + DeserializeOwned + Send,
    K: Fn(&P) -> String + Sync,
    F: Fn(&P, &Control) -> LabResult<Option<M>> + Sync,
{
    if options.plan.is_some() {
        // a dry run records the points of registered measures only (super::measure::Plan)
        return Ok(points.iter().map(|_| None).collect());
    }
    // the points are independent: they run on the machine's cores (same rows as in order)
    super::parallel::map_points(points.len(), &options.control, |i| {
        measure_one(options, &points[i], &key, &measure)
    })
}

/// One point of [`run_measured`]: from the cache, or measured (`None` if a cancel cut it
/// short or came before it started).
fn measure_one<P, M>(
    options: &RunOptions,
    point: &P,
    key: &(impl Fn(&P) -> String + Sync),
    measure: &(impl Fn(&P, &Control) -> LabResult<Option<M>> + Sync),
) -> LabResult<Option<M>>
where
    M: Serialize + DeserializeOwned,
{
    let key = options.cache_dir.as_ref().map(|_| key(point));
    let cached = options
        .cache_dir
        .as_deref()
        .zip(key.as_deref())
        .and_then(|(dir, key)| read_cached(dir, key));
    let measured = match cached {
        Some(m) => Some(m),
        None if options.control.is_cancelled() => None,
        None => {
            let m = measure(point, &options.control.part())?;
            if let (Some(m), Some(dir), Some(key)) = (&m, &options.cache_dir, &key) {
                write_cached(dir, key, m)?;
            }
            m
        }
    };
    if measured.is_some() {
        options.control.advance(1);
    }
    Ok(measured)
}

pub(super) fn read_cached<M: DeserializeOwned>(dir: &Path, key: &str) -> Option<M> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_cached<M: Serialize>(dir: &Path, key: &str, measured: &M) -> LabResult<()> {
    std::fs::create_dir_all(dir).map_err(|source| LabError::Write {
        path: dir.display().to_string(),
        source,
    })?;
    let text = serde_json::to_string(measured).expect("measures serialize");
    crate::output::write_file(&dir.join(format!("{key}.json")), &text)
}

/// The value of a stack-config setting a point changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(&'static str),
}

/// A stack-config setting a point changes: its dot key path (`ssd.gc.scope`) and value.
pub type Delta = (&'static str, Setting);

/// Sets `path` (dot-separated) of `table` to `value`, creating the tables on the way.
pub fn set(table: &mut toml::Table, path: &str, value: toml::Value) {
    let (tables, key) = path
        .rsplit_once('.')
        .map_or((None, path), |(t, k)| (Some(t), k));
    let mut t = table;
    for part in tables.into_iter().flat_map(|t| t.split('.')) {
        t = t
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("a delta sets keys inside tables only");
    }
    t.insert(key.to_string(), value);
}

/// The paper-000 SSD (`preset`: `miyaji2014-ssd`, or `miyaji2014-emulator` with the
/// emulator's controller energy) scaled to `channels`, `blocks_per_plane`, `pages_per_block`,
/// under an engine; `extra` are settings applied over the preset (e.g. `[ssd.gc]` keys of a
/// labelled variant), none for the preset as it is.
#[derive(Clone, Copy, Debug)]
pub struct EngineDevice {
    pub preset: &'static str,
    pub channels: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Planes per die (`None`: the preset's, the paper's 2).
    pub planes_per_die: Option<u32>,
    pub extra: &'static [Delta],
}

impl EngineDevice {
    /// The device (`[ssd]` preset, `[nand.geometry]` overrides and the extra settings) as a
    /// TOML table built from typed values.
    pub fn table(self) -> toml::Table {
        let mut table = toml::Table::new();
        set(&mut table, "ssd.preset", self.preset.into());
        let geometry = [
            ("channels", Some(self.channels)),
            ("blocks_per_plane", Some(self.blocks_per_plane)),
            ("pages_per_block", Some(self.pages_per_block)),
            ("planes_per_die", self.planes_per_die),
        ];
        for (key, value) in geometry {
            if let Some(v) = value {
                set(&mut table, &format!("nand.geometry.{key}"), v.into());
            }
        }
        for &(path, value) in self.extra {
            let value = match value {
                Setting::Bool(b) => toml::Value::Boolean(b),
                Setting::Int(i) => toml::Value::Integer(i),
                Setting::Float(f) => toml::Value::Float(f),
                Setting::Text(t) => t.into(),
            };
            set(&mut table, path, value);
        }
        table
    }

    /// The device text (serialized from [`EngineDevice::table`]).
    pub fn text(self) -> String {
        toml::to_string(&self.table()).expect("a TOML table serializes")
    }

    /// The stack of `engine` on this device under `workload`.
    pub fn stack(
        self,
        engine: &EngineSection,
        workload: &WorkloadSection,
        seed: u64,
    ) -> LabResult<Stack> {
        let source = crate::stack::Source {
            origin: "experiment point",
            text: "",
        };
        device_stack_from_table(
            source,
            self.table(),
            Path::new("."),
            workload,
            Some(engine),
            seed,
        )
    }
}

/// The engine section of paper 000's conventional (`false`) or co-designed (`true`) engine,
/// with `row_size_bytes`; writes wait for the GC they trigger on any die (`wait_for_gc`, the
/// paper's foreground GC).
pub fn engine(iaa: bool, u2di: bool, row_size_bytes: usize) -> EngineSection {
    EngineSection {
        iaa,
        u2di,
        row_size_bytes,
        wait_for_gc: true,
        ..EngineSection::default()
    }
}

/// Paper 000 Fig. 12's protocol: constant free space, P(Update) = 0.4.
pub fn constant_free_space(free_space_fraction: f64, warmup: u64, queries: u64) -> WorkloadSection {
    WorkloadSection::ConstantFreeSpace(ConstantFreeSpaceWorkload {
        free_space_fraction,
        update_fraction: 0.4,
        warmup_query_count: warmup,
        query_count: queries,
        warmup_until_stationary: false,
    })
}

/// [`constant_free_space`] warmed up in windows of `warmup` queries until the WAF changes by
/// less than 5 % between windows (issue 13's steady-state point).
pub fn constant_free_space_stationary(
    free_space_fraction: f64,
    warmup: u64,
    queries: u64,
) -> WorkloadSection {
    let mut w = constant_free_space(free_space_fraction, warmup, queries);
    if let WorkloadSection::ConstantFreeSpace(c) = &mut w {
        c.warmup_until_stationary = true;
    }
    w
}

/// Paper 000 Table I's protocol: 80 % → 20 % free space under I/D/U 40/20/40.
pub fn drifting_free_space(query_count_max: u64) -> WorkloadSection {
    WorkloadSection::DriftingFreeSpace(DriftingFreeSpaceWorkload {
        free_space_fraction_start: 0.8,
        free_space_fraction_end: 0.2,
        mix: QueryMix::table_i(),
        query_count_max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::LabError;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn cache_dir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nandlab-points-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        dir
    }

    fn key(n: &u32) -> String {
        crate::sweep::measure_cache_key("square", &n.to_string())
    }

    /// A measured point is cached under its key and read back (not measured again) by a
    /// rerun into the same folder; measures come back in point order.
    #[test]
    fn a_rerun_reads_the_cached_points_back() {
        let dir = cache_dir("rerun");
        let options = RunOptions {
            cache_dir: Some(dir.clone()),
            ..RunOptions::default()
        };
        let points = [3u32, 1, 4, 1, 5];
        let calls = AtomicUsize::new(0);
        let first = run_measured(&options, &points, key, |&n, _| {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok(Some(f64::from(n * n) / 7.0))
        })
        .unwrap();
        let expected: Vec<Option<f64>> = points
            .iter()
            .map(|&n| Some(f64::from(n * n) / 7.0))
            .collect();
        assert_eq!(first, expected);
        assert!(calls.load(Ordering::Relaxed) >= 4); // 1 twice: maybe measured twice at once
        // the rerun fails any point it measures: every point must come from the cache
        let again = run_measured(&options, &points, key, |_, _| -> LabResult<Option<f64>> {
            Err(LabError::Usage("measured again".into()))
        })
        .unwrap();
        assert_eq!(again, expected);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A cancelled run keeps the points that finished (in the cache) and gives `None` for the
    /// rest; the rerun measures only those.
    #[test]
    fn a_cancel_keeps_the_finished_points() {
        let dir = cache_dir("cancel");
        let options = RunOptions {
            cache_dir: Some(dir.clone()),
            ..RunOptions::default()
        };
        let points: Vec<u32> = (0..6).collect();
        let cancelled = run_measured(&options, &points, key, |&n, control| {
            if n == 2 {
                control.cancel();
                return Ok(None); // cut short
            }
            Ok(Some(n))
        })
        .unwrap();
        // point 2 was cut short; the others finished or not, as the workers raced the cancel
        assert_eq!(cancelled[2], None);
        assert!(cancelled.iter().flatten().all(|&n| n != 2));
        let options = RunOptions {
            cache_dir: Some(dir.clone()),
            ..RunOptions::default()
        };
        let measured = AtomicUsize::new(0);
        let resumed = run_measured(&options, &points, key, |&n, _| {
            measured.fetch_add(1, Ordering::Relaxed);
            Ok(Some(n))
        })
        .unwrap();
        assert_eq!(resumed, points.iter().map(|&n| Some(n)).collect::<Vec<_>>());
        let finished_before = cancelled.iter().flatten().count();
        assert_eq!(measured.load(Ordering::Relaxed), 6 - finished_before);
        std::fs::remove_dir_all(&dir).ok();
    }
}
