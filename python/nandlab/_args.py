"""Checks of the Python API's arguments, so that a bad one raises TypeError or ValueError
naming it (``chip(): requests must be an integer in [0, 2**64 - 1], not -1``) instead of an
error about the JSON or TOML text the wrappers build from it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MAX = 2**63 - 1


def integer(where: str, name: str, value: object, low: int = 0, high: int = U64_MAX) -> None:
    """`value` is an int (not a bool) in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be an integer, not {_show(value)}")
    if not low <= value <= high:
        raise ValueError(
            f"{where}: {name} must be an integer in [{low}, {_bound(high)}], not {value}"
        )


def optional_integer(
    where: str, name: str, value: object, low: int = 0, high: int = U64_MAX
) -> None:
    if value is not None:
        integer(where, name, value, low, high)


def number(
    where: str,
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
) -> None:
    """`value` is a finite int or float (not a bool) in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{where}: {name} must be a number, not {_show(value)}")
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{where}: {name} must be a finite number in [{low}, {high}], not {value}")


def boolean(where: str, name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be True or False, not {_show(value)}")


def string(where: str, name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{where}: {name} must be a string, not {_show(value)}")
    if not value:
        raise ValueError(f"{where}: {name} must not be empty")


def path(where: str, name: str, value: object, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str | Path):
        raise TypeError(f"{where}: {name} must be a path (str or Path), not {_show(value)}")
    if str(value) == "":
        raise ValueError(f"{where}: {name} must not be empty")


def config(where: str, name: str, value: object, optional: bool = False) -> None:
    """A config: a file path, TOML text or a mapping."""
    if optional and value is None:
        return
    if not isinstance(value, str | Path | Mapping):
        raise TypeError(
            f"{where}: {name} must be a file path, TOML text or a dict, not {_show(value)}"
        )


def mapping(where: str, name: str, value: object) -> None:
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: {name} must be a dict, not {_show(value)}")


def _bound(high: int) -> str:
    return {U64_MAX: "2**64 - 1", U32_MAX: "2**32 - 1", I64_MAX: "2**63 - 1"}.get(high, str(high))


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"
