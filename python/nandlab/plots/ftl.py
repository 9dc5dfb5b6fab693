"""Figures of the FTL experiments (ftl-*): write amplification of the GC policies."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from nandlab.plots import Source, load, register
from nandlab.plots._style import figure_of, new_figure

POLICIES = {
    "fifo": ("FIFO", "#7f7f7f", "s"),
    "greedy": ("greedy", "#1f77b4", "o"),
    "cost-benefit": ("cost-benefit", "#2ca02c", "^"),
    "random": ("random", "#d62728", "v"),
}
"""GC policy of the CSV: legend label, colour, marker."""
ANALYTIC = "FIFO analytic model (Desnoyers 2012)"


@register("ftl-gc-policies")
def ftl_gc_policies(source: Source) -> Figure:
    """WAF against over-provisioning per GC policy, with the FIFO analytic curve dashed."""
    r = load(source)
    df = r.curve("waf")
    axes = new_figure(
        "nandlab FTL: write amplification of the GC policies"
        " (uniform random 4 KiB writes, steady state)",
        2,
        11.5,
        4.3,
    )
    ax_waf, ax_model = axes
    policies = [p for p in POLICIES if p in set(df["policy"])]
    policies += sorted(set(df["policy"]) - set(POLICIES))
    analytic = df.groupby("op_percent")["waf_fifo_analytic"].first().sort_index()
    ops = analytic.index.to_numpy(dtype=float)
    for policy in policies:
        label, color, marker = POLICIES.get(policy, (policy, "#8c564b", "D"))
        sub = df[df["policy"] == policy].sort_values("op_percent")
        x, waf = sub["op_percent"].to_numpy(dtype=float), sub["waf"].to_numpy(dtype=float)
        ax_waf.plot(x, waf, marker=marker, color=color, label=label)
        model = analytic.loc[sub["op_percent"]].to_numpy(dtype=float)
        ax_model.plot(x, waf / model, marker=marker, color=color, label=label)
    ax_waf.plot(ops, analytic.to_numpy(dtype=float), "k--", lw=1.5, label=ANALYTIC)
    ax_waf.set_yscale("log")
    ax_waf.set_yticks([1, 2, 3, 5, 10, 20], labels=["1", "2", "3", "5", "10", "20"])
    ax_waf.set_ylim(1, max(20.0, float(df["waf"].max()) * 1.2))
    ax_waf.set(ylabel="Write amplification factor (log scale)")
    ax_waf.set_title("(a) WAF = flash pages programmed / host pages written", fontsize=10)
    ax_model.axhline(1, color="black", ls="--", lw=1.5)
    ax_model.set_ylim(bottom=0.9 * min(1.0, float((df["waf"] / df["waf_fifo_analytic"]).min())))
    ax_model.set(ylabel="Measured WAF / FIFO analytic WAF")
    ax_model.set_title("(b) Relative to the FIFO analytic model", fontsize=10)
    for ax in axes:
        ax.set_xticks(ops.tolist())
        ax.set_xlabel("Over-provisioning, spare / logical capacity (%)")
        ax.grid(True, axis="x", alpha=0.3)
    handles, _ = ax_waf.get_legend_handles_labels()
    handles = [h for h in handles if isinstance(h, Line2D)]
    fig = figure_of(ax_waf)
    fig.legend(handles=handles, loc="outside lower center", ncol=5, frameon=False)
    return fig
