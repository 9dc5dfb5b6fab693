import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nandlab
from nandlab import report

NFS = sorted(e.id for e in nandlab.list_experiments() if e.id.startswith("nfs-"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("results")
    for id in NFS:
        nandlab.reproduce(id, root / id, scale="quick")
    return root


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nandlab", "report", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_report_of_a_quick_run_holds_every_figure_and_table(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = run_cli(str(root), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    page = out.read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == len(NFS)
    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    assert not re.search(r'(src|href)="(?!data:|#)', page)  # self-contained: nothing fetched
    for id in NFS:
        assert f'<section id="{id}">' in page
        for csv in (root / id).glob("*.csv"):
            assert f"{csv.name} — " in page
    assert page.count("<h3>Summary metrics</h3>") == len(NFS)
    # the paper's value beside the measured one
    assert re.search(r"<td>read_page_uj</td>\s*<td>3\.342</td>\s*<td>3\.35</td>", page)


def test_report_of_one_experiment_folder_goes_beside_it(root: Path) -> None:
    path = report.write_report(root / "nfs-energy")
    assert path == root / "nfs-energy" / "report.html"
    page = path.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 1
    assert "stage_energy.csv" in page


def test_unknown_experiments_still_get_their_tables(tmp_path: Path) -> None:
    folder = tmp_path / "later" / "ftl-something"
    folder.mkdir(parents=True)
    summary = {"experiment": "ftl-something", "waf": 2.25, "paper_waf": 2.0}
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "waf.csv").write_text("utilization,waf\n0.5,1.5\n0.9,4.75\n")
    page = report.build_html(tmp_path)
    assert "No figure function" in page
    assert "<td>4.75</td>" in page
    assert re.search(r"<td>waf</td>\s*<td>2\.25</td>\s*<td>2</td>", page)


def test_folder_without_summary_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "empty", tmp_path / "missing"):
        done = run_cli(str(folder))
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("nandlab report: error: "), lines
        assert str(folder) in lines[0]
    assert "summary.json" in run_cli(str(tmp_path / "empty")).stderr
    assert not (tmp_path / "empty" / "report.html").exists()


def test_metrics_table_pairs_each_metric_with_the_paper_value() -> None:
    table = report.metrics_table(
        {
            "gain": 0.5,
            "paper_gain": 0.25,
            "cell_fraction": 0.96,
            "paper_cell_fraction_min": 0.93,
            "contention_8_dies": 0.5656,
            "paper_contention": 0.452,
            "ops": 2000.0,
            "paper_elsewhere": 1.5,
        }
    )
    rows = {m: (v, p) for m, v, p in table.itertuples(index=False)}
    assert rows == {
        "gain": ("0.5", "0.25"),
        "cell_fraction": ("0.96", "≥ 0.93"),
        "contention_8_dies": ("0.5656", "0.452"),
        "ops": ("2,000", ""),
        "elsewhere": ("", "1.5"),
    }


def test_an_interrupted_run_is_marked_and_its_flag_is_no_metric(tmp_path: Path) -> None:
    folder = tmp_path / "ftl-something"
    folder.mkdir()
    summary = {"experiment": "ftl-something", "interrupted": True, "waf": 2.25}
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "waf.csv").write_text("utilization,waf\n0.5,1.5\n")
    page = report.build_html(tmp_path)
    assert "Interrupted (Ctrl-C)" in page
    assert "<td>interrupted</td>" not in page
