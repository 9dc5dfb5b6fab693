//! Experiments as data: an experiment's points are stack configs; one runner measures them
//! (several at once, rows in point order) with progress (in points), Ctrl-C (stops between points and inside one, dropping it)
//! and a result cache keyed by the point's config hash (a rerun into the same folder, or a
//! resumed one, skips the points finished). Each point's measure is its metric row
//! ([`crate::stack::SSD_METRICS`] / [`crate::stack::ENGINE_METRICS`]); an experiment's summary
//! is computed from the rows.

use super::RunOptions;
use crate::control::Control;
use crate::error::{LabError, LabResult};
use crate::stack::{
    ConstantFreeSpaceWorkload, DriftingFreeSpaceWorkload, EngineSection, Stack, WorkloadSection,
    device_stack_from_text,
};
use crate::sweep::cache_key;
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

/// Runs `points` (several at once on the machine's cores, [`super::parallel`]); the rows in
/// point order, `None` in place of a point a cancel cut short or stopped from starting.
/// Progress counts points; the points of a run of the same experiment already in the cache
/// are read back instead of run.
pub fn run_points(options: &RunOptions, points: &[Stack]) -> LabResult<Vec<Option<Row>>> {
    let measured = run_measured(options, points, cache_key, |stack, control| {
        let run = stack.run(None, control)?;
        Ok((!run.interrupted()).then(|| {
            run.metrics
                .iter()
                .map(|(k, v)| ((*k).to_string(), *v))
                .collect::<Vec<_>>()
        }))
    })?;
    Ok(measured.into_iter().map(|m| m.map(Row)).collect())
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

fn read_cached<M: DeserializeOwned>(dir: &Path, key: &str) -> Option<M> {
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

/// The paper-000 SSD (`preset`: `miyaji2014-ssd`, or `miyaji2014-emulator` with the
/// emulator's controller energy) scaled to `channels`, `blocks_per_plane`, `pages_per_block`,
/// under an engine; `extra` is more stack-config text merged over the preset (e.g. `[ssd.gc]`
/// keys of a labelled variant), empty for the preset as it is.
#[derive(Clone, Copy, Debug)]
pub struct EngineDevice {
    pub preset: &'static str,
    pub channels: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Planes per die (`None`: the preset's, the paper's 2).
    pub planes_per_die: Option<u32>,
    pub extra: &'static str,
}

impl EngineDevice {
    /// The device text (`[ssd]` preset and `[nand.geometry]` overrides) of this device (a
    /// device with the preset's planes gives the same text, and so the same cache keys, as
    /// before `planes_per_die` existed).
    pub fn text(self) -> String {
        format!(
            "[ssd]\npreset = \"{}\"\n[nand.geometry]\nchannels = {}\nblocks_per_plane = {}\npages_per_block = {}\n{}{}",
            self.preset,
            self.channels,
            self.blocks_per_plane,
            self.pages_per_block,
            self.planes_per_die
                .map_or(String::new(), |p| format!("planes_per_die = {p}\n")),
            self.extra
        )
    }

    /// The stack of `engine` on this device under `workload`.
    pub fn stack(
        self,
        engine: &EngineSection,
        workload: &WorkloadSection,
        seed: u64,
    ) -> LabResult<Stack> {
        device_stack_from_text(
            "experiment point",
            &self.text(),
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
