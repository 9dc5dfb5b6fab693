from pathlib import Path

import pytest
from figure_checks import check_paper_figure, legend_texts

import nandlab
from nandlab import plots


@pytest.fixture(scope="module")
def updates(tmp_path_factory: pytest.TempPathFactory) -> nandlab.Reproduction:
    """A quick run (a couple of seconds)."""
    return nandlab.reproduce("sim-ssd-updates", tmp_path_factory.mktemp("simssd") / "u", "quick")


def test_sim_ssd_figure_has_both_paths_the_speedup_and_the_paper_band(
    updates: nandlab.Reproduction, tmp_path: Path
) -> None:
    fig = plots.plot(updates.out)
    check_paper_figure(fig, tmp_path / "updates.png", "nandlab SiM on the SSD", True)
    labels = legend_texts(fig)
    assert {"SiM (search + gather)", "full-page baseline"} <= set(labels)
    assert "paper: 3-9x (write-intensive)" in labels
    df = updates.curve("updates")
    assert set(df["path"]) == {"sim", "full-page"}
    assert list(sorted(set(df["page_cache_coverage"]))) == [0.0, 0.1, 0.25, 0.5]
    assert (df["verification_failures"] == 0).all()
    assert updates.paper_value("speedup_write_intensive_min") == pytest.approx(3.0)
