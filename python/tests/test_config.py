"""nandlab.RunConfig: attribute access over a run config, TOML in and out, the CLI's checks."""

import tomllib
from pathlib import Path

import pytest

import nandlab

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ssd-random-write.toml"


def test_a_config_from_toml_reads_and_writes_as_attributes() -> None:
    cfg = nandlab.RunConfig.from_toml(EXAMPLE)
    assert cfg.seed == 1
    assert cfg.ftl.gc_policy == "greedy"
    assert cfg.device.overrides.geometry.blocks_per_plane == 64
    cfg.ftl.op_fraction = 0.4
    cfg.workload.request_count = 2000
    assert cfg["ftl"]["op_fraction"] == 0.4
    assert tomllib.loads(cfg.to_toml())["workload"]["request_count"] == 2000
    with pytest.raises(AttributeError, match="gc_polcy"):
        _ = cfg.ftl.gc_polcy


def test_a_config_runs_like_its_file_and_round_trips_through_toml() -> None:
    cfg = nandlab.RunConfig.from_toml(EXAMPLE)
    assert nandlab.RunConfig.from_toml(cfg.to_toml()) == cfg
    assert cfg == tomllib.loads(EXAMPLE.read_text())
    a = nandlab.run_ssd(cfg, progress=False)
    b = nandlab.run_ssd(EXAMPLE, progress=False)
    assert a.report == b.report


def test_bad_keys_raise_the_clis_message_naming_them() -> None:
    data = tomllib.loads(EXAMPLE.read_text())
    data["ftl"]["gc_polcy"] = "greedy"
    with pytest.raises(ValueError, match="unknown field `gc_polcy`"):
        nandlab.RunConfig(data)
    cfg = nandlab.RunConfig.from_toml(EXAMPLE)
    cfg.ftl.op_fraction = -1.0
    with pytest.raises(ValueError, match=r"ftl\.op_fraction"):
        cfg.validate()
    cfg.ftl.op_fraction = 0.25
    cfg.workload.read_fraction = 1.5
    with pytest.raises(ValueError, match="read_fraction"):
        cfg.validate()
    cfg.workload.read_fraction = 0.0
    cfg["precondition"] = {"fill_fraction": 1.5, "random_overwrites": 0}
    with pytest.raises(ValueError, match=r"precondition\.fill_fraction"):
        cfg.validate()
    with pytest.raises(ValueError, match="config text"):
        nandlab.RunConfig.from_toml("seed = [1,")


def test_resolved_fills_in_the_defaults() -> None:
    cfg = nandlab.RunConfig(
        device={"preset": "slc"},
        workload={
            "pattern": "random",
            "read_fraction": 0.5,
            "request_size_bytes": 4096,
            "span_bytes": 0,
            "request_count": 10,
        },
    )
    resolved = cfg.resolved()
    assert resolved["seed"] == 0
    assert "queue_depth" in resolved["ftl"]
    assert "ftl" not in cfg
