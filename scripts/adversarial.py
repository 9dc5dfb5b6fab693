"""The adversarial pass of issue 11: several hundred bad or edge inputs across the CLI and the
Python API, each classified by what nandlab did with it.

    .venv/bin/python scripts/adversarial.py [--quick] [--only TEXT] [--show KIND ...]

Run it from the repository after ``make develop`` (the CLI is ``$CARGO_TARGET_DIR/release/
nandlab``, default ``target/``). Every case is a CLI invocation (a subprocess with a timeout)
or a Python call (in a worker process, so a hang or a crash is caught too), with an
expectation: ``ok`` (must run), ``refuse`` (must be an error) or ``either``. Outcomes:

- ``ok-run``: exit 0 / returned, as expected;
- ``refused``: exit 2 with one stderr line naming what the case expects to be named
  (TypeError/ValueError/OSError with a one-line message naming it, in Python);
- ``refused-vague``: a one-line refusal that does not name it;
- ``multi-line``: an error of several lines;
- ``panic``: "panicked", exit 101, PanicException, or RuntimeError "internal error";
- ``abort``: killed by a signal (an allocation abort, a stack overflow);
- ``hang``: no answer within the timeout (20 s);
- ``silent-accept``: exit 0 / returned although the input is wrong;
- ``unexpected-refusal``: a refusal of an input expected to run (a bug of the case or of
  nandlab; listed, not counted as a robustness failure).

The exit status is 1 when any case is a panic, abort, hang, silent accept, multi-line or
vague error. ``--quick`` runs every 10th case (what python/tests/test_adversarial.py runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NANDLAB = REPO / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "nandlab"
DATA = REPO / "crates/workload/tests/data"
TIMEOUT_S = 20.0
BAD = ("panic", "abort", "hang", "silent-accept", "multi-line", "refused-vague")
MAX_ERROR_CHARS = 400
"""Longest one-line error that still reads as one (a path or a quoted value included)."""


@dataclass
class Case:
    """One adversarial input. CLI cases have `argv` (``{dir}`` is replaced by the case's
    folder, where `files` are written first); Python cases have `call`, the name of a function
    of this module taking the case folder, and `args`."""

    name: str
    expect: str  # "ok", "refuse" or "either"
    argv: list[str] | None = None
    files: dict[str, str] = field(default_factory=dict)
    call: str | None = None
    args: tuple[Any, ...] = ()
    names: str | None = None  # what a refusal must name (a substring of the message)


# ---------------------------------------------------------------------------------------------
# inputs

BASE: dict[str, Any] = {
    "run": {"seed": 1},
    "nand": {"preset": "slc", "geometry": {"blocks_per_plane": 32}},
    "ssd": {"op_fraction": 0.25},
    "workload": {
        "kind": "synthetic",
        "pattern": "random",
        "read_fraction": 0.5,
        "request_size_bytes": 4096,
        "span_bytes": 0,
        "request_count": 200,
    },
}
NATIVE_OK = "arrival_ns,op,offset_bytes,size_bytes\n0,write,0,4096\n1000,read,0,4096\n"


def toml_text(config: dict[str, Any]) -> str:
    from nandlab.ssd import to_toml

    return to_toml(config)


def with_key(config: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of `config` with key path `path` set (None: removed)."""
    out = json.loads(json.dumps(config))
    parts = path.split(".")
    table = out
    for part in parts[:-1]:
        table = table.setdefault(part, {})
    if value is None:
        table.pop(parts[-1], None)
    else:
        table[parts[-1]] = value
    return out


def raw_toml(config: dict[str, Any], path: str, literal: str) -> str:
    """The TOML of `config` with `path` set to the literal TOML text `literal` (for values
    Python cannot express in TOML, such as an integer beyond i64)."""
    marker = "__ADVERSARIAL__"
    return toml_text(with_key(config, path, marker)).replace(f'"{marker}"', literal)


STACK_BAD: dict[str, list[Any]] = {
    "run.seed": [-1, "1", 1.5, True],
    "nand.preset": ["nope", 5, ""],
    "nand.geometry.channels": [0, -1, 2**31, "4", 1.5],
    "nand.geometry.chips_per_channel": [0, 10**6],
    "nand.geometry.dies_per_chip": [0, -2, 10**9],
    "nand.geometry.planes_per_die": [0, 10**6],
    "nand.geometry.blocks_per_plane": [0, -1, 2**31, 10**12, "many"],
    "nand.geometry.pages_per_block": [0, 2**31],
    "nand.geometry.page_size_bytes": [0, 1, 3000, 2**31, -4096],
    "nand.geometry.spare_bytes_per_page": [-1, 2**40],
    "nand.geometry.bogus": [1],
    "nand.timing.read_us": [0, -1, math.nan, math.inf, "fast"],
    "nand.timing.program_us": [-250, math.nan, 1e300],
    "nand.timing.erase_us": [-1, math.inf],
    "nand.timing.bus_data_rate_mts": [0, -40, math.nan],
    "nand.timing.bus_width_bits": [0, 7, 1024],
    "nand.timing.command_cycle_ns": [-1, math.nan],
    "nand.timing.page_address_cycles": [0, 100],
    "nand.cell.layout": ["quantum", 3],
    "nand.electrical.supply_voltage_v": [-3.3, math.nan],
    "nand.reliability.endurance_cycles": [-1],
    "nand.bogus_section": [{"a": 1}],
    "ssd.op_fraction": [-0.1, math.nan, math.inf, 1e9, "0.2"],
    "ssd.payload": ["bogus", 1],
    "ssd.preset": ["nope", 3],
    "ssd.host.queue_depth": [0, -1, 65537, 2**40],
    "ssd.mapping.kind": ["bogus"],
    "ssd.mapping.allocation_order": ["channel-channel-die-plane", "", "plane-disk"],
    "ssd.mapping.random_log_blocks": [4],  # page mapping: does not apply
    "ssd.gc.policy": ["bogus", 7],
    "ssd.gc.threshold_blocks": [0, 1, 10**9, -3],
    "ssd.gc.scope": ["galaxy"],
    "ssd.gc.idle_threshold_blocks": [1, 10**9],
    "ssd.gc.copyback": ["yes"],
    "ssd.wear.leveling": ["bogus"],
    "ssd.wear.erase_gap_threshold": [10],  # round-robin: does not apply
    "ssd.buffer.pages": [-1, 10**12],
    "ssd.buffer.policy": ["lru"],  # no buffer: does not apply
    "ssd.hints.refresh_ops": [-1, "16"],
    "ssd.bogus": [1],
    "precondition": [
        {"fill_fraction": -1, "random_overwrites": 0},
        {"fill_fraction": 2, "random_overwrites": 0},
        {"fill_fraction": math.nan, "random_overwrites": 0},
        {"fill_fraction": 0.5, "random_overwrites": -1},
        {"fill_fraction": 0.5},
    ],
    "precondition.bogus": [1],
    "engine.iaa": [True],  # a synthetic workload does not use the engine
    "workload.kind": ["bogus", 3],
    "workload.pattern": ["zigzag"],
    "workload.read_fraction": [-0.1, 1.5, math.nan, "half"],
    "workload.trim_fraction": [0.9, -1],
    "workload.request_size_bytes": [0, -1, 2**40],
    "workload.alignment_bytes": [0],
    "workload.offset_bytes": [-1, 2**62],
    "workload.span_bytes": [10**18, -5, 1],
    "workload.request_count": [-1, "10"],
    "workload.duration_ns": [1000],  # closed loop: needs an open-loop arrival
    "workload.arrival": [
        {"kind": "poisson", "rate_iops": -1.0},
        {"kind": "poisson", "rate_iops": math.nan},
        {"kind": "poisson", "rate_iops": 0.0},
        {"kind": "fixed", "interarrival_ns": -5},
        {"kind": "warp"},
    ],
    "workload.distribution": [
        {"kind": "zipf", "theta": -1.0},
        {"kind": "zipf", "theta": math.nan},
        {"kind": "hot_cold", "hot_space_fraction": 2.0, "hot_access_fraction": 0.5},
        {"kind": "pareto"},
    ],
    "workload.path": ["t.csv"],  # a trace key in a synthetic workload
    "workload.precondition_reads": [False],  # a trace/fio key in a synthetic workload
    "workload.bogus": [1],
}

STACK_EDGE_OK: list[tuple[str, Any]] = [
    ("run.seed", 0),
    ("run.seed", 2**63 - 1),
    ("ssd.host.queue_depth", 1),
    ("ssd.mapping.kind", "block"),
    ("ssd.mapping.kind", "hybrid"),
    ("ssd.gc.policy", "cost-benefit"),
    ("ssd.buffer.pages", 16),
    ("workload.read_fraction", 1.0),
    ("workload.request_count", 1),
    ("workload.pattern", "shuffled"),
    ("workload.arrival", {"kind": "poisson", "rate_iops": 1e-30}),
    ("workload.arrival", {"kind": "fixed", "interarrival_ns": 0}),  # either
    ("nand.timing.program_us", 1e12),
    ("precondition", {"fill_fraction": 0.0, "random_overwrites": 0}),
    ("nand.geometry.planes_per_die", 3),  # six-plane dies exist; three is a geometry too
    ("nand.geometry.pages_per_block", 1),
    ("ssd.mapping.allocation_order", "plane-die"),  # the rest follow (docs/ftl.md)
    ("workload.alignment_bytes", 3),  # unaligned requests, as fio's blockalign allows
]


