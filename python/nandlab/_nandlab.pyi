"""Type stubs of the private extension module (kept true by mypy.stubtest in the tests)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any, final

__all__ = [
    "NvmeDevice",
    "SqlConnection",
    "check_run_config",
    "cli_main",
    "experiment_plan",
    "experiments",
    "measure_point",
    "metric_defs",
    "preset_names",
    "preset_toml",
    "replay",
    "reproduce",
    "run_chip",
    "run_engine",
    "run_ssd",
    "run_stack",
    "run_tpcc",
    "sim_batch",
    "sim_eval",
    "sim_index",
    "sim_table1",
    "ssd_presets",
    "sweep_csv",
    "sweep_points",
    "version",
]

def version() -> str: ...
def cli_main(args: list[str], worker_exe: str | Path | None = None) -> int: ...
def run_chip(spec_json: str) -> str: ...
def reproduce(
    id: str,
    out: Path | str,
    scale: str,
    seed: int,
    progress: Callable[[int, int | None], object] | None = None,
    cache_dir: Path | str | None = None,
) -> str: ...
def experiment_plan(id: str, scale: str, seed: int, cache_dir: Path | str) -> str: ...
def measure_point(
    measure: str,
    point: str,
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
def run_tpcc(
    device: str,
    journal_mode: str,
    warehouses: int,
    terminals: int,
    transactions: int,
    seed: int,
    small: bool,
) -> str: ...
def sim_eval(spec_json: str) -> str: ...
def sim_batch(spec_json: str) -> str: ...
def sim_table1() -> str: ...
def sim_index(spec_json: str) -> str: ...
def experiments() -> str: ...
def preset_names() -> list[str]: ...
def preset_toml(name: str) -> str: ...

@final
class SqlConnection:
    """A SQLite database on a simulated SSD (wrapped by ``nandlab.sql``)."""

    def __new__(
        cls,
        device: str,
        journal_mode: str,
        seed: int | None = None,
        page_size_bytes: int | None = None,
        cache_size: int | None = None,
        synchronous: str | None = None,
        db_name: str = ...,
    ) -> SqlConnection: ...
    def execute(
        self, sql: str, params: list[Any]
    ) -> tuple[list[str], list[list[Any]], int, int]: ...
    def execute_script(self, sql: str) -> tuple[list[str], list[list[Any]], int, int]: ...
    @property
    def in_transaction(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def metrics_json(self) -> str: ...
    def reset_metrics(self) -> None: ...
    def device_report_json(self) -> str: ...
    def files(self) -> list[tuple[str, int]]: ...
    def close(self) -> None: ...

@final
class NvmeDevice:
    """An SSD with its NVMe host interface (wrapped by ``nandlab.nvme``)."""

    def __new__(cls, origin: str, config_toml: str, base_dir: str = ...) -> NvmeDevice: ...
    def namespaces_json(self) -> str: ...
    def submit_json(self, ns: int, commands_json: str, queue: int = 0) -> str: ...
    def report_zones_json(self, ns: int, state: str = ...) -> str: ...
    def fdp_json(self, ns: int) -> str: ...
    def update_handle(self, ns: int, pid: int) -> str: ...
    def report_json(self) -> str: ...
