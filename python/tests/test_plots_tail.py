from pathlib import Path

import pytest
from figure_checks import check_paper_figure, declares_paper, legend_texts

import nandlab
from nandlab import plots


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tail")


def test_tail_figure_has_every_point(out: Path, tmp_path: Path) -> None:
    r = nandlab.reproduce("ctrl-tail", out / "tail", "quick")
    fig = plots.plot(r.out)
    check_paper_figure(
        fig, tmp_path / "tail.png", "nandlab controller: tail latency", declares_paper(r)
    )
    labels = legend_texts(fig)
    assert {"blocking GC", "interleaved GC", "interleaved + P/E suspend"} <= set(labels)
    assert set(r.curve("tails")["point"]) == {
        "blocking",
        "interleaved",
        "suspend",
        "slc",
        "slc_idle",
    }


def test_slc_cliff_figure_shows_both_patterns_and_the_paper(out: Path, tmp_path: Path) -> None:
    r = nandlab.reproduce("ctrl-slc-cliff", out / "cliff", "quick")
    fig = plots.plot(r.out)
    check_paper_figure(
        fig, tmp_path / "cliff.png", "nandlab SLC cache: the write cliff", declares_paper(r)
    )
    assert any("0.30" in t for t in legend_texts(fig))
    assert r.paper_value("seq_write_after_over_before") == pytest.approx(160 / 530)


def test_dftl_figure_has_the_cache_curve_and_the_all_in_dram_line(
    out: Path, tmp_path: Path
) -> None:
    r = nandlab.reproduce("ctrl-dftl", out / "dftl", "quick")
    fig = plots.plot(r.out)
    check_paper_figure(fig, tmp_path / "dftl.png", "nandlab DFTL: response time", declares_paper(r))
    assert "whole table in DRAM" in legend_texts(fig)
    assert len(r.curve("cache_size")) == 8
