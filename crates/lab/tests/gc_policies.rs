//! Shape of the `ftl-gc-policies` experiment: WAF against over-provisioning per GC policy
//! under uniform random single-page writes in steady state.

use nandlab_lab::experiments::gc_policies::{OP_PERCENTS, fifo_waf_analytic, gc_policies};

#[test]
fn waf_falls_with_op_and_greedy_beats_fifo() {
    let result = gc_policies(true, 1).unwrap();
    let waf = |policy: &str, op: u32| result.metrics[&format!("waf_{policy}_op{op}")];
    for row in &result.rows {
        eprintln!(
            "{:>13} op {:>2}%: waf {:.3} (fifo analytic {:.3})",
            row.policy, row.op_percent, row.waf, row.waf_fifo_analytic
        );
    }
    assert_eq!(result.metrics.len(), 4 * OP_PERCENTS.len());
    for op in OP_PERCENTS {
        assert!(
            waf("greedy", op) <= waf("fifo", op) + 0.02,
            "greedy vs fifo at {op} %"
        );
        assert!(
            waf("cost_benefit", op) <= waf("fifo", op) + 0.05,
            "cost-benefit vs fifo at {op} %"
        );
    }
    for policy in ["fifo", "greedy", "cost_benefit", "random"] {
        for pair in OP_PERCENTS.windows(2) {
            assert!(
                waf(policy, pair[1]) < waf(policy, pair[0]),
                "{policy}: WAF must fall from {} % to {} % OP",
                pair[0],
                pair[1]
            );
        }
    }
    // FIFO matches its analytic model (Desnoyers 2012) within the effect of the blocks the
    // FTL keeps open or free (which lower the effective spare space a little)
    let fifo25 = waf("fifo", 25);
    let model25 = fifo_waf_analytic(0.25);
    assert!(
        fifo25 > 0.9 * model25 && fifo25 < 1.3 * model25,
        "fifo {fifo25} model {model25}"
    );
    // greedy at 25 % OP: below the FIFO model, above the ideal 1 + 1/(2·op) lower bound region
    let greedy25 = waf("greedy", 25);
    assert!(
        greedy25 > 1.5 && greedy25 < model25 * 1.1,
        "greedy at 25 % OP: {greedy25}"
    );
}
