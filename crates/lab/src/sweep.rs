//! Sweeps: a base stack config and a grid (every combination) or a zip (the i-th values
//! together) of values for any key paths. Each point is the base with its values set; points
//! run in parallel processes (`nandlab sweep --jobs N`) or on any executor from Python (Dask),
//! and give one row each: the point's key values and its metrics. A result cache keyed by a
//! hash of the point's resolved config, the nandlab version and the build ([`build_id`]) lets
//! a rerun or a resumed sweep skip finished points.
//!
//! ```toml
//! base = "ssd-random-write.toml"     # a stack config, relative to this file
//! [grid]                             # or [zip]: lists of equal length, taken together
//! "ssd.gc.policy" = ["greedy", "fifo"]
//! "ssd.op_fraction" = [0.07, 0.25]
//! ```
//! Grid points vary the last key (in sorted key order) fastest.

use crate::error::{LabError, LabResult};
use crate::stack::{Source, Stack};
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};
use std::path::{Path, PathBuf};

/// A sweep file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// The base stack config (relative to the sweep file).
    pub base: String,
    /// Every combination of these values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<toml::Table>,
    /// The i-th values of every list together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zip: Option<toml::Table>,
}

/// A key path and its value at one point.
pub type Setting = (String, toml::Value);

/// A sweep ready to run: the base config's text and the settings of every point.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The base config's path as named in errors.
    pub base_origin: String,
    pub base_text: String,
    /// Where the base config's relative paths are read from.
    pub base_dir: PathBuf,
    /// The swept key paths, in column order.
    pub keys: Vec<String>,
    /// One list of settings per point, in point order.
    pub points: Vec<Vec<Setting>>,
}

impl Sweep {
    /// Reads a sweep file and its base config; every point is resolved and checked up front,
    /// so a bad value fails before anything runs (the error names the point and the key).
    pub fn load(path: &Path) -> LabResult<Sweep> {
        let origin = path.display().to_string();
        let text = read(path)?;
        let source = Source {
            origin: &origin,
            text: &text,
        };
        let file: SweepFile = toml::from_str(&text).map_err(|e| source.syntax_error(&e))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let base_path = dir.join(&file.base);
        let base_text = read(&base_path)?;
        let (keys, points) = match (&file.grid, &file.zip) {
            (Some(grid), None) => (
                keys_of(grid),
                grid_points(grid).map_err(|(k, m)| source.error(&sub_key("grid", &k), m))?,
            ),
            (None, Some(zip)) => (
                keys_of(zip),
                zip_points(zip).map_err(|(k, m)| source.error(&sub_key("zip", &k), m))?,
            ),
            _ => {
                return Err(LabError::Usage(format!(
                    "{origin}: give exactly one of [grid] or [zip]"
                )));
            }
        };
        let sweep = Sweep {
            base_origin: base_path.display().to_string(),
            base_dir: base_path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            base_text,
            keys,
            points,
        };
        for i in 0..sweep.points.len() {
            sweep.stack(i)?;
        }
        Ok(sweep)
    }

    /// The resolved stack of point `i`.
    pub fn stack(&self, i: usize) -> LabResult<Stack> {
        Stack::from_toml(
            &self.base_origin,
            &self.base_text,
            &self.base_dir,
            &self.points[i],
        )
        .map_err(|e| {
            LabError::Usage(format!(
                "sweep point {i} ({}): {e}",
                describe(&self.points[i])
            ))
        })
    }
}

