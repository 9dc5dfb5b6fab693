"""Type stubs of the private extension module (kept true by mypy.stubtest in the tests)."""

from collections.abc import Callable
from pathlib import Path

__all__ = [
    "check_run_config",
    "experiments",
    "metric_defs",
    "preset_names",
    "preset_toml",
    "replay",
    "reproduce",
    "run_chip",
    "run_engine",
    "run_ssd",
    "run_stack",
    "ssd_presets",
    "sweep_csv",
    "sweep_points",
    "version",
]

def version() -> str: ...
def run_chip(spec_json: str) -> str: ...
def reproduce(
    id: str,
    out: Path | str,
    scale: str,
    seed: int,
    progress: Callable[[int, int | None], object] | None = None,
) -> str: ...
def run_ssd(
    origin: str,
    config_toml: str,
    out: Path | str | None = None,
    progress: Callable[[int, int | None], object] | None = None,
) -> str: ...
def check_run_config(origin: str, config_toml: str, overrides_json: str = ...) -> str: ...
def run_stack(
    origin: str,
    config_toml: str,
    overrides_json: str,
    out: Path | str | None = None,
    progress: Callable[[int, int | None], object] | None = None,
) -> str: ...
def sweep_points(grid_json: str, zip: bool) -> str: ...
def sweep_csv(keys_json: str, rows_json: str) -> str: ...
def ssd_presets() -> str: ...
def metric_defs() -> str: ...
def run_engine(
    spec_json: str, progress: Callable[[int, int | None], object] | None = None
) -> str: ...
def replay(
    trace: Path | str,
    format: str,
    device_toml: str,
    closed_loop: bool,
    seed: int,
    out: Path | str | None = None,
    progress: Callable[[int, int | None], object] | None = None,
    precondition_reads: bool = True,
    fit_device: bool = False,
) -> str: ...
def experiments() -> str: ...
def preset_names() -> list[str]: ...
def preset_toml(name: str) -> str: ...
