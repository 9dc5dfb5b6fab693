"""Paper reproductions: the Python face of `nandlab reproduce`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nandlab import _nandlab

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ExperimentInfo:
    id: str
    reference: str
    title: str


@dataclass(frozen=True)
class Reproduction:
    """An experiment's outputs: its summary metrics and the CSV curves in `out`."""

    experiment: str
    metrics: dict[str, float]
    out: Path

    def curve(self, name: str) -> pd.DataFrame:
        """One CSV curve of the experiment as a DataFrame."""
        import pandas as pd

        return pd.read_csv(self.out / f"{name}.csv")

    def curves(self) -> list[str]:
        return sorted(p.stem for p in self.out.glob("*.csv"))


def list_experiments() -> list[ExperimentInfo]:
    return [ExperimentInfo(*row) for row in json.loads(_nandlab.experiments())]


def reproduce(id: str, out: str | Path, scale: str = "standard", seed: int = 0) -> Reproduction:
    """Runs experiment `id` (scale quick, standard or full), writing summary.json and CSVs."""
    out = Path(out)
    summary = json.loads(_nandlab.reproduce(id, out, scale, seed))
    experiment = summary.pop("experiment")
    return Reproduction(experiment=experiment, metrics=summary, out=out)
