"""Figures of the controller-realism experiments (issue 34): tail latency under GC scheduling,
suspension and an SLC cache (``ctrl-tail``), the SLC-cache write cliff (``ctrl-slc-cliff``) and
response time against the mapping cache's size (``ctrl-dftl``)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import figure_of, log2_axis, new_figure, paper_handle
from nandlab.plots.sim import paper_text

POINTS = {
    "blocking": ("blocking GC", "#7f7f7f"),
    "interleaved": ("interleaved GC", "#1f77b4"),
    "suspend": ("interleaved + P/E suspend", "#d62728"),
    "slc": ("+ SLC cache (fold when full)", "#2ca02c"),
    "slc_idle": ("+ SLC cache (idle folding)", "#9467bd"),
}
"""Point of the ``tails`` CSV: legend label, colour."""


@register("ctrl-tail")
def ctrl_tail(source: Source) -> Figure:
    """Read and write p99 and p99.9 per point (log scale): blocking GC's tails in seconds,
    interleaved GC's and suspension's in milliseconds."""
    r = load(source)
    df = r.curve("tails")
    axes = new_figure(
        "nandlab controller: tail latency in steady state"
        " (random 8 KiB, half reads, full device; shape of Wu & He FAST'12, MQSim FAST'18)",
        2,
        13.0,
        4.4,
    )
    width = 0.8 / max(len(POINTS), 1)
    percentiles = ["p99", "p999"]
    for ax, op in zip(axes, ["read", "write"], strict=True):
        for i, (point, (label, color)) in enumerate(POINTS.items()):
            row = df[df["point"] == point]
            ys = [
                float(row[f"{op}_{p}_us"].iloc[0]) if not row.empty else np.nan for p in percentiles
            ]
            xs = np.arange(len(percentiles)) + (i - (len(POINTS) - 1) / 2) * width
            ax.bar(xs, ys, width, label=label, color=color)
        ax.set_xticks(np.arange(len(percentiles)), ["p99", "p99.9"])
        ax.set_yscale("log")
        ax.set_ylabel(f"{op} latency (µs)")
        ax.set_xlabel("percentile")
        ax.set_title(f"{op}s")
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle("paper: shape only (no number for this device)"))
    axes[0].legend(handles=handles, fontsize=6)
    return figure_of(axes[0])


@register("ctrl-slc-cliff")
def ctrl_slc_cliff(source: Source) -> Figure:
    """Write bandwidth per interval of simulated time with and without the SLC cache, one panel
    per pattern, the cache's occupancy on a second axis: the cliff where the cache is full."""
    r = load(source)
    df = r.curve("bandwidth")
    axes = new_figure(
        "nandlab SLC cache: the write cliff on TLC"
        " (sustained writes through 16 SLC blocks; vendor shape: Samsung 870 QVO)",
        2,
        13.0,
        4.4,
    )
    for ax, pattern in zip(axes, ["sequential", "random"], strict=True):
        for cache, label, color in [
            ("slc", "with SLC cache", "#2ca02c"),
            ("none", "TLC only", "#7f7f7f"),
        ]:
            rows = df[(df["pattern"] == pattern) & (df["cache"] == cache)]
            ax.plot(rows["t_end_s"], rows["write_mib_s"], label=label, color=color, linewidth=1)
        rows = df[(df["pattern"] == pattern) & (df["cache"] == "slc")]
        twin = ax.twinx()
        twin.plot(
            rows["t_end_s"],
            rows["slc_occupancy_pages"],
            color="black",
            linestyle=":",
            linewidth=1,
            label="SLC cache pages in use",
        )
        twin.set_ylabel("SLC cache pages in use")
        twin.set_ylim(bottom=0)
        ax.set_xlabel("simulated time (s)")
        ax.set_ylabel("write bandwidth (MiB/s)")
        ax.set_title(f"{pattern} writes")
        ax.set_ylim(bottom=0)
        handles, _ = ax.get_legend_handles_labels()
        handles += twin.get_legend_handles_labels()[0]
        handles.append(paper_handle(paper_text(r.paper)))
        ax.legend(handles=handles, fontsize=6, loc="upper right")
    return figure_of(axes[0])


@register("ctrl-dftl")
def ctrl_dftl(source: Source) -> Figure:
    """Mean response time and the cache's hit ratio against the cached mapping entries (log 2),
    the all-in-DRAM table dashed."""
    r = load(source)
    df = r.curve("cache_size")
    axes = new_figure(
        "nandlab DFTL: response time vs mapping cache size"
        " (Zipf 0.9, 70 % reads; shape of Gupta et al. ASPLOS'09)",
        2,
        13.0,
        4.4,
    )
    cached = df[df["cache_fraction"] < 1.0]
    ideal = df[df["cache_fraction"] >= 1.0]
    sizes = cached["cache_entries"].to_numpy(dtype=float).tolist()
    panels = [
        ("mean_us", "mean response time (µs)", "response time"),
        ("hit_ratio", "mapping cache hit ratio", "hit ratio"),
    ]
    for ax, (column, label, title) in zip(axes, panels, strict=True):
        ax.plot(sizes, cached[column], marker="o", color="#1f77b4", label="cached mapping table")
        if not ideal.empty:
            ax.axhline(
                float(ideal[column].iloc[0]),
                color="black",
                linestyle="--",
                linewidth=1,
                label="whole table in DRAM",
            )
        if sizes:
            log2_axis(ax, sizes)
        ax.set_xlabel("cached mapping entries")
        ax.set_ylabel(label)
        ax.set_title(title)
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle("paper: shape only (DFTL, ASPLOS'09)"))
    axes[0].legend(handles=handles, fontsize=6)
    return figure_of(axes[0])
