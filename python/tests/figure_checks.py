"""Checks shared by the figure tests: a figure a paper would print (not a test module)."""

import struct
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from nandlab import plots
from nandlab.experiments import Reproduction


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def legend_texts(fig: Figure) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [t.get_text() for legend in legends if legend for t in legend.get_texts()]


def stars(fig: Figure) -> list[tuple[float, float]]:
    """(x, y) of every paper reference marker drawn on the axes."""
    points = []
    for ax in fig.axes:
        for line in ax.get_lines():
            if isinstance(line, Line2D) and line.get_marker() == "*":
                xs = np.asarray(line.get_xdata(), dtype=float).tolist()
                ys = np.asarray(line.get_ydata(), dtype=float).tolist()
                points += list(zip(xs, ys, strict=True))
    return points


def declares_paper(r: Reproduction) -> bool:
    """Whether the experiment declared paper values for this run (summary.json's ``"paper"``
    or ``paper_*`` metrics): its figure must then show them."""
    return bool(r.paper) or any(k.startswith("paper_") for k in r.metrics)


def check_paper_figure(fig: Figure, path: Path, title_prefix: str, has_paper: bool) -> None:
    """Renders `fig` to `path` and checks size, title, labelled axes and legend."""
    plots.save(fig, path)
    width, height = png_size(path)
    assert width >= 1000 and height >= 400
    assert path.stat().st_size > 30_000
    suptitle = fig.get_suptitle()
    assert suptitle.startswith(title_prefix), suptitle
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            assert ax.get_ylabel().strip() or ax.get_xlabel().strip()
            continue
        partners = [o for o in fig.axes if o is not ax and ax.get_shared_x_axes().joined(ax, o)]
        if not ax.get_title() and any(o.get_title().strip() for o in partners):
            # a twin axis (`twinx`): its own y label; the x label and title are its partner's
            assert ax.get_ylabel().strip()
            continue
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip() and ax.get_title().strip()
    texts = legend_texts(fig)
    assert texts
    if has_paper:
        assert any("paper" in t for t in texts), texts
