//! The paper's values of an experiment, declared once beside it in the registry: the runner
//! ([`super::reproduce`]) writes each as a `paper_NAME` metric beside nandlab's in
//! `summary.json`, as a `"paper"` list there (value, unit, source, point, and nandlab's value
//! of the metric it compares with), as `paper.csv` (a `paper` column beside a `nandlab` one),
//! and prints them as a short table; the Python plots read them from there.

use super::{Curve, CurveValue};
use std::collections::BTreeMap;

/// One value the paper reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperValue {
    /// Its name in `summary.json`, written as `paper_{name}`. A `_min` / `_max` suffix makes it
    /// a bound (the paper says "at least" / "at most").
    pub name: &'static str,
    /// nandlab's metric it compares with (a `summary.json` key); empty when nandlab reports no
    /// single metric of it.
    pub metric: &'static str,
    pub value: f64,
    /// Unit of `value` ("x" for a ratio, "" for a fraction of one).
    pub unit: &'static str,
    /// Where the paper gives it (figure, table or section).
    pub source: &'static str,
    /// The point it belongs to (the configuration the paper measured it at).
    pub point: &'static str,
}

/// A [`PaperValue`] in one line of a declaration.
pub const fn pv(
    name: &'static str,
    metric: &'static str,
    value: f64,
    unit: &'static str,
    source: &'static str,
    point: &'static str,
) -> PaperValue {
    PaperValue {
        name,
        metric,
        value,
        unit,
        source,
        point,
    }
}

/// What the paper gives an experiment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Paper {
    /// Values to set beside nandlab's (at least one).
    Values(&'static [PaperValue]),
    /// The paper gives no number for it, and why (e.g. a shape only, or no paper at all).
    None(&'static str),
}

impl Default for Paper {
    fn default() -> Self {
        Paper::Values(&[])
    }
}

impl Paper {
    pub fn values(&self) -> &'static [PaperValue] {
        match self {
            Paper::Values(v) => v,
            Paper::None(_) => &[],
        }
    }

    /// The `"paper"` value of `summary.json`: the list of values with nandlab's beside them,
    /// or `{"none": why}`; `None` for a result that carries no declaration.
    pub fn to_json(&self, metrics: &BTreeMap<String, f64>) -> Option<serde_json::Value> {
        use serde_json::{Value, json};
        let number = |v: Option<f64>| {
            v.and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number)
        };
        match self {
            Paper::Values([]) => None,
            Paper::Values(values) => Some(Value::Array(
                values
                    .iter()
                    .map(|v| {
                        let nandlab = metrics.get(v.metric).copied();
                        json!({
                            "name": v.name,
                            "metric": v.metric,
                            "value": number(Some(v.value)),
                            "unit": v.unit,
                            "source": v.source,
                            "point": v.point,
                            "nandlab": number(nandlab),
                            "ratio": number(ratio(nandlab, v.value)),
                        })
                    })
                    .collect(),
            )),
            Paper::None(why) => Some(json!({ "none": why })),
        }
    }

    /// `paper.csv`: one row per value (metric, unit, source, point, nandlab, paper, ratio).
    pub fn curve(&self, metrics: &BTreeMap<String, f64>) -> Curve {
        let mut curve = Curve::new(
            "paper",
            &[
                "name", "metric", "unit", "source", "point", "nandlab", "paper", "ratio",
            ],
        );
        let cell = |v: Option<f64>| v.map_or(CurveValue::Label(String::new()), CurveValue::Number);
        for v in self.values() {
            let nandlab = metrics.get(v.metric).copied();
            curve.push(vec![
                v.name.into(),
                v.metric.into(),
                csv_label(v.unit),
                csv_label(v.source),
                csv_label(v.point),
                cell(nandlab),
                CurveValue::Number(v.value),
                cell(ratio(nandlab, v.value)),
            ]);
        }
        curve
    }

    /// The table `nandlab reproduce` ends with, under a `paper:` line: metric | nandlab |
    /// paper | ratio (integers as integers; a bound shown as ≥ / ≤).
    pub fn table(&self, metrics: &BTreeMap<String, f64>) -> String {
        let values = match self {
            Paper::None(why) => return format!("paper: no values ({why})\n"),
            Paper::Values(values) => values,
        };
        let mut rows = vec![[
            "metric".to_string(),
            "nandlab".to_string(),
            "paper".to_string(),
            "ratio".to_string(),
        ]];
        for v in *values {
            let nandlab = metrics.get(v.metric).copied();
            let bound = if v.name.ends_with("_min") {
                "≥ "
            } else if v.name.ends_with("_max") {
                "≤ "
            } else {
                ""
            };
            let unit = if v.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", v.unit)
            };
            rows.push([
                if v.metric.is_empty() {
                    v.name.to_string()
                } else {
                    v.metric.to_string()
                },
                nandlab.map_or("-".into(), |n| format!("{}{unit}", readable(n))),
                format!("{bound}{}{unit}", readable(v.value)),
                ratio(nandlab, v.value).map_or("-".into(), |r| format!("{r:.2}")),
            ]);
        }
        let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
        let widths = [width(0), width(1), width(2), width(3)];
        let mut out = String::from("paper:\n");
        for row in &rows {
            let pad = |i: usize| {
                let n = widths[i].saturating_sub(row[i].chars().count());
                " ".repeat(n)
            };
            out += &format!(
                "  {}{} | {}{} | {}{} | {}{}\n",
                row[0],
                pad(0),
                pad(1),
                row[1],
                pad(2),
                row[2],
                pad(3),
                row[3]
            );
        }
        out
    }
}

