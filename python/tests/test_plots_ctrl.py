from pathlib import Path

import pytest
from figure_checks import check_paper_figure, declares_paper

import nandlab
from nandlab import plots


@pytest.fixture(scope="module")
def suspend(tmp_path_factory: pytest.TempPathFactory) -> nandlab.Reproduction:
    """A quick run (under a second)."""
    return nandlab.reproduce("ctrl-suspend", tmp_path_factory.mktemp("ctrl") / "s", "quick")


def test_suspend_figure_has_every_policy_the_reads_only_line_and_the_paper(
    suspend: nandlab.Reproduction, tmp_path: Path
) -> None:
    fig = plots.plot(suspend.out)
    check_paper_figure(
        fig,
        tmp_path / "suspend.png",
        "nandlab controller: read scheduling",
        declares_paper(suspend),
    )
    legend = fig.axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert {"FIFO", "read priority (RPS)", "P/E suspension"} <= set(labels)
    assert "reads only (no P/E contention)" in labels
    assert any("0.754" in label for label in labels)
    df = suspend.curve("latency")
    assert set(df["reads"]) == {"fifo", "priority", "suspend", "reads-only"}
    assert suspend.paper_value("read_latency_reduction_vs_fifo") == pytest.approx(0.754)