def stack_cases() -> Iterator[Case]:
    for path, values in STACK_BAD.items():
        for value in values:
            config = with_key(BASE, path, value)
            if path.startswith("workload.") and path.endswith(("mapping.kind",)):
                pass
            name_of = {
                "engine.iaa": "engine",
                "precondition": "fill_fraction|random_overwrites",
                "nand.geometry.channels": "channels|geometry",
                "nand.geometry.dies_per_chip": "dies_per_chip|geometry",
                "nand.geometry.chips_per_channel": "chips_per_channel|geometry",
                "nand.geometry.blocks_per_plane": "blocks_per_plane|geometry",
                "workload.request_size_bytes": "request_size_bytes|span_bytes",
                "workload.offset_bytes": "offset_bytes|span_bytes",
            }.get(path, path.split(".")[-1])
            yield Case(
                f"stack {path}={value!r}",
                "refuse",
                argv=["run", "{dir}/c.toml"],
                files={"c.toml": toml_text(config)},
                names=name_of,
            )
    for path, literal in [
        ("run.seed", "18446744073709551616"),
        ("nand.geometry.blocks_per_plane", "99999999999999999999"),
        ("ssd.op_fraction", "nan"),
        ("workload.request_count", "-0"),
    ]:
        yield Case(
            f"stack {path}={literal} (raw TOML)",
            "either" if literal == "-0" else "refuse",
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": raw_toml(BASE, path, literal)},
            names=f"{path.split('.')[-1]}|line",
        )
    for path, value in STACK_EDGE_OK:
        yield Case(
            f"stack edge {path}={value!r}",
            "either" if "program_us" in path or "arrival" in path else "ok",
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": toml_text(with_key(BASE, path, value))},
        )
    broken = {
        "empty file": "",
        "not TOML": "this is = = not toml\n[[",
        "no workload": toml_text(with_key(BASE, "workload", None)),
        "no nand": toml_text(with_key(BASE, "nand", None)),
        "old layout": "seed = 1\n[device]\npreset = 'slc'\n[workload]\nkind = 'synthetic'\n",
        "binary": "\x00\x01\x02\xff",
        "nand preset and file": toml_text(with_key(BASE, "nand.file", "x.toml")),
        "nand file missing": toml_text(
            with_key(with_key(BASE, "nand.preset", None), "nand.file", "nope.toml")
        ),
        "workload is a string": toml_text(with_key(BASE, "workload", None))
        + 'workload = "synthetic"\n',
        "engine workload without engine": toml_text(
            with_key(
                BASE,
                "workload",
                {
                    "kind": "constant-free-space",
                    "free_space_fraction": 0.5,
                    "update_fraction": 0.4,
                    "query_count": 10,
                },
            )
        ),
        "engine without full payload": toml_text(
            with_key(
                with_key(
                    BASE,
                    "workload",
                    {
                        "kind": "constant-free-space",
                        "free_space_fraction": 0.5,
                        "update_fraction": 0.4,
                        "query_count": 10,
                    },
                ),
                "engine",
                {"iaa": True},
            )
        ),
        "engine free space 2": toml_text(
            with_key(
                with_key(
                    with_key(
                        BASE,
                        "workload",
                        {
                            "kind": "constant-free-space",
                            "free_space_fraction": 2.0,
                            "update_fraction": 0.4,
                            "query_count": 10,
                        },
                    ),
                    "engine",
                    {"iaa": True},
                ),
                "ssd.payload",
                "full",
            )
        ),
        "engine with precondition": toml_text(
            with_key(
                with_key(
                    with_key(
                        with_key(
                            BASE,
                            "workload",
                            {
                                "kind": "constant-free-space",
                                "free_space_fraction": 0.5,
                                "update_fraction": 0.4,
                                "query_count": 10,
                            },
                        ),
                        "engine",
                        {"iaa": True},
                    ),
                    "ssd.payload",
                    "full",
                ),
                "precondition",
                {"fill_fraction": 1.0, "random_overwrites": 0},
            )
        ),
    }
    for name, text in broken.items():
        yield Case(f"stack {name}", "refuse", argv=["run", "{dir}/c.toml"], files={"c.toml": text})
    # trace and fio workloads in a stack config
    trace = with_key(BASE, "workload", {"kind": "trace", "path": "t.csv", "format": "native"})
    for key, value in [
        ("precondition_reads", "yes"),
        ("fit_device", 1),
        ("format", "csv"),
        ("path", "missing.csv"),
        ("disk", "1"),
        ("queue_events", True),
        ("request_count", 10),
        ("closed_loop", "no"),
    ]:
        yield Case(
            f"stack trace {key}={value!r}",
            "refuse",
            argv=["run", "{dir}/c.toml"],
            files={
                "c.toml": toml_text(with_key(trace, f"workload.{key}", value)),
                "t.csv": NATIVE_OK,
            },
            names={"path": "missing.csv", "disk": "disk|device"}.get(key, key),
        )
    for key, value in [("precondition_reads", False), ("fit_device", True), ("closed_loop", True)]:
        yield Case(
            f"stack trace edge {key}={value!r}",
            "ok",
            argv=["run", "{dir}/c.toml"],
            files={
                "c.toml": toml_text(with_key(trace, f"workload.{key}", value)),
                "t.csv": NATIVE_OK,
            },
        )
    fio = with_key(BASE, "workload", {"kind": "fio", "path": "j.fio"})
    for key, value in [("fit_device", True), ("precondition_reads", 0), ("format", "msr")]:
        yield Case(
            f"stack fio {key}={value!r}",
            "refuse",
            argv=["run", "{dir}/c.toml"],
            files={
                "c.toml": toml_text(with_key(fio, f"workload.{key}", value)),
                "j.fio": "[a]\nrw=randread\nnumber_ios=10\n",
            },
            names=key,
        )


TRACE_FORMATS = ["msr", "blkparse", "disksim", "disksim-us", "disksim-ns", "native"]
GOOD_LINE = {
    "msr": "128166372003061629,hm,1,Read,0,4096,10\n",
    "blkparse": "  8,0    0        1     0.000000000   697  D   R 0 + 8 [x]\n",
    "disksim": "0.0 0 0 8 1\n",
    "disksim-us": "0.0 0 0 8 1\n",
    "disksim-ns": "0.0 0 0 8 1\n",
    "native": "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,4096\n",
}
BROKEN_TRACES: dict[str, dict[str, str]] = {
    "msr": {
        "header only": "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
        "huge size": "128166372003061629,hm,1,Read,0,1099511627776,10\n",
        "size 0": "128166372003061629,hm,1,Read,0,0,10\n",
        "overflow": "128166372003061629,hm,1,Read,18446744073709551615,4096,10\n",
        "bad number": "128166372003061629,hm,1,Read,abc,4096,10\n",
        "negative": "128166372003061629,hm,1,Read,-4096,4096,10\n",
        "bad op": "128166372003061629,hm,1,Erase,0,4096,10\n",
        "backwards": (
            "128166372003061629,hm,1,Read,0,4096,10\n128166372000000000,hm,1,Read,0,4096,10\n"
        ),
        "few fields": "128166372003061629,hm,1\n",
        "float response": "128166372003061629,hm,1,Read,0,4096,1.5\n",
    },
    "blkparse": {
        "summary only": "CPU0 (8,0):\n Reads Queued: 0\n",
        "bad sector": "  8,0    0        1     0.000000000   697  D   R abc + 8 [x]\n",
        "bad time": "  8,0    0        1     zero   697  D   R 0 + 8 [x]\n",
        "huge count": "  8,0    0        1     0.000000000   697  D   R 0 + 99999999999 [x]\n",
        "backwards": (
            "  8,0    0        1     5.0   697  D   R 0 + 8 [x]\n"
            "  8,0    0        2     1.0   697  D   R 0 + 8 [x]\n"
        ),
        "overflow": "  8,0    0        1     0.0   697  D   R 36028797018963967 + 8 [x]\n",
    },
    "disksim": {
        "bad time": "abc 0 0 8 1\n",
        "nan time": "nan 0 0 8 1\n",
        "negative time": "-1.0 0 0 8 1\n",
        "huge time": "1e30 0 0 8 1\n",
        "bad flags": "0.0 0 0 8 zz\n",
        "count 0": "0.0 0 0 0 1\n",
        "huge count": "0.0 0 0 99999999999 1\n",
        "backwards": "5.0 0 0 8 1\n1.0 0 0 8 1\n",
        "few fields": "0.0 0 0\n",
    },
    "native": {
        "no header": "0,read,0,4096\n",
        "header only": "arrival_ns,op,offset_bytes,size_bytes\n",
        "bad op": "arrival_ns,op,offset_bytes,size_bytes\n0,erase,0,4096\n",
        "size 0": "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,0\n",
        "huge size": "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,1099511627776\n",
        "overflow": "arrival_ns,op,offset_bytes,size_bytes\n0,read,18446744073709551615,4096\n",
        "mixed arrivals": "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,4096\n,read,0,4096\n",
        "backwards": "arrival_ns,op,offset_bytes,size_bytes\n10,read,0,4096\n5,read,0,4096\n",
        "negative time": "arrival_ns,op,offset_bytes,size_bytes\n-5,read,0,4096\n",
        "huge time": "arrival_ns,op,offset_bytes,size_bytes\n1e40,read,0,4096\n",
        "extra field": "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,4096,9\n",
    },
}


