"""Search-in-Memory (paper 004, docs/sim.md): the evaluation harness and the secondary index.

::

    import nandlab.sim as sim
    r = sim.evaluate("sim", read_share=1.0, cache_coverage=0.0, distribution="zipfian",
                     leaves=200, queries=2000)
    r["qps"], r["read_latency_ns"]["p50"], r["chip_lookups"]
    sim.batched(clients=8, deadline_ns=4000.0, leaves=200, queries=2000)["merge_probability"]
    sim.table1()["sim"]["energy_nj"]                       # paper Table I (63 nJ)
    idx = sim.SecondaryIndex([("gender", 1), ("age", 7)], rows=[[1, 30], [0, 42]])
    q = idx.select(equal={"age": 42})                      # runs on a fresh SiM chip
    q.row_ids, q.stats["searches"], q.cost["bus_bytes"]

Every call runs the Rust model on the ``sim2024`` preset (paper Table II) unless ``preset``
names another SiM preset; bad keys raise ``ValueError`` naming the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nandlab import _nandlab

__all__ = ["SecondaryIndex", "Selection", "batched", "evaluate", "table1"]


def _distribution(
    distribution: str,
    alpha: float | None,
    hot_data_fraction: float | None,
    hot_op_fraction: float | None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": distribution}
    if alpha is not None:
        spec["alpha"] = alpha
    if hot_data_fraction is not None:
        spec["hot_data_fraction"] = hot_data_fraction
    if hot_op_fraction is not None:
        spec["hot_op_fraction"] = hot_op_fraction
    return spec


def evaluate(
    mode: str,
    *,
    read_share: float,
    cache_coverage: float,
    distribution: str = "zipfian",
    alpha: float | None = None,
    hot_data_fraction: float | None = None,
    hot_op_fraction: float | None = None,
    leaves: int | None = None,
    fill_slots: int | None = None,
    queries: int | None = None,
    warmup_share: float | None = None,
    sim_read_share: float | None = None,
    seed: int | None = None,
    preset: str = "sim2024",
) -> dict[str, Any]:
    """One point of the evaluation harness (paper §VI): a B+tree's leaves as SiM key and value
    pages, a YCSB read/update mix, a host page cache of ``cache_coverage`` of the pages.

    ``mode`` is ``"sim"`` (search + gather) or ``"baseline"`` (full-page reads); ``distribution``
    one of uniform, zipfian, latest, hotspot (with the ``hot_*`` fractions) or zipf (with
    ``alpha``). Unset values take the harness's defaults (1,000 leaves of 480 keys, 20,000
    queries, 30 % warm-up). Returns QPS, NAND energy, read-latency percentiles, bus bytes and
    the Table III concentration of the generator."""
    spec: dict[str, Any] = {
        "preset": preset,
        "mode": mode,
        "read_share": read_share,
        "cache_coverage": cache_coverage,
        "distribution": _distribution(distribution, alpha, hot_data_fraction, hot_op_fraction),
    }
    optional = {
        "leaves": leaves,
        "fill_slots": fill_slots,
        "queries": queries,
        "warmup_share": warmup_share,
        "sim_read_share": sim_read_share,
        "seed": seed,
    }
    spec.update({k: v for k, v in optional.items() if v is not None})
    result: dict[str, Any] = json.loads(_nandlab.sim_eval(json.dumps(spec)))
    return result


def batched(
    *,
    clients: int,
    deadline_ns: float | None,
    leaves: int = 1000,
    fill_slots: int = 480,
    queries: int = 20_000,
    warmup_share: float = 0.3,
    distribution: str = "zipfian",
    alpha: float | None = None,
    hot_data_fraction: float | None = None,
    hot_op_fraction: float | None = None,
    seed: int = 1,
    preset: str = "sim2024",
) -> dict[str, Any]:
    """``clients`` closed-loop readers through the deadline batch scheduler (paper §IV-E;
    ``deadline_ns=None``: no batching). Returns QPS, merge probability, mean batch size and
    read-latency percentiles."""
    spec = {
        "preset": preset,
        "leaves": leaves,
        "fill_slots": fill_slots,
        "clients": clients,
        "queries": queries,
        "warmup_share": warmup_share,
        "distribution": _distribution(distribution, alpha, hot_data_fraction, hot_op_fraction),
        "deadline_ns": deadline_ns,
        "seed": seed,
    }
    result: dict[str, Any] = json.loads(_nandlab.sim_batch(json.dumps(spec)))
    return result


def table1() -> dict[str, Any]:
    """Paper 004's Table I (one point lookup: SiM vs full page) from its bus rates and
    currents: bytes, latency (µs) and energy (nJ) per column, and the reductions."""
    result: dict[str, Any] = json.loads(_nandlab.sim_table1())
    return result


@dataclass(frozen=True)
class Selection:
    """One query's answer: the matching row ids (row = position in ``rows``), what the index
    did (searches, candidates, refined-out rows, chunks gathered, full reads) and its chip
    cost (bus bytes, NAND energy in nJ, elapsed ns)."""

    row_ids: list[int]
    stats: dict[str, int]
    cost: dict[str, float]


class SecondaryIndex:
    """Rows of small integer attributes bit-packed into 64-bit slots (paper §V-B, Fig. 9; the
    first attribute most significant) and queried with SiM searches: equalities on any subset
    of the attributes and at most one range ``lo <= attribute <= hi`` (§V-C).

    Each :meth:`select` (or :meth:`select_many`) builds the index on a fresh chip model and
    runs its queries there, so results and costs are deterministic for a seed."""

    def __init__(
        self,
        attributes: Sequence[tuple[str, int]],
        rows: Sequence[Sequence[int]],
        *,
        row_id_bits: int | None = None,
        seed: int = 1,
        preset: str = "sim2024",
        bit_errors: bool = False,
    ) -> None:
        self.attributes = [(str(name), int(bits)) for name, bits in attributes]
        self.rows = [[int(v) for v in row] for row in rows]
        self.row_id_bits = row_id_bits
        self.seed = seed
        self.preset = preset
        self.bit_errors = bit_errors

    def select_many(self, queries: Sequence[Mapping[str, Any]]) -> list[Selection]:
        """Runs queries ``{"equal": {...}, "range": (attribute, lo, hi), "method": ...}`` in
        order on one chip; ``method`` is "approximate" (the paper's, default),
        "aligned_blocks" (exact on the chip), "full_page" (the baseline) or an int n (at most
        n searches per page)."""
        spec: dict[str, Any] = {
            "preset": self.preset,
            "seed": self.seed,
            "attributes": self.attributes,
            "rows": self.rows,
            "bit_errors": self.bit_errors,
            "queries": [_query(q) for q in queries],
        }
        if self.row_id_bits is not None:
            spec["row_id_bits"] = self.row_id_bits
        out = json.loads(_nandlab.sim_index(json.dumps(spec)))
        return [Selection(q["row_ids"], q["stats"], q["cost"]) for q in out["queries"]]

    def select(
        self,
        *,
        equal: Mapping[str, int] | None = None,
        range: tuple[str, int, int] | None = None,
        method: str | int = "approximate",
    ) -> Selection:
        """One query (see :meth:`select_many`)."""
        return self.select_many([{"equal": equal or {}, "range": range, "method": method}])[0]


def _query(q: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(q) - {"equal", "range", "method"}
    if unknown:
        raise ValueError(f"query: unknown key(s) {sorted(unknown)} (equal, range, method)")
    out: dict[str, Any] = {"equal": dict(q.get("equal") or {})}
    r = q.get("range")
    if r is not None:
        attribute, lo, hi = r
        out["range"] = {"attribute": attribute, "lo": lo, "hi": hi}
    method = q.get("method", "approximate")
    if isinstance(method, bool) or not isinstance(method, (str, int)):
        raise ValueError(f"method: {method!r} (a name or a number of searches)")
    out["method"] = method if isinstance(method, str) else {"searches_at_most": method}
    return out
