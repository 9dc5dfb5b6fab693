"""nandlab.run and nandlab.sweep: stack runs, sweep points, the same CSV serially, on a process
pool, on a real Dask LocalCluster (2 process workers) and from `nandlab sweep`."""

import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from cli import NANDLAB

import nandlab
from nandlab.sweep import points

REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "examples" / "ssd-random-write.toml"
GRID = {"ssd.gc.policy": ["fifo", "greedy"], "ssd.op_fraction": [0.15, 0.25]}


@pytest.fixture(scope="module")
def serial() -> str:
    frame = nandlab.sweep(BASE, GRID)
    assert list(frame.columns[:3]) == ["point", "ssd.gc.policy", "ssd.op_fraction"]
    assert len(frame) == 4
    # more spare space, less write amplification, for both policies
    for policy in ("fifo", "greedy"):
        rows = frame[frame["ssd.gc.policy"] == policy].sort_values("ssd.op_fraction")
        assert rows["waf"].iloc[0] > rows["waf"].iloc[1]
    assert frame.attrs["units"]["waf"] == "1"
    assert frame.attrs["units"]["write_lat_p99_us"] == "us"
    csv: str = frame.attrs["csv"]
    return csv


def test_points_are_every_combination_or_zipped() -> None:
    grid = points(GRID)
    assert grid[0] == [["ssd.gc.policy", "fifo"], ["ssd.op_fraction", 0.15]]
    assert grid[1] == [["ssd.gc.policy", "fifo"], ["ssd.op_fraction", 0.25]]
    zipped = points(GRID, zip=True)
    assert len(zipped) == 2
    with pytest.raises(ValueError, match="equal length"):
        points({"a": [1, 2], "b": [1]}, zip=True)


def test_a_process_pool_gives_the_serial_csv(serial: str) -> None:
    with ProcessPoolExecutor(max_workers=2) as pool:
        assert nandlab.sweep(BASE, GRID, executor=pool).attrs["csv"] == serial


def test_a_dask_local_cluster_gives_the_serial_csv(serial: str, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        frame = nandlab.sweep(BASE, GRID, executor=client.get_executor(), out=tmp_path)
    assert frame.attrs["csv"] == serial
    assert (tmp_path / "sweep.csv").read_text() == serial


def test_the_cli_writes_the_same_csv(serial: str, tmp_path: Path) -> None:
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(
        f'base = "{BASE}"\n[grid]\n"ssd.gc.policy" = ["fifo", "greedy"]\n'
        '"ssd.op_fraction" = [0.15, 0.25]\n'
    )
    out = tmp_path / "out"
    subprocess.run(
        [NANDLAB, "sweep", sweep_file, "--jobs", "2", "--out", out],
        check=True,
        capture_output=True,
    )
    assert (out / "sweep.csv").read_text() == serial


def test_a_bad_point_fails_before_anything_runs() -> None:
    with pytest.raises(ValueError, match=r"sweep point 1 .*lru"):
        nandlab.sweep(BASE, {"ssd.gc.policy": ["fifo", "lru"]})


def test_run_gives_the_metric_row_of_any_stack() -> None:
    r = nandlab.run(REPO / "examples" / "engine-codesign.toml", progress=False)
    assert r.outcome["kind"] == "engine"
    assert r.metrics["queries_per_s"] > 0
    s = nandlab.run(BASE, {"workload.request_count": 500}, progress=False)
    assert s.metrics["requests"] == 500


def test_the_engine_runs_on_a_named_ssd_preset() -> None:
    device = {
        "ssd": {"preset": "bench-ssd", "payload": "full"},
        "nand": {
            "geometry": {
                "channels": 1,
                "chips_per_channel": 1,
                "blocks_per_plane": 32,
                "pages_per_block": 32,
            }
        },
    }
    e = nandlab.engine(iaa=True, u2di=True, queries=2000, warmup_queries=0, device=device)
    assert e.queries_per_s > 0
    assert "bench-ssd" in nandlab.ssd_presets()
    with pytest.raises(ValueError, match="device"):
        nandlab.engine(iaa=True, u2di=True, channels=2, device="miyaji2014-ssd")


def test_metrics_are_declared_once_with_units() -> None:
    declared = nandlab.metrics()
    assert declared["queries_per_s"] == {
        "unit": "1/s",
        "description": "queries per simulated second",
        "kind": "engine",
    }
    r = nandlab.run(BASE, {"workload.request_count": 100}, progress=False)
    assert set(r.metrics) <= set(declared)


SIM_LOOKUP = REPO / "examples" / "ssd-sim-lookup.toml"


def test_run_drives_sim_lookups_and_every_answer_is_verified(tmp_path: Path) -> None:
    small = {"workload.request_count": 2000}
    r = nandlab.run(SIM_LOOKUP, small, out=tmp_path / "lookup", progress=False)
    assert r.outcome["kind"] == "sim_lookup"
    assert r.metrics["lookups"] == 2000
    assert r.metrics["verification_failures"] == 0
    assert r.metrics["hits"] == r.outcome["report"]["present_lookups"]
    assert r.metrics["lookups_per_s"] > 0
    assert r.outcome["report"]["counters"]["chip_searches"] == 2000
    assert r.outcome["device"]["sim"]["search"]["requests"] == 2000
    declared = nandlab.metrics()
    assert declared["lookups_per_s"]["kind"] == "sim_lookup"
    assert set(r.metrics) <= set(declared)
    # the same seed gives the same run; the files of `nandlab run --out`
    again = nandlab.run(SIM_LOOKUP, small, progress=False)
    assert again.metrics == r.metrics
    assert (tmp_path / "lookup" / "metrics.json").exists()
    assert (tmp_path / "lookup" / "report.json").exists()
    # batching under overload merges searches (paper 004 §IV-E)
    batched = nandlab.run(
        SIM_LOOKUP,
        {**small, "ssd.sim.batch_deadline_ns": 4000, "workload.interarrival_ns": 1000},
        progress=False,
    )
    assert batched.metrics["merged_searches"] > 0
    assert batched.metrics["chip_searches"] < 2000
    assert batched.metrics["verification_failures"] == 0


def test_bad_sim_lookup_keys_raise_value_errors_naming_them() -> None:
    with pytest.raises(ValueError, match=r"workload\.records"):
        nandlab.run(SIM_LOOKUP, {"workload.records": 100000}, progress=False)
    with pytest.raises(ValueError, match=r"workload\.lookups_per_s"):
        nandlab.run(SIM_LOOKUP, {"workload.lookups_per_s": 1000.0}, progress=False)
    with pytest.raises(ValueError, match=r"workload\.distribution"):
        nandlab.run(SIM_LOOKUP, {"workload.distribution": "pareto"}, progress=False)
    with pytest.raises(ValueError, match=r"use nandlab\.run"):
        nandlab.run_ssd(SIM_LOOKUP, progress=False)


@pytest.mark.parametrize("executor", ["x", 3, object()])
def test_a_wrong_executor_is_refused_before_any_point_runs(executor: object) -> None:
    # issue 31 item 6: an AttributeError once the first point was submitted
    with pytest.raises(TypeError, match=r"sweep\(\): executor must be a concurrent"):
        nandlab.sweep(BASE, GRID, executor=executor)  # type: ignore[arg-type]
