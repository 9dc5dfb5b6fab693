import json
from pathlib import Path

from figure_checks import check_paper_figure, stars

from nandlab import plots

HEADER = (
    "journal,buffer,merges,erases,flash_pages_programmed,host_page_writes,write_time_s,"
    "energy_mj,tpmc,lifetime_vs_none\n"
)


def test_pcm_tpcc_figure_has_both_mappings_and_the_thesis_values(tmp_path: Path) -> None:
    erases = {"none": 100, "region": 80, "region-logged": 60, "dpram": 40, "ipl": 50}
    for mapping in ("block", "page"):
        rows = [
            f"{journal},{b},1,{e},1,1,1,1,1,1"
            for journal in ("wal", "delete")
            for b, e in erases.items()
        ]
        (tmp_path / f"{mapping}.csv").write_text(HEADER + "\n".join(rows) + "\n")
    (tmp_path / "combined.csv").write_text(
        "variant,erases,lifetime_vs_none,energy_mj,energy_vs_none\n"
        "none,100,1,10,1\ndedup+region,50,2,6.5,0.65\n"
    )
    summary = {
        "experiment": "pcm-tpcc",
        "paper": [
            {"name": "lifetime_ratio", "value": 4.0},
            {"name": "energy_ratio_max", "value": 0.8},
        ],
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    fig = plots.plot(tmp_path)
    check_paper_figure(fig, tmp_path / "pcm-tpcc.png", "nandlab PCM log buffers", True)
    assert len(fig.axes) == 3
    # R-P2 panels: 4 buffers x 2 journal modes, erases relative to none
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == [0.8, 0.6, 0.4, 0.5] * 2
    # R-P1: the thesis's 4x lifetime and 0.8 energy as stars
    assert stars(fig) == [(0.0, 4.0), (1.0, 0.8)]
