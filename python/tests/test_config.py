"""nandlab.RunConfig: attribute access over a stack config, TOML in and out, the CLI's checks."""

import tomllib
from pathlib import Path

import pytest

import nandlab

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ssd-random-write.toml"


def test_a_config_from_toml_reads_and_writes_as_attributes() -> None:
    cfg = nandlab.RunConfig.from_toml(EXAMPLE)
    assert cfg.run.seed == 1
    assert cfg.ssd.gc.policy == "greedy"
    assert cfg.nand.geometry.blocks_per_plane == 64
    cfg.ssd.op_fraction = 0.4
    cfg.workload.request_count = 2000
    assert cfg["ssd"]["op_fraction"] == 0.4
    assert tomllib.loads(cfg.to_toml())["workload"]["request_count"] == 2000
    with pytest.raises(AttributeError, match="polcy"):
        _ = cfg.ssd.gc.polcy


def test_a_config_runs_like_its_file_and_round_trips_through_toml() -> None:
    cfg = nandlab.RunConfig.from_toml(EXAMPLE)
    assert nandlab.RunConfig.from_toml(cfg.to_toml()) == cfg
    assert cfg == tomllib.loads(EXAMPLE.read_text())
    a = nandlab.run_ssd(cfg, progress=False)
    b = nandlab.run_ssd(EXAMPLE, progress=False)
    assert a.report == b.report


def test_bad_keys_raise_the_clis_message_naming_them() -> None:
    data = tomllib.loads(EXAMPLE.read_text())
    data["ssd"]["gc"]["polcy"] = "greedy"
    with pytest.raises(ValueError, match=r"key `ssd\.gc\.polcy`: unknown field `polcy`"):
        nandlab.RunConfig(data)
    cfg = nandlab.RunConfig.from_toml(EXAMPLE)
    cfg.ssd.op_fraction = -1.0
    with pytest.raises(ValueError, match=r"ssd\.op_fraction"):
        cfg.validate()
    cfg.ssd.op_fraction = 0.25
    cfg.workload.read_fraction = 1.5
    with pytest.raises(ValueError, match="read_fraction"):
        cfg.validate()
    cfg.workload.read_fraction = 0.0
    cfg["precondition"] = {"fill_fraction": 1.5, "random_overwrites": 0}
    with pytest.raises(ValueError, match=r"precondition\.fill_fraction"):
        cfg.validate()
    with pytest.raises(ValueError, match="config text"):
        nandlab.RunConfig.from_toml("[run]\nseed = [1,")


def test_resolved_fills_in_the_defaults() -> None:
    cfg = nandlab.RunConfig(
        nand={"preset": "slc"},
        workload={
            "kind": "synthetic",
            "pattern": "random",
            "read_fraction": 0.5,
            "request_size_bytes": 4096,
            "span_bytes": 0,
            "request_count": 10,
        },
    )
    resolved = cfg.resolved()
    assert resolved["run"]["seed"] == 0
    assert resolved["ssd"]["queue_depth"] == 32  # the resolved controller config
    assert resolved["nand"]["geometry"]["page_size_bytes"] > 0
    assert "ssd" not in cfg


def test_a_config_file_whose_name_contains_an_equals_sign_is_read_as_a_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "op=0.25.toml"
    path.write_text(EXAMPLE.read_text())
    cfg = nandlab.RunConfig.from_toml(str(path))
    assert cfg.ssd.op_fraction == 0.25
