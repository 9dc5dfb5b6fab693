//! Experiments as data: an experiment's points are stack configs; one runner measures them
//! (several at once, rows in point order) with progress (in points), Ctrl-C (stops between points and inside one, dropping it)
//! and a result cache keyed by the point's config hash (a rerun into the same folder, or a
//! resumed one, skips the points finished). Each point's measure is its metric row
//! ([`crate::stack::SSD_METRICS`] / [`crate::stack::ENGINE_METRICS`]); an experiment's summary
//! is computed from the rows.

use super::RunOptions;
use crate::error::{LabError, LabResult};
use crate::stack::{
    ConstantFreeSpaceWorkload, DriftingFreeSpaceWorkload, EngineSection, Stack, WorkloadSection,
    device_stack_from_text,
};
use crate::sweep::cache_key;
use nandlab_engine::QueryMix;
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
    options.control.start(Some(points.len() as u64));
    // the points are independent: they run on the machine's cores (same rows as in order)
    let rows = super::parallel::map_points(points.len(), &options.control, |i| {
        run_one(options, &points[i])
    })?;
    options.control.finish();
    Ok(rows)
}

/// One point of [`run_points`]: from the cache, or run (`None` if a cancel cut it short or
/// came before it started).
fn run_one(options: &RunOptions, stack: &Stack) -> LabResult<Option<Row>> {
    let key = cache_key(stack);
    let cached = options
        .cache_dir
        .as_deref()
        .and_then(|dir| read_cached(dir, &key));
    let row = match cached {
        Some(row) => Some(row),
        None if options.control.is_cancelled() => None,
        None => {
            let run = stack.run(None, &options.control.part())?;
            if run.interrupted() {
                None
            } else {
                let row = Row(run
                    .metrics
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), *v))
                    .collect());
                if let Some(dir) = &options.cache_dir {
                    write_cached(dir, &key, &row)?;
                }
                Some(row)
            }
        }
    };
    if row.is_some() {
        options.control.advance(1);
    }
    Ok(row)
}

fn read_cached(dir: &Path, key: &str) -> Option<Row> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_str::<Vec<(String, f64)>>(&text)
        .ok()
        .map(Row)
}

fn write_cached(dir: &Path, key: &str, row: &Row) -> LabResult<()> {
    std::fs::create_dir_all(dir).map_err(|source| LabError::Write {
        path: dir.display().to_string(),
        source,
    })?;
    let text = serde_json::to_string(&row.0).expect("rows serialize");
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
