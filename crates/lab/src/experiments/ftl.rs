//! SSD-level experiments (SPEC F3, F4): write amplification of the GC policies.

use super::{Curve, Experiment, ExperimentResult, RunOptions, Scale};
use crate::error::LabResult;

pub(super) static EXPERIMENTS: &[Experiment] = &[Experiment {
    id: "ftl-gc-policies",
    reference: "SPEC F3/F4",
    title: "write amplification against over-provisioning (spare/logical) for each GC policy",
    run: gc_policies,
}];

fn gc_policies(options: &RunOptions) -> LabResult<ExperimentResult> {
    let r = nandlab_ftl::experiments::gc_policies(options.scale == Scale::Quick, options.seed)?;
    let mut result = ExperimentResult::default();
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
