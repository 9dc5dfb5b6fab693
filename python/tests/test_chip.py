import pytest

import nandlab


def test_chip_run_returns_summary_and_tables() -> None:
    r = nandlab.chip("mlc1", "srd", requests=200, dies=2)
    assert r.summary["requests"] == 200
    assert r.summary["throughput_mb_per_s"] > 0
    stages = r.stages()
    assert list(stages.columns) == [
        "stage",
        "time_us",
        "time_fraction",
        "energy_uj",
        "energy_fraction",
    ]
    assert set(stages["stage"]) >= {
        "CLE",
        "ALE",
        "TIR",
        "TOR",
        "TIN",
        "TON",
        "BER",
        "STATUS",
    }
    assert abs(stages["time_fraction"].sum() - 1.0) < 1e-9
    kinds = r.op_kinds()
    assert "latency_p99_us" in kinds.columns
    cdf = r.latency_cdf()
    assert list(cdf.columns) == ["kind", "latency_us", "fraction"]
    assert cdf["fraction"].iloc[-1] == 1.0


def test_single_legacy_read_matches_the_hand_computed_time() -> None:
    r = nandlab.chip("mlc1", "srd", requests=1, queue_depth=1)
    # 175 ns commands + 50 us TON + 2048 x 25 ns TOR
    assert r.summary["sim_time_us"] == pytest.approx(101.375)


def test_bad_values_raise_value_error_naming_the_key() -> None:
    with pytest.raises(ValueError, match="unknown preset `nope`"):
        nandlab.chip("nope")
    with pytest.raises(ValueError, match="planes_per_die"):
        nandlab.chip(planes=0)
    with pytest.raises(ValueError, match=r"policy|scheduler|variant"):
        nandlab.chip(scheduler="random")


def test_same_seed_same_result() -> None:
    a = nandlab.chip("mlc1", "msnfs", requests=300, dies=4, seed=5)
    b = nandlab.chip("mlc1", "msnfs", requests=300, dies=4, seed=5)
    assert a.report == b.report


def test_presets_are_listed_with_sources() -> None:
    names = nandlab.preset_names()
    assert {"slc", "mlc1", "mlc2", "qdp-slc"} <= set(names)
    assert "source" in nandlab.preset_toml("qdp-slc")
