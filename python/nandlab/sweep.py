"""Stack runs and design-space sweeps.

A stack config (``nandlab run``'s TOML: ``[run]``, ``[nand]``, ``[ssd]``, ``[engine]``,
``[precondition]``, ``[workload]``; docs/stack.md) runs with `run`, and a sweep runs it at
every point of a grid (or zip) of values for any key paths::

    df = nandlab.sweep("examples/ssd-random-write.toml",
                       {"ssd.gc.policy": ["fifo", "greedy"], "ssd.op_fraction": [0.07, 0.25]})

    from dask.distributed import Client, LocalCluster       # the same sweep on Dask
    with Client(LocalCluster(n_workers=2)) as client:
        df = nandlab.sweep(base, grid, executor=client.get_executor())

`executor` is any `concurrent.futures.Executor` (a process pool, a Dask client's executor, a
``dask-jobqueue`` cluster's client on SLURM). Every task carries the whole base config and its
point's values (seed included), and returns plain data; the CSV (``out``) is the one
``nandlab sweep`` writes, byte for byte, however the points were run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nandlab import _args, _nandlab
from nandlab.progress import Progress
from nandlab.progress import run as _run_controlled
from nandlab.ssd import Config, _config_text

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class StackResult:
    """One stack run: its metric row (`metrics`, in declared order) and what it produced
    (`outcome`: ``{"kind": "ssd", "run": report, …}``, ``{"kind": "engine", "metrics": …}`` or,
    for a ``sim-lookup`` workload, ``{"kind": "sim_lookup", "report": …, "device": …}``)."""

    metrics: dict[str, float]
    outcome: dict[str, Any]
    interrupted: bool = False


def run(
    config: Config,
    overrides: dict[str, Any] | None = None,
    *,
    out: str | Path | None = None,
    progress: Progress = True,
) -> StackResult:
    """Runs a stack config (a path, TOML text, a dict or a `RunConfig`) with `overrides`
    (``{"key.path": value}``) applied; with `out`, also writes ``nandlab run --out``'s files.
    Bad keys raise ValueError naming the key (and its line)."""
    _args.config("run()", "config", config)
    if overrides is not None:
        _check_settings("run()", "overrides", overrides, lists=False)
    _args.path("run()", "out", out, optional=True)
    origin, text = _config_text(config)
    overrides_json = json.dumps(overrides or {})
    target = None if out is None else str(out)

    def build(answer: str) -> StackResult:
        value = json.loads(answer)
        return StackResult(
            metrics=dict(value["metrics"]),
            outcome=value["outcome"],
            interrupted=bool(value["interrupted"]),
        )

    return _run_controlled(
        lambda callback: _nandlab.run_stack(origin, text, overrides_json, target, callback),
        build,
        progress,
        desc="run",
        unit="op",
    )


def run_point(origin: str, text: str, point: int, overrides: list[list[Any]]) -> dict[str, Any]:
    """One sweep point, as a worker runs it: plain data in, plain data out (no extension
    objects cross processes). ``{"point", "settings", "metrics": [[name, value], …]}``."""
    answer = json.loads(_nandlab.run_stack(origin, text, json.dumps(dict(overrides)), None, None))
    metrics = [[name, value] for name, value in answer["metrics"].items()]
    if answer["interrupted"]:
        raise KeyboardInterrupt(f"sweep point {point} interrupted")
    return {"point": point, "settings": overrides, "metrics": metrics}


def points(grid: dict[str, list[Any]], *, zip: bool = False) -> list[list[list[Any]]]:
    """The points of a grid (every combination, the last key in sorted order fastest) or of a
    zip (the i-th values together): a list of ``[[key, value], …]``."""
    result: list[list[list[Any]]] = json.loads(_nandlab.sweep_points(json.dumps(grid), zip))
    return result


def sweep(
    base: Config,
    grid: dict[str, list[Any]],
    *,
    zip: bool = False,
    executor: Executor | None = None,
    out: str | Path | None = None,
) -> pd.DataFrame:
    """Runs `base` at every point of `grid` (``{"key.path": [values]}``); one row per point:
    ``point``, the swept keys, then the metrics. Points run here one after another, or on
    `executor`. With `out`, writes ``out/sweep.csv`` (the bytes of ``nandlab sweep``)."""
    import io

    import pandas as pd

    _args.config("sweep()", "base", base)
    _check_settings("sweep()", "grid", grid, lists=True)
    _args.boolean("sweep()", "zip", zip)
    _args.path("sweep()", "out", out, optional=True)
    if executor is not None and not callable(getattr(executor, "submit", None)):
        # issue 31 item 6: found only when the first point was submitted (AttributeError)
        raise TypeError(
            "sweep(): executor must be a concurrent.futures.Executor (with submit), "
            f"not {type(executor).__name__}"
        )
    origin, text = _config_text(base)
    if origin not in ("config dict", "config text"):
        origin = str(Path(origin).resolve())
    todo = points(grid, zip=zip)
    # every point is checked before any runs (a bad value fails fast, naming the point)
    for i, point in enumerate(todo):
        try:
            _nandlab.check_run_config(origin, text, json.dumps(dict(point)))
        except ValueError as e:
            raise ValueError(f"sweep point {i} ({_describe(point)}): {e}") from None
    if executor is None:
        rows = [run_point(origin, text, i, p) for i, p in enumerate(todo)]
    else:
        futures = [executor.submit(run_point, origin, text, i, p) for i, p in enumerate(todo)]
        rows = [f.result() for f in futures]
    keys = sorted(grid)
    csv = _nandlab.sweep_csv(json.dumps(keys), json.dumps(rows))
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "sweep.csv").write_text(csv, encoding="utf-8")
    frame = pd.read_csv(io.StringIO(csv))
    frame.attrs["csv"] = csv
    declared = metrics()
    frame.attrs["units"] = {c: declared[c]["unit"] for c in frame.columns if c in declared}
    return frame


def metrics() -> dict[str, dict[str, str]]:
    """Every metric a stack run reports (the columns of `run`'s ``metrics`` and of a sweep), as
    declared once in the simulator: name -> ``{"unit", "description", "kind"}`` (kind: ``ssd``
    for block workloads, ``engine`` for engine workloads, ``sim_lookup`` for SiM lookups; a
    name two kinds share keeps the first kind)."""
    declared = json.loads(_nandlab.metric_defs())
    result: dict[str, dict[str, str]] = {}
    for kind in ("ssd", "engine", "sim_lookup"):
        for m in declared[kind]:
            result.setdefault(
                m["name"], {"unit": m["unit"], "description": m["description"], "kind": kind}
            )
    return result


def ssd_presets() -> dict[str, dict[str, str]]:
    """The SSD presets (``[ssd] preset = NAME``): name -> description and source."""
    return {
        name: {"description": description, "source": source}
        for name, description, source in json.loads(_nandlab.ssd_presets())
    }


def _check_settings(where: str, name: str, settings: object, *, lists: bool) -> None:
    """`settings` maps dot key paths to values (`lists`: to non-empty lists of values)."""
    _args.mapping(where, name, settings)
    assert isinstance(settings, Mapping)
    for key, values in settings.items():
        if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
            raise ValueError(f"{where}: {name} key {key!r} is not a dot-separated key path")
        if lists and (isinstance(values, str) or not isinstance(values, Sequence)):
            raise TypeError(
                f"{where}: {name}[{key!r}] must be a list of values, not {type(values).__name__}"
            )
        if lists and not values:
            raise ValueError(f"{where}: {name}[{key!r}] is an empty list")
        for value in values if lists else [values]:
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{where}: {name}[{key!r}] has {value} (not a finite number)")


def _describe(point: list[list[Any]]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in point)
