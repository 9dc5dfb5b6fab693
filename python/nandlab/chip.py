"""Chip-level runs of the NAND model (NANDFlashSim fidelity): the Python face of `nandlab chip`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nandlab import _args, _nandlab

if TYPE_CHECKING:
    import pandas as pd

SCHEDULERS = ("die-first", "plane-first", "fcfs")
WORKLOADS = ("swr", "srd", "msnfs", "fin", "web", "usr", "prn")


@dataclass(frozen=True)
class ChipResult:
    """The result of a chip run: a flat summary plus tables as pandas DataFrames."""

    spec: dict[str, Any]
    report: dict[str, Any]
    read_cdf: list[dict[str, float]] = field(repr=False)
    write_cdf: list[dict[str, float]] = field(repr=False)

    @property
    def summary(self) -> dict[str, float]:
        """Scalar metrics of the report (throughput, contention, energy, ...)."""
        return {k: v for k, v in self.report.items() if isinstance(v, (int, float))}

    def stages(self) -> pd.DataFrame:
        """Time and energy per stage (CLE, ALE, TIR, TOR, TIN, TON, BER, STATUS)."""
        import pandas as pd

        return pd.DataFrame(self.report["stages"])

    def op_kinds(self) -> pd.DataFrame:
        """Ops, energy and latency percentiles per op kind."""
        import pandas as pd

        rows = []
        for k in self.report["op_kinds"]:
            row = {key: value for key, value in k.items() if key != "latency"}
            row.update({f"latency_{key}": value for key, value in k["latency"].items()})
            rows.append(row)
        return pd.DataFrame(rows)

    def latency_cdf(self) -> pd.DataFrame:
        """Latency CDF of reads and writes: columns kind, latency_us, fraction."""
        import pandas as pd

        rows = [{"kind": "read", **p} for p in self.read_cdf]
        rows += [{"kind": "write", **p} for p in self.write_cdf]
        return pd.DataFrame(rows, columns=["kind", "latency_us", "fraction"])


def preset(name: str) -> dict[str, Any]:
    """A built-in NAND preset as a dict (edit it and pass it to `chip(device=...)`)."""
    import tomllib

    return tomllib.loads(_nandlab.preset_toml(name))


def chip(
    preset: str = "mlc1",
    workload: str = "swr",
    requests: int = 10_000,
    *,
    request_bytes: int = 0,
    channels: int | None = None,
    dies: int | None = None,
    planes: int | None = None,
    page_size_bytes: int | None = None,
    bus_data_rate_mts: float | None = None,
    program_variation: float | None = None,
    scheduler: str = "die-first",
    cache: bool = False,
    interleave: bool = True,
    queue_depth: int = 32,
    seed: int = 0,
    device: dict[str, Any] | None = None,
) -> ChipResult:
    """Runs a chip-level workload; bad values raise ValueError naming the key.

    Same semantics and defaults as the `nandlab chip` command. `device` is a full chip config
    (a dict shaped like `preset()`'s, e.g. a modified preset) that replaces `preset`.
    `program_variation` spreads each page's program time within its page type (0 to below 1;
    docs/nand.md).
    """
    where = "chip()"
    for name, text in (("preset", preset), ("workload", workload), ("scheduler", scheduler)):
        _args.string(where, name, text)
    _args.integer(where, "requests", requests)
    _args.integer(where, "request_bytes", request_bytes, high=_args.U32_MAX)
    for name, count in (
        ("channels", channels),
        ("dies", dies),
        ("planes", planes),
        ("page_size_bytes", page_size_bytes),
    ):
        _args.optional_integer(where, name, count, high=_args.U32_MAX)
    if bus_data_rate_mts is not None:
        _args.number(where, "bus_data_rate_mts", bus_data_rate_mts, low=0.0)
    if program_variation is not None:
        _args.number(where, "program_variation", program_variation, low=0.0)
    _args.boolean(where, "cache", cache)
    _args.boolean(where, "interleave", interleave)
    _args.integer(where, "queue_depth", queue_depth, high=_args.U32_MAX)
    _args.integer(where, "seed", seed)
    if device is not None:
        _args.mapping(where, "device", device)
    spec: dict[str, Any] = {
        "preset": preset if device is None else str(device.get("name", "custom")),
        "device": device,
        "workload": workload,
        "requests": requests,
        "request_bytes": request_bytes,
        "channels": channels,
        "dies": dies,
        "planes": planes,
        "page_size_bytes": page_size_bytes,
        "bus_data_rate_mts": bus_data_rate_mts,
        "program_variation": program_variation,
        "driver": {
            "policy": scheduler,
            "cache": cache,
            "interleave": interleave,
            "queue_depth": queue_depth,
            "max_planes_per_op": 0,
        },
        "seed": seed,
    }
    out = json.loads(_nandlab.run_chip(json.dumps(spec)))
    return ChipResult(
        spec=out["spec"],
        report=out["report"],
        read_cdf=out["read_cdf"],
        write_cdf=out["write_cdf"],
    )
