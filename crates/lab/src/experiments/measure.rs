//! Measures by name: what one point of an experiment computes, as a type with a registered
//! name, a serializable point and a serializable output. The point runner
//! ([`super::points::run_measured`]) runs them in this process (the machine's cores, the result
//! cache); the registry ([`measure_json`]) lets any worker run one point from its name and its
//! JSON text (a `nandlab measure-worker` process, a Python executor, a Dask worker), and the
//! outputs land in the same cache the runner reads. A point is a deterministic function of its
//! JSON text, so an experiment gives the same bytes whichever worker measured its points.

use super::RunOptions;
use crate::control::Control;
use crate::error::{LabError, LabResult};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What one point of an experiment computes.
pub trait Measure {
    /// The registered name (unique; part of the cache key).
    const NAME: &'static str;
    /// Everything the measure reads: a point is measured from its JSON text alone.
    type Point: Serialize + DeserializeOwned + Sync;
    type Output: Serialize + DeserializeOwned + Send;
    /// The point's output, `None` if `control` cancelled it before it finished.
    fn measure(point: &Self::Point, control: &Control) -> LabResult<Option<Self::Output>>;
}

/// The cache key of `point` of measure `M` (also the name of its cache file).
pub fn point_key<M: Measure>(point: &M::Point) -> String {
    crate::sweep::measure_cache_key(M::NAME, &point_text::<M>(point))
}

fn point_text<M: Measure>(point: &M::Point) -> String {
    serde_json::to_string(point).expect("measure points serialize")
}

/// Runs `points` of `M` through the point runner (progress started and finished here).
pub fn run_measure<M: Measure>(
    options: &RunOptions,
    points: &[M::Point],
) -> LabResult<Vec<Option<M::Output>>> {
    options.control.start(Some(points.len() as u64));
    let measured = measure_all::<M>(options, points)?;
    options.control.finish();
    Ok(measured)
}

/// [`run_measure`] for one of several sweeps of an experiment (the progress count goes on).
/// When `options` plans (see [`Plan`]), the points not cached are recorded instead of measured
/// (and come back `None`).
pub fn measure_all<M: Measure>(
    options: &RunOptions,
    points: &[M::Point],
) -> LabResult<Vec<Option<M::Output>>> {
    if let Some(plan) = &options.plan {
        return Ok(plan.record::<M>(options, points));
    }
    super::points::measure_points(options, points, point_key::<M>, M::measure)
}

/// One point to measure: a registered measure's name and the point's JSON text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Task {
    pub measure: String,
    pub point: String,
    /// The point's cache key: its output goes to `CACHE/KEY.json`.
    pub key: String,
}

/// A dry run's record of the points an experiment would measure and has not cached: run the
/// experiment with [`RunOptions::plan`] set (and its control cancelled, so that loops outside
/// the runner stop at once), measure the tasks anywhere ([`measure_json`]), write their outputs
/// into the cache, and plan again until no task is left (a sweep that depends on another's
/// results shows up once those are cached); the final run reads every point from the cache.
#[derive(Debug, Default)]
pub struct Plan(std::sync::Mutex<Vec<Task>>);

impl Plan {
    /// The tasks recorded, in the order the experiment asked for them, each once.
    pub fn tasks(&self) -> Vec<Task> {
        let mut tasks = self.0.lock().expect("no panics").clone();
        let mut seen = std::collections::BTreeSet::new();
        tasks.retain(|t| seen.insert(t.key.clone()));
        tasks
    }

    fn record<M: Measure>(
        &self,
        options: &RunOptions,
        points: &[M::Point],
    ) -> Vec<Option<M::Output>> {
        let mut out = Vec::with_capacity(points.len());
        for point in points {
            let key = point_key::<M>(point);
            let cached = options
                .cache_dir
                .as_deref()
                .and_then(|dir| super::points::read_cached(dir, &key));
            if cached.is_none() {
                self.0.lock().expect("no panics").push(Task {
                    measure: M::NAME.to_string(),
                    point: point_text::<M>(point),
                    key,
                });
            }
            out.push(cached);
        }
        out
    }
}

