"""Paper reproductions: the Python face of `nandlab reproduce`. Runs show a progress bar of
the points measured and stop on Ctrl-C keeping the points finished (see `nandlab.progress`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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
    `interrupted` when Ctrl-C stopped it (then they cover the points finished)."""

    experiment: str
    metrics: dict[str, float]
    out: Path
    interrupted: bool = False

    def curve(self, name: str) -> pd.DataFrame:
        """One CSV curve of the experiment as a DataFrame."""
        import pandas as pd

        return pd.read_csv(self.out / f"{name}.csv")

    def curves(self) -> list[str]:
        return sorted(p.stem for p in self.out.glob("*.csv"))


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
            experiment=experiment, metrics=summary, out=target, interrupted=interrupted
        )

    return run(
        lambda callback: _nandlab.reproduce(id, target, scale, seed, callback),
        build,
        progress,
        desc=id,
        unit="point",
    )
