"""Figures of the paper-000 reproductions (miyaji-*): the conventional and the co-designed
storage engine of Miyaji et al. 2014 on the ``miyaji2014`` SSD (Figs. 6, 12-14, 17, 18, Table I).

The paper states its results as ratios of the co-designed engine over the conventional one, so
its reference values are drawn as stars at the measured conventional value times the paper's
ratio: where the co-designed curve would be if nandlab matched the paper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from nandlab.experiments import Reproduction
from nandlab.plots import Source, load, register
from nandlab.plots._style import (
    MINUS,
    PAPER_MARKER,
    TIMES,
    figure_of,
    label_bars,
    log2_axis,
    new_figure,
    new_mosaic,
    paper_handle,
)

PAPER = "Miyaji et al. 2014"
ENGINES = {
    "conventional": ("conventional engine", "#d62728", "s"),
    "codesign": ("co-designed engine (IAA + U2DI)", "#1f77b4", "o"),
}
"""Engine of the CSVs' ``engine`` column: legend label, colour, marker."""
MEASURES = {
    "queries_per_s": ("Throughput (queries/s)", "(a) Throughput", "throughput"),
    "mj_per_query": ("Energy per query (mJ)", "(b) Energy per query", "energy"),
    "we_cycles_per_block": ("W/E cycles per block (mean)", "(c) Wear", "W/E cycles"),
}
"""Columns of the CSVs: axis label with unit, panel title, name in the legend."""


def _signed(change: float) -> str:
    """A relative change as the paper prints it: +30 %, or -46 % with a minus sign."""
    sign = "+" if change >= 0 else MINUS
    return f"{sign}{abs(change):.0%}".replace("%", " %")


def _plot_engines(ax: Axes, df: pd.DataFrame, x: str, column: str) -> dict[str, np.ndarray]:
    """One line per engine of `column` against `x`; returns each engine's y values."""
    ys: dict[str, np.ndarray] = {}
    for engine, (label, color, marker) in ENGINES.items():
        sub = df[df["engine"] == engine].sort_values(x)
        ys[engine] = sub[column].to_numpy(dtype=float)
        ax.plot(sub[x], ys[engine], marker=marker, color=color, label=label)
    ax.set_ylim(bottom=0)
    return ys


def _note(ax: Axes, text: str, xy: tuple[float, float], above: bool, engine: str | None) -> None:
    """`text` beside the point `xy`, above or below it, in the engine's colour (else black)."""
    ax.annotate(
        text,
        xy,
        xytext=(9, 7 if above else -7),
        textcoords="offset points",
        va="bottom" if above else "top",
        fontsize=8,
        color=ENGINES[engine][1] if engine else "black",
        bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "linewidth": 0, "alpha": 0.8},
        zorder=6,
    )


def _legend_below(fig: Figure, handles: Sequence[Artist], ncol: int = 3) -> None:
    fig.legend(handles=list(handles), loc="outside lower center", ncol=ncol, frameon=False)


# ---------------------------------------------------------------------------------------------
# R-E1: against free space (Fig. 12)

_FREESPACE_PAPER = {
    "queries_per_s": ("paper_speedup_at_20pct", False),
    "mj_per_query": ("paper_energy_reduction_at_20pct", True),
    "we_cycles_per_block": ("paper_we_reduction_at_20pct", True),
}
"""CSV column: (paper metric, whether the metric is a reduction rather than a ratio)."""


def _paper_at_20pct(metrics: dict[str, float], column: str) -> tuple[float, str] | None:
    """(ratio of co-designed over conventional, the paper's wording) of `column`, if given."""
    metric, is_reduction = _FREESPACE_PAPER[column]
    value = metrics.get(metric)
    if value is None:
        return None
    if is_reduction:
        return 1 - value, _signed(-value)
    return value, f"{value:g}{TIMES}"


