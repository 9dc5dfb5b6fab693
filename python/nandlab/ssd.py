"""SSD-level runs (device, FTL, preconditioning, workload): the Python face of `nandlab run`.

A run config is the TOML of ``nandlab run CONFIG.toml`` given as a file, as TOML text or as a
dict of the same shape::

    r = nandlab.run_ssd("examples/ssd-random-write.toml")
    r.summary["waf"], r.latency(), r.valid_page_map()
    r = nandlab.run_ssd({"device": {"preset": "slc"}, "workload": {"pattern": "random", ...}})
    r = nandlab.run_ssd("big.toml", out="results/big")   # also the files of `nandlab run --out`

Unknown keys and bad values raise ValueError naming the key, with the CLI's message. Runs show
a progress bar and stop on Ctrl-C keeping the requests completed (see `nandlab.progress`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nandlab import _args, _nandlab
from nandlab.progress import Progress, run

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

OPS = ("read", "write", "trim", "flush")
"""Request kinds of the report, each with its own section."""
LATENCY_COLUMNS = [
    "op",
    "requests",
    "mean_us",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "iops",
    "mib_s",
]

Config = str | Path | Mapping[str, Any]
"""A TOML file (a `Path`, or a `str` without ``=`` or a newline), TOML text, or a dict."""


@dataclass(frozen=True)
class SsdResult:
    """The report of an SSD run (the report.json of ``nandlab run``) with tables over it."""

    config_toml: str = field(repr=False)
    report: dict[str, Any] = field(repr=False)

    @property
    def interrupted(self) -> bool:
        """The run was stopped (Ctrl-C): the report covers the requests completed by then."""
        return bool(self.report.get("interrupted", False))

    @property
    def summary(self) -> dict[str, float]:
        """Flat scalars: the report's top-level numbers (waf, sim_time_us, ...), the FTL's
        counters, ``energy_*_mj`` and, per op that had requests, ``{op}_iops``, ``{op}_mib_s``,
        ``{op}_mean_us``, ``{op}_p50_us`` and ``{op}_p99_us``."""
        out: dict[str, float] = {
            k: v for k, v in self.report.items() if _is_number(v) and k not in OPS
        }
        out.update({k: v for k, v in self.report.get("counters", {}).items() if _is_number(v)})
        for key, value in self.report.get("energy", {}).items():
            out[f"energy_{key}"] = value
        for row in self._latency_rows():
            op = row["op"]
            for key in ("iops", "mib_s", "mean_us", "p50_us", "p99_us"):
                out[f"{op}_{key}"] = row[key]
        return out

    def latency(self) -> pd.DataFrame:
        """Latency percentiles and rates per op that had requests (columns `LATENCY_COLUMNS`)."""
        import pandas as pd

        return pd.DataFrame(self._latency_rows(), columns=LATENCY_COLUMNS)

    def latency_cdf(self) -> pd.DataFrame:
        """Latency CDF per op: columns op, latency_us, fraction (as latency_cdf.csv)."""
        import pandas as pd

        rows = [
            {"op": op, "latency_us": p["latency_us"], "fraction": p["fraction"]}
            for op in OPS
            for p in self.report.get(op, {}).get("cdf", [])
        ]
        return pd.DataFrame(rows, columns=["op", "latency_us", "fraction"])

    def valid_page_map(self) -> np.ndarray:
        """Valid pages of every block: one row per plane (all channels, chips, dies), one column
        per block of the plane."""
        import numpy as np

        m = self.report["valid_page_map"]
        return np.asarray(m["valid_pages"], dtype=np.int64).reshape(m["rows"], m["cols"])

    def erase_histogram(self) -> pd.DataFrame:
        """Blocks per erase count: columns erase_count, blocks (as erase_histogram.csv)."""
        import pandas as pd

        rows = self.report["erase_counts"]["histogram"]
        return pd.DataFrame(rows, columns=["erase_count", "blocks"])

    def _latency_rows(self) -> list[dict[str, Any]]:
        rows = []
        for op in OPS:
            section = self.report.get(op)
            if not section or not section.get("requests"):
                continue
            lat = section["lat"]
            rows.append(
                {
                    "op": op,
                    "requests": section["requests"],
                    **{k: lat[k] for k in LATENCY_COLUMNS[2:8]},
                    "iops": section["iops"],
                    "mib_s": section["bw_mib_s"],
                }
            )
        return rows


def run_ssd(
    config: Config, *, out: str | Path | None = None, progress: Progress = True
) -> SsdResult:
    """Runs an SSD config (see `Config`) and returns its report; bad keys raise ValueError.

    With `out`, also writes report.json and the CSVs of ``nandlab run --out`` (the same bytes).
    `progress`: see `nandlab.progress`; Ctrl-C raises `nandlab.Interrupted` holding the
    result of the requests completed (and writes it to `out`).
    """
    _args.config("run_ssd()", "config", config)
    _args.path("run_ssd()", "out", out, optional=True)
    origin, text = _config_text(config)
    target = None if out is None else Path(out)
    return run(
        lambda callback: _nandlab.run_ssd(origin, text, target, callback),
        lambda report: SsdResult(config_toml=text, report=json.loads(report)),
        progress,
        desc="run_ssd",
        unit="req",
    )


def replay(
    trace: str | Path,
    format: str,
    device: Config | None = None,
    *,
    closed_loop: bool = False,
    seed: int = 0,
    out: str | Path | None = None,
    progress: Progress = True,
    precondition_reads: bool = True,
    fit_device: bool = False,
) -> SsdResult:
    """Replays a block trace (``msr``, ``blkparse``, ``disksim`` or ``native``) on an SSD.

    `device` is a device file, TOML text or dict with ``[device]`` and ``[ftl]`` (as in
    examples/device-mlc.toml); None uses the default device of ``nandlab replay``. Requests
    beyond the SSD's capacity are folded into it; their count is ``summary["folded_requests"]``.
    `precondition_reads` (default True) first writes the pages the trace reads before writing
    them (``report["read_preconditioned_pages"]``); `fit_device` grows the device's blocks per
    plane to hold the trace instead of folding it (``report["fitted_blocks_per_plane"]``).
    `out` and `progress` as in `run_ssd`.
    """
    where = "replay()"
    _args.path(where, "trace", trace)
    _args.string(where, "format", format)
    _args.config(where, "device", device, optional=True)
    for name, flag in (
        ("closed_loop", closed_loop),
        ("precondition_reads", precondition_reads),
        ("fit_device", fit_device),
    ):
        _args.boolean(where, name, flag)
    _args.integer(where, "seed", seed)
    _args.path(where, "out", out, optional=True)
    device_toml = "" if device is None else _config_text(device)[1]
    target = None if out is None else Path(out)

    def build(text: str) -> SsdResult:
        replayed = json.loads(text)
        report = replayed["report"]
        report["folded_requests"] = replayed["folded_requests"]
        report["read_preconditioned_pages"] = replayed["read_preconditioned_pages"]
        report["fitted_blocks_per_plane"] = replayed["fitted_blocks_per_plane"]
        return SsdResult(config_toml=device_toml, report=report)

    return run(
        lambda callback: _nandlab.replay(
            Path(trace),
            format,
            device_toml,
            closed_loop,
            seed,
            target,
            callback,
            precondition_reads,
            fit_device,
        ),
        build,
        progress,
        desc="replay",
        unit="req",
    )


def _is_file(text: str) -> bool:
    """Whether `text` names an existing file (False for text that cannot be a path)."""
    if "\n" in text:
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _config_text(config: Config) -> tuple[str, str]:
    """(origin named in error messages, TOML text) of a config."""
    if isinstance(config, Mapping):
        return "config dict", to_toml(config)
    # an existing file is read as a file even when its name contains `=`
    if isinstance(config, str) and not _is_file(config) and ("\n" in config or "=" in config):
        return "config text", config
    path = Path(config)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such config file")
    return str(path), path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# TOML emitter: enough for run configs (nested tables of scalars, arrays, inline tables)

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def to_toml(config: Mapping[str, Any]) -> str:
    """TOML text of nested dicts of str, int, float, bool, lists and dicts.

    Dicts become ``[tables]`` (dicts inside lists become inline tables); keys whose value is
    None are left out, so that the simulator uses its default.
    """
    lines: list[str] = []
    _table(config, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(table: Mapping[str, Any], path: list[str], lines: list[str]) -> None:
    scalars = {k: v for k, v in table.items() if v is not None and not isinstance(v, Mapping)}
    tables = {k: v for k, v in table.items() if isinstance(v, Mapping)}
    if path and (scalars or not tables):
        lines.append(f"\n[{'.'.join(_key(p) for p in path)}]")
    for key, value in scalars.items():
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in tables.items():
        _table(value, [*path, key], lines)


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"TOML keys are strings, not {type(key).__name__} ({key!r})")
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None)
        return f"{{{items}}}" if items else "{}"
    if isinstance(value, Sequence):
        return f"[{', '.join(_value(v) for v in value)}]"
    raise TypeError(f"no TOML value for {type(value).__name__} ({value!r})")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
