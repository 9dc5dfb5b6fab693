"""`python -m nandlab report` and `plots.plot` on the folders of `nandlab run`, `replay`,
`fio` and `sweep` (issue 11: they accepted only `reproduce` folders)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli import NANDLAB
from figure_checks import check_paper_figure

import nandlab
from nandlab import plots, report

REPO = Path(__file__).resolve().parents[2]
SMALL = {
    "nand": {"preset": "slc", "geometry": {"blocks_per_plane": 64}},
    "workload": {
        "kind": "synthetic",
        "pattern": "random",
        "read_fraction": 0.3,
        "request_size_bytes": 4096,
        "span_bytes": 0,
        "request_count": 2000,
    },
    "precondition": {"fill_fraction": 1.0, "random_overwrites": 0},
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    nandlab.run(SMALL, out=root / "run", progress=False)
    nandlab.replay(
        REPO / "crates/workload/tests/data/msr_sample.csv",
        "msr",
        out=root / "replay",
        progress=False,
    )
    nandlab.run(REPO / "examples/engine-codesign.toml", out=root / "engine", progress=False)
    nandlab.sweep(
        SMALL,
        {"ssd.op_fraction": [0.2, 0.3], "ssd.gc.policy": ["fifo", "greedy"]},
        out=root / "sweep",
    )
    return root


def test_run_folders_load_with_their_metrics(root: Path) -> None:
    r = plots.load(root / "run")
    assert r.experiment == "run"
    assert r.metrics["requests"] == 2000
    assert {"latency_cdf", "erase_histogram", "valid_page_map", "timeseries"} <= set(r.curves())
    series = r.curve("timeseries")
    # every request completed in some interval: the rows add up to the run's requests
    widths = series["t_end_s"].diff().fillna(series["t_end_s"].iloc[0])
    done = ((series["read_iops"] + series["write_iops"]) * widths).sum()
    assert done == pytest.approx(2000, rel=1e-6)
    engine = plots.load(root / "engine")
    assert engine.experiment == "run"
    assert "queries_per_s" in engine.metrics
    sweep = plots.load(root / "sweep")
    assert sweep.experiment == "sweep"
    assert sweep.metrics == {"points": 4.0}


@pytest.mark.parametrize("name", ["run", "replay", "engine", "sweep"])
def test_every_kind_of_folder_has_a_figure(root: Path, name: str) -> None:
    fig = plots.plot(root / name)
    png = plots.png_bytes(fig, dpi=50)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    if name in ("run", "replay"):
        assert titles[:3] == ["latency CDF", "erase-count histogram", "valid pages per block"]
        assert titles[3:5] == ["throughput over time", "p99 latency over time"]
    if name == "sweep":
        # one panel per metric that varies, against the key varying fastest
        assert "waf" in titles
        assert all(ax.get_xlabel() == "ssd.op_fraction" for ax in fig.axes if ax.get_title())


@pytest.mark.parametrize("name", ["run", "replay"])
def test_run_figures_pass_the_shared_figure_checks(root: Path, tmp_path: Path, name: str) -> None:
    # five panels on a grid of six: the empty sixth cell was a hidden axis without labels,
    # which the shared check refused
    fig = plots.plot(root / name)
    assert len(fig.axes) == 6  # five panels and the valid-page map's colour bar
    check_paper_figure(fig, tmp_path / f"{name}.png", "nandlab run: ", False)


def test_sweep_figures_have_titles_and_axes_with_units(root: Path, tmp_path: Path) -> None:
    # a sweep folder's figure, checked as the experiments' are (no paper values: the user's own
    # runs); its panels had no y label
    fig = plots.plot(root / "sweep")
    check_paper_figure(fig, tmp_path / "sweep.png", "nandlab sweep: ", False)
    declared = nandlab.metrics()
    panels = {ax.get_title(): ax.get_ylabel().replace("\n", " ") for ax in fig.axes}
    assert panels["waf"] == "write amplification", panels
    timed = {m: label for m, label in panels.items() if declared[m]["unit"] == "us"}
    assert timed and all(label.endswith("(µs)") for label in timed.values()), panels


def test_the_report_of_a_folder_of_runs_has_every_one(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "nandlab", "report", str(root), "--output", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    page = out.read_text(encoding="utf-8")
    for name in ("run", "replay", "engine", "sweep"):
        assert f'<section id="{name}">' in page
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 4
    assert "Figure failed" not in page
    assert "sweep.csv — 4 rows" in page
    assert "latency_cdf.csv — " in page
    # the sweep's cache is not a results folder of its own
    assert "cache" not in re.findall(r'<section id="([^"]+)"', page)


def test_report_of_one_run_folder(root: Path) -> None:
    path = report.write_report(root / "replay")
    page = path.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 1
    assert "read_lat_p50_us" in page


def test_a_folder_without_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"report\.json"):
        plots.load(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "nandlab", "report", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_chip_run_folder_gets_its_cdf_per_op_kind(tmp_path: Path) -> None:
    # `nandlab chip --out` writes its CDF per op kind (`kind`), not per host op (`op`): the
    # run figure failed on it with KeyError: 'op'
    subprocess.run(
        [str(NANDLAB), "chip", "--requests", "500", "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fig = plots.plot(tmp_path)
    cdf = fig.axes[0]
    assert cdf.get_title() == "latency CDF"
    assert [line.get_label() for line in cdf.get_lines()] == ["write"]
