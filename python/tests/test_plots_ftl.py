import json
from pathlib import Path

import numpy as np
import pytest
from figure_checks import check_paper_figure, declares_paper

import nandlab
from nandlab import plots


@pytest.fixture(scope="module")
def gc_policies(tmp_path_factory: pytest.TempPathFactory) -> nandlab.Reproduction:
    """A quick run (about a second)."""
    return nandlab.reproduce("ftl-gc-policies", tmp_path_factory.mktemp("ftl") / "gc", "quick")


def test_gc_policies_figure_renders_with_every_policy_and_the_model(
    gc_policies: nandlab.Reproduction, tmp_path: Path
) -> None:
    fig = plots.plot(gc_policies.out)
    check_paper_figure(
        fig, tmp_path / "gc.png", "nandlab FTL: write amplification", declares_paper(gc_policies)
    )
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels[:4] == ["FIFO", "greedy", "cost-benefit", "random"]
    model = [line for line in fig.axes[0].get_lines() if "analytic" in str(line.get_label())]
    assert len(model) == 1 and model[0].get_linestyle() == "--"
    df = gc_policies.curve("waf")
    assert np.asarray(model[0].get_xdata()).tolist() == sorted(set(df["op_percent"]))


def test_policies_it_does_not_know_still_get_a_curve(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"experiment": "ftl-gc-policies"}))
    rows = [
        f"{policy},{op},{waf},{model},100"
        for policy, scale in (("greedy", 1.1), ("lru-new", 1.5))
        for op, model in ((10, 5.0), (30, 2.4))
        for waf in (model * scale,)
    ]
    (tmp_path / "waf.csv").write_text(
        "policy,op_percent,waf,waf_fifo_analytic,gc_page_copies\n" + "\n".join(rows) + "\n"
    )
    fig = plots.ftl_gc_policies(tmp_path)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert "lru-new" in labels and "greedy" in labels
    ratios = [line.get_ydata() for line in fig.axes[1].get_lines() if line.get_label() == "lru-new"]
    assert np.asarray(ratios[0]).tolist() == pytest.approx([1.5, 1.5])
