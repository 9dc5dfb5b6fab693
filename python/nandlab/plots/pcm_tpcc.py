"""Figure of the pcm-tpcc experiment: thesis 001's PCM log buffers and dedup under SQLite
TPC-C, on block-mapped flash (the thesis's setting) and on the page mapping."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import (
    PAPER_MARKER,
    figure_of,
    label_bars,
    new_mosaic,
    paper_handle,
)

BUFFERS = [
    ("region", "region\n(thesis)"),
    ("region-logged", "region,\nlogged pages"),
    ("dpram", "dPRAM"),
    ("ipl", "IPL"),
]
"""(buffer, tick label) of the R-P2 panels, in the thesis's order (best first)."""
JOURNALS = [("wal", "#1f77b4", "SQLite WAL"), ("delete", "#ff7f0e", "rollback journal")]
"""(journal mode, colour, legend label)."""


@register("pcm-tpcc")
def pcm_tpcc(source: Source) -> Figure:
    """R-P2 (Fig. 5.5) as erases relative to no PCM on the block and the page mapping, one bar
    per journal mode, and R-P1 (Fig. 5.8) as lifetime and energy of dedup + the region relative
    to no PCM with the thesis's values (the summary's) as stars."""
    r = load(source)
    axes = new_mosaic(
        "nandlab PCM log buffers under SQLite TPC-C (R-P1, R-P2, thesis Figs. 5.5, 5.8)",
        "abc",
        16.0,
        4.8,
        width_ratios=[2, 2, 1],
    )
    xs = np.arange(len(BUFFERS), dtype=float)
    width = 0.38
    for letter, mapping, title in (
        ("a", "block", "(a) Block mapping: erases relative to no PCM"),
        ("b", "page", "(b) Page mapping: erases relative to no PCM"),
    ):
        ax = axes[letter]
        df = r.curve(mapping)
        for k, (journal, colour, label) in enumerate(JOURNALS):
            sel = df[df["journal"] == journal]
            none = float(sel[sel["buffer"] == "none"]["erases"].iloc[0])
            values = [
                float(sel[sel["buffer"] == b]["erases"].iloc[0]) / max(none, 1.0)
                for b, _ in BUFFERS
            ]
            at = xs + (k - 0.5) * width
            ax.bar(at, values, width, color=colour, label=label)
            label_bars(ax, at.tolist(), values, "{:.2f}")
        ax.axhline(1.0, color="black", ls=":", lw=1)
        ax.set_xticks(xs.tolist(), labels=[t for _, t in BUFFERS], fontsize=8)
        ax.set_xlabel("PCM log buffer (1 MiB); thesis order: region < dPRAM < IPL")
        ax.set_ylabel("Erases relative to no PCM (= 1)")
        ax.set_title(title, fontsize=10)
    ax = axes["c"]
    df = r.curve("combined")
    combined = df[df["variant"] == "dedup+region"]
    values = [
        float(combined["lifetime_vs_none"].iloc[0]),
        float(combined["energy_vs_none"].iloc[0]),
    ]
    spots = [0.0, 1.0]
    ax.bar(spots, values, 0.6, color="#2ca02c", label="nandlab, dedup + region (page mapping)")
    label_bars(ax, spots, values, "{:.2f}")
    for x, name in zip(spots, ("lifetime_ratio", "energy_ratio_max"), strict=True):
        paper = r.paper_value(name)
        if paper is not None:
            ax.plot([x], [paper], **PAPER_MARKER)
    ax.axhline(1.0, color="black", ls=":", lw=1)
    ax.set_xticks(spots, labels=["lifetime", "energy"], fontsize=9)
    ax.set_xlabel("R-P1, 16 MiB of PCM, WAL")
    ax.set_ylabel("Relative to no PCM (= 1)")
    ax.set_title("(c) Dedup + log region", fontsize=10)
    fig = figure_of(axes["a"])
    handles, _ = axes["a"].get_legend_handles_labels()
    more, _ = axes["c"].get_legend_handles_labels()
    handles += more
    handles.append(paper_handle("paper (thesis Fig. 5.8)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False)
    return fig
