"""Heatmaps of the Search-in-Memory experiments (paper 004 Figs. 12-15): read share x cache
coverage, one panel per query distribution, as in the paper."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from nandlab.plots import Source, load, register
from nandlab.plots._style import figure_of, new_figure, paper_handle

HEATMAPS = {
    "sim-speedup": ("speedup", "SiM QPS / baseline QPS", "RdYlGn", "{:.2f}x", 1.0),
    "sim-energy": ("saving", "NAND energy saved by SiM", "RdYlGn", "{:.0%}", 0.0),
    "sim-latency": (
        "median_reduction",
        "median read latency reduced by SiM",
        "RdYlGn",
        "{:.0%}",
        0.0,
    ),
}
"""experiment -> (CSV column, colour-bar label, colour map, cell format, neutral value)."""
CURVES = {"sim-speedup": "speedup", "sim-energy": "energy", "sim-latency": "latency"}


def paper_text(paper: list[dict[str, Any]]) -> str:
    """The paper's values of a figure (its summary's ``"paper"`` list) for the legend: bounds
    ``X_min`` / ``X_max`` as one range, e.g. ``paper: speedup write intensive 3-9x``."""
    ranges: dict[str, list[str]] = {}
    units: dict[str, str] = {}
    for p in paper:
        name = str(p["name"]).removesuffix("_min").removesuffix("_max").replace("_", " ")
        ranges.setdefault(name, []).append(f"{float(p['value']):g}")
        units[name] = str(p.get("unit", ""))
    if not ranges:
        return "paper: no values in the summary"
    return "paper: " + ", ".join(f"{n} {'-'.join(v)}{units[n]}" for n, v in ranges.items())


def _heatmap(source: Source, experiment: str) -> Figure:
    r = load(source)
    df = r.curve(CURVES[experiment])
    column, label, cmap, fmt, neutral = HEATMAPS[experiment]
    distributions = list(dict.fromkeys(df["distribution"]))
    axes = new_figure(
        f"nandlab SiM vs page-cache baseline: {label}",
        max(1, len(distributions)),
        5.2 * max(1, len(distributions)),
        4.6,
    )
    values = df[column].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    norm: Normalize
    if neutral == 1.0:  # a ratio: symmetric on a log scale around 1
        positive = finite[finite > 0]
        top = float(np.max(np.maximum(positive, 1 / positive))) if len(positive) else 2.0
        norm = LogNorm(vmin=1 / max(top, 1.01), vmax=max(top, 1.01))
    else:
        spread = float(np.max(np.abs(finite - neutral))) if len(finite) else 1.0
        norm = Normalize(vmin=neutral - max(spread, 0.01), vmax=neutral + max(spread, 0.01))
    image = None
    for ax, distribution in zip(axes, distributions, strict=False):
        sel = df[df["distribution"] == distribution]
        reads = sorted(set(sel["read_percent"].astype(float)))
        coverages = sorted(set(sel["coverage_percent"].astype(float)))
        grid = np.full((len(reads), len(coverages)), np.nan)
        for _, row in sel.iterrows():
            grid[
                reads.index(float(row["read_percent"])),
                coverages.index(float(row["coverage_percent"])),
            ] = float(row[column])
        image = ax.imshow(grid, origin="lower", cmap=cmap, norm=norm, aspect="auto")
        for i in range(len(reads)):
            for j in range(len(coverages)):
                text = fmt.format(grid[i, j]) if np.isfinite(grid[i, j]) else "cache"
                ax.text(j, i, text, ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(coverages)), labels=[f"{c:g}%" for c in coverages])
        ax.set_yticks(range(len(reads)), labels=[f"{v:g}%" for v in reads])
        ax.set_xlabel("Cache coverage")
        ax.set_ylabel("Read share")
        ax.set_title(str(distribution), fontsize=10)
        ax.grid(False)
    fig = figure_of(axes[0])
    if image is not None:
        bar = fig.colorbar(image, ax=axes, shrink=0.9)
        bar.ax.set_ylabel(label)
    colors = image.get_cmap() if image is not None else None
    handles: list[Artist] = [paper_handle(paper_text(r.paper))]
    if colors is not None:
        handles += [
            Patch(color=colors(0.9), label="SiM ahead"),
            Patch(color=colors(0.1), label="baseline ahead"),
        ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    return fig


@register("sim-speedup")
def sim_speedup(source: Source) -> Figure:
    """Fig. 12: SiM's QPS over the baseline."""
    return _heatmap(source, "sim-speedup")


@register("sim-energy")
def sim_energy(source: Source) -> Figure:
    """Fig. 13: NAND energy saved by SiM."""
    return _heatmap(source, "sim-energy")


@register("sim-latency")
def sim_latency(source: Source) -> Figure:
    """Fig. 14: median read latency reduced by SiM ("cache": the baseline's median is a hit)."""
    return _heatmap(source, "sim-latency")
