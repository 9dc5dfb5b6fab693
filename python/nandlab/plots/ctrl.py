"""Figures of the controller experiments (ctrl-*): read scheduling and program/erase
suspension against GC scheduling (issue 34, SPEC C1; Wu & He, FAST'12)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import figure_of, new_figure, paper_handle
from nandlab.plots.sim import paper_text

READS = {
    "fifo": ("FIFO", "#7f7f7f"),
    "priority": ("read priority (RPS)", "#1f77b4"),
    "suspend": ("P/E suspension", "#d62728"),
}
"""Read scheduling of the CSV: legend label, colour."""


@register("ctrl-suspend")
def ctrl_suspend(source: Source) -> Figure:
    """Mean and p99.9 read latency and p99.9 write latency per read policy, blocking vs
    interleaved GC (log scale), the reads-only latency dashed, the paper's claims in the
    legend."""
    r = load(source)
    df = r.curve("latency")
    axes = new_figure(
        "nandlab controller: read scheduling and P/E suspension under GC"
        " (random 8 KiB, half reads, steady state; Wu & He FAST'12 claims in the legend)",
        3,
        14.0,
        4.4,
    )
    alone = df[df["gc"] == "none"]
    panels = [
        ("read_mean_us", "mean read latency (µs)", "reads: mean"),
        ("read_p999_us", "p99.9 read latency (µs)", "reads: p99.9"),
        ("write_p999_us", "p99.9 write latency (µs)", "writes: p99.9"),
    ]
    gcs = ["blocking", "interleaved"]
    width = 0.25
    for ax, (column, label, title) in zip(axes, panels, strict=True):
        for i, (reads, (name, color)) in enumerate(READS.items()):
            ys = [
                float(df[(df["gc"] == gc) & (df["reads"] == reads)][column].iloc[0])
                if not df[(df["gc"] == gc) & (df["reads"] == reads)].empty
                else np.nan
                for gc in gcs
            ]
            xs = np.arange(len(gcs)) + (i - 1) * width
            ax.bar(xs, ys, width, label=name, color=color)
        if column.startswith("read") and not alone.empty:
            ax.axhline(
                float(alone[column].iloc[0]),
                color="black",
                linestyle="--",
                linewidth=1,
                label="reads only (no P/E contention)",
            )
        ax.set_xticks(np.arange(len(gcs)), [f"{g} GC" for g in gcs])
        ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.set_xlabel("GC scheduling")
        ax.set_title(title)
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle(paper_text(r.paper)))
    axes[0].legend(handles=handles, fontsize=6)
    return figure_of(axes[0])
