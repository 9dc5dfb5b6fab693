import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from figure_checks import check_bar_labels, check_paper_figure, stars
from matplotlib.patches import Rectangle

import nandlab
from nandlab import plots

MIYAJI = sorted(e.id for e in nandlab.list_experiments() if e.id.startswith("miyaji-"))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, nandlab.Reproduction]:
    """One quick run of each experiment (up to 15 s each; the simulator releases the GIL)."""
    root = tmp_path_factory.mktemp("miyaji")
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = {id: pool.submit(nandlab.reproduce, id, root / id, "quick") for id in MIYAJI}
        return {id: run.result() for id, run in runs.items()}


def test_every_miyaji_experiment_has_a_figure() -> None:
    assert {"miyaji-freespace", "miyaji-table1", "miyaji-validmap"} <= set(MIYAJI)
    assert set(MIYAJI) <= set(plots.FIGURES)


@pytest.mark.parametrize("id", MIYAJI)
def test_figure_renders_to_png_with_labelled_axes(
    id: str, results: dict[str, nandlab.Reproduction], tmp_path: Path
) -> None:
    r = results[id]
    fig = plots.plot(r.out)
    has_paper = any(k.startswith("paper_") for k in r.metrics)
    check_paper_figure(fig, tmp_path / f"{id}.png", "Miyaji et al. 2014 ", has_paper)
    assert "Fig." in fig.get_suptitle() or "Table I" in fig.get_suptitle()


def test_freespace_marks_the_paper_ratios_at_20_percent(
    results: dict[str, nandlab.Reproduction],
) -> None:
    r = results["miyaji-freespace"]
    conventional = r.curve("freespace").query("engine == 'conventional' and free_space_pct == 20")
    expected = [
        conventional["queries_per_s"].item() * r.metrics["paper_speedup_at_20pct"],
        conventional["mj_per_query"].item() * (1 - r.metrics["paper_energy_reduction_at_20pct"]),
        conventional["we_cycles_per_block"].item() * (1 - r.metrics["paper_we_reduction_at_20pct"]),
    ]
    marked = stars(plots.miyaji_freespace(r))
    assert [x for x, _ in marked] == [20.0, 20.0, 20.0]
    assert [y for _, y in marked] == pytest.approx(expected)


def test_table1_draws_the_paper_numbers_beside_nandlab(
    results: dict[str, nandlab.Reproduction],
) -> None:
    r = results["miyaji-table1"]
    fig = plots.miyaji_table1(r)
    heights = {
        round(p.get_height(), 6) for ax in fig.axes for p in ax.patches if isinstance(p, Rectangle)
    }
    for stem in ("qps", "mj_per_query", "we_cycles"):
        for engine in ("conventional", "codesign"):
            assert round(r.metrics[f"paper_{stem}_{engine}"], 6) in heights
            assert round(r.metrics[f"{stem}_{engine}"], 6) in heights


def test_table1_titles_state_the_changes_their_bars_show(
    results: dict[str, nandlab.Reproduction],
) -> None:
    r = results["miyaji-table1"]
    fig = plots.miyaji_table1(r)
    assert check_bar_labels(fig) == 12
    for ax, stem in zip(fig.axes, ("qps", "mj_per_query", "we_cycles"), strict=True):
        stated = dict(re.findall(r"(nandlab|paper) ([+\u2212]\d+) %", ax.get_title()))
        for who, prefix in (("nandlab", ""), ("paper", "paper_")):
            conventional = r.metrics[f"{prefix}{stem}_conventional"]
            codesign = r.metrics[f"{prefix}{stem}_codesign"]
            shown = int(f"{100 * (codesign / conventional - 1):+.0f}")
            assert int(stated[who].replace("\u2212", "-")) == shown, (ax.get_title(), who)


def test_blocksize_marks_the_paper_speedup_at_8_mb(
    results: dict[str, nandlab.Reproduction],
) -> None:
    r = results["miyaji-blocksize"]
    assert stars(plots.miyaji_blocksize(r)) == [(8.0, r.metrics["paper_speedup_at_8mb"])]
