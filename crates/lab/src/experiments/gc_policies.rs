//! `ftl-gc-policies`: write amplification against over-provisioning for each GC victim policy,
//! under uniformly random single-page writes in steady state (functional precondition to a
//! full, fragmented device, then a timed measurement).

use crate::error::LabResult;
use crate::stack::{DeviceFile, set_key};
use nandlab_ftl::{GcPolicy, Precondition, Ssd, SsdConfig};
use nandlab_workload::UniformRandomWrites;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Over-provisioning points (spare / logical, percent).
pub const OP_PERCENTS: [u32; 5] = [7, 15, 25, 35, 50];

/// One point of a WAF curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveRow {
    /// GC policy name.
    pub policy: String,
    /// Over-provisioning, spare / logical, percent.
    pub op_percent: u32,
    /// Measured write amplification.
    pub waf: f64,
    /// WAF of the FIFO analytic model at this OP (for comparison).
    pub waf_fifo_analytic: f64,
    /// Pages moved by GC in the measured run.
    pub gc_page_copies: u64,
    /// Blocks erased in the measured run.
    pub erases: u64,
    /// Host pages written in the measured run.
    pub host_pages_written: u64,
}

/// Metrics (`waf_<policy>_op<percent>`, policy names with `-` as `_`) and curve rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GcPoliciesResult {
    /// `waf_<policy>_op<percent>` → WAF.
    pub metrics: BTreeMap<String, f64>,
    /// One row per (policy, OP) point.
    pub rows: Vec<CurveRow>,
}

/// The device of the experiment: SLC timings (`slc` preset), 4 KiB pages (one page per write),
/// 2 dies × 2 planes, `blocks_per_plane` blocks of 64 pages; built by the stack builder from
/// typed values (the `[nand]` and `[ssd]` of a stack config).
pub fn gc_policies_config(policy: GcPolicy, op_percent: u32, quick: bool) -> LabResult<SsdConfig> {
    use toml::Value;
    let blocks_per_plane: i64 = if quick { 128 } else { 512 };
    let policy = Value::try_from(policy).expect("a GC policy is a TOML string");
    let settings = [
        ("nand.preset", "slc".into()),
        ("nand.geometry.channels", Value::Integer(1)),
        ("nand.geometry.chips_per_channel", Value::Integer(1)),
        ("nand.geometry.dies_per_chip", Value::Integer(2)),
        ("nand.geometry.planes_per_die", Value::Integer(2)),
        (
            "nand.geometry.blocks_per_plane",
            Value::Integer(blocks_per_plane),
        ),
        ("nand.geometry.pages_per_block", Value::Integer(64)),
        ("nand.geometry.page_size_bytes", Value::Integer(4096)),
        ("ssd.gc.policy", policy),
        ("ssd.gc.threshold_blocks", Value::Integer(3)),
        (
            "ssd.op_fraction",
            Value::Float(f64::from(op_percent) / 100.0),
        ),
        ("ssd.payload", "timing-only".into()),
        ("ssd.host.queue_depth", Value::Integer(8)),
    ];
    let mut table = toml::Table::new();
    for (path, value) in settings {
        set_key(&mut table, path, value);
    }
    DeviceFile::from_table("ftl-gc-policies point", table)
}

/// Runs every policy at every OP point. `quick` keeps it to a few seconds in release mode.
pub fn gc_policies(quick: bool, seed: u64) -> LabResult<GcPoliciesResult> {
    let rows = gc_policies_points()
        .into_iter()
        .map(|(policy, op)| gc_policies_point(policy, op, quick, seed))
        .collect::<LabResult<Vec<_>>>()?;
    Ok(GcPoliciesResult::from_rows(rows))
}

/// Points of [`gc_policies`]: every policy at every OP.
pub const GC_POLICIES_POINTS: usize = GcPolicy::ALL.len() * OP_PERCENTS.len();

/// The points of [`gc_policies`] in order: every OP of each policy.
pub fn gc_policies_points() -> Vec<(GcPolicy, u32)> {
    GcPolicy::ALL
        .into_iter()
        .flat_map(|policy| OP_PERCENTS.map(|op| (policy, op)))
        .collect()
}

/// One point of [`gc_policies`]: `policy` at `op` percent over-provisioning, in steady state.
pub fn gc_policies_point(policy: GcPolicy, op: u32, quick: bool, seed: u64) -> LabResult<CurveRow> {
    let mut ssd = Ssd::new(gc_policies_config(policy, op, quick)?, seed)?;
    let logical = ssd.logical_pages();
    // steady state: fill everything, then overwrite it twice at random
    ssd.precondition(&Precondition {
        fill_fraction: 1.0,
        random_overwrites: 2 * logical,
    })?;
    let measured = if quick { logical } else { 3 * logical };
    let page = u64::from(ssd.page_size_bytes());
    let writes = UniformRandomWrites::new(seed, measured, ssd.logical_capacity_bytes(), page);
    let report = ssd.run(writes)?;
    Ok(CurveRow {
        policy: policy.name().to_string(),
        op_percent: op,
        waf: report.waf,
        waf_fifo_analytic: fifo_waf_analytic(f64::from(op) / 100.0),
        gc_page_copies: report.counters.gc_page_copies,
        erases: report.counters.erases,
        host_pages_written: report.counters.host_pages_written,
    })
}

impl GcPoliciesResult {
    /// The result of the rows measured (`waf_<policy>_op<percent>` metrics from them).
    pub fn from_rows(rows: Vec<CurveRow>) -> GcPoliciesResult {
        let metrics = rows
            .iter()
            .map(|row| {
                let name = format!("waf_{}_op{}", row.policy.replace('-', "_"), row.op_percent);
                (name, row.waf)
            })
            .collect();
        GcPoliciesResult { metrics, rows }
    }
}

/// WAF of FIFO (round-robin) GC under uniform random writes, from the classic model
/// (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012; Hu et al.,
/// "Write amplification analysis in flash-based SSDs", SYSTOR 2009): a page survives the
/// T·(1 − x) host writes of one trip through the block queue with probability
/// e^{−α(1 − x)}, α = physical / logical = 1 + op, so the victim's valid fraction x solves
/// x = e^{−α(1 − x)} and WAF = 1 / (1 − x). Greedy does somewhat better (it never picks a
/// block fuller than FIFO's), so this is an upper reference for greedy.
pub fn fifo_waf_analytic(op_fraction: f64) -> f64 {
    let alpha = 1.0 + op_fraction;
    // f(x) = x − e^{−α(1−x)} is negative just below the non-trivial root and positive
    // above it on (0, 1); bisect on [0, 1 − ε] (x = 1 is the trivial root).
    let f = |x: f64| x - (-alpha * (1.0 - x)).exp();
    let (mut lo, mut hi) = (0.0, 1.0 - 1e-9);
    if f(hi) < 0.0 {
        // α ≤ 1: no spare space
        return f64::INFINITY;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    1.0 / (1.0 - 0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analytic_fifo_by_hand() {
        // α = 1.25: x ≈ 0.6286 (e^{−1.25·0.3714} = 0.6286), WAF ≈ 2.69
        let waf = fifo_waf_analytic(0.25);
        assert!((waf - 2.69).abs() < 0.02, "{waf}");
        assert!(fifo_waf_analytic(0.07) > fifo_waf_analytic(0.5));
    }
}