@register("miyaji-freespace")
def miyaji_freespace(source: Source) -> Figure:
    """Fig. 12: queries/s, energy per query and W/E cycles against the SSD's free space."""
    r = load(source)
    df = r.curve("freespace")
    x = "free_space_pct"
    axes = new_figure(
        f"{PAPER} Fig. 12: both engines against SSD free space (I/D/U 30/30/40)", 3, 14, 4.3
    )
    marked: list[str] = []
    for ax, (column, (ylabel, title, name)) in zip(axes, MEASURES.items(), strict=True):
        ys = _plot_engines(ax, df, x, column)
        xs = np.sort(df[df["engine"] == "conventional"][x].to_numpy(dtype=float))
        ax.set(xlabel="SSD free space (%)", ylabel=ylabel)
        ax.set_title(title)
        ax.set_xticks(xs.tolist())
        ax.margins(x=0.08)
        first = 0  # the paper's ratios are at the least free space, 20 %
        conv, co = float(ys["conventional"][first]), float(ys["codesign"][first])
        measured = co / conv if column == "queries_per_s" else co / conv - 1
        measured_text = f"{measured:.2f}{TIMES}" if column == "queries_per_s" else _signed(measured)
        paper = _paper_at_20pct(r.metrics, column)
        target = conv * paper[0] if paper is not None else co
        _note(ax, f"nandlab {measured_text}", (xs[first], co), co >= target, "codesign")
        if paper is not None:
            ax.plot([xs[first]], [target], **PAPER_MARKER)
            _note(ax, f"paper {paper[1]}", (xs[first], target), target > co, None)
            ax.set_ylim(top=max(ax.get_ylim()[1], target * 1.1))
            marked.append(f"{paper[1]} {name}")
    handles, _ = axes[0].get_legend_handles_labels()
    if marked:
        handles.append(
            paper_handle(f"paper at 20 % free, relative to conventional: {', '.join(marked)}")
        )
    _legend_below(figure_of(axes[0]), handles)
    return figure_of(axes[0])


# ---------------------------------------------------------------------------------------------
# R-E2: free space drifting 80 % -> 20 % (Table I)

_TABLE1 = {
    "queries_per_s": ("qps", "Throughput (queries/s)", "(a) Queries per second", "{:.0f}"),
    "mj_per_query": ("mj_per_query", "Energy per query (mJ)", "(b) Energy per query", "{:.3f}"),
    "we_cycles_per_block": ("we_cycles", "W/E cycles per block", "(c) W/E cycles", "{:.0f}"),
}
"""CSV column: (summary key stem, axis label, panel title, bar label format)."""


@register("miyaji-table1")
def miyaji_table1(source: Source) -> Figure:
    """Table I: both engines, nandlab beside the paper, free space drifting 80 % to 20 %."""
    r = load(source)
    axes = new_figure(
        f"{PAPER} Table I: free space drifting 80 % {chr(0x2192)} 20 % (I/D/U 40/20/40),"
        " nandlab beside the paper",
        3,
        14,
        4.4,
    )
    engines = list(ENGINES)
    xs = np.arange(len(engines), dtype=float)
    for ax, (stem, ylabel, title, fmt) in zip(axes, _TABLE1.values(), strict=True):
        series = {
            "nandlab": [r.metrics.get(f"{stem}_{e}", np.nan) for e in engines],
            "paper": [r.metrics.get(f"paper_{stem}_{e}", np.nan) for e in engines],
        }
        for offset, (who, values) in zip((-0.2, 0.2), series.items(), strict=True):
            paper = who == "paper"
            ax.bar(
                xs + offset,
                values,
                0.4,
                color=[ENGINES[e][1] for e in engines],
                edgecolor="black",
                lw=0.6,
                hatch="//" if paper else "",
                alpha=0.45 if paper else 1.0,
            )
            shown = [(x + offset, v) for x, v in zip(xs, values, strict=True) if np.isfinite(v)]
            label_bars(ax, [x for x, _ in shown], [v for _, v in shown], fmt)
        changes = [
            f"{who} {_signed(v[1] / v[0] - 1)}"
            for who, v in series.items()
            if all(np.isfinite(v)) and v[0]
        ]
        ax.set_xticks(xs.tolist(), labels=["conventional", "co-designed"])
        ax.set(xlabel="Engine", ylabel=ylabel)
        ax.set_title(f"{title}\nco-designed vs conv.: {', '.join(changes)}", fontsize=10)
        top = max(v for vs in series.values() for v in vs if np.isfinite(v))
        ax.set_ylim(0, top * 1.18)
    handles = [
        Patch(facecolor="white", edgecolor="black", label="nandlab (solid)"),
        Patch(facecolor="white", edgecolor="black", hatch="//", label="paper, Table I (hatched)"),
        *(Patch(color=color, label=label) for label, color, _ in ENGINES.values()),
    ]
    _legend_below(figure_of(axes[0]), handles, ncol=4)
    return figure_of(axes[0])