def trace_cases() -> Iterator[Case]:
    for fmt in TRACE_FORMATS:

        def replay(text: str, *extra: str, fmt: str = fmt) -> tuple[list[str], dict[str, str]]:
            return ["replay", "{dir}/t.trace", "--format", fmt, *extra], {"t.trace": text}

        generic = {
            "empty": "",
            "comments only": "# nothing\n# at all\n",
            "blank lines": "\n\n\n",
            "binary": "\x00\xff\xfe garbage \x01\n",
            "long line": "9" * 70_000 + "\n",
            "wrong format": GOOD_LINE["msr" if fmt != "msr" else "native"],
        }
        for name, text in {**generic, **BROKEN_TRACES.get(fmt.split("-")[0], {})}.items():
            argv, files = replay(text)
            yield Case(f"trace {fmt} {name}", "refuse", argv=argv, files=files, names="t.trace")
        argv, files = replay(GOOD_LINE[fmt])
        yield Case(f"trace {fmt} good", "ok", argv=argv, files=files)
        if fmt.startswith("disksim"):
            # a nanosecond time (3 days) read in ms or us is implausible (> 30 days)
            argv, files = replay("259200000000000 0 0 8 1\n")
            yield Case(
                f"trace {fmt} ns times",
                "ok" if fmt == "disksim-ns" else "refuse",
                argv=argv,
                files=files,
                names="disksim-ns",
            )
        # digits finer than a picosecond are dropped (docs/workloads.md, "Precision")
        fine = {
            "native": "arrival_ns,op,offset_bytes,size_bytes\n0.0001,read,0,4096\n",
            "disksim": "0.0000000000000000001 0 0 8 1\n",
        }
        if fmt in fine:
            argv, files = replay(fine[fmt])
            yield Case(f"trace {fmt} sub-picosecond digits", "ok", argv=argv, files=files)
        argv, files = replay(GOOD_LINE[fmt], "--fit-device", "--no-read-precondition")
        yield Case(f"trace {fmt} good fit", "ok", argv=argv, files=files)
        argv, files = replay(GOOD_LINE[fmt], "--closed-loop", "--json")
        yield Case(f"trace {fmt} closed loop json", "ok", argv=argv, files=files)
        if fmt != "blkparse":
            argv, files = replay(GOOD_LINE[fmt], "--queue-events")
            yield Case(
                f"trace {fmt} --queue-events", "refuse", argv=argv, files=files, names="queue"
            )
        if fmt == "native":
            argv, files = replay(GOOD_LINE[fmt], "--disk", "1")
            yield Case("trace native --disk", "refuse", argv=argv, files=files, names="disk|device")
    far = "arrival_ns,op,offset_bytes,size_bytes\n0,read,1099511627776,4096\n"
    yield Case(
        "trace beyond capacity folded",
        "ok",
        argv=["replay", "{dir}/t", "--format", "native"],
        files={"t": far},
    )
    yield Case(
        "trace beyond capacity fitted",
        "ok",
        argv=["replay", "{dir}/t", "--format", "native", "--fit-device"],
        files={"t": far},
    )
    huge = "arrival_ns,op,offset_bytes,size_bytes\n0,read,9223372036854775807,4096\n"
    yield Case(
        "trace fit-device impossible",
        "refuse",
        argv=["replay", "{dir}/t", "--format", "native", "--fit-device"],
        files={"t": huge},
        names="fit_device",
    )
    yield Case(
        "trace missing file",
        "refuse",
        argv=["replay", "{dir}/nope.csv", "--format", "native"],
        names="nope.csv",
    )
    yield Case(
        "trace is a folder",
        "refuse",
        argv=["replay", "{dir}", "--format", "native"],
    )
    for sample, fmt in [
        ("msr_sample.csv", "msr"),
        ("blkparse_sample.txt", "blkparse"),
        ("disksim_sample.trace", "disksim"),
        ("native_sample.csv", "native"),
    ]:
        yield Case(f"sample {sample}", "ok", argv=["replay", str(DATA / sample), "--format", fmt])
        for device in ["mqsim-mlc", "nope-device"]:
            yield Case(
                f"sample {sample} --device {device}",
                "ok" if device == "mqsim-mlc" else "refuse",
                argv=["replay", str(DATA / sample), "--format", fmt, "--device", device],
                names="nope-device",
            )


FIO_BAD: list[tuple[str, str]] = [
    ("bs", "0"),
    ("bs", "-1"),
    ("bs", "2g"),
    ("bs", "abc"),
    ("bs", "4k,8k,16k,32k"),
    ("bs", "4k,0"),
    ("bs", "4k,,3g"),
    ("startdelay", "5"),
    ("startdelay", "1-5"),
    ("bs", "1e3"),
    ("iodepth", "0"),
    ("iodepth", "70000"),
    ("iodepth", "x"),
    ("rw", "bogus"),
    ("rw", "randread:8"),
    ("rwmixread", "101"),
    ("rwmixwrite", "-1"),
    ("size", "200%"),
    ("size", "0"),
    ("size", "-1m"),
    ("offset", "-1"),
    ("offset", "101%"),
    ("offset", "1p"),
    ("numjobs", "0"),
    ("numjobs", "5000"),
    ("random_distribution", "pareto:0.5"),
    ("random_distribution", "zipf:-1"),
    ("random_distribution", "zipf:nan"),
    ("random_distribution", "zipf"),
    ("loops", "0"),
    ("loops", "-3"),
    ("number_ios", "-1"),
    ("thinktime", "10"),
    ("include", "other.fio"),
    ("direct", "yes"),
    ("nice", "50"),
    ("prio", "9"),
    ("iodepth_batch", "100000"),
    ("log_avg_msec", "-1"),
    ("bogus_key", "1"),
    ("io_size", "-5"),
    ("randseed", "-1"),
]


def fio_cases() -> Iterator[Case]:
    for key, value in FIO_BAD:
        line = key if value == "" else f"{key}={value}"
        yield Case(
            f"fio {line}",
            "refuse",
            argv=["fio", "{dir}/j.fio"],
            files={"j.fio": f"[job]\nrw=randread\nnumber_ios=50\n{line}\n"},
            names=f"{key}|j.fio:4",
        )
    whole = {
        "empty": "",
        "global only": "[global]\nbs=4k\n",
        "key outside a section": "bs=4k\n[job]\nrw=read\n",
        "unclosed section": "[job\nrw=read\n",
        "binary": "\x00\x01\xff\n",
        "two iodepths too deep": (
            "[a]\niodepth=40000\nnumber_ios=5\n[b]\niodepth=40000\nnumber_ios=5\n"
        ),
    }
    for name, text in whole.items():
        yield Case(f"fio {name}", "refuse", argv=["fio", "{dir}/j.fio"], files={"j.fio": text})
    ok = {
        "read on fresh device": "[r]\nrw=randread\nnumber_ios=200\n",
        "read without precondition": "[r]\nrw=randread\nnumber_ios=200\n",
        "stonewall": "[a]\nrw=write\nsize=1m\n[b]\nstonewall\nrw=read\nsize=1m\n",
        "hex and suffixes": "[a]\nrw=randwrite\nbs=0x1000\nsize=1MiB\nnumber_ios=100\n",
        "zipf": "[a]\nrw=randrw\nrandom_distribution=zipf:1.2\nnumber_ios=100\n",
        "comments": "; a comment\n[a] \nrw=read # trailing\nnumber_ios=10\n",
        # refused by the first pass, supported since (fio's semantics): a runtime limit without
        # time_based, a rate for one stream, a bssplit under 100 % (fio takes it as given)
        "runtime": "[a]\nrw=randread\nnumber_ios=50\nruntime=10\n",
        "rate": "[a]\nrw=randread\nnumber_ios=50\nrate=1m\n",
        "bssplit under 100 %": "[a]\nrw=randread\nnumber_ios=50\nbssplit=4k/50\n",
        # session 15: fio ignores time_based without runtime (one pass, with a note)
        "time_based without runtime": "[a]\nrw=randread\nnumber_ios=50\ntime_based\n",
        # session 16: one block size per direction, delayed open-loop clients, the mtd engine
        "bs per direction": "[a]\nrw=randrw\nbs=4k,16k\nnumber_ios=100\n",
        "rate-limited clients with startdelay": (
            "[global]\nrw=read\nsize=64k\nrate_iops=100\n[a]\n[b]\nstartdelay=1\n"
        ),
        "mtd trimwrite": "[a]\nioengine=mtd\nrw=trimwrite\nbs=512,512,16k\nsize=1m\nskip_bad=1\n",
    }
    for name, text in ok.items():
        extra = ["--no-read-precondition"] if "without" in name else []
        yield Case(
            f"fio ok {name}", "ok", argv=["fio", "{dir}/j.fio", *extra], files={"j.fio": text}
        )
    yield Case(
        "fio example",
        "ok",
        argv=[
            "fio",
            str(REPO / "examples/randrw.fio"),
            "--device",
            str(REPO / "examples/device-mlc.toml"),
        ],
    )
    yield Case("fio missing", "refuse", argv=["fio", "{dir}/nope.fio"], names="nope.fio")
    refused = {
        "randtrimwrite with its own trim size": (
            "[a]\nrw=randtrimwrite\nbs=4k,4k,16k\nsize=1m\n",
            "j.fio:3",
        ),
        "trim size not a multiple": ("[a]\nrw=trimwrite\nbs=4k,4k,6k\nsize=1m\n", "j.fio:3"),
        "rate beside a closed-loop job": (
            "[a]\nrw=read\nsize=64k\nrate_iops=10\n[b]\nrw=write\nsize=64k\n",
            "j.fio:4",
        ),
        "delayed closed-loop job": ("[a]\nrw=read\nsize=64k\nstartdelay=2\n", "j.fio:4"),
    }
    for name, (text, names) in refused.items():
        yield Case(
            f"fio refuse {name}",
            "refuse",
            argv=["fio", "{dir}/j.fio"],
            files={"j.fio": text},
            names=names,
        )


CHIP_BAD: list[tuple[str, str, str]] = [
    ("geometry", "page_size_bytes", "1"),
    ("geometry", "page_size_bytes", "3000"),
    ("geometry", "page_size_bytes", "0"),
    ("geometry", "blocks_per_plane", "2147483648"),
    ("geometry", "blocks_per_plane", "0"),
    ("geometry", "pages_per_block", "0"),
    ("geometry", "channels", "0"),
    ("geometry", "channels", "100000"),
    ("geometry", "dies_per_chip", "-1"),
    ("geometry", "spare_bytes_per_page", "1e3"),
    ("timing", "read_us", "-1"),
    ("timing", "read_us", "nan"),
    ("timing", "program_us", "inf"),
    ("timing", "erase_us", "0"),
    ("timing", "bus_data_rate_mts", "0"),
    ("timing", "bus_width_bits", "5"),
    ("timing", "command_cycle_ns", "-25"),
    ("timing", "block_address_cycles", "999"),
    ("cell", "layout", '"pentagonal"'),
    ("electrical", "supply_voltage_v", "-1"),
    ("electrical", "array_current_ma", "nan"),
    ("reliability", "nop_limit", "-1"),
    ("reliability", "endurance_cycles", '"lots"'),
    ("geometry", "bogus", "1"),
]


