"""Progress callbacks and Ctrl-C: a KeyboardInterrupt during a run raises nandlab.Interrupted
holding a usable result of the work finished."""

import _thread
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import nandlab

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ssd-random-write.toml"
REQUESTS = 20_000  # request_count of EXAMPLE


def long_config() -> str:
    return EXAMPLE.read_text().replace(f"request_count = {REQUESTS}", "request_count = 1000000000")


def test_progress_callback_sees_increasing_done_up_to_the_total() -> None:
    ticks: list[tuple[int, int | None]] = []
    r = nandlab.run_ssd(EXAMPLE, progress=lambda done, total: ticks.append((done, total)))
    assert not r.interrupted
    assert len(ticks) >= 2
    # two phases, each counted from 0 to its total: the preconditioning, then the requests
    phases: dict[int | None, list[int]] = {}
    for done, total in ticks:
        phases.setdefault(total, []).append(done)
    for total, done in phases.items():
        assert done == sorted(done), total
    assert list(phases)[-1] == REQUESTS
    assert ticks[-1] == (REQUESTS, REQUESTS)


LONG = 1_000_000_000  # request_count of long_config()


def raise_keyboard_interrupt(done: int, total: int | None) -> None:
    raise KeyboardInterrupt


def raise_sigint(done: int, total: int | None) -> None:
    signal.raise_signal(signal.SIGINT)


def in_the_requests(stop: Callable[[int, int | None], None]) -> Callable[[int, int | None], None]:
    """`stop` once the run is in its requests (past the preconditioning)."""

    def callback(done: int, total: int | None) -> None:
        if total == LONG:
            stop(done, total)

    return callback


def test_a_keyboard_interrupt_in_the_preconditioning_measures_nothing() -> None:
    def stop(done: int, total: int | None) -> None:
        raise KeyboardInterrupt

    with pytest.raises(nandlab.Interrupted) as caught:
        nandlab.run_ssd(EXAMPLE, progress=stop)
    r = caught.value.result
    assert isinstance(r, nandlab.SsdResult) and r.interrupted
    assert r.summary["completed"] == 0


@pytest.mark.parametrize("callback", [raise_keyboard_interrupt, raise_sigint])
def test_a_keyboard_interrupt_keeps_the_requests_completed(
    callback: Callable[[int, int | None], None], tmp_path: Path
) -> None:
    with pytest.raises(nandlab.Interrupted) as caught:
        nandlab.run_ssd(long_config(), out=tmp_path, progress=in_the_requests(callback))
    assert isinstance(caught.value, KeyboardInterrupt)
    r = caught.value.result
    assert isinstance(r, nandlab.SsdResult) and r.interrupted
    assert r.summary["submitted"] == r.summary["completed"]
    assert 0 < r.summary["completed"] < LONG
    assert r.latency()["requests"].sum() == r.summary["completed"]
    assert '"interrupted": true' in (tmp_path / "report.json").read_text()


def test_ctrl_c_stops_a_long_run_without_a_callback() -> None:
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(nandlab.Interrupted) as caught:
            nandlab.run_ssd(long_config(), progress=False)
    finally:
        timer.cancel()
    r = caught.value.result
    assert r.interrupted and 0 < r.summary["completed"] < 1_000_000_000


def test_other_callback_errors_stop_the_run_and_propagate() -> None:
    def fail(done: int, total: int | None) -> None:
        raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed"):
        nandlab.run_ssd(EXAMPLE, progress=fail)


def test_an_interrupted_engine_run_keeps_its_metrics() -> None:
    with pytest.raises(nandlab.Interrupted) as caught:
        nandlab.engine(iaa=True, u2di=True, progress=raise_keyboard_interrupt)
    e = caught.value.result
    assert isinstance(e, nandlab.EngineResult) and e.interrupted
    assert list(e.queries().index) == ["insert", "delete", "update"]


def test_an_interrupted_reproduction_writes_its_summary(tmp_path: Path) -> None:
    with pytest.raises(nandlab.Interrupted) as caught:
        nandlab.reproduce(
            "miyaji-ablation", tmp_path, scale="quick", progress=raise_keyboard_interrupt
        )
    rep = caught.value.result
    assert isinstance(rep, nandlab.Reproduction) and rep.interrupted
    assert rep.experiment == "miyaji-ablation"
    assert "interrupted" not in rep.metrics
    assert len(rep.curve("ablation")) == 0
    assert '"interrupted": true' in (tmp_path / "summary.json").read_text()


def test_ctrl_c_stops_a_chip_run() -> None:
    """`nandlab.chip()` ignored Ctrl-C: a long chip run went on to its end."""
    import time

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            nandlab.chip("mlc1", "swr", requests=200_000_000)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30
