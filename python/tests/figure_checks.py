"""Checks shared by the figure tests: a figure a paper would print (not a test module)."""

import struct
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

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


def _number(text: str) -> tuple[float, float] | None:
    """The number a bar label prints and half its last printed digit, or None for text."""
    stripped = text.strip().replace(",", "")
    percent = stripped.endswith("%")
    cleaned = stripped.rstrip("%\u00d7x ").strip()
    try:
        value = float(cleaned)
    except ValueError:
        return None
    if "e" in cleaned.lower():
        slack = abs(value) * 5e-4  # "{:.4g}" and "{:g}" in exponent form
    else:
        decimals = len(cleaned.split(".")[1]) if "." in cleaned else 0
        slack = 0.5 * 10.0**-decimals
    scale = 0.01 if percent else 1.0
    return value * scale, slack * scale


def _bar_tops(ax: Axes) -> list[tuple[float, float]]:
    """(x centre, top) of every vertical bar of `ax`."""
    tops = []
    for container in ax.containers:
        if isinstance(container, BarContainer) and container.orientation == "vertical":
            for bar in container.patches:
                tops.append((bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height()))
    return tops


def check_bar_labels(fig: Figure) -> int:
    """Every value printed on top of a bar (`_style.label_bars`) sits on a bar of that height
    and prints that height: a label never tells another bar's number. Returns how many
    labels were checked."""
    checked = 0
    for ax in fig.axes:
        tops = _bar_tops(ax)
        for text in ax.texts:
            if not isinstance(text, Annotation) or not tops:
                continue
            on_top = text.get_verticalalignment() == "bottom"
            if not on_top or text.get_horizontalalignment() != "center":
                continue
            x, y = (float(v) for v in text.xy)
            number = _number(text.get_text())
            if number is None or not np.isfinite(y):
                continue
            value, slack = number
            under = [top for cx, top in tops if abs(cx - x) < 1e-9]
            assert under, f"{ax.get_title()!r}: label {text.get_text()!r} at x={x} has no bar"
            assert any(abs(top - y) <= 1e-9 * max(1.0, abs(y)) for top in under), (
                f"{ax.get_title()!r}: label {text.get_text()!r} at {y} is not on a bar top {under}"
            )
            assert abs(value - y) <= slack + 1e-9 * max(1.0, abs(y)), (
                f"{ax.get_title()!r}: label {text.get_text()!r} on a bar of height {y}"
            )
            checked += 1
    return checked


def check_paper_figure(fig: Figure, path: Path, title_prefix: str, has_paper: bool) -> None:
    """Renders `fig` to `path` and checks size, title, labelled axes, legend and the numbers
    printed on its bars."""
    check_bar_labels(fig)
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