def chip_cases() -> Iterator[Case]:
    base = (REPO / "presets/nand/slc.toml").read_text(encoding="utf-8")
    for section, key, value in CHIP_BAD:
        text = _set_toml_key(base, section, key, value)
        yield Case(
            f"chip config {section}.{key}={value}",
            "refuse",
            argv=["chip", "--config", "{dir}/chip.toml", "--requests", "50"],
            files={"chip.toml": text},
            names=f"{key}|line|geometry",
        )
    for section, key, value in [("timing", "program_us", "1e12"), ("timing", "read_us", "1e9")]:
        yield Case(
            f"chip config edge {section}.{key}={value}",
            "either",
            argv=["chip", "--config", "{dir}/chip.toml", "--requests", "20"],
            files={"chip.toml": _set_toml_key(base, section, key, value)},
            names=key,
        )
    yield Case(
        "chip config empty",
        "refuse",
        argv=["chip", "--config", "{dir}/c.toml"],
        files={"c.toml": ""},
    )
    yield Case(
        "chip config missing",
        "refuse",
        argv=["chip", "--config", "{dir}/nope.toml"],
        names="nope.toml",
    )
    flags: list[tuple[list[str], str, str | None]] = [
        (["--requests", "-1"], "refuse", "requests"),
        (["--requests", "abc"], "refuse", "requests"),
        (["--requests", "0"], "either", "requests"),
        (["--requests", "18446744073709551616"], "refuse", "requests"),
        (["--dies", "0"], "refuse", "dies"),
        (["--dies", "100000"], "refuse", "dies|geometry"),
        (["--planes", "3"], "either", "planes"),
        (["--channels", "0"], "refuse", "channels"),
        (["--page-size", "3"], "refuse", "page"),
        (["--page-size", "1"], "refuse", "page"),
        (["--bus-mts", "nan"], "refuse", "bus"),
        (["--bus-mts", "-1"], "refuse", "bus"),
        (["--bus-mts", "0"], "refuse", "bus"),
        (["--preset", "nope"], "refuse", "nope"),
        (["--workload", "nope"], "refuse", "nope"),
        (["--scheduler", "random"], "refuse", "random"),
        (["--queue-depth", "0"], "refuse", "queue"),
        (["--request-bytes", "1"], "either", "request"),
        (["--request-bytes", "4294967296"], "refuse", "request"),
        (["--seed", "-1"], "refuse", "seed"),
        (["--preset", "mlc1", "--config", "{dir}/none.toml"], "refuse", None),
        (["--bogus"], "refuse", "bogus"),
        (["--requests", "100", "--dies", "8", "--cache"], "ok", None),
        (["--requests", "100", "--no-interleave", "--scheduler", "fcfs"], "ok", None),
    ]
    for extra, expect, names in flags:
        argv = ["chip", *extra]
        if "--requests" not in extra:
            argv += ["--requests", "50"]
        yield Case(f"chip flags {' '.join(extra)}", expect, argv=argv, names=names)


def _set_toml_key(text: str, section: str, key: str, value: str) -> str:
    """`text` (a chip config) with `key = value` set in `[section]`."""
    lines = text.splitlines()
    start = lines.index(f"[{section}]")
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("["):
            break
        if lines[i].split("=")[0].strip() == key:
            lines[i] = f"{key} = {value}"
            return "\n".join(lines) + "\n"
    lines.insert(start + 1, f"{key} = {value}")
    return "\n".join(lines) + "\n"


def cli_flag_cases() -> Iterator[Case]:
    good = toml_text(BASE)
    runs: list[tuple[list[str], str, str | None]] = [
        (["run", "{dir}/c.toml", "--seed", "-1"], "refuse", "seed"),
        (["run", "{dir}/c.toml", "--seed", "9223372036854775808"], "refuse", "seed"),
        (["run", "{dir}/c.toml", "--seed", "x"], "refuse", "seed"),
        (["run", "{dir}/c.toml", "--out", "/proc/nandlab-cannot"], "refuse", "nandlab-cannot"),
        (["run", "{dir}/c.toml", "--out", "{dir}/c.toml"], "refuse", "c.toml"),
        (["run", "{dir}/c.toml", "--capture", "/nonexistent/dir/t.csv"], "refuse", "t.csv"),
        (["run", "{dir}/c.toml", "--format", "msr"], "refuse", "format"),
        (["run", "{dir}/c.toml", "--closed-loop"], "refuse", "closed-loop"),
        (["run", "{dir}/c.toml", "--fit-device"], "refuse", "fit-device"),
        (["run", "{dir}/nope.toml"], "refuse", "nope.toml"),
        (["run"], "refuse", "CONFIG"),
        (["run", "{dir}/c.toml", "--json"], "ok", None),
        (["run", "{dir}/c.toml", "--out", "{dir}/out", "--capture", "{dir}/cap.csv"], "ok", None),
        (["run", "{dir}/c.toml", "--seed", "0"], "ok", None),
        (["replay", "{dir}/c.toml"], "refuse", "format"),
        (["replay", "{dir}/t.csv", "--format", "bogus"], "refuse", "bogus"),
        (["replay", "{dir}/t.csv", "--format", "native", "--seed", "-5"], "refuse", "seed"),
        (
            ["replay", "{dir}/t.csv", "--format", "native", "--device", "{dir}/c.toml"],
            "refuse",
            "run",
        ),
        (["replay", "{dir}/t.csv", "--format", "native", "--jobs", "2"], "refuse", "jobs"),
        (["replay", "{dir}/t.csv", "--format", "native", "--out", "/proc/nope"], "refuse", "nope"),
        (["fio", "{dir}/t.csv", "--fit-device"], "refuse", "fit-device"),
        (["fio", "{dir}/t.csv", "--format", "msr"], "refuse", "format"),
        (["sweep", "{dir}/s.toml", "--jobs", "0"], "refuse", "jobs"),
        (["sweep", "{dir}/c.toml"], "refuse", "base"),
        (["sweep", "{dir}/nope.toml"], "refuse", "nope.toml"),
        (["reproduce", "nope"], "refuse", "nope"),
        (["reproduce", "nfs-dies", "--quick", "--full"], "refuse", "full"),
        (["reproduce"], "refuse", None),
        (["reproduce", "nfs-dies", "--seed", "-1"], "refuse", "seed"),
        (["bench", "nope"], "refuse", "nope"),
        (["bench", "chip", "--steady"], "refuse", "steady"),
        (["bench", "chip", "--requests", "0"], "either", "requests"),
        (["bench", "chip", "--requests", "-1"], "refuse", "requests"),
        (["bogus-command"], "refuse", "bogus-command"),
        ([], "refuse", None),
        (["presets", "--bogus"], "refuse", "bogus"),
        (["presets"], "ok", None),
        (["--version"], "ok", None),
    ]
    for argv, expect, names in runs:
        yield Case(
            f"flags {' '.join(argv)}",
            expect,
            argv=argv,
            files={
                "c.toml": good,
                "t.csv": NATIVE_OK,
                "s.toml": 'base = "c.toml"\n[grid]\n"run.seed" = [1]\n',
            },
            names=names,
        )


def sweep_cases() -> Iterator[Case]:
    base = toml_text(BASE)
    sweeps = {
        "base missing": ('base = "nope.toml"\n[grid]\n"ssd.op_fraction" = [0.2]\n', "nope.toml"),
        "no base": ('[grid]\n"ssd.op_fraction" = [0.2]\n', "base"),
        "no grid": ('base = "b.toml"\n', "grid"),
        "empty grid": ('base = "b.toml"\n[grid]\n', "grid"),
        "value not a list": (
            'base = "b.toml"\n[grid]\n"ssd.op_fraction" = 0.2\n',
            "ssd.op_fraction",
        ),
        "empty list": ('base = "b.toml"\n[grid]\n"ssd.op_fraction" = []\n', "ssd.op_fraction"),
        "unknown key": ('base = "b.toml"\n[grid]\n"ssd.bogus" = [1]\n', "bogus"),
        "bad value": ('base = "b.toml"\n[grid]\n"ssd.op_fraction" = [0.2, -1.0]\n', "op_fraction"),
        "bad key path": ('base = "b.toml"\n[grid]\n"ssd..gc" = [1]\n', "ssd..gc"),
        "zip unequal": (
            'base = "b.toml"\n[zip]\n"ssd.op_fraction" = [0.2, 0.3]\n"run.seed" = [1]\n',
            "zip",
        ),
        "grid and zip": (
            'base = "b.toml"\n[grid]\n"run.seed" = [1]\n[zip]\n"run.seed" = [2]\n',
            "zip",
        ),
        "unknown top key": ('base = "b.toml"\nbogus = 1\n[grid]\n"run.seed" = [1]\n', "bogus"),
        "not toml": ("[[[", None),
        "huge grid": (
            'base = "b.toml"\n[grid]\n'
            + "".join(
                f'"workload.seed" = [{",".join(str(i) for i in range(10))}]\n' for _ in range(1)
            )
            + "".join(
                f'"nand.geometry.{k}" = [1, 2, 3, 4, 5, 6, 7, 8]\n'
                for k in ["channels", "chips_per_channel", "dies_per_chip"]
            )
            + '"run.seed" = ['
            + ",".join(str(i) for i in range(1000))
            + "]\n"
            + '"ssd.host.queue_depth" = ['
            + ",".join(str(i) for i in range(1, 1001))
            + "]\n",
            "points",
        ),
        "seed as string": ('base = "b.toml"\n[grid]\n"run.seed" = ["1"]\n', "seed"),
        "table as value": ('base = "b.toml"\n[grid]\n"ssd" = [1]\n', "ssd"),
    }
    for name, (text, names) in sweeps.items():
        yield Case(
            f"sweep {name}",
            "refuse",
            argv=["sweep", "{dir}/s.toml", "--jobs", "1", "--out", "{dir}/out"],
            files={"s.toml": text, "b.toml": base},
            names=names,
        )
    yield Case(
        "sweep ok",
        "ok",
        argv=["sweep", "{dir}/s.toml", "--jobs", "2", "--out", "{dir}/out"],
        files={
            "s.toml": 'base = "b.toml"\n[grid]\n"ssd.gc.policy" = ["fifo", "greedy"]\n',
            "b.toml": base,
        },
    )


# ---------------------------------------------------------------------------------------------
# Python cases: functions of (case folder, *args) run in a worker process


def py_chip(_: Path, kwargs: dict[str, Any]) -> Any:
    import nandlab

    return nandlab.chip(**kwargs)


def py_engine(_: Path, kwargs: dict[str, Any]) -> Any:
    import nandlab

    return nandlab.engine(
        **{
            "iaa": True,
            "u2di": True,
            "queries": 50,
            "warmup_queries": 0,
            "progress": False,
            **kwargs,
        }
    )


