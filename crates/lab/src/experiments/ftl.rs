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
    use super::gc_policies::{GC_POLICIES_POINTS, gc_policies_while};
    options.control.start(Some(GC_POLICIES_POINTS as u64));
    let quick = options.scale == Scale::Quick;
    let (r, interrupted) = gc_policies_while(quick, options.seed, |done| {
        if done == 0 {
            options.control.poll()
        } else {
            options.control.advance(1)
        }
    })?;
    if !interrupted {
        options.control.advance(1);
    }
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
