from pathlib import Path

import pytest

import nandlab

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "crates" / "workload" / "tests" / "data"


def test_preset_is_a_dict_that_round_trips_into_a_chip_run() -> None:
    dev = nandlab.preset("mlc1")
    assert dev["geometry"]["page_size_bytes"] == 2048
    assert "Table I" in dev["source"]
    dev["geometry"]["dies_per_chip"] = 4
    dev["name"] = "mlc1-qdp"
    r = nandlab.chip(device=dev, workload="srd", requests=200)
    assert r.spec["preset"] == "mlc1-qdp"
    assert r.summary["requests"] == 200


def test_a_bad_device_dict_names_the_key() -> None:
    dev = nandlab.preset("slc")
    dev["timing"]["erase_time_us"] = 1.0
    with pytest.raises(ValueError, match="erase_time_us"):
        nandlab.chip(device=dev)
    dev = nandlab.preset("slc")
    dev["geometry"]["planes_per_die"] = 0
    with pytest.raises(ValueError, match="planes_per_die"):
        nandlab.chip(device=dev)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("msr_sample.csv", "msr"),
        ("blkparse_sample.txt", "blkparse"),
        ("disksim_sample.trace", "disksim"),
        ("native_sample.csv", "native"),
    ],
)
def test_replay_each_trace_format(name: str, fmt: str) -> None:
    r = nandlab.replay(DATA / name, fmt, REPO / "examples" / "device-mlc.toml")
    assert r.report["completed"] == r.report["submitted"] > 0
    assert r.report["folded_requests"] >= 0


def test_replay_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="spc"):
        nandlab.replay(DATA / "msr_sample.csv", "spc")
    bad = tmp_path / "bad.csv"
    bad.write_text("128166372003061629,hm,0,Read,4096,4096,100\nnot,a,valid,line\n")
    with pytest.raises(ValueError, match=r"bad\.csv:2"):
        nandlab.replay(bad, "msr")