def py_replay(folder: Path, text: str, fmt: str, kwargs: dict[str, Any]) -> Any:
    import nandlab

    (folder / "t.trace").write_text(text, encoding="utf-8")
    return nandlab.replay(folder / "t.trace", fmt, progress=False, **kwargs)


def py_run(folder: Path, config: Any, overrides: Any) -> Any:
    import nandlab

    return nandlab.run(config, overrides, progress=False)


def py_run_ssd(folder: Path, config: Any) -> Any:
    import nandlab

    return nandlab.run_ssd(config, progress=False)


def py_sweep(folder: Path, grid: Any, kwargs: dict[str, Any]) -> Any:
    import nandlab

    return nandlab.sweep(BASE, grid, **kwargs)


def py_run_config(folder: Path, data: Any) -> Any:
    import nandlab

    return nandlab.RunConfig(data)


def py_plot(folder: Path, files: dict[str, str]) -> Any:
    from nandlab import plots

    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return plots.plot(folder)


def py_report(folder: Path, files: dict[str, str]) -> Any:
    from nandlab import report

    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return report.write_report(folder)


def python_cases() -> Iterator[Case]:
    chip_bad: list[tuple[dict[str, Any], str]] = [
        ({"requests": -1}, "requests"),
        ({"requests": 1.5}, "requests"),
        ({"requests": "10"}, "requests"),
        ({"requests": 2**64}, "requests"),
        ({"dies": 0}, "dies"),
        ({"dies": -1}, "dies"),
        ({"dies": 2**33}, "dies"),
        ({"channels": 0}, "channels"),
        ({"page_size_bytes": 3}, "page_size"),
        ({"bus_data_rate_mts": math.nan}, "bus_data_rate_mts"),
        ({"bus_data_rate_mts": -5.0}, "bus_data_rate_mts"),
        ({"bus_data_rate_mts": 0.0}, "bus"),
        ({"preset": "nope"}, "nope"),
        ({"preset": None}, "preset"),
        ({"workload": "nope"}, "workload"),
        ({"scheduler": "nope"}, "nope"),
        ({"queue_depth": 0}, "queue_depth"),
        ({"queue_depth": -1}, "queue_depth"),
        ({"seed": -1}, "seed"),
        ({"cache": "yes"}, "cache"),
        ({"device": {"name": "x"}}, "device"),
        ({"device": "slc"}, "device"),
        ({"request_bytes": -1}, "request_bytes"),
        ({"bogus": 1}, "bogus"),
    ]
    for kwargs, names in chip_bad:
        kwargs = {"requests": 50, **kwargs} if "requests" not in kwargs else kwargs
        yield Case(f"py chip {kwargs}", "refuse", call="py_chip", args=(kwargs,), names=names)
    yield Case("py chip ok", "ok", call="py_chip", args=({"requests": 50, "dies": 2},))
    yield Case(
        "py chip program_us 1e12",
        "either",
        call="py_chip",
        args=(
            {
                "requests": 5,
                "device": {
                    **_preset("slc"),
                    "timing": {**_preset("slc")["timing"], "program_us": 1e12},
                },
            },
        ),
        names="program_us",
    )
    engine_bad: list[tuple[dict[str, Any], str]] = [
        ({"free_space": -0.1}, "free_space"),
        ({"free_space": math.nan}, "free_space"),
        ({"update_fraction": 2}, "update_fraction"),
        ({"queries": -1}, "queries"),
        ({"row_size_bytes": 0}, "row_size_bytes"),
        ({"row_size_bytes": 10**9}, "row_size"),
        ({"channels": 0}, "channels"),
        ({"blocks_per_plane": -1}, "blocks_per_plane"),
        ({"pages_per_block": 3}, "pages_per_block"),
        ({"device": "nope-preset"}, "nope-preset"),
        ({"device": 5}, "device"),
        ({"iaa": 1}, "iaa"),
        ({"seed": 2**64}, "seed"),
    ]
    for kwargs, names in engine_bad:
        yield Case(f"py engine {kwargs}", "refuse", call="py_engine", args=(kwargs,), names=names)
    yield Case("py engine ok", "ok", call="py_engine", args=({},))
    for fmt in ["msr", "native", "disksim", "blkparse"]:
        for name, text in [
            ("empty", ""),
            ("binary", "\x00\x01"),
            ("wrong format", GOOD_LINE["msr" if fmt != "msr" else "native"]),
        ]:
            yield Case(
                f"py replay {fmt} {name}",
                "refuse",
                call="py_replay",
                args=(text, fmt, {}),
                names="t.trace",
            )
        for name, text in BROKEN_TRACES.get(fmt, {}).items():
            yield Case(
                f"py replay {fmt} {name}",
                "refuse",
                call="py_replay",
                args=(text, fmt, {}),
                names="t.trace",
            )
        yield Case(f"py replay {fmt} good", "ok", call="py_replay", args=(GOOD_LINE[fmt], fmt, {}))
    for kwargs, names in [
        ({"seed": -1}, "seed"),
        ({"closed_loop": "yes"}, "closed_loop"),
        ({"device": "nope-device"}, "nope-device"),
        ({"device": 3}, "device"),
        ({"fit_device": None}, "fit_device"),
        ({"precondition_reads": 0}, "precondition_reads"),
    ]:
        yield Case(
            f"py replay {kwargs}",
            "refuse",
            call="py_replay",
            args=(NATIVE_OK, "native", kwargs),
            names=names,
        )
    yield Case(
        "py replay bad format", "refuse", call="py_replay", args=(NATIVE_OK, "csv", {}), names="csv"
    )
    yield Case(
        "py replay fit", "ok", call="py_replay", args=(NATIVE_OK, "native", {"fit_device": True})
    )
    for path, values in list(STACK_BAD.items())[::3]:
        value = values[0]
        yield Case(
            f"py run {path}={value!r}",
            "refuse",
            call="py_run",
            args=(with_key(BASE, path, value), None),
            names=path.split(".")[-1] if path != "engine.iaa" else "engine",
        )
    for overrides, names in [
        ({"ssd.op_fraction": -1.0}, "op_fraction"),
        ({"ssd.bogus": 1}, "bogus"),
        ({"": 1}, "overrides"),
        ({"ssd..x": 1}, "ssd..x"),
        ({"workload.request_count": math.nan}, "request_count"),
        ([1, 2], "overrides"),
        ({"nand.geometry.blocks_per_plane": 2**40}, "blocks_per_plane"),
    ]:
        yield Case(
            f"py run overrides {overrides}",
            "refuse",
            call="py_run",
            args=(BASE, overrides),
            names=names,
        )
    yield Case("py run ok", "ok", call="py_run", args=(BASE, None))
    yield Case(
        "py run_ssd engine workload",
        "refuse",
        call="py_run_ssd",
        args=(str(REPO / "examples/engine-codesign.toml"),),
        names="engine",
    )
    yield Case(
        "py run_ssd missing file",
        "refuse",
        call="py_run_ssd",
        args=("nope.toml",),
        names="nope.toml",
    )
    yield Case("py run_ssd int", "refuse", call="py_run_ssd", args=(5,), names="config")
    yield Case(
        "py run_ssd bad TOML text", "refuse", call="py_run_ssd", args=("a = = 1\n",), names="line"
    )
    for grid, kwargs, names in [
        ({"ssd.op_fraction": []}, {}, "ssd.op_fraction"),
        ({"ssd.op_fraction": 0.2}, {}, "ssd.op_fraction"),
        ({"ssd.op_fraction": [0.2, -1.0]}, {}, "op_fraction"),
        ({"ssd.bogus": [1]}, {}, "bogus"),
        ({"run.seed": [1, 2], "ssd.op_fraction": [0.2]}, {"zip": True}, "zip"),
        ({"run.seed": [1]}, {"zip": "yes"}, "zip"),
        ([("run.seed", [1])], {}, "grid"),
        ({"run.seed": [math.inf]}, {}, "run.seed"),
        ({"run.seed": [-1]}, {}, "seed"),
    ]:
        yield Case(
            f"py sweep {grid} {kwargs}", "refuse", call="py_sweep", args=(grid, kwargs), names=names
        )
    yield Case("py sweep ok", "ok", call="py_sweep", args=({"run.seed": [1, 2]}, {}))
    # issue 31 item 6: a bad executor or out= is refused before any point runs
    for kwargs, names in [
        ({"executor": "x"}, "executor"),
        ({"executor": 3}, "executor"),
        ({"out": 5}, "out"),
        ({"out": "/proc/nandlab-sweep"}, "nandlab-sweep"),
    ]:
        yield Case(
            f"py sweep late check {kwargs}",
            "refuse",
            call="py_sweep",
            args=({"run.seed": [1, 2]}, kwargs),
            names=names,
        )
    for data, names in [
        ({**BASE, "bogus": {}}, "bogus"),
        (with_key(BASE, "ssd.gc.policy", "nope"), "policy"),
        (with_key(BASE, "workload.kind", None), "kind"),
    ]:
        yield Case(
            f"py RunConfig {names}", "refuse", call="py_run_config", args=(data,), names=names
        )
    for name, files, names in [
        ("empty folder", {}, "report.json"),
        ("bad summary", {"summary.json": "{"}, "summary.json"),
        ("summary list", {"summary.json": "[1]"}, "summary.json"),
        ("bad report", {"report.json": "nope"}, "report.json"),
        ("sweep without keys", {"sweep.csv": "point,waf\n0,1.0\n"}, "sweep.csv"),
        ("empty sweep", {"sweep.csv": ""}, "sweep.csv"),
    ]:
        yield Case(f"py plot {name}", "refuse", call="py_plot", args=(files,), names=names)
    yield Case(
        "py report empty folder", "refuse", call="py_report", args=({},), names="report.json"
    )


_PRESETS: dict[str, Any] = {}


def _preset(name: str) -> dict[str, Any]:
    if name not in _PRESETS:
        import tomllib

        _PRESETS[name] = tomllib.loads((REPO / f"presets/nand/{name}.toml").read_text())
    return json.loads(json.dumps(_PRESETS[name]))


