import json
from pathlib import Path

from figure_checks import check_paper_figure, declares_paper

from nandlab import plots


def write_results(folder: Path, experiment: str, curve: str, column: str) -> None:
    (folder / "summary.json").write_text(json.dumps({"experiment": experiment}))
    rows = [f"distribution,read_percent,coverage_percent,{column}"]
    for distribution in ("uniform", "zipf0.9"):
        for read in (20, 60, 100):
            for coverage in (0, 25, 75):
                value = (
                    "NaN"
                    if coverage == 75 and read == 100
                    else f"{1 + read / 100 - coverage / 100:.3f}"
                )
                rows.append(f"{distribution},{read},{coverage},{value}")
    (folder / f"{curve}.csv").write_text("\n".join(rows) + "\n")


def test_sim_heatmaps_have_a_panel_per_distribution_and_annotated_cells(tmp_path: Path) -> None:
    for experiment, curve, column in [
        ("sim-speedup", "speedup", "speedup"),
        ("sim-energy", "energy", "saving"),
        ("sim-latency", "latency", "median_reduction"),
    ]:
        folder = tmp_path / experiment
        folder.mkdir()
        write_results(folder, experiment, curve, column)
        fig = plots.plot(folder)
        check_paper_figure(fig, folder / "fig.png", "nandlab SiM", False)
        panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
        assert [ax.get_title() for ax in panels] == ["uniform", "zipf0.9"]
        texts = [t.get_text() for t in panels[0].texts]
        assert len(texts) == 9 and "cache" in texts


def test_the_other_sim_figures_draw_real_quick_runs(tmp_path: Path) -> None:
    import nandlab

    for id, panels, has_paper in [
        ("sim-table1", 3, True),
        ("sim-batch", 2, True),
        ("sim-fullpage", 2, False),
    ]:
        run = nandlab.reproduce(id, tmp_path / id, scale="quick")
        fig = plots.plot(run.out)
        assert declares_paper(run) == has_paper, id
        check_paper_figure(fig, tmp_path / f"{id}.png", "nandlab SiM", has_paper)
        assert len(fig.axes) == panels, id
