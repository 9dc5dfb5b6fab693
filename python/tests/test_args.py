"""Bad arguments of the Python API raise TypeError or ValueError naming the argument
(issue 11: ``nandlab.chip(requests=-1)`` said ``expected u64 at line 1 column 71``, an error
about the JSON text the wrapper built)."""

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab import _nandlab

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "examples/ssd-random-write.toml"
TRACE = REPO / "crates/workload/tests/data/msr_sample.csv"

CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("chip requests < 0", lambda: nandlab.chip("mlc1", "swr", requests=-1), ValueError, "requests"),
    ("chip requests str", lambda: nandlab.chip(requests="10"), TypeError, "requests"),  # type: ignore[arg-type]
    ("chip requests bool", lambda: nandlab.chip(requests=True), TypeError, "requests"),
    ("chip dies float", lambda: nandlab.chip(dies=2.5), TypeError, "dies"),  # type: ignore[arg-type]
    ("chip dies huge", lambda: nandlab.chip(dies=2**40), ValueError, "dies"),
    (
        "chip bus nan",
        lambda: nandlab.chip(bus_data_rate_mts=math.nan),
        ValueError,
        "bus_data_rate_mts",
    ),
    ("chip cache int", lambda: nandlab.chip(cache=1), TypeError, "cache"),  # type: ignore[arg-type]
    ("chip seed < 0", lambda: nandlab.chip(seed=-1), ValueError, "seed"),
    ("chip workload", lambda: nandlab.chip(workload="nope"), ValueError, "workload"),
    ("chip device list", lambda: nandlab.chip(device=[1]), TypeError, "device"),  # type: ignore[arg-type]
    (
        "engine free_space",
        lambda: nandlab.engine(iaa=True, u2di=True, free_space=1.5),
        ValueError,
        "free_space",
    ),
    (
        "engine queries",
        lambda: nandlab.engine(iaa=True, u2di=True, queries=-5),
        ValueError,
        "queries",
    ),
    ("engine iaa", lambda: nandlab.engine(iaa="yes", u2di=True), TypeError, "iaa"),  # type: ignore[arg-type]
    (
        "engine row size 0",
        lambda: nandlab.engine(iaa=True, u2di=True, row_size_bytes=0),
        ValueError,
        "row_size_bytes",
    ),
    ("replay seed", lambda: nandlab.replay(TRACE, "msr", seed=-1), ValueError, "seed"),
    ("replay format", lambda: nandlab.replay(TRACE, 7), TypeError, "format"),  # type: ignore[arg-type]
    ("replay trace", lambda: nandlab.replay(None, "msr"), TypeError, "trace"),  # type: ignore[arg-type]
    (
        "replay closed_loop",
        lambda: nandlab.replay(TRACE, "msr", closed_loop=None),
        TypeError,
        "closed_loop",
    ),  # type: ignore[arg-type]
    ("run_ssd config", lambda: nandlab.run_ssd(42), TypeError, "config"),  # type: ignore[arg-type]
    ("run overrides", lambda: nandlab.run(CONFIG, {"": 1}), ValueError, "overrides"),
    ("run config", lambda: nandlab.run(3.5), TypeError, "config"),  # type: ignore[arg-type]
    ("sweep grid list", lambda: nandlab.sweep(CONFIG, {"ssd.op_fraction": 0.2}), TypeError, "grid"),  # type: ignore[dict-item]
    (
        "sweep grid empty",
        lambda: nandlab.sweep(CONFIG, {"ssd.op_fraction": []}),
        ValueError,
        "grid",
    ),
    (
        "sweep grid nan",
        lambda: nandlab.sweep(CONFIG, {"ssd.op_fraction": [math.nan]}),
        ValueError,
        "grid",
    ),
    ("sweep grid type", lambda: nandlab.sweep(CONFIG, [1]), TypeError, "grid"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("case", "call", "error", "name"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_is_named(
    case: str, call: Callable[[], Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert name in message, message
    assert "line 1 column" not in message
    assert "\n" not in message


def test_json_spec_errors_name_the_field_not_a_column() -> None:
    """The extension's own JSON specs name the failing field (whatever the wrapper missed)."""
    with pytest.raises(ValueError) as raised:
        _nandlab.run_chip('{"preset": "mlc1", "workload": "swr", "requests": -1}')
    message = str(raised.value)
    assert "`requests`" in message and "column" not in message, message
    with pytest.raises(ValueError, match=r"`protocol\.constant\.query_count`"):
        _nandlab.run_engine(
            '{"iaa": true, "u2di": true, "protocol": {"constant": {"free_space_fraction": 0.2,'
            ' "update_fraction": 0.4, "query_count": "many", "seed": 0}}}'
        )