def new_surface_cases() -> Iterator[Case]:
    """Exit statuses of the crash harness, NUL bytes in SQL, crash runs' bounds; `info`,
    sql-crash's cuts and recoveries, zoned and FDP fio keys, `reproduce --jobs`."""
    runs: list[tuple[list[str], str, str | None]] = [
        (["crash", "--cuts", "200", "--mutation", "no-sequence"], "refuse", "violations"),
        (["crash", "--cuts", "200", "--mutation", "no-sequence", "--json"], "refuse", "violations"),
        (
            ["crash", "--engine", "--cuts", "100", "--mutation", "no-device-flush"],
            "refuse",
            "violations",
        ),
        (["crash", "--cuts", "0"], "refuse", "cuts"),
        (["crash", "--mutation", "bogus"], "refuse", "bogus"),
        (["crash", "--cuts", "50"], "ok", None),
        (
            ["powercut", "--preset", "mlc1", "--no-paired-padding", "--sweep", "events"],
            "refuse",
            "violations",
        ),
        (["sql", "{dir}/nul.sql"], "refuse", "NUL byte at line 2"),
        (["sql", "{dir}/ok.sql"], "ok", None),
        (["sql-crash", "--cuts", "0"], "refuse", "cuts"),
        # issue 31 item 6 re-check: the surfaces added since the first pass
        (["info", "slc"], "ok", None),
        (["info", "bench-ssd", "--json"], "ok", None),
        (["info", "nosuch"], "refuse", "nosuch"),
        (["info", "{dir}/unknown.toml"], "refuse", "bogus_key"),
        (["info", "{dir}/nul.sql"], "refuse", "nul.sql"),
        (["info", "slc", "extra"], "refuse", "extra"),
        (["sql-crash", "--cut-at", "bogus"], "refuse", "cut-at"),
        (["sql-crash", "--recovery", "bogus"], "refuse", "recovery"),
        (["sql-crash", "--cut-at", "commits", "--cuts", "2"], "ok", None),
        (["sql-crash", "--recovery", "skip-newest-page", "--cuts", "24"], "refuse", "violations"),
        (["crash", "--mutation", "skip-newest-page", "--cuts", "50"], "refuse", "violations"),
        (["crash", "--engine", "--mutation", "skip-newest-page"], "refuse", "skip-newest-page"),
        (["fio", "{dir}/zonemode.fio"], "refuse", "zonemode"),
        (["fio", "{dir}/zbd.fio"], "refuse", "zoned"),
        (["fio", "{dir}/open.fio"], "refuse", "max_open_zones"),
        (["fio", "{dir}/fdp.fio"], "refuse", "fdp"),
        (["fio", "{dir}/pli.fio"], "refuse", "pli.fio:5"),
        (["fio", "{dir}/append.fio"], "refuse", "zone_append"),
        (["reproduce", "ctrl-suspend", "--quick", "--jobs", "0"], "refuse", "jobs"),
        (["reproduce", "ctrl-suspend", "--quick", "--jobs", "-1"], "refuse", "1 to 1024"),
        (["reproduce", "ctrl-suspend", "--quick", "--jobs", "x"], "refuse", "jobs"),
        (["reproduce", "ctrl-suspend", "--quick", "--jobs", "99999"], "refuse", "1 to 1024"),
        (["info", "{dir}/empty.toml"], "refuse", "no settings"),
        (["fio", "{dir}/zbd-append.fio"], "refuse", "zoned"),
        (["reproduce", "nosuch", "--jobs", "2"], "refuse", "nosuch"),
        (["reproduce", "ctrl-suspend", "--quick", "--jobs", "2"], "ok", None),
    ]
    job = "[j]\nrw=write\nsize=1m\n"
    files = {
        "nul.sql": "CREATE TABLE t(x);\nINSERT INTO t VALUES(1);\0SELECT 1;\n",
        "ok.sql": "SELECT 1;\n",
        "unknown.toml": "bogus_key = 1\n",
        "zonemode.fio": job + "zonemode=bogus\n",
        "zbd.fio": job + "zonemode=zbd\n",
        "open.fio": job + "zonemode=zbd\nmax_open_zones=-1\n",
        "fdp.fio": job + "fdp=maybe\n",
        "pli.fio": job + "fdp=1\nfdp_pli=99\n",
        "append.fio": job + "write_mode=zone_append\n",
        "zbd-append.fio": job + "write_mode=zone_append\nzonemode=zbd\n",
        "empty.toml": "",
    }
    for argv, expect, names in runs:
        yield Case(f"new: {' '.join(argv)}", expect, argv=argv, files=files, names=names)


_EXAMPLES: dict[str, dict[str, Any]] = {}


def _example(name: str, **workload: Any) -> dict[str, Any]:
    """A copy of `examples/NAME.toml` as a dict, with `workload` keys replaced (shorter runs)."""
    if name not in _EXAMPLES:
        import tomllib

        _EXAMPLES[name] = tomllib.loads((REPO / f"examples/{name}.toml").read_text())
    config: dict[str, Any] = json.loads(json.dumps(_EXAMPLES[name]))
    config["workload"].update(workload)
    return config