type JsonMeasure = fn(&str, &Control) -> LabResult<Option<String>>;

fn json_measure<M: Measure>(point: &str, control: &Control) -> LabResult<Option<String>> {
    let point: M::Point = serde_json::from_str(point)
        .map_err(|e| LabError::Usage(format!("measure {}: bad point: {e}", M::NAME)))?;
    Ok(M::measure(&point, control)?
        .map(|output| serde_json::to_string(&output).expect("measure outputs serialize")))
}

/// Every registered measure.
static MEASURES: &[(&str, JsonMeasure)] = &[
    (super::sim::Eval::NAME, json_measure::<super::sim::Eval>),
    (super::sim::Batch::NAME, json_measure::<super::sim::Batch>),
    (
        super::nfs::ChipRun::NAME,
        json_measure::<super::nfs::ChipRun>,
    ),
    (
        super::nfs::Migrate::NAME,
        json_measure::<super::nfs::Migrate>,
    ),
    (super::ftl::GcWaf::NAME, json_measure::<super::ftl::GcWaf>),
    (
        super::points::StackRun::NAME,
        json_measure::<super::points::StackRun>,
    ),
    (
        super::pcm_run::PcmDesktop::NAME,
        json_measure::<super::pcm_run::PcmDesktop>,
    ),
    (
        super::pcm_tpcc::PcmTpcc::NAME,
        json_measure::<super::pcm_tpcc::PcmTpcc>,
    ),
    (
        super::miyaji::GcTime::NAME,
        json_measure::<super::miyaji::GcTime>,
    ),
    (
        super::miyaji::ValidMap::NAME,
        json_measure::<super::miyaji::ValidMap>,
    ),
    (
        super::ctrl::Suspend::NAME,
        json_measure::<super::ctrl::Suspend>,
    ),
    (
        super::slc_cliff::Cliff::NAME,
        json_measure::<super::slc_cliff::Cliff>,
    ),
    (
        super::dftl::CacheSize::NAME,
        json_measure::<super::dftl::CacheSize>,
    ),
    (
        super::pcm_join::HashJoin::NAME,
        json_measure::<super::pcm_join::HashJoin>,
    ),
    (
        super::pcm_join_users::Users::NAME,
        json_measure::<super::pcm_join_users::Users>,
    ),
];

/// The names of the registered measures.
pub fn measure_names() -> impl Iterator<Item = &'static str> {
    MEASURES.iter().map(|(name, _)| *name)
}

/// Measures one point of the measure named `name` from the point's JSON text; its output as
/// JSON text (what the runner caches), `None` if `control` cancelled it.
pub fn measure_json(name: &str, point: &str, control: &Control) -> LabResult<Option<String>> {
    let (_, measure) = MEASURES.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        LabError::Usage(format!(
            "unknown measure `{name}` (known: {})",
            measure_names().collect::<Vec<_>>().join(", ")
        ))
    })?;
    measure(point, control)
}

/// Writes a task's output (from [`measure_json`]) into `cache_dir`, where the runner reads it.
pub fn write_output(cache_dir: &std::path::Path, task: &Task, output: &str) -> LabResult<()> {
    std::fs::create_dir_all(cache_dir).map_err(|source| LabError::Write {
        path: cache_dir.display().to_string(),
        source,
    })?;
    crate::output::write_file(&cache_dir.join(format!("{}.json", task.key)), output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_names_are_unique() {
        let mut names: Vec<_> = measure_names().collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn an_unknown_measure_or_a_bad_point_is_a_usage_error() {
        let control = Control::new();
        let e = measure_json("no-such", "{}", &control).unwrap_err();
        assert!(e.to_string().contains("unknown measure `no-such`"), "{e}");
        let e = measure_json(super::super::sim::Eval::NAME, "{}", &control).unwrap_err();
        assert!(e.to_string().contains("bad point"), "{e}");
    }
}
