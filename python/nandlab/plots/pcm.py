"""Figures of the PCM hash-join experiments (pcm-hashjoin, pcm-join-users): Grace vs virtual
partitioning."""

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

GROUPS = [
    ("row", "storage", "row,\nstorage"),
    ("row", "main-memory", "row,\nmain memory"),
    ("column", "storage", "column,\nstorage"),
    ("column", "main-memory", "column,\nmain memory"),
]
"""(layout, mode, tick label) of each bar group, in order."""
MEASURES = [
    ("bits_programmed", "(a) Wear: cells programmed", "wear"),
    ("energy_uj", "(b) PCM energy", "energy"),
    ("latency_ms", "(c) PCM access latency", "latency"),
]
"""CSV column, panel title, and the measure whose thesis reduction (Fig. 5.11, row store with PCM
as main memory: the experiment's ``paper_mainmemory_row_<measure>_reduction``) is drawn."""
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
    for ax, (column, title, measure) in zip(axes, MEASURES, strict=True):
        reduction = r.paper_value(f"mainmemory_row_{measure}_reduction")
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
        if reduction is not None:
            ax.plot([xs[1] + 0.5 * width], [1.0 - reduction], **PAPER_MARKER)
        ax.set_xticks(xs.tolist(), labels=[g[2] for g in GROUPS], fontsize=8)
        ax.set_xlabel("Layout, role of PCM")
        ax.set_ylabel("Relative to Grace (= 1)")
        ax.set_title(title, fontsize=10)
    fig = figure_of(axes[0])
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(paper_handle("paper (thesis Fig. 5.11, row store in main memory)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    return fig


USER_PANELS = [("row", "Row store"), ("column", "Column store")]
"""(layout, panel row title) of the multi-user figure, as Fig. 5.10 (a) and (b)."""
USER_MEASURES = [
    ("relative_wear", "wear"),
    ("relative_energy", "energy"),
    ("relative_latency", "latency"),
]
"""CSV column and label of each measure, relative to Grace on the row store at the most users."""


@register("pcm-join-users")
def pcm_join_users(source: Source) -> Figure:
    """Fig. 5.10: wear, energy and latency of the queries of U users (inserts, updates and deletes
    between them) for Grace and virtual partitioning, relative to Grace on the row store at the
    most users, PCM as storage (the thesis's setting), one row of panels per layout."""
    r = load(source)
    df = r.curve("users")
    df = df[df["mode"] == "storage"]
    sf = r.metrics.get("scale_factor", float("nan"))
    axes = new_mosaic(
        f"nandlab PCM hash joins with U users (SSB SF {sf:g}, PCM as storage, thesis Fig. 5.10)",
        "abc\ndef",
        15.0,
        8.0,
    )
    users = sorted({int(u) for u in df["users"]})
    xs = np.arange(len(users), dtype=float)
    width = 0.38
    letters = iter("abcdef")
    for layout, layout_title in USER_PANELS:
        for column, measure in USER_MEASURES:
            ax = axes[next(letters)]
            for k, algorithm in enumerate(("grace", "virtual")):
                sel = df[(df["layout"] == layout) & (df["algorithm"] == algorithm)]
                values = [
                    float(sel[sel["users"] == u][column].iloc[0])
                    if (sel["users"] == u).any()
                    else float("nan")
                    for u in users
                ]
                at = xs + (k - 0.5) * width
                ax.bar(at, values, width, color=COLORS[algorithm], label=LABELS[algorithm])
            ax.set_xticks(xs.tolist(), labels=[f"U{u}" for u in users], fontsize=8)
            ax.set_xlabel("Users")
            ax.set_ylabel("Relative to Grace, row store, most users")
            ax.set_title(f"{layout_title}: {measure}", fontsize=10)
    fig = figure_of(axes["a"])
    handles, _ = axes["a"].get_legend_handles_labels()
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    return fig
