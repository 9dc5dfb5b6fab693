"""Figures of the reproduced experiments, drawn with matplotlib (Agg; no pyplot state).

Each figure function takes a results folder written by ``nandlab reproduce`` (or the
`Reproduction` that `nandlab.reproduce` returns) and returns a `matplotlib.figure.Figure`
drawn the way a paper prints it: axes labelled with units, legends, and the paper's reference
values (the ``paper_*`` metrics of summary.json) marked on the plot::

    from nandlab import plots
    fig = plots.plot("results/nfs-dies")    # dispatches on summary.json's "experiment"
    plots.save(fig, "nfs-dies.png")

`FIGURES` maps experiment ids to figure functions; a new experiment registers its own with
``@plots.register("ftl-gc-policies")`` above a function of the same shape (a module of
figures for another paper imports `register` from here and is imported at the end of this one).
The figures live by paper: `nandlab.plots.nfs` (NANDFlashSim), `nandlab.plots.miyaji` (paper 000,
Miyaji et al.) and `nandlab.plots.ftl` (the FTL's GC policies).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from matplotlib.figure import Figure

from nandlab.experiments import Reproduction

Source: TypeAlias = str | Path | Reproduction
"""A results folder (with summary.json and the CSV curves) or a `Reproduction`."""

FigureFunction: TypeAlias = Callable[[Source], Figure]

FIGURES: dict[str, FigureFunction] = {}
"""Figure function of each experiment id; `plot` dispatches on it."""


def register(experiment: str) -> Callable[[FigureFunction], FigureFunction]:
    """Decorator registering a figure function for `experiment` in `FIGURES`."""

    def add(function: FigureFunction) -> FigureFunction:
        FIGURES[experiment] = function
        return function

    return add


def load(source: Source) -> Reproduction:
    """The `Reproduction` of a results folder; raises FileNotFoundError without summary.json."""
    if isinstance(source, Reproduction):
        return source
    out = Path(source)
    path = out / "summary.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{out}: no summary.json (not a results folder of `nandlab reproduce`)"
        )
    summary = json.loads(path.read_text())
    experiment = summary.pop("experiment", None)
    if not isinstance(experiment, str):
        raise ValueError(f'{path}: no "experiment" key')
    interrupted = bool(summary.pop("interrupted", False))
    return Reproduction(experiment=experiment, metrics=summary, out=out, interrupted=interrupted)


def plot(source: Source) -> Figure:
    """The figure of any results folder, chosen by the experiment it ran."""
    r = load(source)
    function = FIGURES.get(r.experiment)
    if function is None:
        known = ", ".join(sorted(FIGURES))
        raise ValueError(f"no figure for experiment `{r.experiment}` (figures exist for {known})")
    return function(r)


def save(fig: Figure, path: str | Path, dpi: int = 150) -> Path:
    """Writes `fig` to `path` (format from the suffix: .png, .pdf, .svg)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


def png_bytes(fig: Figure, dpi: int = 150) -> bytes:
    """`fig` rendered as PNG."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


# The figure modules register themselves on import; they import the names above, so they come last.
from nandlab.plots.ftl import ftl_gc_policies  # noqa: E402
from nandlab.plots.miyaji import (  # noqa: E402
    miyaji_ablation,
    miyaji_blocksize,
    miyaji_freespace,
    miyaji_gc_latency,
    miyaji_rowsize,
    miyaji_table1,
    miyaji_validmap,
)
from nandlab.plots.nfs import (  # noqa: E402
    nfs_breakdown,
    nfs_contention,
    nfs_dies,
    nfs_energy,
    nfs_migration,
    nfs_pagesize,
    nfs_planes,
    nfs_scheduler,
)

__all__ = [
    "FIGURES",
    "FigureFunction",
    "Source",
    "ftl_gc_policies",
    "load",
    "miyaji_ablation",
    "miyaji_blocksize",
    "miyaji_freespace",
    "miyaji_gc_latency",
    "miyaji_rowsize",
    "miyaji_table1",
    "miyaji_validmap",
    "nfs_breakdown",
    "nfs_contention",
    "nfs_dies",
    "nfs_energy",
    "nfs_migration",
    "nfs_pagesize",
    "nfs_planes",
    "nfs_scheduler",
    "plot",
    "png_bytes",
    "register",
    "save",
]
