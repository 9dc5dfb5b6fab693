"""The database storage engine of paper 000 on the simulated SSD: conventional vs co-designed
(Insert Address Assist, Update-to-Delete+Insert) under the paper's two protocols. Runs show a
progress bar and stop on Ctrl-C keeping the queries measured (see `nandlab.progress`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nandlab import _args, _nandlab
from nandlab.progress import Progress, run

if TYPE_CHECKING:
    import pandas as pd

QUERY_KINDS = ("insert", "delete", "update")


@dataclass(frozen=True)
class EngineResult:
    """Metrics of the measured queries (of those run so far when `interrupted` by Ctrl-C)."""

    metrics: dict[str, Any]
    queries_per_s: float
    mj_per_query: float
    we_cycles_per_block: float
    interrupted: bool = False

    @property
    def page_copies(self) -> int:
        return int(self.metrics["device"]["page_copies"])

    def queries(self) -> pd.DataFrame:
        """One row per query type: count, simulated time, device reads and writes."""
        import pandas as pd

        rows = []
        for kind in QUERY_KINDS:
            stats = dict(self.metrics["queries"][kind])
            stats["kind"] = kind
            rows.append(stats)
        return pd.DataFrame(rows).set_index("kind")


def engine(
    *,
    iaa: bool,
    u2di: bool,
    free_space: float = 0.2,
    update_fraction: float = 0.4,
    queries: int = 20_000,
    warmup_queries: int = 20_000,
    drifting: bool = False,
    row_size_bytes: int = 119,
    channels: int | None = None,
    blocks_per_plane: int | None = None,
    pages_per_block: int | None = None,
    device: str | Path | Mapping[str, Any] | None = None,
    seed: int = 0,
    progress: Progress = True,
) -> EngineResult:
    """Runs the engine (IAA and U2DI switched as given) on an SSD: by default the
    ``miyaji2014-ssd`` preset scaled to `channels` (1), `blocks_per_plane` (32) and
    `pages_per_block` (32); with `device` on any SSD instead: an SSD preset name (see
    `ssd_presets`), a device file, or a dict with ``nand`` and ``ssd`` tables (the engine
    needs ``ssd.payload = "full"``).

    With ``drifting=False`` (paper 000 Fig. 12): fill to `free_space`, then `warmup_queries`
    and `queries` random queries with P(Insert) = P(Delete) and P(Update) = `update_fraction`.
    With ``drifting=True`` (Table I): fill to 80 % free, then I/D/U 40/20/40 until 20 % free.
    Bad values raise ValueError naming the key. `progress`: see `nandlab.progress` (it counts
    inserts and queries); Ctrl-C raises `nandlab.Interrupted` holding the metrics so far.
    """
    where = "engine()"
    for name, flag in (("iaa", iaa), ("u2di", u2di), ("drifting", drifting)):
        _args.boolean(where, name, flag)
    # free_space's range is checked by the simulator (its message names free_space_fraction);
    # a bad update_fraction would show there only as the derived insert probability
    _args.number(where, "free_space", free_space)
    _args.number(where, "update_fraction", update_fraction, 0.0, 1.0)
    _args.integer(where, "queries", queries)
    _args.integer(where, "warmup_queries", warmup_queries)
    _args.integer(where, "row_size_bytes", row_size_bytes, low=1, high=_args.U32_MAX)
    for name, count in (
        ("channels", channels),
        ("blocks_per_plane", blocks_per_plane),
        ("pages_per_block", pages_per_block),
    ):
        _args.optional_integer(where, name, count, high=_args.U32_MAX)
    _args.config(where, "device", device, optional=True)
    _args.integer(where, "seed", seed)
    protocol: dict[str, Any]
    if drifting:
        protocol = {
            "drifting": {
                "free_space_fraction_start": 0.8,
                "free_space_fraction_end": 0.2,
                "mix": {"insert": 0.4, "delete": 0.2, "update": 0.4},
                "query_count_max": 100_000_000,
                "seed": seed,
            }
        }
    else:
        protocol = {
            "constant": {
                "free_space_fraction": free_space,
                "update_fraction": update_fraction,
                "warmup_query_count": warmup_queries,
                "query_count": queries,
                "seed": seed,
            }
        }
    spec: dict[str, Any] = {
        "iaa": iaa,
        "u2di": u2di,
        "row_size_bytes": row_size_bytes,
        "protocol": protocol,
        "seed": seed,
    }
    for key, value in [
        ("channels", channels),
        ("blocks_per_plane", blocks_per_plane),
        ("pages_per_block", pages_per_block),
    ]:
        if value is not None:
            spec[key] = value
    if device is not None:
        spec["device"] = _device_text(device)
    spec_json = json.dumps(spec)

    def build(text: str) -> EngineResult:
        out = json.loads(text)
        return EngineResult(
            metrics=out["metrics"],
            queries_per_s=out["queries_per_s"],
            mj_per_query=out["mj_per_query"],
            we_cycles_per_block=out["we_cycles_per_block"],
            interrupted=bool(out.get("interrupted", False)),
        )

    return run(
        lambda callback: _nandlab.run_engine(spec_json, callback),
        build,
        progress,
        desc="engine",
        unit="op",
    )


def _device_text(device: str | Path | Mapping[str, Any]) -> str:
    """An SSD preset name as is; a dict or a device file as TOML text."""
    from nandlab.ssd import _config_text
    from nandlab.sweep import ssd_presets

    if isinstance(device, str) and device in ssd_presets():
        return device
    return _config_text(device)[1]
