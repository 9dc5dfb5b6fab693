//! `ctrl-suspend` at quick scale (issue 34 item 1): the shape of Wu & He's claims (FAST'12)
//! and the tails of interleaved GC with reads in the mix.

use nandlab_lab::experiments::{RunOptions, Scale, reproduce};

#[test]
fn suspension_orders_read_latency_below_read_priority_below_fifo() {
    let out = std::env::temp_dir().join(format!("nandlab-ctrl-suspend-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let options = RunOptions {
        scale: Scale::Quick,
        ..RunOptions::default()
    };
    let r = reproduce("ctrl-suspend", &options, &out).unwrap();
    let m = |name: &str| {
        *r.metrics
            .get(name)
            .unwrap_or_else(|| panic!("metric {name} missing"))
    };
    // the order of the paper: suspension < read priority < FIFO (mean read latency)
    assert!(m("read_mean_us_interleaved_suspend") < m("read_mean_us_interleaved_priority"));
    assert!(m("read_mean_us_interleaved_priority") < m("read_mean_us_interleaved_fifo"));
    assert!(m("read_mean_reduction_vs_fifo") > 0.05);
    // the write cost stays under the paper's 4 %
    assert!(m("write_mean_overhead").abs() < 0.04);
    // program/erase contention at least doubles the mean read latency (paper: ≈ 2x)
    assert!(m("read_contention_x") > 2.0);
    // interleaved GC keeps tails in milliseconds, blocking GC in seconds
    assert!(m("read_p999_us_interleaved_fifo") < 20_000.0);
    assert!(m("write_p999_us_interleaved_fifo") < 20_000.0);
    assert!(m("read_p99_us_blocking_fifo") > 100.0 * m("read_p99_us_interleaved_fifo"));
    // the paper's values beside nandlab's
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    assert!(summary.contains("\"paper_read_latency_reduction_vs_fifo\""));
}