# ---------------------------------------------------------------------------------------------
# R-E5: ablation of the two techniques at 20 % free space (Fig. 14)

_VARIANTS = {
    "none": ("none\n(conventional)", "#d62728"),
    "iaa_only": ("IAA only", "#ff7f0e"),
    "u2di_only": ("U2DI only", "#9467bd"),
    "both": ("both\n(co-designed)", "#1f77b4"),
}


@register("miyaji-ablation")
def miyaji_ablation(source: Source) -> Figure:
    """Fig. 14: none / IAA only / U2DI only / both at 20 % free: queries/s and page copies."""
    r = load(source)
    df = r.curve("ablation").set_index("engine")
    variants = [v for v in _VARIANTS if v in df.index]
    axes = new_figure(
        f"{PAPER} Fig. 14: contribution of IAA and U2DI at 20 % free space (I/D/U 30/30/40)",
        2,
        11,
        4.3,
    )
    ax_qps, ax_copies = axes
    xs = np.arange(len(variants), dtype=float).tolist()
    colors = [_VARIANTS[v][1] for v in variants]
    qps = df.loc[variants, "queries_per_s"].to_numpy(dtype=float).tolist()
    copies = df.loc[variants, "page_copies"].to_numpy(dtype=float).tolist()
    base = qps[variants.index("none")] if "none" in variants else qps[0]
    ax_qps.bar(xs, qps, 0.6, color=colors)
    label_bars(ax_qps, xs, qps, "{:.0f}")
    for x, q in zip(xs, qps, strict=True):
        ax_qps.annotate(
            f"{q / base:.2f}{TIMES}",
            (x, q / 2),
            ha="center",
            va="center",
            color="white",
            fontweight="bold",
            fontsize=9,
        )
    ax_qps.axhline(base, color="black", ls=":", lw=1, label="none (baseline)")
    ax_qps.set(ylabel="Throughput (queries/s)", xlabel="Techniques enabled")
    ax_qps.set_title(f"(a) Throughput (in bars: {TIMES} over none)")
    ax_qps.set_ylim(0, max(qps) * 1.15)
    ax_qps.legend(fontsize=8, loc="upper left")

    ax_copies.bar(xs, copies, 0.6, color=colors)
    label_bars(ax_copies, xs, copies, "{:,.0f}")
    ax_copies.set_yscale("log")
    ax_copies.set_ylim(max(min(copies), 1) / 3, max(copies) * 4)
    ax_copies.set(ylabel="Pages copied by GC (log scale)", xlabel="Techniques enabled")
    ax_copies.set_title("(b) GC page copies during the measured queries")
    for ax in axes:
        ax.set_xticks(xs, labels=[_VARIANTS[v][0] for v in variants])
    return figure_of(ax_qps)


# ---------------------------------------------------------------------------------------------
# R-E3 and R-E4: sweeps of the block size and the row size (Figs. 17, 18)


