"""Shared style of the figures: one look for every paper's figures (private to `nandlab.plots`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

TIMES = "\N{MULTIPLICATION SIGN}"
EN_DASH = "\N{EN DASH}"
MINUS = "\N{MINUS SIGN}"
PAPER_MARKER: dict[str, Any] = {
    "marker": "*",
    "markersize": 15,
    "markerfacecolor": "none",
    "markeredgecolor": "black",
    "markeredgewidth": 1.4,
    "linestyle": "none",
    "zorder": 5,
}
"""A paper's reference value: a hollow black star over the measured curve or bar."""


def new_figure(title: str, panels: int, width: float, height: float = 3.9) -> list[Axes]:
    """A figure of `panels` axes side by side, titled, with a light horizontal grid."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # renders with Agg whatever pyplot's backend; no GUI, no global state
    fig.suptitle(title, fontsize=12, fontweight="bold")
    axes: list[Axes] = list(fig.subplots(1, panels, squeeze=False)[0])
    for ax in axes:
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    return axes


def figure_of(ax: Axes) -> Figure:
    fig = ax.get_figure()
    assert isinstance(fig, Figure)
    return fig


def log2_axis(ax: Axes, values: Sequence[float]) -> None:
    """A log-2 x axis ticked at `values` only, labelled as plain numbers."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(values), labels=[f"{v:g}" for v in values])
    ax.xaxis.set_minor_locator(NullLocator())


def by(df: pd.DataFrame, key: str, value: str) -> dict[str, float]:
    """Column `value` of a curve keyed by column `key`."""
    return dict(zip(df[key].astype(str), df[value].to_numpy(dtype=float).tolist(), strict=True))


def paper_handle(label: str) -> Line2D:
    """A legend entry for `PAPER_MARKER`."""
    return Line2D([], [], label=label, **PAPER_MARKER)


def label_bars(ax: Axes, xs: Sequence[float], ys: Sequence[float], fmt: str) -> None:
    """Writes each bar's value above it, on white so that reference lines pass behind."""
    for x, y in zip(xs, ys, strict=True):
        ax.annotate(
            fmt.format(y),
            (x, y),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
            bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "linewidth": 0},
            zorder=4,
        )


def new_mosaic(
    title: str, mosaic: str, width: float, height: float, **gridspec: Any
) -> dict[str, Axes]:
    """A figure of named axes laid out by `mosaic`, one letter per axes and one line per row
    (the string form of `Figure.subplot_mosaic`), titled."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle(title, fontsize=12, fontweight="bold")
    return dict(fig.subplot_mosaic(mosaic, gridspec_kw=gridspec or None))
