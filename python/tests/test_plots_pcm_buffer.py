import json
from pathlib import Path

from figure_checks import check_paper_figure, declares_paper, stars

import nandlab
from nandlab import plots


def write(folder: Path, experiment: str, csv: str, text: str, metrics: dict[str, object]) -> None:
    (folder / "summary.json").write_text(json.dumps({"experiment": experiment, **metrics}))
    (folder / csv).write_text(text)


def test_pcm_dedup_figure_has_rate_time_and_space_panels(tmp_path: Path) -> None:
    text = (
        "store_buckets,store_size_bytes,pages_checked,duplicates_removed,detection_rate,"
        "search_ns_per_lookup,flash_pages_programmed,space_saved_fraction\n"
        "4,16384,100,18,0.9,1000,80,0.2\n"
        "16,65536,100,20,1,1200,78,0.22\n"
    )
    write(
        tmp_path,
        "pcm-dedup",
        "dedup.csv",
        text,
        {"duplicates_present_fraction": 0.2, "flash_pages_no_dedup": 100.0},
    )
    fig = plots.plot(tmp_path)
    check_paper_figure(fig, tmp_path / "dedup.png", "nandlab PCM dedup", False)
    assert len(fig.axes) == 3
    assert [p.get_height() for p in fig.axes[2].patches] == [80, 78]


def test_pcm_buffer_figure_has_a_row_per_mapping(tmp_path: Path) -> None:
    header = "mapping,buffer,pcm_bytes,erases,write_time_s,nand_energy_mj,sequential_share\n"
    rows = []
    for mapping in ("page", "hybrid"):
        rows.append(f"{mapping},none,0,100,5,300,0")
        for size in (262144, 1048576):
            for k, buffer in enumerate(("region", "dpram", "ipl")):
                rows.append(f"{mapping},{buffer},{size},{10 * (k + 1)},{k + 1},{k + 2},0.5")
    write(tmp_path, "pcm-buffer", "buffers.csv", header + "\n".join(rows) + "\n", {})
    fig = plots.plot(tmp_path)
    check_paper_figure(fig, tmp_path / "buffer.png", "nandlab PCM log buffer", False)
    assert len(fig.axes) == 8
    erases = sorted(round(p.get_height()) for p in fig.axes[0].patches)
    assert erases == [10, 10, 20, 20, 30, 30]


def test_pcm_combined_figure_marks_the_thesis_targets(tmp_path: Path) -> None:
    text = (
        "variant,erases,flash_pages_programmed,lifetime_vs_none,energy_mj,energy_vs_none\n"
        "none,100,1000,1,300,1\n"
        "dedup,60,700,1.6,200,0.7\n"
        "log-region,300,3000,0.3,800,2.6\n"
        "dedup+log-region,40,500,2.5,170,0.57\n"
    )
    paper = [
        {"name": "lifetime_ratio", "value": 4.0},
        {"name": "energy_ratio_max", "value": 0.8},
    ]
    write(tmp_path, "pcm-combined", "combined.csv", text, {"paper": paper})
    fig = plots.plot(tmp_path)
    check_paper_figure(fig, tmp_path / "combined.png", "nandlab PCM dedup + log region", True)
    assert [round(y, 2) for _, y in stars(fig)] == [4.0, 0.8]
    # the stars are the summary's: none without it
    write(tmp_path, "pcm-combined", "combined.csv", text, {})
    assert stars(plots.plot(tmp_path)) == []
    assert [round(p.get_height(), 2) for p in fig.axes[0].patches] == [1, 1.6, 0.3, 2.5]


def test_the_pcm_write_figures_draw_real_quick_runs(tmp_path: Path) -> None:
    for id in ("pcm-dedup", "pcm-buffer", "pcm-combined"):
        run = nandlab.reproduce(id, tmp_path / id, scale="quick")
        fig = plots.plot(run.out)
        check_paper_figure(fig, tmp_path / f"{id}.png", "nandlab PCM", declares_paper(run))
