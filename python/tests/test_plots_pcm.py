import json
from pathlib import Path

import numpy as np
from figure_checks import check_paper_figure, stars

from nandlab import plots

COLUMNS = "scale_factor,layout,mode,algorithm,bits_programmed,energy_uj,latency_ms"


PAPER = [
    {"name": f"mainmemory_row_{m}_reduction", "value": v}
    for m, v in (("wear", 0.6), ("energy", 0.5), ("latency", 0.3))
]
"""The thesis's Fig. 5.11 reductions as the experiment declares them in summary.json."""


def write_results(folder: Path, paper: list[dict[str, object]] = PAPER) -> None:
    summary = {"experiment": "pcm-hashjoin", "paper": paper}
    (folder / "summary.json").write_text(json.dumps(summary))
    rows = []
    for layout in ("row", "column"):
        for mode in ("storage", "main-memory"):
            rows.append(f"0.01,{layout},{mode},grace,1000,100,10")
            rows.append(f"0.01,{layout},{mode},virtual,100,80,5")
    (folder / "joins.csv").write_text(COLUMNS + "\n" + "\n".join(rows) + "\n")


def test_pcm_hashjoin_figure_shows_ratios_to_grace_and_the_thesis_stars(tmp_path: Path) -> None:
    write_results(tmp_path)
    fig = plots.plot(tmp_path)
    check_paper_figure(fig, tmp_path / "pcm.png", "nandlab PCM hash joins", True)
    wear = fig.axes[0]
    heights = sorted({round(p.get_height(), 3) for p in wear.patches})
    assert heights == [0.1, 1.0]
    assert [round(y, 2) for _, y in stars(fig)] == [0.4, 0.5, 0.7]
    assert np.isclose(fig.axes[2].patches[4].get_height(), 0.5)


def test_pcm_hashjoin_stars_come_from_the_summary_only(tmp_path: Path) -> None:
    write_results(tmp_path, paper=[])
    assert stars(plots.plot(tmp_path)) == []


USERS_COLUMNS = "users,layout,mode,algorithm,relative_wear,relative_energy,relative_latency"


def test_pcm_join_users_figure_has_a_panel_per_layout_and_measure(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(
        json.dumps({"experiment": "pcm-join-users", "scale_factor": 0.001})
    )
    rows = []
    for users in (20, 200):
        for layout in ("row", "column"):
            for mode in ("storage", "main-memory"):
                rows.append(f"{users},{layout},{mode},grace,{users / 200},0.5,0.25")
                rows.append(f"{users},{layout},{mode},virtual,{users / 2000},0.4,0.2")
    (tmp_path / "users.csv").write_text(USERS_COLUMNS + "\n" + "\n".join(rows) + "\n")
    fig = plots.plot(tmp_path)
    check_paper_figure(fig, tmp_path / "users.png", "nandlab PCM hash joins with U users", False)
    assert len(fig.axes) == 6
    wear_row = fig.axes[0]
    heights = [round(p.get_height(), 3) for p in wear_row.patches]
    assert heights == [0.1, 1.0, 0.01, 0.1]
