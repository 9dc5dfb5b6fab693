"""Figures of `nandlab run`, `replay`, `fio` and `sweep` results folders.

A run folder (report.json, metrics.json, and for block workloads latency_cdf.csv,
erase_histogram.csv, valid_page_map.csv, timeseries.csv) gets the latency CDF per operation,
the erase-count histogram, the valid-page map as a heat map (plane by block), and throughput and
p99 latency over simulated time; an engine run (report.json
with the engine's metrics only) gets its metric row. A sweep folder (sweep.csv) gets each
metric against the swept key (the key varying fastest on the x axis, one line per value of
the other keys).
"""

from __future__ import annotations

import math
import textwrap

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nandlab.plots import Source, load, register

RUN = "run"
"""The experiment name a run, replay or fio folder loads as."""
SWEEP = "sweep"
"""The experiment name a sweep folder loads as."""
SWEEP_PANELS_MAX = 12
"""Metrics drawn for a sweep (the ones that vary first); the rest are in the table."""


def _figure(title: str, panels: int, columns: int, size: tuple[float, float]) -> list[Axes]:
    rows = max(1, math.ceil(panels / columns))
    columns = min(columns, max(panels, 1))
    fig = Figure(figsize=(size[0] * columns, size[1] * rows), layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle(title, fontsize=12, fontweight="bold")
    axes = list(fig.subplots(rows, columns, squeeze=False).ravel())
    # the grid's empty cells are removed, not hidden: a figure holds only labelled panels
    for ax in axes[panels:]:
        ax.remove()
    return axes[:panels]


@register(RUN)
def run_figure(source: Source) -> Figure:
    """Latency CDF, erase histogram and valid-page map of a block run; the metric row of an
    engine run."""
    r = load(source)
    curves = set(r.curves())
    panels = [c for c in ("latency_cdf", "erase_histogram", "valid_page_map") if c in curves]
    title = f"nandlab run: {r.out.name}" + (" (interrupted)" if r.interrupted else "")
    if not panels:
        return _metrics_figure(title, r.metrics)
    series = "timeseries" in curves
    count = len(panels) + (2 if series else 0)
    axes = _figure(title, count, min(count, 3), (4.6, 3.9))
    for ax, name in zip(axes[: len(panels)], panels, strict=True):
        df = r.curve(name)
        {"latency_cdf": _cdf, "erase_histogram": _histogram, "valid_page_map": _valid_map}[name](
            ax, df
        )
    if series:
        df = r.curve("timeseries")
        _throughput_over_time(axes[len(panels)], df)
        _latency_over_time(axes[len(panels) + 1], df)
    return axes[0].figure  # type: ignore[return-value]


def _throughput_over_time(ax: Axes, df: pd.DataFrame) -> None:
    """Requests completed per second in each interval of `timeseries.csv` (a stall: zero)."""
    for op in ("read", "write"):
        if df[f"{op}_iops"].any():
            ax.step(df["t_end_s"], df[f"{op}_iops"], where="post", label=op, linewidth=0.8)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("completed requests per second")
    ax.set_title("throughput over time")
    if ax.get_lines():
        ax.legend(frameon=False)


def _latency_over_time(ax: Axes, df: pd.DataFrame) -> None:
    """The p99 latency of the requests completed in each interval (log scale)."""
    for op in ("read", "write"):
        done = df[df[f"{op}_iops"] > 0]
        if len(done):
            ax.plot(done["t_end_s"], done[f"{op}_p99_us"], label=f"{op} p99", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("latency (µs)")
    ax.set_title("p99 latency over time")
    if ax.get_lines():
        ax.legend(frameon=False)


def _cdf(ax: Axes, df: pd.DataFrame) -> None:
    # an SSD run's CDF is per host operation (`op`), a chip run's per op kind (`kind`)
    key = "op" if "op" in df.columns else "kind"
    for op, rows in df.groupby(key, sort=False):
        ax.step(rows["latency_us"], rows["fraction"], where="post", label=str(op))
    positive = df["latency_us"][df["latency_us"] > 0]
    if len(positive) and positive.max() / max(positive.min(), 1e-9) > 100:
        ax.set_xscale("log")
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("fraction of requests ≤ latency")
    ax.set_ylim(0, 1.02)
    ax.set_title("latency CDF")
    if len(df):
        ax.legend(frameon=False)
    else:
        ax.text(0.5, 0.5, "no requests", ha="center", transform=ax.transAxes)


def _histogram(ax: Axes, df: pd.DataFrame) -> None:
    ax.bar(df["erase_count"], df["blocks"], width=0.8, color="#4477aa")
    ax.set_xlabel("erase count")
    ax.set_ylabel("blocks")
    ax.set_title("erase-count histogram")


def _valid_map(ax: Axes, df: pd.DataFrame) -> None:
    grid = df.pivot(index="plane", columns="block", values="valid_pages")
    image = ax.imshow(grid.to_numpy(), aspect="auto", interpolation="nearest", cmap="viridis")
    ax.set_xlabel("block")
    ax.set_ylabel("plane")
    ax.set_title("valid pages per block")
    ax.figure.colorbar(image, ax=ax, label="valid pages")


def _metrics_figure(title: str, metrics: dict[str, float]) -> Figure:
    (ax,) = _figure(title, 1, 1, (6.0, 0.4 + 0.3 * max(len(metrics), 1)))
    ax.axis("off")
    rows = [[name, f"{value:.6g}"] for name, value in metrics.items()]
    if rows:
        table = ax.table(cellText=rows, colLabels=["metric", "value"], loc="center")
        table.auto_set_column_width([0, 1])
    return ax.figure  # type: ignore[return-value]


UNIT_TEXT = {"us": "µs"}
"""How a declared unit reads on an axis (the others as declared: ``MiB/s``, ``1/s``, ``mJ``)."""


def _declared_metrics() -> dict[str, tuple[str, str]]:
    from nandlab.sweep import metrics

    return {name: (m["description"], m["unit"]) for name, m in metrics().items()}


def metric_label(metric: str, declared: dict[str, tuple[str, str]]) -> str:
    """A sweep metric's axis label: what it measures, as the simulator declares it, with its
    unit (``99th percentile read latency (µs)``; a count or ratio, unit ``1``, without one),
    wrapped to the panel; an undeclared metric by its name."""
    if metric not in declared:
        return metric
    description, unit = declared[metric]
    text = description.split(":")[0]
    if unit != "1":
        text += f" ({UNIT_TEXT.get(unit, unit)})"
    return textwrap.fill(text, 34)


def sweep_keys(df: pd.DataFrame) -> list[str]:
    """The swept key paths of a sweep table (metric names have no dot)."""
    return [c for c in df.columns if "." in c]


@register(SWEEP)
def sweep_figure(source: Source) -> Figure:
    """Each metric of a sweep against the swept key (the last one, which varies fastest),
    one line per combination of the other keys."""
    r = load(source)
    df = r.curve("sweep")
    keys = sweep_keys(df)
    if not keys:
        raise ValueError(f"{r.out / 'sweep.csv'}: no swept key column (key paths have a dot)")
    metrics = [
        c
        for c in df.columns
        if c not in keys and c != "point" and pd.api.types.is_numeric_dtype(df[c])
    ]
    varying = [m for m in metrics if df[m].nunique() > 1]
    shown = (varying or metrics)[:SWEEP_PANELS_MAX]
    if not shown:
        raise ValueError(f"{r.out / 'sweep.csv'}: no metric column")
    x_key, others = keys[-1], keys[:-1]
    declared = _declared_metrics()
    axes = _figure(f"nandlab sweep: {r.out.name}", len(shown), 4, (3.6, 3.0))
    numeric_x = pd.api.types.is_numeric_dtype(df[x_key])
    labels = [str(v) for v in dict.fromkeys(df[x_key])]
    for ax, metric in zip(axes, shown, strict=True):
        groups = df.groupby(others, sort=False) if others else [((), df)]
        for name, rows in groups:
            x = rows[x_key] if numeric_x else [labels.index(str(v)) for v in rows[x_key]]
            label = ", ".join(
                f"{k}={v}"
                for k, v in zip(others, name if isinstance(name, tuple) else (name,), strict=True)
            )
            ax.plot(x, rows[metric], marker="o", label=label or None)
        if not numeric_x:
            ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        ax.set_xlabel(x_key)
        ax.set_ylabel(metric_label(metric, declared), fontsize=8)
        ax.set_title(metric, fontsize=10)
        ax.grid(True, alpha=0.3)
    if others and axes:
        axes[0].legend(frameon=False, fontsize=7)
    return axes[0].figure  # type: ignore[return-value]