fn read(path: &Path) -> LabResult<String> {
    std::fs::read_to_string(path).map_err(|source| LabError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The swept keys in sorted order (the column and variation order, whatever order the
/// table keeps).
fn keys_of(table: &toml::Table) -> Vec<String> {
    let mut keys: Vec<String> = table.keys().cloned().collect();
    keys.sort();
    keys
}

/// `table.key`, or `table` for an error about the whole table.
fn sub_key(table: &str, key: &str) -> String {
    if key.is_empty() {
        table.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// The swept lists of a `[grid]` or `[zip]` table, by key.
type Lists<'t> = Vec<(&'t String, &'t Vec<toml::Value>)>;

fn lists(table: &toml::Table) -> Result<Lists<'_>, (String, String)> {
    if table.is_empty() {
        return Err((String::new(), "no key to sweep".into()));
    }
    let mut lists = table
        .iter()
        .map(|(k, v)| match v {
            toml::Value::Array(values) if !values.is_empty() => Ok((k, values)),
            _ => Err((k.clone(), "must be a non-empty list of values".into())),
        })
        .collect::<Result<Lists<'_>, _>>()?;
    lists.sort_by(|a, b| a.0.cmp(b.0));
    Ok(lists)
}

/// The most points a sweep may have (each is a whole run; a grid beyond this is a mistake,
/// and its point list alone would exhaust memory).
pub const SWEEP_POINTS_MAX: usize = 1_000_000;

/// Every combination, the last key varying fastest.
pub fn grid_points(table: &toml::Table) -> Result<Vec<Vec<Setting>>, (String, String)> {
    let lists = lists(table)?;
    let total = lists
        .iter()
        .try_fold(1usize, |n, (_, v)| {
            n.checked_mul(v.len()).filter(|&n| n <= SWEEP_POINTS_MAX)
        })
        .ok_or_else(|| {
            let sizes: Vec<String> = lists.iter().map(|(_, v)| v.len().to_string()).collect();
            let points = lists
                .iter()
                .fold(1u128, |n, (_, v)| n.saturating_mul(v.len() as u128));
            (
                String::new(),
                format!(
                    "{} = {points} points, more than the {SWEEP_POINTS_MAX} a sweep may have",
                    sizes.join(" x "),
                ),
            )
        })?;
    let mut points = Vec::with_capacity(total);
    for mut index in 0..total {
        let mut point = vec![(String::new(), toml::Value::Boolean(false)); lists.len()];
        for (slot, (key, values)) in lists.iter().enumerate().rev() {
            point[slot] = ((*key).clone(), values[index % values.len()].clone());
            index /= values.len();
        }
        points.push(point);
    }
    Ok(points)
}

/// The i-th value of every list together (the lists must have equal length).
pub fn zip_points(table: &toml::Table) -> Result<Vec<Vec<Setting>>, (String, String)> {
    let lists = lists(table)?;
    let n = lists[0].1.len();
    if let Some((key, values)) = lists.iter().find(|(_, v)| v.len() != n) {
        return Err((
            (*key).clone(),
            format!(
                "{} values, but `{}` has {n} (zip takes lists of equal length)",
                values.len(),
                lists[0].0
            ),
        ));
    }
    Ok((0..n)
        .map(|i| {
            lists
                .iter()
                .map(|(k, v)| ((*k).clone(), v[i].clone()))
                .collect()
        })
        .collect())
}

/// `key=value, …` of a point, for messages.
pub fn describe(point: &[Setting]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Overrides given as JSON `{"key.path": value, …}` (what Python sends), as settings.
pub fn parse_overrides(json: &str) -> LabResult<Vec<Setting>> {
    if json.trim().is_empty() {
        return Ok(Vec::new());
    }
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| {
            LabError::Usage(format!("overrides: expected {{\"key.path\": value}}: {e}"))
        })?;
    map.into_iter()
        .map(|(k, v)| {
            let value = toml::Value::try_from(&v)
                .map_err(|e| LabError::Usage(format!("overrides: key `{k}`: {e}")))?;
            Ok((k, value))
        })
        .collect()
}

/// The cache key of a point: SHA-1 of the nandlab version, the build and the resolved config.
pub fn cache_key(stack: &Stack) -> String {
    let mut hasher = Sha1::new();
    hasher.update(crate::version().as_bytes());
    hasher.update(b"\n");
    hasher.update(build_id().as_bytes());
    hasher.update(b"\n");
    hasher.update(stack.resolved_json().to_string().as_bytes());
    hex(&hasher.finalize())
}

/// The cache key of an experiment's point measured by `measure` (a name for what is measured,
/// so two measures of the same point never share an entry) and described by `point` (the
/// point's full config as text): SHA-1 of the version, the build, the measure and the point.
pub fn measure_cache_key(measure: &str, point: &str) -> String {
    let mut hasher = Sha1::new();
    for part in [crate::version(), build_id(), measure, point] {
        hasher.update(part.as_bytes());
        hasher.update(b"\n");
    }
    hex(&hasher.finalize())
}

/// The running program's build: SHA-1 of its executable, so that a rebuilt simulator (same
/// version, changed code) never reads results cached by another build. Computed once.
pub fn build_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .map(|bytes| hex(&Sha1::digest(&bytes)))
            .unwrap_or_else(|_| "unknown-build".into())
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One finished point: its settings and metric row (what a worker returns: plain data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub point: usize,
    /// `(key path, value as JSON)` in column order.
    pub settings: Vec<(String, serde_json::Value)>,
    /// `(metric, value)` in declared order.
    pub metrics: Vec<(String, f64)>,
}

/// The CSV of a sweep: `point`, the swept keys, then the metrics (in the order first met).
/// The one formatter for the CLI and Python, so both give the same bytes.
pub fn csv(keys: &[String], rows: &[PointResult]) -> String {
    let mut metric_names: Vec<&str> = Vec::new();
    for row in rows {
        for (name, _) in &row.metrics {
            if !metric_names.contains(&name.as_str()) {
                metric_names.push(name);
            }
        }
    }
    let header = ["point"]
        .into_iter()
        .chain(keys.iter().map(String::as_str))
        .chain(metric_names.iter().copied());
    let mut out = crate::output::CsvText::new(header);
    for row in rows {
        let settings =
            keys.iter().map(
                |k| match row.settings.iter().find(|(s, _)| s == k).map(|(_, v)| v) {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                },
            );
        let metrics = metric_names.iter().map(|name| {
            row.metrics
                .iter()
                .find(|(n, _)| n == name)
                .map_or_else(String::new, |(_, v)| v.to_string())
        });
        out.row(
            std::iter::once(row.point.to_string())
                .chain(settings)
                .chain(metrics),
        );
    }
    out.finish()
}

/// Settings as JSON values (what a row records).
pub fn settings_json(point: &[Setting]) -> Vec<(String, serde_json::Value)> {
    point
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::to_value(v).expect("TOML values are JSON"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn grid_is_every_combination_last_key_fastest() {
        let points = grid_points(&table("a = [1, 2]\nb = [\"x\", \"y\", \"z\"]\n")).unwrap();
        assert_eq!(points.len(), 6);
        assert_eq!(describe(&points[0]), "a=1, b=\"x\"");
        assert_eq!(describe(&points[1]), "a=1, b=\"y\"");
        assert_eq!(describe(&points[5]), "a=2, b=\"z\"");
    }

    #[test]
    fn zip_takes_lists_together_and_needs_equal_lengths() {
        let points = zip_points(&table("a = [1, 2]\nb = [3, 4]\n")).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(describe(&points[1]), "a=2, b=4");
        let (key, message) = zip_points(&table("a = [1, 2]\nb = [3]\n")).unwrap_err();
        assert_eq!(key, "b");
        assert!(message.contains("equal length"), "{message}");
        let (key, _) = grid_points(&table("a = 1\n")).unwrap_err();
        assert_eq!(key, "a");
    }

    #[test]
    fn csv_quotes_and_orders_columns() {
        let rows = vec![PointResult {
            point: 0,
            settings: vec![("ssd.gc.policy".into(), serde_json::json!("greedy"))],
            metrics: vec![("waf".into(), 1.5), ("erases".into(), 3.0)],
        }];
        assert_eq!(
            csv(&["ssd.gc.policy".into()], &rows),
            "point,ssd.gc.policy,waf,erases\n0,greedy,1.5,3\n"
        );
    }
}