def _sweep(
    r: Reproduction,
    curve: str,
    x: str,
    title: str,
    xlabel: str,
    paper: tuple[float, float, str] | None,
) -> Figure:
    """Throughput of both engines, the co-design speed-up and W/E cycles against `x` (log 2).

    `paper` is (x, speed-up, legend text) of the paper's reference, drawn as a star on (b).
    """
    df = r.curve(curve)
    axes = new_figure(title, 3, 14, 4.3)
    ax_qps, ax_speed, ax_wear = axes
    qps = _plot_engines(ax_qps, df, x, "queries_per_s")
    _plot_engines(ax_wear, df, x, "we_cycles_per_block")
    xs = np.sort(df[df["engine"] == "conventional"][x].to_numpy(dtype=float))
    speedup = qps["codesign"] / qps["conventional"]
    ax_speed.plot(xs, speedup, marker="o", color="black", label="nandlab (co-designed / conv.)")
    for x_, y_ in zip(xs.tolist(), speedup.tolist(), strict=True):
        _note(ax_speed, f"{y_:.2f}{TIMES}", (x_, y_), True, None)
    ax_speed.axhline(1, color="gray", lw=0.8)
    ticks = xs.tolist()
    handles, _ = ax_qps.get_legend_handles_labels()
    if paper is not None:
        at, value, text = paper
        ax_speed.plot([at], [value], **PAPER_MARKER)
        ax_speed.annotate(
            f"paper {value:g}{TIMES}",
            (at, value),
            xytext=(0, 10),
            textcoords="offset points",
            ha="center",
            fontsize=8,
        )
        ticks = sorted({*ticks, at})
        if all(float(t).is_integer() or (1 / t).is_integer() for t in ticks):
            ticks = [2.0**k for k in range(int(np.log2(ticks[0])), int(np.log2(ticks[-1])) + 1)]
        handles.append(paper_handle(text))
    ax_speed.set_ylim(0, max(*speedup.tolist(), paper[1] if paper else 0.0) * 1.2)
    ax_qps.set(ylabel="Throughput (queries/s)")
    ax_qps.set_title("(a) Throughput")
    ax_speed.set(ylabel=f"Co-designed / conventional queries/s ({TIMES})")
    ax_speed.set_title("(b) Speed-up of the co-designed engine")
    ax_wear.set(ylabel="W/E cycles per block (mean)")
    ax_wear.set_title("(c) Wear over the run")
    for ax in axes:
        log2_axis(ax, ticks)
        ax.set_xlabel(xlabel)
        ax.margins(x=0.08)
    _legend_below(figure_of(ax_qps), handles)
    return figure_of(ax_qps)


@register("miyaji-blocksize")
def miyaji_blocksize(source: Source) -> Figure:
    """Fig. 17: both engines against the erase-block size (16 KB pages) at 20 % free space."""
    r = load(source)
    paper = r.metrics.get("paper_speedup_at_8mb")
    return _sweep(
        r,
        "blocksize",
        "block_mb",
        f"{PAPER} Fig. 17: both engines against the erase-block size (20 % free, 16 KB pages)",
        "Erase-block size (MB, log scale)",
        None if paper is None else (8.0, paper, f"paper: {paper:g}{TIMES} at 8 MB blocks"),
    )


@register("miyaji-rowsize")
def miyaji_rowsize(source: Source) -> Figure:
    """Fig. 18: both engines against the row size, free space drifting 80 % to 20 %."""
    r = load(source)
    fig = _sweep(
        r,
        "rowsize",
        "row_bytes",
        f"{PAPER} Fig. 18: both engines against the row size (free space 80 % {chr(0x2192)} 20 %)",
        "Row size (bytes, log scale)",
        None,
    )
    # the paper gives a row size, not a value: where the co-design starts to degrade
    degrades = r.metrics.get("paper_codesign_degrades_from_row_bytes")
    if degrades is not None:
        for i, ax in enumerate(fig.axes):
            ax.axvline(
                degrades,
                color="k",
                ls=":",
                lw=1.2,
                label=f"paper: co-design degrades from ~{degrades:g} B rows" if i == 0 else None,
            )
        fig.axes[0].legend(fontsize=8)
    return fig


# ---------------------------------------------------------------------------------------------
# R-E6: latency of one garbage collection (sec. 2, Fig. 6)


@register("miyaji-gc-latency")
def miyaji_gc_latency(source: Source) -> Figure:
    """Sec. 2 / Fig. 6: time of one GC against the valid pages it copies, with the formula."""
    r = load(source)
    df = r.curve("gc_latency").sort_values("n_valid")
    axes = new_figure(
        f"{PAPER} Fig. 6: latency of one garbage collection (t_read 100 µs, t_write 1.6 ms,"
        " t_erase 8.5 ms)",
        2,
        12,
        4.3,
    )
    ax_time, ax_gap = axes
    n = df["n_valid"].to_numpy(dtype=float)
    measured = df["t_gc_ms"].to_numpy(dtype=float)
    formula = df["formula_ms"].to_numpy(dtype=float)
    ax_time.plot(n, measured, marker="o", color="#1f77b4", label="nandlab (chip model)")
    ax_time.plot(n, formula, "k--", lw=1.5, label="t_GC = N (t_r + t_w) + t_e (sec. 2)")
    handles, _ = ax_time.get_legend_handles_labels()
    bound = r.metrics.get("paper_t_gc_ms_at_100_valid_min")
    if bound is not None:
        ax_time.plot([100.0], [bound], **PAPER_MARKER)
        ax_time.annotate(
            "",
            (100.0, bound * 1.6),
            xytext=(100.0, bound),
            arrowprops={"arrowstyle": "->", "color": "black"},
        )
        handles.append(paper_handle(f"paper: t_GC ≥ {bound:g} ms at 100 valid pages"))
    ax_time.legend(handles=handles, fontsize=8, loc="upper left")
    ax_time.set(xlabel="Valid pages copied by the GC (N)", ylabel="GC time (ms)")
    ax_time.set_title("(a) Time of one GC")
    ax_time.set_ylim(bottom=0)
    gap = measured / formula - 1
    ax_gap.plot(n, gap, marker="o", color="#1f77b4")
    ax_gap.set_ylim(0, max(float(gap.max()) * 1.2, 0.01))
    ax_gap.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax_gap.set(xlabel="Valid pages copied by the GC (N)", ylabel="nandlab over the formula (%)")
    ax_gap.set_title("(b) Bus transfers and commands the formula leaves out")
    return figure_of(ax_time)


