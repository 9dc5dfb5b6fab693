"""Figures of the PCM write-buffer experiments (pcm-dedup, pcm-buffer, pcm-combined; thesis 001
§5.1, Figs. 5.1-5.8)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import (
    PAPER_MARKER,
    figure_of,
    label_bars,
    new_figure,
    new_mosaic,
    paper_handle,
)

BUFFERS = {
    "none": ("no PCM buffer", "#7f7f7f"),
    "region": ("PCM log region (thesis)", "#1f77b4"),
    "region-logged": ("log region, logged pages only", "#aec7e8"),
    "dpram": ("dPRAM (Sun et al.)", "#2ca02c"),
    "ipl": ("In-Page Logging (Lee & Moon)", "#d62728"),
}
"""`buffer` value of buffers.csv: legend label and colour."""
BUFFER_MEASURES = [
    ("erases", "Erases"),
    ("write_time_s", "Flash write time (s)"),
    ("nand_energy_mj", "NAND energy (mJ)"),
    ("sequential_share", "Share of sequential flushes"),
]
"""CSV column and axis label of each pcm-buffer panel (Figs. 5.5-5.7)."""


def _kib(n: float) -> str:
    return f"{n / 1024:g} KiB" if n < 1 << 20 else f"{n / (1 << 20):g} MiB"


@register("pcm-dedup")
def pcm_dedup(source: Source) -> Figure:
    """Figs. 5.1-5.3: detection rate and search time against the fingerprint store's size, and
    the flash page programs dedup saves."""
    r = load(source)
    df = r.curve("dedup").sort_values("store_size_bytes")
    present = r.metrics.get("duplicates_present_fraction", float("nan"))
    axes = new_figure(
        f"nandlab PCM dedup: the redundant write finder ({present:.0%} of page writes duplicate)",
        3,
        15.0,
        4.4,
    )
    sizes = df["store_size_bytes"].to_numpy(dtype=float)
    labels = [_kib(s) for s in sizes]
    xs = np.arange(len(sizes), dtype=float)
    ax_rate, ax_time, ax_space = axes
    ax_rate.plot(xs, df["detection_rate"].to_numpy(dtype=float), "o-", label="detection rate")
    ax_rate.set_ylim(0, 1.05)
    ax_rate.set_ylabel("Duplicates found / duplicates present")
    ax_rate.set_title("(a) Detection rate (Fig. 5.2)", fontsize=10)
    ax_time.plot(
        xs,
        df["search_ns_per_lookup"].to_numpy(dtype=float) / 1e3,
        "s-",
        color="#ff7f0e",
        label="search time per lookup",
    )
    ax_time.set_ylabel("PCM search time per lookup (µs)")
    ax_time.set_title("(b) Fingerprint search time (Fig. 5.3)", fontsize=10)
    programmed = df["flash_pages_programmed"].to_numpy(dtype=float)
    none = r.metrics.get("flash_pages_no_dedup", float("nan"))
    ax_space.bar(xs, programmed, 0.6, color="#1f77b4", label="flash pages programmed, dedup")
    label_bars(ax_space, xs.tolist(), programmed.tolist(), "{:.0f}")
    ax_space.axhline(none, color="black", ls="--", lw=1.5, label="flash pages programmed, no dedup")
    ax_space.set_ylabel("Flash pages programmed")
    ax_space.set_title("(c) Flash writes saved (Fig. 5.1)", fontsize=10)
    for ax in axes:
        ax.set_xticks(xs.tolist(), labels=labels, fontsize=8)
        ax.set_xlabel("Fingerprint store size in PCM")
    fig = figure_of(ax_rate)
    handles = []
    for ax in axes:
        handles += ax.get_legend_handles_labels()[0]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False)
    return fig


@register("pcm-buffer")
def pcm_buffer(source: Source) -> Figure:
    """Figs. 5.4-5.7: erases, flash write time, NAND energy and sequential flushes of the PCM log
    region against dPRAM and IPL (and no buffer), per PCM size, one row per FTL mapping."""
    r = load(source)
    df = r.curve("buffers")
    mappings = [m for m in ("page", "hybrid") if m in set(df["mapping"])]
    mosaic = "\n".join("".join(f"{chr(97 + 4 * i + j)}" for j in range(4)) for i in range(2))
    axes = new_mosaic(
        "nandlab PCM log buffer vs dPRAM vs IPL (R-P2: ours < dPRAM < IPL)",
        mosaic,
        16.0,
        8.0,
    )
    sizes = sorted(float(s) for s in set(df["pcm_bytes"]) if float(s) > 0)
    xs = np.arange(len(sizes), dtype=float)
    order = [b for b in BUFFERS if b != "none" and b in set(df["buffer"])]
    width = 0.8 / max(len(order), 1)
    for i, mapping in enumerate(mappings):
        sub = df[df["mapping"] == mapping]
        none = sub[sub["buffer"] == "none"]
        for j, (column, label) in enumerate(BUFFER_MEASURES):
            ax = axes[chr(97 + 4 * i + j)]
            for k, buffer in enumerate(order):
                values = []
                for size in sizes:
                    hit = sub[(sub["buffer"] == buffer) & (sub["pcm_bytes"] == size)]
                    values.append(float(hit[column].iloc[0]) if len(hit) else float("nan"))
                at = xs + (k - (len(order) - 1) / 2) * width
                ax.bar(at, values, width, color=BUFFERS[buffer][1], label=BUFFERS[buffer][0])
            if len(none) and column != "sequential_share":
                ax.axhline(
                    float(none[column].iloc[0]),
                    color=BUFFERS["none"][1],
                    ls="--",
                    lw=1.5,
                    label=BUFFERS["none"][0],
                )
            ax.set_xticks(xs.tolist(), labels=[_kib(s) for s in sizes], fontsize=8)
            ax.set_xlabel("PCM buffer size")
            ax.set_ylabel(label)
            ax.set_title(f"{mapping} mapping: {label.split(' (')[0].lower()}", fontsize=10)
            if column in ("erases", "write_time_s", "nand_energy_mj"):
                ax.set_yscale("log")
    fig = figure_of(axes["a"])
    handles, _ = axes["b"].get_legend_handles_labels()
    fig.legend(handles=handles, loc="outside lower center", ncol=5, frameon=False)
    return fig


COMBINED = [
    ("none", "no PCM"),
    ("dedup", "dedup"),
    ("log-region", "log region"),
    ("dedup+log-region", "dedup + log region"),
]
"""`variant` of combined.csv and its tick label, in order."""


@register("pcm-combined")
def pcm_combined(source: Source) -> Figure:
    """Fig. 5.8 / R-P1: SSD lifetime and energy of dedup, the PCM log region and both, relative
    to no PCM, with the thesis's values (the summary's, R-P1) as stars."""
    r = load(source)
    df = r.curve("combined")
    axes = new_figure(
        "nandlab PCM dedup + log region vs no PCM (R-P1, thesis Fig. 5.8)",
        2,
        12.0,
        4.6,
    )
    variants = [(v, t) for v, t in COMBINED if v in set(df["variant"])]
    xs = np.arange(len(variants), dtype=float)
    panels = [
        ("lifetime_vs_none", "(a) SSD lifetime (erases⁻¹) relative to no PCM", "lifetime_ratio"),
        ("energy_vs_none", "(b) Energy relative to no PCM", "energy_ratio_max"),
    ]
    for ax, (column, title, name) in zip(axes, panels, strict=True):
        paper = r.paper_value(name)
        values = [float(df[df["variant"] == v][column].iloc[0]) for v, _ in variants]
        ax.bar(xs, values, 0.6, color="#1f77b4", label="nandlab")
        label_bars(ax, xs.tolist(), values, "{:.2f}")
        ax.axhline(1.0, color="black", ls=":", lw=1)
        if paper is not None:
            ax.plot([xs[-1]], [paper], **PAPER_MARKER)
        ax.set_xticks(xs.tolist(), labels=[t for _, t in variants], fontsize=9)
        ax.set_xlabel("PCM front end")
        ax.set_ylabel("Relative to no PCM (= 1)")
        ax.set_title(title, fontsize=10)
    fig = figure_of(axes[0])
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle("paper (thesis Fig. 5.8, 16 MB of PCM)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    return fig
