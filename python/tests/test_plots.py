from dataclasses import replace
from pathlib import Path

import pytest
from figure_checks import check_bar_labels, legend_texts, png_size
from matplotlib.figure import Figure

import nandlab
from nandlab import plots
from nandlab.plots._style import label_bars

NFS = sorted(e.id for e in nandlab.list_experiments() if e.id.startswith("nfs-"))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, nandlab.Reproduction]:
    root = tmp_path_factory.mktemp("results")
    return {id: nandlab.reproduce(id, root / id, scale="quick") for id in NFS}


def test_every_experiment_has_a_figure() -> None:
    ids = {e.id for e in nandlab.list_experiments()}
    assert ids <= set(plots.FIGURES), sorted(ids - set(plots.FIGURES))


def test_every_nfs_experiment_has_a_figure() -> None:
    assert len(NFS) == 8
    assert set(NFS) <= set(plots.FIGURES)


@pytest.mark.parametrize("id", NFS)
def test_figure_renders_to_png_with_labelled_axes(
    id: str, results: dict[str, nandlab.Reproduction], tmp_path: Path
) -> None:
    fig = plots.FIGURES[id](results[id].out)
    path = plots.save(fig, tmp_path / f"{id}.png")
    width, height = png_size(path)
    assert width >= 1000 and height >= 400
    assert path.stat().st_size > 30_000
    suptitle = fig.get_suptitle()
    assert suptitle.startswith("NANDFlashSim ") and ("Fig" in suptitle or "Table" in suptitle)
    for ax in fig.axes:
        xlabel = ax.get_xlabel() or " ".join(c.get_xlabel() for c in ax.child_axes)
        assert xlabel.strip() and ax.get_ylabel().strip() and ax.get_title().strip()
    texts = legend_texts(fig)
    assert texts
    if any(k.startswith("paper_") for k in results[id].metrics):
        assert any("paper" in t for t in texts), texts


def test_plot_dispatches_on_the_experiment_of_the_summary(
    results: dict[str, nandlab.Reproduction],
) -> None:
    from_folder = plots.plot(str(results["nfs-energy"].out))
    from_reproduction = plots.plot(results["nfs-energy"])
    assert from_folder.get_suptitle() == from_reproduction.get_suptitle()
    assert "Table III" in from_folder.get_suptitle()


def test_migration_marks_paper_speedups_when_the_summary_has_them(
    results: dict[str, nandlab.Reproduction],
) -> None:
    r = results["nfs-migration"]
    assert r.paper_value("twox_cache_speedup") == 2.0  # declared by the experiment (R-N5)
    assert any("paper" in t for t in legend_texts(plots.nfs_migration(r)))
    metrics = {k: v for k, v in r.metrics.items() if not k.startswith("paper_")}
    without = replace(r, metrics=metrics, paper=[])
    assert not any("paper" in t for t in legend_texts(plots.nfs_migration(without)))


def test_new_experiments_register_their_figure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(plots, "FIGURES", dict(plots.FIGURES))
    (tmp_path / "summary.json").write_text('{"experiment": "ftl-test", "waf": 1.5}')

    @plots.register("ftl-test")
    def waf(source: plots.Source) -> Figure:
        fig = Figure()
        fig.suptitle(f"waf {plots.load(source).metrics['waf']}")
        return fig

    assert plots.plot(tmp_path).get_suptitle() == "waf 1.5"


def test_errors_name_the_folder_and_the_experiment(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no summary\.json"):
        plots.plot(tmp_path)
    (tmp_path / "summary.json").write_text('{"experiment": "nope-unknown"}')
    with pytest.raises(ValueError, match="no figure for experiment `nope-unknown`"):
        plots.plot(tmp_path)
    (tmp_path / "summary.json").write_text('{"waf": 1}')
    with pytest.raises(ValueError, match='no "experiment" key'):
        plots.load(tmp_path)


def test_bar_labels_must_print_the_height_of_the_bar_they_sit_on() -> None:
    fig = Figure()
    ax = fig.add_subplot()
    ax.bar([0.0, 1.0], [10.0, 0.25], 0.5)
    label_bars(ax, [0.0, 1.0], [10.0, 0.25], "{:.1f}")
    ax.bar([2.0], [0.32], 0.5)
    label_bars(ax, [2.0], [0.32], "{:+.0%}")
    assert check_bar_labels(fig) == 3
    # the labels of two bars swapped: caught
    fig = Figure()
    ax = fig.add_subplot()
    ax.bar([0.0, 1.0], [10.0, 20.0], 0.5)
    label_bars(ax, [0.0, 1.0], [20.0, 10.0], "{:.1f}")
    with pytest.raises(AssertionError):
        check_bar_labels(fig)