fn ratio(nandlab: Option<f64>, paper: f64) -> Option<f64> {
    nandlab.filter(|_| paper != 0.0).map(|n| n / paper)
}

/// A CSV label without the separator (commas become semicolons).
fn csv_label(text: &str) -> CurveValue {
    CurveValue::Label(text.replace(',', ";"))
}

/// Integers as integers, others to four significant digits.
fn readable(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
        format!("{v:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUES: &[PaperValue] = &[
        pv("speedup", "speedup", 3.8, "x", "Fig. 12", "20 % free"),
        pv(
            "t_gc_ms_min",
            "t_gc_ms",
            100.0,
            "ms",
            "Fig. 6",
            "100 valid pages",
        ),
        pv("qps", "missing", 702.0, "", "Table I", "drifting"),
    ];

    #[test]
    fn the_table_prints_integers_as_integers_and_bounds_and_ratios() {
        let metrics = BTreeMap::from([("speedup".to_string(), 1.9), ("t_gc_ms".into(), 702.0)]);
        let table = Paper::Values(VALUES).table(&metrics);
        let lines: Vec<_> = table.lines().collect();
        assert_eq!(lines.len(), 5, "{table}");
        assert_eq!(lines[0], "paper:");
        let [_, _, speedup, t_gc, missing] = lines[..] else {
            unreachable!()
        };
        assert!(speedup.contains("1.900 x") && speedup.contains("3.800 x"));
        assert!(speedup.trim_end().ends_with("0.50"), "{table}");
        assert!(
            t_gc.contains("702 ms") && t_gc.contains("≥ 100 ms"),
            "{table}"
        );
        assert!(!table.contains("702.0"), "{table}");
        assert!(missing.contains("missing") && missing.trim_end().ends_with('-'));
        let none = Paper::None("a shape only").table(&metrics);
        assert!(none.contains("a shape only"));
    }

    /// Every experiment in the registry declares its paper values (named, sourced, placed,
    /// unique) or says why the paper gives none; checked without running any.
    #[test]
    fn every_experiment_declares_its_paper_values() {
        let mut count = 0;
        for e in super::super::registry() {
            count += 1;
            match e.paper {
                Paper::Values(values) => {
                    assert!(!values.is_empty(), "{}: Paper::Values(&[])", e.id);
                    let mut names = std::collections::BTreeSet::new();
                    for v in values {
                        assert!(names.insert(v.name), "{}: {} twice", e.id, v.name);
                        assert!(!v.name.starts_with("paper_"), "{}: {}", e.id, v.name);
                        assert!(v.value.is_finite(), "{}: {}", e.id, v.name);
                        assert!(!v.source.is_empty() && !v.point.is_empty(), "{}", e.id);
                    }
                }
                Paper::None(why) => {
                    assert!(
                        why.contains("no number") || why.contains("no paper"),
                        "{}",
                        e.id
                    )
                }
            }
        }
        assert!(count >= 27, "{count} experiments");
    }

    #[test]
    fn summary_and_csv_carry_the_value_beside_nandlab() {
        let metrics = BTreeMap::from([("speedup".to_string(), 1.9)]);
        let json = Paper::Values(VALUES).to_json(&metrics).unwrap();
        assert_eq!(json[0]["value"], 3.8);
        assert_eq!(json[0]["nandlab"], 1.9);
        assert_eq!(json[0]["source"], "Fig. 12");
        assert!(json[2]["nandlab"].is_null());
        let csv = Paper::Values(VALUES).curve(&metrics).to_csv();
        assert!(csv.starts_with("name,metric,unit,source,point,nandlab,paper,ratio\n"));
        assert!(csv.contains("speedup,speedup,x,Fig. 12,20 % free,1.900000,3.800000,0.500000"));
        assert_eq!(Paper::None("why").to_json(&metrics).unwrap()["none"], "why");
        assert!(Paper::default().to_json(&metrics).is_none());
    }

    #[test]
    fn the_metric_listing_prints_integers_as_integers_and_leaves_paper_values_out() {
        let mut result = super::super::ExperimentResult::default();
        result.metric("page_copies", 13957.0);
        result.metric("waf", 1.5);
        result.add_paper(Paper::Values(VALUES));
        let listing = result.metrics_listing();
        let lines: Vec<_> = listing
            .lines()
            .map(str::split_whitespace)
            .map(Vec::from_iter)
            .collect();
        assert_eq!(
            lines,
            [vec!["page_copies", "13957"], vec!["waf", "1.5000"]],
            "{listing}"
        );
    }
}
