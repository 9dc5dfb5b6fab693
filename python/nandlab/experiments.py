"""Paper reproductions: the Python face of `nandlab reproduce`. Runs show a progress bar of
the points measured and stop on Ctrl-C keeping the points finished (see `nandlab.progress`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nandlab import _nandlab
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


def reproduce(
    id: str,
    out: str | Path,
    scale: str = "standard",
    seed: int = 0,
    *,
    progress: Progress = True,
) -> Reproduction:
    """Runs experiment `id` (scale quick, standard or full), writing summary.json and CSVs.

    `progress`: see `nandlab.progress`; Ctrl-C raises `nandlab.Interrupted` holding the
    points finished (also written to `out`).
    """
    target = Path(out)

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
        lambda callback: _nandlab.reproduce(id, target, scale, seed, callback),
        build,
        progress,
        desc=id,
        unit="point",
    )
