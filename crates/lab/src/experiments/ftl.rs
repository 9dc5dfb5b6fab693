//! SSD-level experiments (SPEC F3, F4): write amplification of the GC policies.

use super::paper::Paper;
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;
use nandlab_ftl::GcPolicy;
use serde::{Deserialize, Serialize};

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ftl-gc-policies",
    reference: "SPEC F3/F4",
    title: "write amplification against over-provisioning (spare/logical) for each GC policy",
    run: gc_policies,
    paper: Paper::None("SPEC F3/F4 checks of the GC policies, not a paper figure: no paper value"),
}];

/// One point of `ftl-gc-policies`: a GC policy at an over-provisioning (percent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct GcPoint {
    policy: GcPolicy,
    op_percent: u32,
    quick: bool,
    seed: u64,
}

/// The WAF curve row of one [`GcPoint`] (a steady-state random-write run).
#[derive(Debug)]
pub(super) struct GcWaf;

impl super::measure::Measure for GcWaf {
    const NAME: &'static str = "ftl-gc-policies";
    type Point = GcPoint;
    type Output = super::gc_policies::CurveRow;
    fn measure(p: &GcPoint, _: &crate::control::Control) -> LabResult<Option<Self::Output>> {
        let row = super::gc_policies::gc_policies_point(p.policy, p.op_percent, p.quick, p.seed)?;
        Ok(Some(row))
    }
}

fn gc_policies(options: &RunOptions) -> LabResult<ExperimentResult> {
    use super::gc_policies::{GcPoliciesResult, gc_policies_points};
    let quick = options.scale == Scale::Quick;
    let points: Vec<GcPoint> = gc_policies_points()
        .into_iter()
        .map(|(policy, op_percent)| GcPoint {
            policy,
            op_percent,
            quick,
            seed: options.seed,
        })
        .collect();
    let measured = super::measure::run_measure::<GcWaf>(options, &points)?;
    // the points finished in order (a cancel keeps the ones before the first it stopped)
    let rows: Vec<_> = measured.into_iter().map_while(|row| row).collect();
    let interrupted = rows.len() < points.len();
    let r = GcPoliciesResult::from_rows(rows);
    let mut result = ExperimentResult {
        interrupted,
        ..ExperimentResult::default()
    };
    for (k, v) in &r.metrics {
        result.metric(k, *v);
    }
    let mut curve = Curve::new(
        "waf",
        &[
            "policy",
            "op_percent",
            "waf",
            "waf_fifo_analytic",
            "gc_page_copies",
        ],
    );
    for row in &r.rows {
        curve.push(vec![
            row.policy.as_str().into(),
            row.op_percent.into(),
            row.waf.into(),
            row.waf_fifo_analytic.into(),
            (row.gc_page_copies as f64).into(),
        ]);
    }
    result.curves.push(curve);
    Ok(result)
}