def _namespace(config: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`config` with key `key` of its first `[[ssd.nvme.namespaces]]` set (None: removed);
    `fdp.K` sets a key of that namespace's FDP table."""
    out: dict[str, Any] = json.loads(json.dumps(config))
    table = out["ssd"]["nvme"]["namespaces"][0]
    if key.startswith("fdp."):
        table, key = table["fdp"], key.removeprefix("fdp.")
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value
    return out


def component_cases() -> Iterator[Case]:
    """The stack sections added after the first pass (issue 31 item 2 of session 14): zoned and
    FDP namespaces (`[ssd.nvme]`, `mapping.kind = "zoned"`), `[ssd.slc_cache]`, the bad-block
    keys of `[nand.reliability]`, DFTL's `mapping.cache_entries`, fio's zone_append on a zoned
    device and `--jobs`."""
    zns = _example("zns-log-writes", request_count=400)
    fdp = _example("fdp-placement", request_count=400)
    fdp["precondition"]["fill_fraction"] = 0.5
    slc = _example("ssd-slc-cache", request_count=64)
    bad = _example("ssd-bad-blocks", request_count=400)
    del bad["ssd"]["gc"]  # greedy GC: refused first on the block and hybrid mappings
    bad["precondition"]["random_overwrites"] = 0
    dftl = _example("ssd-dftl-cache", request_count=400)
    bad_cases: list[tuple[str, dict[str, Any], str]] = []

    def bad_key(label: str, base: dict[str, Any], path: str, values: list[Any], names: str) -> None:
        for value in values:
            bad_cases.append((f"{label} {path}={value!r}", with_key(base, path, value), names))

    def bad_ns(label: str, base: dict[str, Any], key: str, values: list[Any], names: str) -> None:
        for value in values:
            bad_cases.append(
                (f"{label} namespace {key}={value!r}", _namespace(base, key, value), names)
            )

    # zoned namespaces on the zoned mapping
    bad_key("zns", zns, "ssd.mapping.zone_planes", [-1, 3, 1000, "4"], "zone_planes")
    bad_key("zns", zns, "ssd.nvme.queue_weights", [[], [0], [-1], "1", [1.5]], "queue_weights")
    bad_key("zns", zns, "ssd.nvme.arbitration", ["bogus", 1], "arbitration")
    bad_key("zns", zns, "ssd.nvme.bogus", [1], "bogus")
    bad_key("zns", zns, "ssd.nvme.namespaces", [[], "zoned", [1]], "namespaces")
    bad_key("zns", zns, "ssd.buffer.pages", [16], "buffer")
    bad_key("zns", zns, "ssd.mapping.kind", ["block"], "kind|zoned|namespace")
    bad_key("zns", zns, "workload.pattern", ["random"], "zone|write pointer")
    bad_ns("zns", zns, "kind", ["bogus", "conventional", 7], "kind")
    bad_ns("zns", zns, "lbas", [-1, 10**12, "all"], "lbas")
    bad_ns("zns", zns, "max_open_zones", [-1, "8", 2**40], "max_open_zones")
    bad_ns("zns", zns, "max_active_zones", [-1, 2], "max_active_zones|max_open_zones")
    bad_ns("zns", zns, "zone_capacity_lbas", [-1, 10**9], "zone_capacity_lbas|capacity")
    bad_ns("zns", zns, "zone_size_lbas", [-1, 3, 10**9], "zone_size_lbas")
    bad_ns("zns", zns, "bogus", [1], "bogus")
    # FDP on a conventional namespace of the page mapping
    bad_ns("fdp", fdp, "fdp.reclaim_groups", [0, -1, 10**6, "1"], "reclaim_groups")
    bad_ns("fdp", fdp, "fdp.handles", [[], ["bogus"], "persistently_isolated", [1]], "handles")
    bad_ns("fdp", fdp, "fdp.reclaim_unit_bytes", [0, -1], "reclaim_unit_bytes")
    bad_ns("fdp", fdp, "fdp.bogus", [1], "bogus")
    bad_ns("fdp", fdp, "fdp", ["on", 1], "fdp")
    bad_key("fdp", fdp, "ssd.mapping.placement_ids", [1, -1], "placement_ids")
    bad_key("fdp", fdp, "workload.placement_id", [-1, "1"], "placement_id")
    bad_key("fdp", fdp, "ssd.mapping.kind", ["block"], "kind|placement_ids|fdp")
    # the SLC cache on TLC
    bad_key("slc", slc, "ssd.slc_cache.blocks", [0, -1, 10**6, "16", 1.5], "blocks")
    bad_key("slc", slc, "ssd.slc_cache.idle_fold_us", [-1, math.nan, "x"], "idle_fold_us")
    bad_key("slc", slc, "ssd.slc_cache.bogus", [1], "bogus")
    bad_key("slc", slc, "ssd.mapping.kind", ["block", "hybrid"], "blocks|slc_cache")
    bad_key("slc", slc, "nand.timing.slc_program_us", [None, -1, math.nan], "slc_program_us")
    bad_key("slc", slc, "ssd.slc_cache", [{"idle_fold_us": 100}], "idle_fold_us|blocks")
    # bad blocks
    rel = "nand.reliability"
    bad_key(
        "bad",
        bad,
        f"{rel}.factory_bad_block_fraction",
        [-0.1, 0.6, math.nan, "x"],
        "factory_bad_block_fraction",
    )
    bad_key("bad", bad, f"{rel}.factory_bad_block_fraction", [0.5], "factory|spare")
    bad_key("bad", bad, f"{rel}.erase_fail_base", [-1, 2, math.nan, math.inf], "erase_fail_base")
    bad_key(
        "bad",
        bad,
        f"{rel}.erase_fail_wear_coeff",
        [-1, math.inf, math.nan],
        "erase_fail_wear_coeff",
    )
    bad_key(
        "bad", bad, "ssd.mapping.kind", ["block", "hybrid"], "factory_bad_block_fraction|erase_fail"
    )
    # DFTL's cached mapping table
    bad_key("dftl", dftl, "ssd.mapping.cache_entries", [-1, "2048", 1.5], "cache_entries")
    bad_key("dftl", dftl, "ssd.mapping.kind", ["block", "hybrid"], "cache_entries")
    for name, config, names in bad_cases:
        yield Case(
            f"component {name}",
            "refuse",
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": toml_text(config)},
            names=names,
        )
    for name, literal in [
        ("cache_entries", "18446744073709551616"),
        ("blocks", "18446744073709551615"),
    ]:
        base = dftl if name == "cache_entries" else slc
        path = "ssd.mapping.cache_entries" if name == "cache_entries" else "ssd.slc_cache.blocks"
        yield Case(
            f"component {path}={literal} (raw TOML)",
            "refuse",
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": raw_toml(base, path, literal)},
            names=f"{name}|line",
        )
    ok_cases: list[tuple[str, dict[str, Any], str]] = [
        ("zns example", zns, "ok"),
        ("fdp example", fdp, "ok"),
        ("slc example", slc, "ok"),
        ("bad-blocks example", bad, "ok"),
        ("dftl example", dftl, "ok"),
        ("zns zone_planes 0 (every plane)", with_key(zns, "ssd.mapping.zone_planes", 0), "ok"),
        (
            "zns two namespaces",
            with_key(
                zns, "ssd.nvme.namespaces", [{"kind": "zoned", "lbas": 4096}, {"kind": "zoned"}]
            ),
            "either",
        ),
        (
            "zns wrr",
            with_key(
                with_key(zns, "ssd.nvme.arbitration", "weighted-round-robin"),
                "ssd.nvme.queue_weights",
                [1, 3],
            ),
            "ok",
        ),
        ("dftl cache_entries 1", with_key(dftl, "ssd.mapping.cache_entries", 1), "either"),
        (
            "dftl cache_entries 0 (whole table)",
            with_key(dftl, "ssd.mapping.cache_entries", 0),
            "ok",
        ),
        (
            "dftl cache_entries beyond the table",
            with_key(dftl, "ssd.mapping.cache_entries", 10**9),
            "either",
        ),
        ("slc idle folding", with_key(slc, "ssd.slc_cache.idle_fold_us", 2000), "ok"),
        # a reclaim unit of 1 byte or 1 PB and a placement id beyond the handles: refused
        # since session 15 (fdp_cases)
        ("bad blocks off", with_key(bad, "nand.reliability.factory_bad_block_fraction", 0.0), "ok"),
        (
            "bad blocks certain erase failure",
            with_key(bad, "nand.reliability.erase_fail_base", 1.0),
            "either",
        ),
    ]
    for name, config, expect in ok_cases:
        yield Case(
            f"component ok {name}",
            expect,
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": toml_text(config)},
        )
    # fio on a zoned device: zone_append, zone keys; sweeps' --jobs
    device = toml_text(with_key(with_key(zns, "workload", None), "run", None))
    fio_zoned = {
        "append": (
            "[j]\nrw=write\nzonemode=zbd\nwrite_mode=zone_append\nbs=16k\nnumber_ios=200\n",
            "ok",
            None,
        ),
        "randwrite": ("[j]\nrw=randwrite\nzonemode=zbd\nbs=16k\nnumber_ios=200\n", "ok", None),
        "append randwrite": (
            "[j]\nrw=randwrite\nzonemode=zbd\nwrite_mode=zone_append\nbs=4k\nnumber_ios=200\n",
            "either",
            None,
        ),
        "append read": (
            "[j]\nrw=read\nzonemode=zbd\nwrite_mode=zone_append\nnumber_ios=20\n",
            "either",
            None,
        ),
        "append bogus mode": (
            "[j]\nrw=write\nzonemode=zbd\nwrite_mode=bogus\n",
            "refuse",
            "write_mode",
        ),
        "append bs beyond zone": (
            "[j]\nrw=write\nzonemode=zbd\nwrite_mode=zone_append\nbs=1g\n",
            "refuse",
            "bs|zone",
        ),
        # fio's default: the device's zone size
        "zonesize 0": ("[j]\nrw=write\nzonemode=zbd\nzonesize=0\nnumber_ios=10\n", "ok", None),
        "max_open_zones beyond": (
            "[j]\nrw=write\nzonemode=zbd\nmax_open_zones=100000\nnumber_ios=10\n",
            "either",
            "max_open_zones",
        ),
        "zone_reset_threshold 2": (
            "[j]\nrw=randwrite\nzonemode=zbd\nzone_reset_threshold=2\nnumber_ios=10\n",
            "refuse",
            "zone_reset_threshold",
        ),
        "zone_reset_frequency -1": (
            "[j]\nrw=randwrite\nzonemode=zbd\nzone_reset_frequency=-1\nnumber_ios=10\n",
            "refuse",
            "zone_reset_frequency",
        ),
        "zone units": ("[j]\nrw=write\nzonemode=zbd\nsize=2z\nbs=16k\n", "ok", None),
        # folded into the device with a note (docs/workloads.md); number_ios keeps it short
        "zone units beyond": (
            "[j]\nrw=write\nzonemode=zbd\nsize=100000z\nbs=16k\nnumber_ios=50\n",
            "ok",
            None,
        ),
    }
    for name, (job, expect, names) in fio_zoned.items():
        yield Case(
            f"component fio zoned {name}",
            expect,
            argv=["fio", "{dir}/j.fio", "--device", "{dir}/d.toml"],
            files={"j.fio": job, "d.toml": device},
            names=names,
        )
    yield Case(
        "component fio zonemode=zbd on a conventional device",
        "refuse",
        argv=["fio", "{dir}/j.fio"],
        files={"j.fio": "[j]\nrw=write\nzonemode=zbd\nnumber_ios=10\n"},
        names="zoned|zonemode|nvme",
    )
    sweep = 'base = "b.toml"\n[grid]\n"ssd.gc.policy" = ["fifo", "greedy"]\n'
    for jobs, expect, names in [
        ("0", "refuse", "jobs"),
        ("1025", "refuse", "1 to 1024"),
        ("-3", "refuse", "1 to 1024"),
        ("1", "ok", None),
    ]:
        yield Case(
            f"component sweep --jobs {jobs}",
            expect,
            argv=["sweep", "{dir}/s.toml", "--jobs", jobs, "--out", "{dir}/out"],
            files={"s.toml": sweep, "b.toml": toml_text(BASE)},
            names=names,
        )


def fdp_cases() -> Iterator[Case]:
    """Session 15 (issue 31): every FDP key out of range or inconsistent is refused naming
    the key (a reclaim unit of 1 byte or 1 PB and a placement id beyond the handles ran with
    exit 0 before); fio's `--section`."""
    fdp = _example("fdp-placement", request_count=400)
    fdp["precondition"]["fill_fraction"] = 0.5
    zns = _example("zns-log-writes", request_count=400)
    one_handle = {
        "reclaim_groups": 1,
        "handles": ["persistently_isolated"],
        "reclaim_unit_bytes": 1048576,
    }
    no_fdp = _namespace(fdp, "fdp", None)
    refused: list[tuple[str, dict[str, Any], str]] = [
        *(
            (
                f"reclaim_unit_bytes={v}",
                _namespace(fdp, "fdp.reclaim_unit_bytes", v),
                "reclaim_unit_bytes",
            )
            for v in (1, 4095, 4097, 1048577, 10**15, 2**63 - 1)
        ),
        *(
            (f"placement_id={v}", with_key(fdp, "workload.placement_id", v), "placement_id")
            for v in (2, 99, 32768, 65535)
        ),
        ("placement_id=1 without fdp", no_fdp, "placement_id"),
        ("fdp on a zoned namespace", _namespace(zns, "fdp", one_handle), "fdp"),
        (
            "fdp with more handles than placement ids",
            _namespace(fdp, "fdp.handles", ["persistently_isolated"] * 3),
            "handles",
        ),
        (
            "fdp with 2 reclaim groups on 2 placement ids",
            _namespace(fdp, "fdp.reclaim_groups", 2),
            "handles",
        ),
    ]
    for name, config, names in refused:
        yield Case(
            f"fdp {name}",
            "refuse",
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": toml_text(config)},
            names=names,
        )
    for name, config in [
        ("reclaim unit of one page", _namespace(fdp, "fdp.reclaim_unit_bytes", 4096)),
        ("placement_id 0", with_key(fdp, "workload.placement_id", 0)),
    ]:
        yield Case(
            f"fdp ok {name}",
            "ok",
            argv=["run", "{dir}/c.toml"],
            files={"c.toml": toml_text(config)},
        )
    job = "[global]\nsize=1m\n[default]\nrw=read\n[override]\nrw=${NANDLAB_UNSET}\n"
    for argv, expect, names in [
        (["--section", "default"], "ok", None),
        (["--section", "nope"], "refuse", "nope"),
        (["--section", "default", "--section", "nope"], "refuse", "nope"),
        (["--section", ""], "refuse", "section"),
        ([], "refuse", "NANDLAB_UNSET"),
    ]:
        yield Case(
            f"fio {' '.join(argv) or 'every section'}",
            expect,
            argv=["fio", "{dir}/j.fio", *argv],
            files={"j.fio": job},
            names=names,
        )


def item6_cases() -> Iterator[Case]:
    """Issue 31 item 6: each silent accept and unclear error it lists, once more."""
    runs: list[tuple[list[str], str]] = [
        (["powercut", "--queue-depth", "0"], "queue-depth"),
        (["powercut", "--requests", "0"], "requests"),
        (["powercut", "--read-probability", "0.6", "--trim-probability", "0.5"], "probabilit"),
        (["powercut", "--read-probability", "1"], "probabilit"),
        (["bench", "sql", "--requests", "0"], "requests"),
        (["fio", "{dir}/engine.fio"], "engine.fio:3"),
        (["fio", "{dir}/garbage.fio"], "garbage.fio:3"),
        (["reproduce", "nfs-energy", "--quick", "--out", "/proc/nandlab-out"], "nandlab-out"),
        (["run", "{dir}/static-block.toml"], "ssd.wear.leveling"),
        (["run", "{dir}/static-hybrid.toml"], "ssd.wear.leveling"),
        (["run", "{dir}/fill0.toml"], "precondition.random_overwrites"),
        (["run", "{dir}/u64max.toml"], "workload.request_count"),
    ]
    files = {
        "static-block.toml": toml_text(
            with_key(with_key(BASE, "ssd.mapping.kind", "block"), "ssd.wear.leveling", "static")
        ),
        "static-hybrid.toml": toml_text(
            with_key(with_key(BASE, "ssd.mapping.kind", "hybrid"), "ssd.wear.leveling", "static")
        ),
        "fill0.toml": toml_text(
            {**BASE, "precondition": {"fill_fraction": 0.0, "random_overwrites": 100}}
        ),
        "u64max.toml": raw_toml(BASE, "workload.request_count", "18446744073709551615"),
        "engine.fio": "[j]\nrw=read\nioengine=teleport\nsize=1m\n",
        "garbage.fio": "[j]\nrw=read\n" + "x" * 3000 + "=1\n",
    }
    for argv, names in runs:
        yield Case(f"item 6: {' '.join(argv)}", "refuse", argv=argv, files=files, names=names)


def all_cases() -> list[Case]:
    cases = [
        *item6_cases(),
        *new_surface_cases(),
        *stack_cases(),
        *trace_cases(),
        *fio_cases(),
        *chip_cases(),
        *cli_flag_cases(),
        *sweep_cases(),
        *python_cases(),
        *component_cases(),
        *fdp_cases(),
    ]
    names = Counter(c.name for c in cases)
    dup = [n for n, k in names.items() if k > 1]
    for c in cases:
        if c.name in dup:
            c.name = f"{c.name} #{id(c) % 1000}"
    return cases


def quick_cases(every: int = 10) -> list[Case]:
    """Every `every`-th case: the fast subset of the test suite."""
    return all_cases_cached()[::every]


# ---------------------------------------------------------------------------------------------
# running and classifying


@dataclass
class Outcome:
    case: Case
    kind: str
    detail: str
    seconds: float


def names_it(names: str | None, message: str) -> bool:
    """Whether `message` names one of the alternatives of `names` (``a|b``)."""
    if names is None:
        return True
    return any(alt.lower() in message.lower() for alt in names.split("|"))


def classify_cli(case: Case, code: int | None, stderr: str) -> tuple[str, str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    # notes and warnings are not the error
    errors = [line for line in lines if not line.startswith(("note:", "warning:"))]
    text = " | ".join(errors)[:300]
    if code is None:
        return "hang", f"no answer in {TIMEOUT_S:.0f} s"
    if "panicked" in stderr or code == 101:
        return "panic", text
    if code < 0:
        return "abort", f"signal {-code}: {text}"
    if code == 0:
        if case.expect == "refuse":
            return "silent-accept", "exit 0"
        return "ok-run", ""
    if case.expect == "ok":
        return "unexpected-refusal", f"exit {code}: {text}"
    if len(errors) != 1:
        return "multi-line", f"exit {code}: {text}"
    if code not in (1, 2):
        # 2: bad input; 1: a run that failed (a crash-oracle violation, an unwritable output)
        return "refused-vague", f"exit {code} (not 1 or 2): {text}"
    if not names_it(case.names, errors[0]):
        return "refused-vague", f"does not name {case.names!r}: {text}"
    if len(errors[0]) > MAX_ERROR_CHARS:
        # issue 31 item 6: a garbage fio key once gave a 2 KB error line
        return "refused-vague", f"an error line of {len(errors[0])} characters: {text}"
    return "refused", text


def run_cli(case: Case, root: Path) -> Outcome:
    folder = Path(tempfile.mkdtemp(prefix="case-", dir=root))
    for name, text in case.files.items():
        (folder / name).write_text(text, encoding="utf-8", errors="surrogateescape")
    argv = [str(NANDLAB), *(a.replace("{dir}", str(folder)) for a in case.argv or [])]
    start = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT_S,
            cwd=folder,
            check=False,
        )
        code: int | None = done.returncode
        stderr = done.stderr
    except subprocess.TimeoutExpired as stopped:
        code, stderr = None, str(stopped.stderr or "")
    kind, detail = classify_cli(case, code, stderr)
    return Outcome(case, kind, detail, time.monotonic() - start)


def classify_python(case: Case, result: dict[str, Any]) -> tuple[str, str]:
    if result["status"] == "returned":
        return ("silent-accept", "returned") if case.expect == "refuse" else ("ok-run", "")
    error, message = result["error"], result["message"]
    detail = f"{error}: {message}"[:300]
    if error in ("PanicException", "SystemError") or (
        error == "RuntimeError" and "internal error" in message
    ):
        return "panic", detail
    if case.expect == "ok":
        return "unexpected-refusal", detail
    if "\n" in message.strip():
        return "multi-line", detail
    if not result.get("usage_error"):
        return "refused-vague", f"an unexpected exception type: {detail}"
    if not names_it(case.names, message):
        return "refused-vague", f"does not name {case.names!r}: {detail}"
    return "refused", detail


def python_worker(indices: list[int]) -> None:
    """Runs the Python cases `indices` of `all_cases()`, one JSON line each on stdout."""
    cases = all_cases()
    root = Path(tempfile.mkdtemp(prefix="nandlab-adv-py-"))
    for i in indices:
        case = cases[i]
        folder = Path(tempfile.mkdtemp(dir=root))
        function: Callable[..., Any] = globals()[case.call or ""]
        try:
            function(folder, *case.args)
            result = {"status": "returned"}
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                raise
            result = {
                "status": "raised",
                "error": type(error).__name__,
                "message": str(error),
                "usage_error": isinstance(error, ValueError | TypeError | OSError | KeyError),
            }
        print(json.dumps({"index": i, **result}), flush=True)


def run_python(cases: list[tuple[int, Case]]) -> list[Outcome]:
    """Runs Python cases in worker processes; a worker that hangs or dies is replaced and the
    case is classified as a hang or an abort."""
    outcomes: list[Outcome] = []
    todo = list(cases)
    while todo:
        worker = subprocess.Popen(
            [sys.executable, __file__, "--python-worker", ",".join(str(i) for i, _ in todo)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert worker.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(worker.stdout, selectors.EVENT_READ)
        while todo:
            index, case = todo[0]
            start = time.monotonic()
            ready = selector.select(timeout=TIMEOUT_S + 5)  # + the import of nandlab
            line = worker.stdout.readline() if ready else ""
            if not ready:
                worker.kill()
                outcomes.append(Outcome(case, "hang", f"no answer in {TIMEOUT_S:.0f} s", TIMEOUT_S))
                todo.pop(0)
                break
            if not line:
                worker.wait()
                stderr = worker.stderr.read() if worker.stderr else ""
                kind = "panic" if "panicked" in stderr else "abort"
                outcomes.append(
                    Outcome(case, kind, f"worker died ({worker.returncode}): {stderr[-300:]}", 0)
                )
                todo.pop(0)
                break
            result = json.loads(line)
            assert result["index"] == index, (result, index)
            kind, detail = classify_python(case, result)
            outcomes.append(Outcome(case, kind, detail, time.monotonic() - start))
            todo.pop(0)
        else:
            worker.wait()
        selector.close()
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    return outcomes


def run_cases(cases: list[Case], *, progress: bool = False) -> list[Outcome]:
    if not NANDLAB.is_file():
        raise FileNotFoundError(f"{NANDLAB}: build it first (make build, or set CARGO_TARGET_DIR)")
    index = {id(c): i for i, c in enumerate(all_cases_cached())}
    root = Path(tempfile.mkdtemp(prefix="nandlab-adv-"))
    outcomes: list[Outcome] = []
    cli = [c for c in cases if c.argv is not None]
    for k, case in enumerate(cli):
        outcomes.append(run_cli(case, root))
        if progress and k % 50 == 49:
            print(f"  {k + 1}/{len(cli)} CLI cases", file=sys.stderr)
    python = [(index[id(c)], c) for c in cases if c.call is not None]
    outcomes += run_python(python)
    return outcomes


_CACHE: list[Case] = []


def all_cases_cached() -> list[Case]:
    """`all_cases()`, built once (the workers rebuild the same list: case i is the same)."""
    if not _CACHE:
        _CACHE.extend(all_cases())
    return _CACHE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="every 10th case")
    parser.add_argument("--only", default=None, help="cases whose name contains TEXT")
    parser.add_argument("--show", nargs="*", default=list(BAD), help="outcome kinds to list")
    parser.add_argument("--python-worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.python_worker is not None:
        python_worker([int(i) for i in args.python_worker.split(",") if i])
        return 0
    cases = all_cases_cached()
    if args.quick:
        cases = cases[::10]
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    start = time.monotonic()
    outcomes = run_cases(cases, progress=True)
    counts = Counter(o.kind for o in outcomes)
    for o in outcomes:
        if o.kind in args.show:
            print(f"{o.kind:19} {o.case.name}: {o.detail}")
    cli = sum(1 for o in outcomes if o.case.argv is not None)
    print(
        f"\n{len(outcomes)} cases ({cli} CLI, {len(outcomes) - cli} Python) "
        f"in {time.monotonic() - start:.0f} s:"
    )
    for kind in ["ok-run", "refused", "unexpected-refusal", *BAD]:
        print(f"  {kind:19} {counts.get(kind, 0)}")
    return 1 if any(counts.get(k, 0) for k in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
