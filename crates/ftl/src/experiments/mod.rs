//! Experiments and benchmarks over the SSD: the `ftl-gc-policies` experiment (WAF against
//! over-provisioning per GC policy) and the `nandlab bench ssd` benchmark.

mod bench;
mod gc_policies;
mod workload;

pub use bench::{
    BenchResult, bench_ssd, bench_ssd_config, bench_ssd_nand_config, bench_ssd_steady,
};
pub use gc_policies::{
    CurveRow, GC_POLICIES_POINTS, GcPoliciesResult, OP_PERCENTS, fifo_waf_analytic, gc_policies,
    gc_policies_config, gc_policies_while,
};
pub use workload::UniformRandomWrites;
