"""Zoned namespaces (NVMe ZNS) and Flexible Data Placement (FDP), command by command.

`open_device` builds the SSD of a stack config with ``[ssd.nvme]`` (its ``[precondition]``
applied, its ``[workload]``, if any, not run) and its NVMe host interface; the returned
`Device` takes commands on a namespace and simulates until they complete::

    from nandlab import nvme
    dev = nvme.open_device("examples/zns-log-writes.toml")
    dev.write(0, 0, 4)                       # 4 LBAs at zone 0's write pointer
    lba = dev.append(0, zslba=64, lbas=2)    # Zone Append: the LBA written
    dev.report_zones(0)[0].write_pointer_lba # 4
    dev.finish(0, 0); dev.reset(0, 0)
    dev.write(0, 8, 1)                       # off the write pointer: raises NvmeStatusError
    done = dev.submit(0, [{"op": "append", "zslba": 0, "lbas": 1}] * 8)   # queued together

A refused command raises `NvmeStatusError` from the one-command methods (``write``,
``append``, ``reset``, …): its ``status`` is the NVMe status name (``zone_invalid_write``,
``zone_is_full``, ``too_many_open_zones``, …) and ``status_code`` the status field (code type
<< 8 | code). An exception, because the caller of ``lba = dev.append(...)`` must not go on
with an LBA that was never written. `Device.submit` runs a batch (all submitted at once: at
a queue depth above 1 they are in flight together) and returns every `Completion` with its
status instead, since in a batch some commands may succeed and others not. Bad arguments (an
unknown op, a namespace that does not exist, an FDP query on a namespace without FDP) raise
ValueError.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nandlab._nandlab import NvmeDevice
from nandlab.ssd import Config, _config_text

__all__ = [
    "Completion",
    "Device",
    "FdpLog",
    "NvmeStatusError",
    "Zone",
    "open_device",
]


@dataclass(frozen=True)
class Completion:
    """A finished command: its NVMe status, the LBA a Zone Append wrote, its latency."""

    cid: int
    status: str
    status_code: int
    success: bool
    lba: int | None
    latency_ns: int
    completed_ns: int


@dataclass(frozen=True)
class Zone:
    """A zone descriptor as Report Zones returns it (LBAs are the namespace's)."""

    zone: int
    state: str
    start_lba: int
    capacity_lbas: int
    write_pointer_lba: int


@dataclass(frozen=True)
class FdpLog:
    """The FDP statistics log (bytes), the events log and each handle's status."""

    host_bytes_written: int
    media_bytes_written: int
    media_bytes_erased: int
    events: list[dict[str, Any]]
    events_dropped: int
    handles: list[dict[str, Any]]


class NvmeStatusError(Exception):
    """A command completed with an NVMe status other than success."""

    def __init__(self, command: Mapping[str, Any], completion: Completion) -> None:
        super().__init__(
            f"{command.get('op')} {dict(command)}: NVMe status {completion.status} "
            f"(0x{completion.status_code:03x})"
        )
        self.status = completion.status
        self.status_code = completion.status_code
        self.completion = completion


class Device:
    """An SSD with its NVMe host interface (see the module docs)."""

    def __init__(self, device: NvmeDevice) -> None:
        self._device = device
        info = json.loads(device.namespaces_json())
        self.lba_bytes: int = info["lba_bytes"]
        self.queue_pairs: int = info["queue_pairs"]
        self.namespaces: list[dict[str, Any]] = info["namespaces"]

    def submit(
        self, ns: int, commands: Sequence[Mapping[str, Any]], *, queue: int = 0
    ) -> list[Completion]:
        """Runs `commands` on namespace `ns` from submission queue `queue` to completion.

        A command is a dict: ``{"op": "write", "lba": L, "lbas": N, "pid": P}`` (``pid`` the
        FDP placement identifier, optional), ``read``/``trim`` with ``lba`` and ``lbas``,
        ``{"op": "append", "zslba": Z, "lbas": N}``, ``flush``, and the zone actions ``open``,
        ``close``, ``finish``, ``reset``, ``offline`` with ``zslba`` (or ``"all": True``),
        ``open_zrwa`` with ``zslba``, ``flush_zrwa`` with ``lba`` (the last LBA to commit).
        Returns the completions in submission order; refused commands are not raised.
        """
        text = self._device.submit_json(ns, json.dumps([dict(c) for c in commands]), queue)
        return [Completion(**c) for c in json.loads(text)]

    def _one(self, ns: int, command: dict[str, Any]) -> Completion:
        (done,) = self.submit(ns, [command])
        if not done.success:
            raise NvmeStatusError(command, done)
        return done

    def write(self, ns: int, lba: int, lbas: int = 1, *, pid: int = 0) -> Completion:
        """Write of `lbas` LBAs at `lba` (on a zoned namespace: at its zone's write pointer)."""
        return self._one(ns, {"op": "write", "lba": lba, "lbas": lbas, "pid": pid})

    def append(self, ns: int, zslba: int, lbas: int = 1) -> int:
        """Zone Append to the zone starting at `zslba`; returns the first LBA written."""
        done = self._one(ns, {"op": "append", "zslba": zslba, "lbas": lbas})
        assert done.lba is not None
        return done.lba

    def read(self, ns: int, lba: int, lbas: int = 1) -> Completion:
        """Read of `lbas` LBAs at `lba`."""
        return self._one(ns, {"op": "read", "lba": lba, "lbas": lbas})

    def trim(self, ns: int, lba: int, lbas: int = 1) -> Completion:
        """Dataset Management deallocate (no effect on a zoned namespace)."""
        return self._one(ns, {"op": "trim", "lba": lba, "lbas": lbas})

    def flush(self, ns: int) -> Completion:
        """Flush."""
        return self._one(ns, {"op": "flush"})

    def _zone(self, action: str, ns: int, zslba: int, all: bool) -> Completion:
        return self._one(ns, {"op": action, "zslba": zslba, "all": all})

    def open(self, ns: int, zslba: int = 0, *, all: bool = False) -> Completion:
        """Open Zone (explicitly opened; `all`: every closed zone)."""
        return self._zone("open", ns, zslba, all)

    def close(self, ns: int, zslba: int = 0, *, all: bool = False) -> Completion:
        """Close Zone (`all`: every open zone)."""
        return self._zone("close", ns, zslba, all)

    def finish(self, ns: int, zslba: int = 0, *, all: bool = False) -> Completion:
        """Finish Zone: to Full (`all`: every active zone)."""
        return self._zone("finish", ns, zslba, all)

    def reset(self, ns: int, zslba: int = 0, *, all: bool = False) -> Completion:
        """Reset Zone: erases its data, back to Empty (`all`: every written zone)."""
        return self._zone("reset", ns, zslba, all)

    def open_zrwa(self, ns: int, zslba: int) -> Completion:
        """Open Zone with ZRWA allocation (an empty zone of a namespace with a ``zrwa`` section):
        writes may then go anywhere in the window after its write pointer, in any order."""
        return self._one(ns, {"op": "open_zrwa", "zslba": zslba})

    def flush_zrwa(self, ns: int, lba: int) -> Completion:
        """Flush Explicit ZRWA Range: commits the window up to and including `lba` (rounded
        to the flush granularity) and moves the write pointer past it."""
        return self._one(ns, {"op": "flush_zrwa", "lba": lba})

    def report_zones(self, ns: int, state: str | None = None) -> list[Zone]:
        """Report Zones of namespace `ns`: every zone, or those in `state` (e.g. ``"full"``)."""
        text = self._device.report_zones_json(ns, state or "")
        return [Zone(**z) for z in json.loads(text)]

    def fdp(self, ns: int) -> FdpLog:
        """The FDP logs of namespace `ns` (media bytes = host bytes + the bytes GC moved)."""
        log = json.loads(self._device.fdp_json(ns))
        return FdpLog(
            **log["stats"],
            events=log["events"],
            events_dropped=log["events_dropped"],
            handles=log["handles"],
        )

    def update_handle(self, ns: int, pid: int) -> None:
        """Reclaim Unit Handle Update of placement identifier `pid` (raises on a refusal)."""
        status = self._device.update_handle(ns, pid)
        if status != "success":
            done = Completion(0, status, 0, False, None, 0, 0)
            raise NvmeStatusError({"op": "update_handle", "pid": pid}, done)

    def report(self) -> dict[str, Any]:
        """``{"nvme": …, "ssd": …, "now_ns": …}``: the reports of ``nandlab run``, and the time."""
        report: dict[str, Any] = json.loads(self._device.report_json())
        return report


def open_device(config: Config) -> Device:
    """The device of a stack config (path, TOML text or dict) with ``[ssd.nvme]``."""
    origin, text = _config_text(config)
    base = "."
    if origin not in ("config dict", "config text"):
        from pathlib import Path

        base = str(Path(origin).parent)
    return Device(NvmeDevice(origin, text, base))
