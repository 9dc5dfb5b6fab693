"""Figure of ``sim-ssd-updates``: Search-in-Memory on the simulated SSD with 80 % updates
against the full-page baseline, by host page-cache coverage (paper 004 Fig. 12's
write-intensive row, SPEC R-S1; issue 30 item 4)."""

from __future__ import annotations

from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import figure_of, new_figure, paper_handle
from nandlab.plots.sim import paper_text

PATHS = {
    "sim": ("SiM (search + gather)", "#d62728"),
    "full-page": ("full-page baseline", "#7f7f7f"),
}
"""Path of the ``updates`` CSV: legend label, colour."""


@register("sim-ssd-updates")
def sim_ssd_updates(source: Source) -> Figure:
    """Left: queries per second of both paths against the cache coverage. Right: SiM's
    speed-up over the baseline, with the paper's 3-9x band for write-intensive mixes."""
    r = load(source)
    df = r.curve("updates")
    axes = new_figure(
        "nandlab SiM on the SSD: 80 % updates, Zipf 0.9, 16 clients"
        " (paper 004 Fig. 12, write-intensive: 3-9x)",
        2,
        12.0,
        4.2,
    )
    qps, ratio = axes
    for path, (label, color) in PATHS.items():
        rows = df[df["path"] == path].sort_values("page_cache_coverage")
        qps.plot(
            rows["page_cache_coverage"] * 100,
            rows["queries_per_s"] / 1000,
            marker="o",
            label=label,
            color=color,
        )
    qps.set_xlabel("host page-cache coverage (%)")
    qps.set_ylabel("queries per second (thousands)")
    qps.set_title("throughput")
    qps.legend(fontsize=7)
    sim = df[df["path"] == "sim"].set_index("page_cache_coverage")["queries_per_s"]
    full = df[df["path"] == "full-page"].set_index("page_cache_coverage")["queries_per_s"]
    speedup = (sim / full).dropna().sort_index()
    ratio.plot(
        speedup.index * 100,
        speedup.to_numpy(dtype=float),
        marker="o",
        color="#d62728",
        label="nandlab",
    )
    ratio.axhspan(3.0, 9.0, color="#ff7f0e", alpha=0.15, label="paper: 3-9x (write-intensive)")
    ratio.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ratio.set_yscale("log")
    ratio.set_xlabel("host page-cache coverage (%)")
    ratio.set_ylabel("SiM QPS / baseline QPS (x)")
    ratio.set_title("speed-up")
    handles, _ = ratio.get_legend_handles_labels()
    handles.append(paper_handle(paper_text(r.paper)))
    ratio.legend(handles=handles, fontsize=6)
    return figure_of(qps)
