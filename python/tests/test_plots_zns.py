from pathlib import Path

import pytest
from figure_checks import check_paper_figure, declares_paper

import nandlab
from nandlab import plots


@pytest.fixture(scope="module")
def tax(tmp_path_factory: pytest.TempPathFactory) -> nandlab.Reproduction:
    """A quick run (about a second)."""
    return nandlab.reproduce("zns-block-tax", tmp_path_factory.mktemp("zns") / "t", "quick")


@pytest.fixture(scope="module")
def cachelib(tmp_path_factory: pytest.TempPathFactory) -> nandlab.Reproduction:
    """A quick run (a few seconds)."""
    return nandlab.reproduce("fdp-cachelib", tmp_path_factory.mktemp("fdp") / "c", "quick")


def test_block_tax_figure_has_every_interface_and_the_paper(
    tax: nandlab.Reproduction, tmp_path: Path
) -> None:
    fig = plots.plot(tax.out)
    check_paper_figure(
        fig, tmp_path / "tax.png", "nandlab ZNS vs block interface", declares_paper(tax)
    )
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert {"block SSD (7 % OP)", "block SSD (28 % OP)", "ZNS SSD (0 % OP)"} <= set(labels)
    assert any("2x" in label for label in labels)
    assert tax.paper_value("write_throughput_zns_over_block") == pytest.approx(2.0)


def test_cachelib_figure_has_both_placements_and_the_paper(
    cachelib: nandlab.Reproduction, tmp_path: Path
) -> None:
    fig = plots.plot(cachelib.out)
    check_paper_figure(
        fig, tmp_path / "fdp.png", "nandlab FDP for a flash cache", declares_paper(cachelib)
    )
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "without FDP" in labels
    assert any("dlwa fdp 1x" in label for label in labels)
    df = cachelib.curve("dlwa")
    assert set(df["fdp"]) == {"on", "off"}
    assert len(df) == 6
