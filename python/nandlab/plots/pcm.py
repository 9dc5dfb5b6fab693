"""Figures of the PCM hash-join experiment (pcm-hashjoin): Grace vs virtual partitioning."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register
from nandlab.plots._style import PAPER_MARKER, figure_of, label_bars, new_figure, paper_handle

GROUPS = [
    ("row", "storage", "row,\nstorage"),
    ("row", "main-memory", "row,\nmain memory"),
    ("column", "storage", "column,\nstorage"),
    ("column", "main-memory", "column,\nmain memory"),
]
"""(layout, mode, tick label) of each bar group, in order."""
MEASURES = [
    ("bits_programmed", "(a) Wear: cells programmed", 0.4),
    ("energy_uj", "(b) PCM energy", 0.5),
    ("latency_ms", "(c) PCM access latency", 0.7),
]
"""CSV column, panel title, and the thesis's virtual/Grace ratio for the row store with PCM as
main memory (Fig. 5.11: about 60 % less wear, 50 % less energy, 30 % less latency)."""
COLORS = {"grace": "#7f7f7f", "virtual": "#1f77b4"}
LABELS = {"grace": "Grace (tuples to partitions)", "virtual": "virtual partitioning (tuple ids)"}


@register("pcm-hashjoin")
def pcm_hashjoin(source: Source) -> Figure:
    """Wear, energy and latency of the virtual-partitioning join relative to Grace, for each
    layout and PCM role, with the thesis's Fig. 5.11 ratios as stars."""
    r = load(source)
    df = r.curve("joins")
    sf = float(df["scale_factor"].iloc[0]) if len(df) else float("nan")
    axes = new_figure(
        f"nandlab PCM hash joins: virtual partitioning vs Grace (SSB SF {sf:g}, thesis queries)",
        3,
        15.0,
        4.6,
    )
    xs = np.arange(len(GROUPS), dtype=float)
    width = 0.38
    for ax, (column, title, paper) in zip(axes, MEASURES, strict=True):
        for k, algorithm in enumerate(("grace", "virtual")):
            ratios = []
            for layout, mode, _ in GROUPS:
                sel = df[(df["layout"] == layout) & (df["mode"] == mode)]
                grace = sel[sel["algorithm"] == "grace"][column].to_numpy(dtype=float)
                value = sel[sel["algorithm"] == algorithm][column].to_numpy(dtype=float)
                ok = len(grace) and len(value) and grace[0] > 0
                ratios.append(float(value[0] / grace[0]) if ok else float("nan"))
            at = xs + (k - 0.5) * width
            ax.bar(at, ratios, width, color=COLORS[algorithm], label=LABELS[algorithm])
            label_bars(ax, at.tolist(), ratios, "{:.2f}")
        ax.plot([xs[1] + 0.5 * width], [paper], **PAPER_MARKER)
        ax.set_xticks(xs.tolist(), labels=[g[2] for g in GROUPS], fontsize=8)
        ax.set_xlabel("Layout, role of PCM")
        ax.set_ylabel("Relative to Grace (= 1)")
        ax.set_title(title, fontsize=10)
    fig = figure_of(axes[0])
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle("paper (thesis Fig. 5.11, row store in main memory)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    return fig
