//! SSD-level experiments (SPEC F3, F4): write amplification of the GC policies.

use super::paper::Paper;
use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ftl-gc-policies",
    reference: "SPEC F3/F4",
    title: "write amplification against over-provisioning (spare/logical) for each GC policy",
    run: gc_policies,
    paper: Paper::None("SPEC F3/F4 checks of the GC policies, not a paper figure: no paper value"),
}];

fn gc_policies(options: &RunOptions) -> LabResult<ExperimentResult> {
    use super::gc_policies::{GcPoliciesResult, gc_policies_point, gc_policies_points};
    let quick = options.scale == Scale::Quick;
    let points = gc_policies_points();
    let measured = super::points::run_measured(
        options,
        &points,
        |(policy, op)| {
            let point = format!(
                "policy={} op_percent={op} quick={quick} seed={}",
                policy.name(),
                options.seed
            );
            crate::sweep::measure_cache_key("ftl-gc-policies", &point)
        },
        |&(policy, op), _| Ok(Some(gc_policies_point(policy, op, quick, options.seed)?)),
    )?;
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