# ---------------------------------------------------------------------------------------------
# Valid pages per block after the 20 % free-space run (Fig. 13)


_VALID_CLASSES: list[tuple[str, Callable[[np.ndarray], np.ndarray]]] = [
    ("empty", lambda v: v == 0),
    ("≤ 25 %", lambda v: (v > 0) & (v <= 0.25)),
    ("≤ 50 %", lambda v: (v > 0.25) & (v <= 0.5)),
    ("≤ 75 %", lambda v: (v > 0.5) & (v <= 0.75)),
    ("< 100 %", lambda v: (v > 0.75) & (v < 1)),
    ("full", lambda v: v >= 1),
]
"""Classes of blocks by their share of valid pages, for the histogram of Fig. 13."""


@register("miyaji-validmap")
def miyaji_validmap(source: Source) -> Figure:
    """Fig. 13: valid pages of every block after the 20 % free-space run, both engines.

    Blocks are drawn as a fraction of the fullest block (the pages per block when any block is
    full, as after every run of this experiment).
    """
    r = load(source)
    maps = {e: r.curve(f"validmap_{e}") for e in ENGINES}
    pages = max(float(m["valid_pages"].max()) for m in maps.values()) or 1.0
    panels = new_mosaic(
        f"{PAPER} Fig. 13: valid pages per block after the 20 % free-space run",
        "AH\nBH",
        14,
        5.0,
        width_ratios=[2.2, 1],
    )
    axes = {"conventional": panels["A"], "codesign": panels["B"], "histogram": panels["H"]}
    image = None
    for engine, (label, _, _) in ENGINES.items():
        m = maps[engine]
        grid = m.pivot(index="plane", columns="block", values="valid_pages").to_numpy(float)
        ax = axes[engine]
        image = ax.imshow(
            grid / pages, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest"
        )
        ax.set_yticks(range(grid.shape[0]))
        ax.set(xlabel="Block of the plane", ylabel="Plane")
        full = r.metrics.get(f"fully_valid_block_fraction_{engine}", np.nan)
        partly = r.metrics.get(f"partly_valid_block_fraction_{engine}", np.nan)
        letter = "a" if engine == "conventional" else "b"
        ax.set_title(
            f"({letter}) {label}: {full:.0%} of blocks fully valid, {partly:.0%} partly",
            fontsize=10,
        )
    if image is not None:
        bar = figure_of(axes["codesign"]).colorbar(
            image, ax=[axes["conventional"], axes["codesign"]], pad=0.01
        )
        bar.set_label("Valid pages / pages per block")
        bar.ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax = axes["histogram"]
    for offset, (engine, (label, color, _)) in zip((-0.2, 0.2), ENGINES.items(), strict=True):
        share = maps[engine]["valid_pages"].to_numpy(dtype=float) / pages
        counts = [float(np.mean(inside(share))) for _, inside in _VALID_CLASSES]
        xs = np.arange(len(counts), dtype=float) + offset
        ax.bar(xs, counts, 0.4, color=color, label=label)
    ax.set_xticks(
        list(range(len(_VALID_CLASSES))), labels=[name for name, _ in _VALID_CLASSES], fontsize=8
    )
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set(xlabel="Valid pages of the block (share of its pages)", ylabel="Share of blocks (%)")
    ax.set_title("(c) Distribution over blocks", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return figure_of(ax)
