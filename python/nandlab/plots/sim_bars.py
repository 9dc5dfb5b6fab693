"""Figures of the Search-in-Memory experiments that are not heatmaps (paper 004 Table I,
Figs. 17 and 18): one point lookup's bytes, energy and latency; the deadline batch scheduler; and
SiM's share of reads."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import (
    PAPER_MARKER,
    figure_of,
    label_bars,
    new_figure,
    paper_handle,
)

PATHS = [("sim", "SiM (search + gather)", "#1f77b4"), ("full", "full-page read", "#7f7f7f")]
"""(summary key suffix, label, colour) of the two lookup paths of Table I."""
TABLE1 = [
    ("io_bytes", "(a) Bytes moved per lookup", "Bytes"),
    ("energy_nj", "(b) Energy per lookup", "Energy (nJ)"),
    ("latency_us", "(c) Latency per lookup", "Latency (µs)"),
]
"""summary.json stem, panel title and axis label of each Table I panel."""


@register("sim-table1")
def sim_table1(source: Source) -> Figure:
    """Table I / R-S3: bytes, energy and latency of one point lookup with SiM against a
    full-page read, from the paper's bus rates and currents, with the paper's values as stars."""
    r = load(source)
    m = r.metrics
    axes = new_figure("nandlab SiM: one point lookup, SiM vs full-page read (Table I)", 3, 14.0)
    xs = np.arange(len(PATHS), dtype=float)
    for ax, (stem, title, ylabel) in zip(axes, TABLE1, strict=True):
        values = [float(m.get(f"{stem}_{key}", float("nan"))) for key, _, _ in PATHS]
        ax.bar(xs, values, 0.6, color=[c for _, _, c in PATHS], label="nandlab")
        label_bars(ax, xs.tolist(), values, "{:g}")
        paper = [float(m.get(f"paper_{stem}_{key}", float("nan"))) for key, _, _ in PATHS]
        ax.plot(xs, paper, **PAPER_MARKER)
        ax.set_xticks(xs.tolist(), labels=[label for _, label, _ in PATHS])
        ax.set_xlabel("Lookup path")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
    fig = figure_of(axes[0])
    fig.legend(handles=[paper_handle("paper (Table I)")], loc="outside lower center", frameon=False)
    return fig


@register("sim-batch")
def sim_batch(source: Source) -> Figure:
    """Fig. 17 / R-S4: QPS of the deadline batch scheduler over FCFS per query distribution, and
    how often a search merged into a batch, with the paper's 3.7x at Zipf 1.3 as a star."""
    r = load(source)
    df = r.curve("batch")
    axes = new_figure("nandlab SiM: deadline batch scheduler vs FCFS (Fig. 17)", 2, 12.0)
    labels = [str(d) for d in df["distribution"]]
    xs = np.arange(len(labels), dtype=float)
    speedup = df["speedup"].to_numpy(dtype=float)
    axes[0].bar(xs, speedup, 0.6, color="#1f77b4", label="nandlab")
    label_bars(axes[0], xs.tolist(), speedup.tolist(), "{:.2f}x")
    axes[0].axhline(1.0, color="black", ls=":", lw=1)
    paper = r.metrics.get("paper_speedup_zipf1_3")
    if paper is not None and "zipf1.3" in labels:
        axes[0].plot([xs[labels.index("zipf1.3")]], [paper], **PAPER_MARKER)
    axes[0].set_ylabel("Batched QPS / FCFS QPS")
    axes[0].set_title("(a) Throughput gain", fontsize=10)
    merged = df["merge_probability"].to_numpy(dtype=float)
    axes[1].bar(xs, merged, 0.6, color="#2ca02c", label="searches merged")
    label_bars(axes[1], xs.tolist(), merged.tolist(), "{:.0%}")
    axes[1].set_ylim(0, 1)
    axes[1].set_ylabel("Share of searches merged into a batch")
    axes[1].set_title("(b) Merge probability", fontsize=10)
    for ax in axes:
        ax.set_xticks(xs.tolist(), labels=labels)
        ax.set_xlabel("Key distribution")
    fig = figure_of(axes[0])
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle("paper (Fig. 17, Zipf 1.3)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    return fig


MIXES = {"write_dominant": "write-dominant", "read_dominant": "read-dominant"}
"""`mix` of fullpage.csv and its panel title."""


@register("sim-fullpage")
def sim_fullpage(source: Source) -> Figure:
    """Fig. 18: QPS of SiM over the page-cache baseline as SiM serves a growing share of the
    reads (the rest as full-page reads), per mix and key distribution."""
    r = load(source)
    df = r.curve("fullpage")
    mixes = [m for m in MIXES if m in set(df["mix"])]
    axes = new_figure(
        "nandlab SiM: share of reads served by search vs full-page reads (Fig. 18)",
        max(len(mixes), 1),
        12.0,
    )
    for ax, mix in zip(axes, mixes, strict=False):
        sub = df[df["mix"] == mix]
        for distribution in dict.fromkeys(sub["distribution"]):
            d = sub[sub["distribution"] == distribution].sort_values("sim_read_percent")
            ax.plot(
                d["sim_read_percent"].to_numpy(dtype=float),
                d["speedup"].to_numpy(dtype=float),
                marker="o",
                label=str(distribution),
            )
        ax.axhline(1.0, color="black", ls=":", lw=1)
        ax.set_xlabel("Reads served by SiM (%)")
        ax.set_ylabel("SiM QPS / baseline QPS")
        ax.set_title(MIXES[mix], fontsize=10)
    fig = figure_of(axes[0])
    handles, _ = axes[0].get_legend_handles_labels()
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False)
    return fig
