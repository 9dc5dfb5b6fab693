import subprocess
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli import NANDLAB

import nandlab
from nandlab.ssd import LATENCY_COLUMNS, to_toml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ssd-random-write.toml"


def small_config(gc: dict[str, Any] | None = None, **ssd: Any) -> dict[str, Any]:
    return {
        "run": {"seed": 7},
        "nand": {
            "preset": "slc",
            "geometry": {"page_size_bytes": 4096, "blocks_per_plane": 32},
        },
        "ssd": {"op_fraction": 0.25, "gc": {"policy": "greedy", **(gc or {})}, **ssd},
        "precondition": {"fill_fraction": 1.0, "random_overwrites": 2000},
        "workload": {
            "kind": "synthetic",
            "pattern": "random",
            "read_fraction": 0.3,
            "request_size_bytes": 4096,
            "span_bytes": 0,
            "request_count": 3000,
        },
    }


@pytest.fixture(scope="module")
def example() -> nandlab.SsdResult:
    return nandlab.run_ssd(EXAMPLE)


def test_run_from_a_path_gives_the_report_and_tables(example: nandlab.SsdResult) -> None:
    s = example.summary
    assert s["completed"] == s["submitted"] == 20_000
    assert s["waf"] > 1 and s["sim_time_us"] > 0
    assert s["write_iops"] > 0 and s["write_p99_us"] >= s["write_p50_us"] > 0
    assert "read_iops" not in s  # no reads in this workload
    latency = example.latency()
    assert list(latency.columns) == LATENCY_COLUMNS
    assert latency["op"].tolist() == ["write"]
    row = latency.iloc[0]
    assert row["p50_us"] <= row["p90_us"] <= row["p99_us"] <= row["p999_us"] <= row["max_us"]
    cdf = example.latency_cdf()
    assert list(cdf.columns) == ["op", "latency_us", "fraction"]
    assert set(cdf["op"]) == {"write"} and cdf["fraction"].iloc[-1] == 1.0
    assert cdf["latency_us"].is_monotonic_increasing


def test_valid_page_map_is_planes_by_blocks(example: nandlab.SsdResult) -> None:
    preset = tomllib.loads(nandlab.preset_toml("slc"))["geometry"]
    geometry = {**preset, **tomllib.loads(EXAMPLE.read_text())["nand"]["geometry"]}
    planes = (
        geometry["channels"]
        * geometry["chips_per_channel"]
        * geometry["dies_per_chip"]
        * geometry["planes_per_die"]
    )
    valid = example.valid_page_map()
    assert isinstance(valid, np.ndarray)
    assert valid.shape == (planes, geometry["blocks_per_plane"])
    assert valid.min() >= 0 and valid.max() <= geometry["pages_per_block"]
    # preconditioned full: every logical page is valid somewhere
    assert valid.sum() == example.summary["logical_pages"]
    histogram = example.erase_histogram()
    assert list(histogram.columns) == ["erase_count", "blocks"]
    assert histogram["blocks"].sum() == valid.size


def test_dict_and_toml_text_give_the_same_report_as_the_file(
    example: nandlab.SsdResult,
) -> None:
    config = tomllib.loads(EXAMPLE.read_text())
    assert nandlab.run_ssd(config).report == example.report
    assert nandlab.run_ssd(EXAMPLE.read_text()).report == example.report
    assert nandlab.run_ssd(str(EXAMPLE)).report == example.report


def test_same_config_twice_gives_identical_reports() -> None:
    a = nandlab.run_ssd(small_config())
    b = nandlab.run_ssd(small_config())
    assert a.report == b.report
    assert {"read", "write"} == set(a.latency()["op"])
    assert nandlab.run_ssd({**small_config(), "run": {"seed": 8}}).report != a.report


def test_bad_keys_and_values_raise_value_error_naming_them() -> None:
    with pytest.raises(ValueError, match=r"key `ssd\.gc\.polcy`: unknown field `polcy`"):
        nandlab.run_ssd(small_config(gc={"polcy": "greedy"}))
    with pytest.raises(ValueError, match=r"ssd\.op_fraction"):
        nandlab.run_ssd(small_config(op_fraction=-1.0))
    with pytest.raises(ValueError, match="unknown field `wrkload`"):
        nandlab.run_ssd({**small_config(), "wrkload": {}})
    with pytest.raises(ValueError, match="config text"):
        nandlab.run_ssd("[run]\nseed = [1,")
    with pytest.raises(FileNotFoundError, match=r"no-such\.toml"):
        nandlab.run_ssd("no-such.toml")


def test_toml_emitter_round_trips_through_tomllib() -> None:
    config = {
        "title": 'quote " and \\ and ü',
        "skipped": None,
        "n": 3,
        "x": 0.1,
        "flag": False,
        "list": [1, 2.5, "a"],
        "outer": {
            "inline": [{"k": 1, "v": "w"}],
            "inner": {"odd key": True, "deep": {"z": -4}},
            "after": 2,
        },
    }
    expected = {k: v for k, v in config.items() if v is not None}
    assert tomllib.loads(to_toml(config)) == expected
    with pytest.raises(TypeError, match="no TOML value for object"):
        to_toml({"bad": object()})


def test_report_files_are_byte_identical_from_cli_and_python(tmp_path: Path) -> None:
    nandlab.run_ssd(EXAMPLE, out=tmp_path / "py", progress=False)
    subprocess.run(
        [str(NANDLAB), "run", str(EXAMPLE), "--out", str(tmp_path / "cli")],
        check=True,
        capture_output=True,
    )
    files = [
        "report.json",
        "latency_cdf.csv",
        "erase_histogram.csv",
        "valid_page_map.csv",
        "timeseries.csv",
    ]
    for name in files:
        py, cli = (tmp_path / side / name for side in ("py", "cli"))
        assert py.read_bytes() == cli.read_bytes(), name
    assert not nandlab.run_ssd(EXAMPLE, progress=False).interrupted


def test_replay_preconditions_the_pages_a_trace_reads_before_writing(tmp_path: Path) -> None:
    """A read of a page never written cost 0 µs, so replays reported read p50 = 0 (issue 11);
    by default replay now writes those pages first, and says how many."""
    trace = tmp_path / "t.csv"
    trace.write_text(
        "arrival_ns,op,offset_bytes,size_bytes\n0,read,0,8192\n1000,write,65536,8192\n",
        encoding="utf-8",
    )
    on = nandlab.replay(trace, "native", progress=False)
    assert on.report["read_preconditioned_pages"] > 0
    assert on.summary["read_p50_us"] > 1.0
    off = nandlab.replay(trace, "native", precondition_reads=False, progress=False)
    assert off.report["read_preconditioned_pages"] == 0
    assert off.summary["read_p50_us"] == 0.0
    assert on.report["fitted_blocks_per_plane"] is None
    far = tmp_path / "far.csv"
    far.write_text(
        "arrival_ns,op,offset_bytes,size_bytes\n0,write,68719476736,4096\n", encoding="utf-8"
    )
    fitted = nandlab.replay(far, "native", fit_device=True, progress=False)
    assert fitted.report["fitted_blocks_per_plane"] > 0
    assert fitted.report["folded_requests"] == 0
