"""Typed access to stack configs (the TOML of ``nandlab run``; docs/stack.md)::

    cfg = nandlab.RunConfig.from_toml("examples/ssd-random-write.toml")   # checked
    cfg.ssd.op_fraction = 0.4
    cfg.workload.request_count = 5000
    cfg.validate()                    # ValueError naming the key, with the CLI's message
    nandlab.run_ssd(cfg)              # a RunConfig is a Mapping, so any Config accepts it
    path.write_text(cfg.to_toml())

Sections and nested tables read and write as attributes (or items); the checks are the CLI's,
done in Rust: unknown keys, bad values and a workload that does not fit the device.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from copy import deepcopy
from pathlib import Path
from typing import Any

from nandlab import _nandlab
from nandlab.ssd import to_toml


class Section(MutableMapping[str, Any]):
    """A table of a config: its keys as attributes and items; nested tables are Sections
    over the same data (edits write through)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no key `{name}` in this table (keys: {list(self)})") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        return Section(value) if isinstance(value, dict) else value

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = _plain(value)

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the data as plain dicts."""
        return deepcopy(self._data)


class RunConfig(Section):
    """A stack config: ``run``, ``nand``, ``ssd``, ``engine``, ``precondition``, ``workload``.

    Built from a dict (or keyword sections) or `from_toml`; checked on creation and by
    `validate` (ValueError with the CLI's message naming the key)."""

    __slots__ = ()

    def __init__(self, data: Mapping[str, Any] | None = None, /, **sections: Any) -> None:
        super().__init__(_plain({**(data or {}), **sections}))
        self.validate()

    @classmethod
    def from_toml(cls, source: str | Path) -> RunConfig:
        """Reads a TOML file (a `Path`, or a `str` without ``=`` or a newline) or TOML text."""
        import tomllib

        from nandlab.ssd import _config_text

        origin, text = _config_text(source)
        _check(origin, text)  # the CLI's message for TOML syntax errors too
        return cls(tomllib.loads(text))

    def to_toml(self) -> str:
        """The TOML text of the config (as ``nandlab run`` reads it)."""
        return to_toml(self._data)

    def validate(self) -> RunConfig:
        """Checks every key as ``nandlab run`` does before running; returns self."""
        _check("config", self.to_toml())
        return self

    def resolved(self) -> dict[str, Any]:
        """The config with every default the simulator fills in (checked)."""
        result: dict[str, Any] = json.loads(_check("config", self.to_toml()))
        return result


def _check(origin: str, text: str) -> str:
    return _nandlab.check_run_config(origin, text)


def _plain(value: Any) -> Any:
    """Sections and mappings as plain dicts (deep copies), so the config owns its data."""
    if isinstance(value, Section):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
