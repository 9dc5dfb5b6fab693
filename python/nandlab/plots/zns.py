"""Figures of the ZNS and FDP experiments (issue 29): ZNS against the block interface
(Bjørling et al., ATC'21, Fig. 1's workload) and FDP for a CacheLib-like flash cache
(Allison et al., EuroSys'25)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import figure_of, label_bars, new_figure, paper_handle
from nandlab.plots.sim import paper_text

INTERFACES = {
    "block7": ("block SSD (7 % OP)", "#7f7f7f"),
    "block28": ("block SSD (28 % OP)", "#1f77b4"),
    "zns": ("ZNS SSD (0 % OP)", "#d62728"),
}
"""Interface of the CSV: label, colour."""


@register("zns-block-tax")
def zns_block_tax(source: Source) -> Figure:
    """Write throughput and WAF per interface while the usable capacity is overwritten,
    the paper's claim in the legend."""
    r = load(source)
    df = r.curve("block_tax")
    axes = new_figure(
        "nandlab ZNS vs block interface: capacity overwritten"
        " (random 4 KiB on block, zone-sequential on ZNS; Bjørling et al. ATC'21 in the legend)",
        2,
        11.0,
        4.2,
    )
    keys = [k for k in INTERFACES if not df[df["interface"] == k].empty]
    xs = np.arange(len(keys))
    colors = [INTERFACES[k][1] for k in keys]
    for ax, (column, label, fmt) in zip(
        axes,
        [("write_mib_s", "host write throughput (MiB/s)", "{:.1f}"), ("waf", "WAF", "{:.2f}")],
        strict=True,
    ):
        ys = [float(df[df["interface"] == k][column].iloc[0]) for k in keys]
        for x, y, k, c in zip(xs, ys, keys, colors, strict=True):
            ax.bar([x], [y], 0.6, color=c, label=INTERFACES[k][0])
        label_bars(ax, list(xs), ys, fmt)
        ax.set_xticks(xs, [INTERFACES[k][0] for k in keys], fontsize=7)
        ax.set_ylabel(label)
        ax.set_xlabel("interface (same raw flash)")
    axes[0].set_title("write throughput")
    axes[1].set_title("write amplification")
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle(paper_text(r.paper)))
    axes[0].legend(handles=handles, fontsize=6)
    return figure_of(axes[0])


@register("fdp-cachelib")
def fdp_cachelib(source: Source) -> Figure:
    """Device WAF by utilization without and with FDP placement, the paper's ~1 dashed."""
    r = load(source)
    df = r.curve("dlwa")
    axes = new_figure(
        "nandlab FDP for a flash cache: device WAF of SOC (random) + LOC (log) writes"
        " (Allison et al. EuroSys'25 in the legend)",
        1,
        7.0,
        4.2,
    )
    ax = axes[0]
    utils = sorted(set(float(u) for u in df["utilization"]))
    xs = np.arange(len(utils))
    width = 0.35
    for i, (fdp, name, color) in enumerate(
        [("off", "without FDP", "#7f7f7f"), ("on", "with FDP (SOC, LOC on own RUHs)", "#d62728")]
    ):
        sub = df[df["fdp"] == fdp]
        ys = [
            float(sub[sub["utilization"] == u]["waf"].iloc[0])
            if not sub[sub["utilization"] == u].empty
            else np.nan
            for u in utils
        ]
        bx = xs + (i - 0.5) * width
        ax.bar(bx, ys, width, label=name, color=color)
        label_bars(ax, list(bx), ys, "{:.2f}")
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_xticks(xs, [f"{u:.0%}" for u in utils])
    ax.set_xlabel("device utilization (share of the namespace the cache uses)")
    ax.set_ylabel("device WAF (media / host bytes)")
    ax.set_title("device write amplification")
    handles, _ = ax.get_legend_handles_labels()
    handles.append(paper_handle(paper_text(r.paper)))
    ax.legend(handles=handles, fontsize=7)
    return figure_of(ax)
