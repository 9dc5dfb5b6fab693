"""Paper reproductions: the Python face of `nandlab reproduce`. Runs show a progress bar of
the points measured and stop on Ctrl-C keeping the points finished (see `nandlab.progress`)."""

from __future__ import annotations

import json
import tempfile
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nandlab import _args, _nandlab
from nandlab.progress import Progress, run

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ExperimentInfo:
    id: str
    reference: str
    title: str


@dataclass(frozen=True)
class Reproduction:
    """An experiment's outputs: its summary metrics and the CSV curves in `out`;
    `interrupted` when Ctrl-C stopped it (then they cover the points finished).

    `paper` is the paper's values as the experiment declares them (summary.json's ``"paper"``:
    one dict per value with ``name``, ``metric``, ``value``, ``unit``, ``source``, ``point``,
    ``nandlab`` and ``ratio``; empty when the paper gives none). Each is also in `metrics` as
    ``paper_<name>``."""

    experiment: str
    metrics: dict[str, float]
    out: Path
    interrupted: bool = False
    paper: list[dict[str, Any]] = field(default_factory=list)

    def paper_value(self, name: str) -> float | None:
        """The paper's value `name` (a declared ``paper_<name>``), or None."""
        return next((float(p["value"]) for p in self.paper if p["name"] == name), None)

    def curve(self, name: str) -> pd.DataFrame:
        """One CSV curve of the experiment as a DataFrame."""
        import pandas as pd

        return pd.read_csv(self.out / f"{name}.csv")

    def curves(self) -> list[str]:
        return sorted(p.stem for p in self.out.glob("*.csv"))


def paper_list(value: object) -> list[dict[str, Any]]:
    """summary.json's ``"paper"`` as a list (``{"none": why}`` and absence: empty)."""
    return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []


def list_experiments() -> list[ExperimentInfo]:
    return [ExperimentInfo(*row) for row in json.loads(_nandlab.experiments())]


def measure_point(measure: str, point: str) -> str:
    """One point of an experiment, as a worker measures it: a registered measure's name and the
    point's JSON text in, the output's JSON text out (plain data across processes)."""
    return _nandlab.measure_point(measure, point)


def _measure_on(executor: Executor, id: str, scale: str, seed: int, cache: Path) -> None:
    """Measures the points of `id` not in `cache` on `executor` into `cache`, planning again
    until none is left (a sweep that depends on another's results shows up once those are
    cached). A point planned again after it was measured is left to the final run."""
    measured: set[str] = set()
    while True:
        tasks = [
            t
            for t in json.loads(_nandlab.experiment_plan(id, scale, seed, cache))
            if t["key"] not in measured
        ]
        if not tasks:
            return
        futures = [executor.submit(measure_point, t["measure"], t["point"]) for t in tasks]
        for task, future in zip(tasks, futures, strict=True):
            (cache / f"{task['key']}.json").write_text(future.result(), encoding="utf-8")
            measured.add(task["key"])


def reproduce(
    id: str,
    out: str | Path,
    scale: str = "standard",
    seed: int = 0,
    *,
    progress: Progress = True,
    executor: Executor | None = None,
) -> Reproduction:
    """Runs experiment `id` (scale quick, standard or full), writing summary.json and CSVs.

    `progress`: see `nandlab.progress`; Ctrl-C raises `nandlab.Interrupted` holding the
    points finished (also written to `out`).

    `executor`: any `concurrent.futures.Executor` (a process pool, a Dask client's executor)
    measures the experiment's points (those of its registered measures; the others run here);
    the outputs are the same bytes as without.
    """
    _args.string("reproduce()", "id", id)
    _args.path("reproduce()", "out", out)
    target = Path(out)
    if executor is not None:
        with tempfile.TemporaryDirectory(prefix="nandlab-points-") as folder:
            cache = Path(folder)
            _measure_on(executor, id, scale, seed, cache)
            return _reproduce(id, target, scale, seed, progress, cache)
    return _reproduce(id, target, scale, seed, progress, None)


def _reproduce(
    id: str, target: Path, scale: str, seed: int, progress: Progress, cache: Path | None
) -> Reproduction:
    def build(text: str) -> Reproduction:
        summary = json.loads(text)
        experiment = summary.pop("experiment")
        interrupted = bool(summary.pop("interrupted", False))
        return Reproduction(
            experiment=experiment,
            metrics=summary,
            out=target,
            interrupted=interrupted,
            paper=paper_list(summary.pop("paper", None)),
        )

    return run(
        lambda callback: _nandlab.reproduce(id, target, scale, seed, callback, cache),
        build,
        progress,
        desc=id,
        unit="point",
    )
