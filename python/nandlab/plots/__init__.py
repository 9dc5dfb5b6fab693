"""Figures of the reproduced experiments, drawn with matplotlib (Agg; no pyplot state).

Each figure function takes a results folder written by ``nandlab reproduce`` (or the
`Reproduction` that `nandlab.reproduce` returns; `nandlab run`, `replay`, `fio` and `sweep`
folders load as the experiments ``"run"`` and ``"sweep"``, drawn by `nandlab.plots.runs`)
and returns a `matplotlib.figure.Figure` drawn the way a paper prints it: axes labelled
with units, legends, and the paper's reference values (the ``paper_*`` metrics of
summary.json) marked on the plot::

    from nandlab import plots
    fig = plots.plot("results/nfs-dies")    # dispatches on summary.json's "experiment"
    plots.save(fig, "nfs-dies.png")

`FIGURES` maps experiment ids to figure functions; a new experiment registers its own with
``@plots.register("ftl-gc-policies")`` above a function of the same shape (a module of
figures for another paper imports `register` from here and is imported at the end of this one).
The figures live by paper: `nandlab.plots.nfs` (NANDFlashSim), `nandlab.plots.miyaji` (paper 000,
Miyaji et al.), `nandlab.plots.ftl` (the FTL's GC policies) and `nandlab.plots.ctrl` (read
scheduling and program/erase suspension), `nandlab.plots.tail` (tail latency, the SLC-cache cliff,
DFTL's cache size), `nandlab.plots.zns` (ZNS and FDP).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

from matplotlib.figure import Figure

from nandlab.experiments import Reproduction, paper_list

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


RESULT_FILES = ("summary.json", "sweep.csv", "report.json", "metrics.json")
"""A results folder holds one of these: `nandlab reproduce` summary.json, `nandlab sweep`
sweep.csv, `nandlab run|replay|fio` report.json and metrics.json."""


def load(source: Source) -> Reproduction:
    """The `Reproduction` of a results folder: of `nandlab reproduce` (summary.json), of
    `nandlab run`, `replay` or `fio` (report.json, metrics.json; experiment ``"run"``) or of
    `nandlab sweep` (sweep.csv; experiment ``"sweep"``). FileNotFoundError for other folders."""
    if isinstance(source, Reproduction):
        return source
    out = Path(source)
    path = out / "summary.json"
    if path.is_file():
        summary = _read_json(path)
        experiment = summary.pop("experiment", None)
        if not isinstance(experiment, str):
            raise ValueError(f'{path}: no "experiment" key')
        interrupted = bool(summary.pop("interrupted", False))
        paper = paper_list(summary.pop("paper", None))
        return Reproduction(
            experiment=experiment, metrics=summary, out=out, interrupted=interrupted, paper=paper
        )
    if (out / "sweep.csv").is_file():
        return Reproduction(experiment="sweep", metrics=_sweep_metrics(out), out=out)
    if (out / "report.json").is_file() or (out / "metrics.json").is_file():
        metrics, interrupted = _run_metrics(out)
        return Reproduction(experiment="run", metrics=metrics, out=out, interrupted=interrupted)
    raise FileNotFoundError(
        f"{out}: no summary.json, sweep.csv or report.json (not a results folder of "
        "`nandlab reproduce`, `run`, `replay`, `fio` or `sweep`)"
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: not a JSON object")
    return value


def _numbers(values: dict[str, object]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in values.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def _run_metrics(out: Path) -> tuple[dict[str, float], bool]:
    """The metric row of a run folder (metrics.json, else report.json's numbers) and whether
    it was interrupted."""
    report = _read_json(out / "report.json") if (out / "report.json").is_file() else {}
    if (out / "metrics.json").is_file():
        metrics = _numbers(_read_json(out / "metrics.json"))
    else:
        metrics = _numbers(report)
    return metrics, bool(report.get("interrupted", False))


def _sweep_metrics(out: Path) -> dict[str, float]:
    """A sweep's summary: its points."""
    import pandas as pd

    try:
        points = len(pd.read_csv(out / "sweep.csv"))
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as error:
        raise ValueError(f"{out / 'sweep.csv'}: not a sweep table ({error})") from None
    return {"points": float(points)}


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
from nandlab.plots.ctrl import ctrl_suspend  # noqa: E402
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
from nandlab.plots.pcm import pcm_hashjoin, pcm_join_users  # noqa: E402
from nandlab.plots.pcm_buffer import pcm_buffer, pcm_combined, pcm_dedup  # noqa: E402
from nandlab.plots.pcm_tpcc import pcm_tpcc  # noqa: E402
from nandlab.plots.runs import run_figure, sweep_figure  # noqa: E402
from nandlab.plots.sim import sim_energy, sim_latency, sim_speedup  # noqa: E402
from nandlab.plots.sim_bars import sim_batch, sim_fullpage, sim_table1  # noqa: E402
from nandlab.plots.sim_ssd import sim_ssd_updates  # noqa: E402
from nandlab.plots.tail import ctrl_dftl, ctrl_slc_cliff, ctrl_tail  # noqa: E402
from nandlab.plots.zns import fdp_cachelib, zns_block_tax  # noqa: E402

__all__ = [
    "FIGURES",
    "FigureFunction",
    "Source",
    "ctrl_dftl",
    "ctrl_slc_cliff",
    "ctrl_suspend",
    "ctrl_tail",
    "fdp_cachelib",
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
    "pcm_buffer",
    "pcm_combined",
    "pcm_dedup",
    "pcm_hashjoin",
    "pcm_join_users",
    "pcm_tpcc",
    "plot",
    "png_bytes",
    "register",
    "run_figure",
    "save",
    "sim_batch",
    "sim_energy",
    "sim_fullpage",
    "sim_latency",
    "sim_speedup",
    "sim_ssd_updates",
    "sim_table1",
    "sweep_figure",
    "zns_block_tax",
]
