"""Figures of the NANDFlashSim reproductions (nfs-*): Figs. 12-23 and Table III of the paper."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import PercentFormatter, StrMethodFormatter

from nandlab.experiments import Reproduction
from nandlab.plots import Source, load, register
from nandlab.plots._style import (
    EN_DASH,
    PAPER_MARKER,
    TIMES,
    by,
    figure_of,
    label_bars,
    log2_axis,
    new_figure,
    paper_handle,
)

READ = "#1f77b4"
WRITE = "#d62728"
WORKLOADS = {"swr": ("write (swr)", WRITE), "srd": ("read (srd)", READ)}
KIND_WORKLOAD = {"read": "srd", "write": "swr"}
STAGES = {
    "TOR": ("data out (TOR)", "#17becf"),
    "TON": ("cell read (TON)", "#ff7f0e"),
    "TIN": ("cell program (TIN)", "#d62728"),
    "BER": ("block erase (BER)", "#9467bd"),
    "TIR": ("data in (TIR)", "#1f77b4"),
    "CLE": ("command (CLE)", "#7f7f7f"),
    "ALE": ("address (ALE)", "#c7c7c7"),
    "STATUS": ("status (STATUS)", "#2ca02c"),
}
"""Stages in stacking order, with legend label and colour: data out below the cell stages, so
that a read's TOR and a write's cell time both start at zero."""


# ---------------------------------------------------------------------------------------------
# R-N1: throughput scaling with dies, planes and page size (Figs. 17, 18, 21)

_GAIN = re.compile(r"^paper_(read|write)_gain_(\d+)_to_(\d+)_")


def _gain_references(metrics: dict[str, float]) -> list[tuple[str, str, float, float, float]]:
    """(kind, workload, from, to, gain) of every ``paper_{read|write}_gain_A_to_B_*`` metric."""
    refs = []
    for key, gain in metrics.items():
        m = _GAIN.match(key)
        if m:
            refs.append((m[1], KIND_WORKLOAD[m[1]], float(m[2]), float(m[3]), gain))
    return refs


def _scaling(r: Reproduction, x: str, title: str, xlabel: str, unit: str, baseline: str) -> Figure:
    """Throughput and speed-up against `x` for swr and srd, with the paper's gains as stars.

    A paper gain from A to B is drawn at B, as the measured throughput at A times (1 + gain).
    """
    df = r.curve("throughput")
    contention = "bus_contention" in df.columns
    axes = new_figure(title, 3 if contention else 2, 13.5 if contention else 9.5)
    ax_abs, ax_rel = axes[0], axes[1]
    refs = _gain_references(r.metrics)
    values: list[float] = []
    for workload, (label, color) in WORKLOADS.items():
        sub = df[df["workload"] == workload].sort_values(x)
        xs = sub[x].to_numpy(dtype=float)
        ys = sub["mb_per_s"].to_numpy(dtype=float)
        values = xs.tolist()
        ax_abs.plot(xs, ys, marker="o", color=color, label=label)
        ax_rel.plot(xs, ys / ys[0], marker="o", color=color, label=label)
        if contention:
            share = sub["bus_contention"].to_numpy(dtype=float)
            axes[2].plot(xs, share, marker="o", color=color, label=label)
        for _, ref_workload, start, end, gain in refs:
            if ref_workload == workload and start in values:
                anchor = float(ys[values.index(start)])
                ax_abs.plot([end], [anchor * (1 + gain)], **PAPER_MARKER)
                ax_rel.plot([end], [anchor / ys[0] * (1 + gain)], **PAPER_MARKER)
    ax_abs.set(xlabel=xlabel, ylabel="Throughput (MB/s)", title="(a) Throughput")
    ax_rel.set(xlabel=xlabel, ylabel=f"Speed-up over {baseline} ({TIMES})")
    ax_rel.set_title("(b) Scaling")
    ax_abs.set_ylim(bottom=0)
    ax_rel.set_ylim(bottom=0)
    if contention:
        axes[2].set(xlabel=xlabel, ylabel="Bus contention (% of op time)")
        axes[2].set_title("(c) Time waiting for the shared bus")
        axes[2].yaxis.set_major_formatter(PercentFormatter(1.0))
        axes[2].set_ylim(0, 1)
    for ax in axes:
        log2_axis(ax, values)
    handles, _ = ax_abs.get_legend_handles_labels()
    if refs:
        gains = ", ".join(f"{kind} {a:g}→{b:g} {unit} {g:+.1%}" for kind, _, a, b, g in refs)
        handles.append(paper_handle(f"paper (NANDFlashSim): {gains}"))
    fig = figure_of(ax_abs)
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    return fig


@register("nfs-dies")
def nfs_dies(source: Source) -> Figure:
    """Fig. 18: MLC throughput of sequential reads and writes on 1 to 8 dies (SDP to ODP)."""
    return _scaling(
        load(source),
        "dies",
        "NANDFlashSim Fig. 18: throughput against the number of dies (MLC1, 2 KB requests)",
        "Dies on the channel",
        "dies",
        "1 die",
    )


@register("nfs-planes")
def nfs_planes(source: Source) -> Figure:
    """Fig. 17: MLC throughput with multiplane operations over 1 to 8 planes of one die."""
    return _scaling(
        load(source),
        "planes",
        "NANDFlashSim Fig. 17: throughput against the number of planes (MLC1, plane-first)",
        "Planes per die",
        "planes",
        "1 plane",
    )


@register("nfs-pagesize")
def nfs_pagesize(source: Source) -> Figure:
    """Fig. 21: MLC throughput against the page size in 2x mode on a dual-die package."""
    return _scaling(
        load(source),
        "page_kb",
        "NANDFlashSim Fig. 21: throughput against the page size (MLC1, 2x mode, DDP)",
        "Page size (KB)",
        "KB",
        "2 KB pages",
    )


# ---------------------------------------------------------------------------------------------
# R-N2: time and energy by stage (Figs. 12-13, 15)


def _stacked(
    ax: Axes, positions: Sequence[float], shares: list[dict[str, float]], stages: Sequence[str]
) -> None:
    """One bar per position, stacked in `STAGES` order; shares are fractions."""
    bottom = np.zeros(len(positions))
    for stage in stages:
        label, color = STAGES[stage]
        heights = np.array([s.get(stage, 0.0) for s in shares])
        ax.bar(positions, heights, 0.8, bottom=bottom, color=color, label=label)
        bottom += heights


def _stage_below(shares: dict[str, float], stage: str) -> float:
    """Height at which `stage` starts in a bar stacked in `STAGES` order."""
    below = 0.0
    for s in STAGES:
        if s == stage:
            break
        below += shares.get(s, 0.0)
    return below


# (workload, first stage of the segment, metric, its name): legacy writes spend at least 93 % of
# their time in cell stages (TON, TIN, BER stack together), legacy reads at least 50.5 % in TOR.
_BREAKDOWN_REFERENCES = [
    ("swr", "TON", "write_cell_stage_fraction", "cell"),
    ("srd", "TOR", "read_tor_fraction", "TOR"),
]


@register("nfs-breakdown")
def nfs_breakdown(source: Source) -> Figure:
    """Figs. 12-13 and 15: share of time and energy per stage, reads and writes, per mode."""
    r = load(source)
    df = r.curve("breakdown")
    modes = list(dict.fromkeys(df["mode"]))
    bars = [(m, w) for m in modes for w in WORKLOADS]
    positions = [i * 2.5 + j for i in range(len(modes)) for j in range(len(WORKLOADS))]
    used = set(df[(df["time_fraction"] > 0) | (df["energy_fraction"] > 0)]["stage"])
    stages = [s for s in STAGES if s in used]
    axes = new_figure(
        f"NANDFlashSim Figs. 12{EN_DASH}13, 15: breakdown by stage (MLC1, 2 KB requests)",
        2,
        12,
        5.0,
    )
    for ax, column, what in zip(
        axes, ("time_fraction", "energy_fraction"), ("time", "energy"), strict=True
    ):
        shares = []
        for mode, workload in bars:
            sub = df[(df["mode"] == mode) & (df["workload"] == workload)]
            shares.append(by(sub, "stage", column))
        _stacked(ax, positions, shares, stages)
        ax.set_xticks(positions, labels=[w for _, w in bars], fontsize=8)
        groups = ax.secondary_xaxis(-0.08)
        groups.set_xticks([i * 2.5 + 0.5 for i in range(len(modes))], labels=modes)
        groups.tick_params(length=0)
        groups.spines["bottom"].set_visible(False)
        groups.set_xlabel("Mode of operation (swr = sequential write, srd = sequential read)")
        ax.set_ylabel(f"Share of {what} (%)")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_ylim(0, 1)
        ax.grid(False)
        if column == "time_fraction":
            ax.set_title("(a) Time (cycles) by stage")
            _breakdown_references(ax, r.metrics, bars, positions, shares)
        else:
            ax.set_title("(b) Energy by stage")
    fig = figure_of(axes[0])
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=9, frameon=False)
    return fig


def _breakdown_references(
    ax: Axes,
    metrics: dict[str, float],
    bars: list[tuple[str, str]],
    positions: list[float],
    shares: list[dict[str, float]],
) -> None:
    """§8.4's minimums as a black line across the legacy bars, with the measured value."""
    for workload, first, metric, name in _BREAKDOWN_REFERENCES:
        minimum = metrics.get(f"paper_{metric}_min")
        if minimum is None or (bars[0][0], workload) not in bars:
            continue
        i = bars.index((bars[0][0], workload))
        below = _stage_below(shares[i], first)
        ax.hlines(below + minimum, positions[i] - 0.5, positions[i] + 0.5, color="k", lw=2.5)
        measured = metrics.get(metric)
        text = f"paper ≥ {minimum:.1%}"
        if measured is not None:
            text = f"{name} {measured:.1%}\n{text}"
        ax.text(
            positions[i],
            below + minimum / 2,
            text,
            rotation=90,
            ha="center",
            va="center",
            fontsize=8,
            color="white",
            fontweight="bold",
        )
    ax.plot([], [], color="k", lw=2.5, label="paper minimum (§8.4)")


# ---------------------------------------------------------------------------------------------
# R-N5: page migration (Figs. 14, 16)

_METHODS = {"legacy": ("#7f7f7f", "o"), "cache": ("#1f77b4", "s"), "internal": ("#2ca02c", "^")}


def _mode_style(mode: str) -> tuple[str, str, str, str]:
    """(colour, marker, line style, hatch): a colour and marker per method; 2x solid, hatched."""
    two_planes = mode.startswith("2x")
    method = mode.removeprefix("2x").removeprefix("-") or "legacy"
    color, marker = _METHODS.get(method, ("#8c564b", "D"))
    return color, marker, "-" if two_planes else "--", "//" if two_planes else ""


@register("nfs-migration")
def nfs_migration(source: Source) -> Figure:
    """Figs. 14 and 16: time and energy to migrate blocks, legacy / cache / internal, 1x and 2x."""
    r = load(source)
    df = r.curve("migration")
    modes = list(dict.fromkeys(df["mode"]))
    most = int(df["blocks"].max())
    time_ms = by(df[df["blocks"] == most], "mode", "time_ms")
    energy_uj = by(df[df["blocks"] == most], "mode", "energy_uj")
    axes = new_figure(
        "NANDFlashSim Figs. 14, 16: page migration (MLC1; 2x = two planes at once)", 3, 14, 4.2
    )
    ax_time, ax_speed, ax_energy = axes
    for mode in modes:
        sub = df[df["mode"] == mode].sort_values("blocks")
        color, marker, style, _ = _mode_style(mode)
        ax_time.plot(
            sub["blocks"], sub["time_ms"], marker=marker, color=color, ls=style, label=mode
        )
    ax_time.set(xlabel="Blocks migrated", ylabel="Migration time (ms)")
    ax_time.set_title("(a) Time to migrate")
    ax_time.set_xticks(sorted(set(df["blocks"].astype(int))))
    ax_time.set_ylim(bottom=0)
    ax_time.legend(fontsize=8, ncol=2, loc="upper left")

    xs = list(range(len(modes)))
    legacy_ms = time_ms.get("legacy", float("nan"))
    speedups = [legacy_ms / time_ms[m] for m in modes]
    energies = [energy_uj[m] / 1000 for m in modes]
    for ax, ys in ((ax_speed, speedups), (ax_energy, energies)):
        for x, mode, y in zip(xs, modes, ys, strict=True):
            color, _, _, hatch = _mode_style(mode)
            ax.bar(x, y, 0.7, color=color, hatch=hatch, edgecolor="white", alpha=0.9)
        ax.set_xticks(xs, labels=modes, rotation=30, ha="right")
        ax.set_xlabel("Migration mode")
    label_bars(ax_speed, xs, speedups, "{:.2f}" + TIMES)
    label_bars(ax_energy, xs, energies, "{:.1f}")
    ax_speed.axhline(1, color="black", lw=0.8)
    ax_speed.set_ylabel(f"Speed-up over legacy, {most} blocks ({TIMES})")
    ax_speed.set_title("(b) Speed-up over legacy")
    ax_speed.set_ylim(0, max(speedups) * 1.2)
    paper = [
        (x, r.metrics.get(f"paper_{m.replace('-', '_').replace('2x', 'twox')}_speedup"))
        for x, m in zip(xs, modes, strict=True)
    ]
    marked = [(x, p) for x, p in paper if p is not None]
    if marked:
        ax_speed.plot([x for x, _ in marked], [p for _, p in marked], **PAPER_MARKER)
        ax_speed.legend(handles=[paper_handle("paper (Fig. 14)")], fontsize=8, loc="upper left")
    spread = max(energies) / min(energies)
    ax_energy.set_ylabel(f"Energy, {most} blocks (mJ)")
    ax_energy.set_title(f"(c) Energy (max / min = {spread:.2f})")
    ax_energy.set_ylim(0, max(energies) * 1.2)
    return figure_of(ax_time)


# ---------------------------------------------------------------------------------------------
# R-N6: bus contention (Fig. 20)

_CELLS = {"slc": ("SLC", "#1f77b4"), "mlc": ("MLC1", "#d62728")}


@register("nfs-contention")
def nfs_contention(source: Source) -> Figure:
    """Fig. 20: share of op time waiting for the bus, SLC against MLC, 1 to 8 dies."""
    r = load(source)
    df = r.curve("contention")
    axes = new_figure(
        "NANDFlashSim Fig. 20: bus contention against the number of dies (Table II mixes)", 2, 11
    )
    ax_dies, ax_mix = axes
    dies = sorted(set(df["dies"].to_numpy(dtype=float).tolist()))
    mean: dict[str, list[float]] = {}
    for shift, (cell, (label, color)) in zip((0.96, 1.04), _CELLS.items(), strict=True):
        per_dies = [
            df[(df["cell"] == cell) & (df["dies"] == d)]["bus_contention"].to_numpy(dtype=float)
            for d in dies
        ]
        if not all(len(p) for p in per_dies):
            continue
        mean[cell] = [float(p.mean()) for p in per_dies]
        low = [m - float(p.min()) for m, p in zip(mean[cell], per_dies, strict=True)]
        high = [float(p.max()) - m for m, p in zip(mean[cell], per_dies, strict=True)]
        ax_dies.plot(dies, mean[cell], marker="o", color=color, label=f"{label}, mean of mixes")
        ax_dies.errorbar(
            [d * shift for d in dies],
            mean[cell],
            yerr=[low, high],
            fmt="none",
            ecolor=color,
            alpha=0.5,
            capsize=3,
        )
    paper = r.metrics.get("paper_slc_over_mlc_contention")
    handles, _ = ax_dies.get_legend_handles_labels()
    handles.append(
        Line2D([], [], color="gray", marker="_", ms=10, label=f"min{EN_DASH}max over mixes")
    )
    if paper is not None and "mlc" in mean:
        most, base = dies[-1], mean["mlc"][-1]
        ax_dies.plot([most], [base * (1 + paper)], **PAPER_MARKER)
        ax_dies.annotate(
            "",
            (most, base * (1 + paper)),
            xytext=(most, base),
            arrowprops={"arrowstyle": "->", "color": "black", "linestyle": ":"},
        )
        handles.append(paper_handle(f"paper: SLC {paper:+.1%} over MLC at {most:g} dies"))
    ax_dies.legend(handles=handles, loc="upper left", fontsize=8)
    log2_axis(ax_dies, dies)
    ax_dies.set(xlabel="Dies on the channel", ylabel="Bus contention (% of op time)")
    ax_dies.set_title("(a) Mean over the five mixes")

    most_dies = df["dies"].max()
    at_most = df[df["dies"] == most_dies]
    mixes = list(dict.fromkeys(at_most["workload"]))
    xs = np.arange(len(mixes))
    for offset, (cell, (label, color)) in zip((-0.2, 0.2), _CELLS.items(), strict=True):
        share = by(at_most[at_most["cell"] == cell], "workload", "bus_contention")
        ax_mix.bar(xs + offset, [share.get(m, 0.0) for m in mixes], 0.4, color=color, label=label)
    ax_mix.set_xticks(list(xs), labels=mixes)
    ax_mix.set(xlabel="Workload mix (Table II)", ylabel="Bus contention (% of op time)")
    ax_mix.set_title(f"(b) Per mix at {most_dies} dies")
    ax_mix.legend(fontsize=8, loc="upper left")
    for ax in axes:
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_ylim(0, 1)
    return figure_of(ax_dies)


# ---------------------------------------------------------------------------------------------
# R-N4: energy of one operation (Table III, Fig. 23)

_OPERATIONS = {
    "read": ("read_page_uj", "page read"),
    "program": ("program_page_uj", "page program"),
    "erase": ("erase_block_uj", "block erase"),
}


@register("nfs-energy")
def nfs_energy(source: Source) -> Figure:
    """Table III and Fig. 23: energy of a legacy read, program and erase, and its stages."""
    r = load(source)
    axes = new_figure(
        "NANDFlashSim Table III, Fig. 23: energy per operation (QDP SLC, 3.3 V)", 2, 11
    )
    ax_ops, ax_stages = axes
    ops = [op for op, (key, _) in _OPERATIONS.items() if key in r.metrics]
    xs = np.arange(len(ops), dtype=float)
    measured = [r.metrics[_OPERATIONS[op][0]] for op in ops]
    ax_ops.bar(xs, measured, 0.5, color="#1f77b4", label="nandlab")
    label_bars(ax_ops, xs.tolist(), measured, "{:.4g}")
    paper = [
        (x, r.metrics.get(f"paper_{_OPERATIONS[op][0]}")) for x, op in zip(xs, ops, strict=True)
    ]
    marked = [(x + 0.38, p) for x, p in paper if p is not None]
    handles, _ = ax_ops.get_legend_handles_labels()
    if marked:
        ax_ops.plot([x for x, _ in marked], [p for _, p in marked], **PAPER_MARKER)
        for x, p in marked:
            ax_ops.annotate(
                f"{p:g}", (x, p), xytext=(9, 0), textcoords="offset points", va="center", fontsize=8
            )
        handles.append(paper_handle("paper (Table III)"))
    ax_ops.legend(handles=handles, loc="upper left", fontsize=9)
    ax_ops.set_yscale("log")
    ax_ops.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax_ops.set_ylim(1, max(measured) * 4)
    ax_ops.set_xlim(-0.6, len(ops) - 0.1)
    ax_ops.set_xticks(xs.tolist(), labels=[_OPERATIONS[op][1] for op in ops])
    ax_ops.set(xlabel="Operation (legacy mode)", ylabel="Energy per operation (µJ, log scale)")
    ax_ops.set_title("(a) Energy per operation")

    df = r.curve("stage_energy")
    operations = list(dict.fromkeys(df["operation"]))
    ys = np.arange(len(operations), dtype=float)
    left = np.zeros(len(operations))
    for stage, (label, color) in STAGES.items():
        by_op = by(df[df["stage"] == stage], "operation", "fraction")
        widths = np.array([by_op.get(op, 0.0) for op in operations])
        if widths.any():
            ax_stages.barh(ys, widths, 0.6, left=left, color=color, label=label)
        left += widths
    ax_stages.set_yticks(ys.tolist(), labels=[_OPERATIONS.get(o, (o, o))[1] for o in operations])
    ax_stages.invert_yaxis()
    ax_stages.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax_stages.set_xlim(0, 1)
    ax_stages.set(xlabel="Share of the operation's energy (%)", ylabel="Operation (legacy mode)")
    ax_stages.set_title("(b) Energy by stage")
    ax_stages.grid(True, axis="x", alpha=0.3)
    ax_stages.grid(False, axis="y")
    ax_stages.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8)
    return figure_of(ax_ops)


# ---------------------------------------------------------------------------------------------
# R-N3: scheduling (Figs. 19, 22)

_POLICIES = {"die-first": "#1f77b4", "plane-first": "#ff7f0e"}
_ARCHITECTURES = {"many-die": "#1f77b4", "many-plane": "#ff7f0e"}


@register("nfs-scheduler")
def nfs_scheduler(source: Source) -> Figure:
    """Figs. 19 and 22: many-die vs many-plane on Table II mixes; die-first vs plane-first."""
    r = load(source)
    axes = new_figure(
        "NANDFlashSim Figs. 19, 22: device architecture and I/O scheduling (MLC1)", 3, 15, 4.2
    )
    ax_iops, ax_gain, ax_policy = axes
    arch = r.curve("architectures")
    mixes = list(dict.fromkeys(arch["workload"]))
    xs = np.arange(len(mixes), dtype=float)
    iops: dict[str, list[float]] = {}
    for offset, (name, color) in zip((-0.2, 0.2), _ARCHITECTURES.items(), strict=True):
        by_mix = by(arch[arch["architecture"] == name], "workload", "iops")
        iops[name] = [by_mix[m] for m in mixes]
        ax_iops.bar(xs + offset, iops[name], 0.4, color=color, label=name)
    ax_iops.set_xticks(xs.tolist(), labels=mixes)
    ax_iops.set(xlabel="Workload mix (Table II)", ylabel="IOPS (requests/s)")
    ax_iops.set_title(f"(a) Fig. 19: 8 dies {TIMES} 1 plane vs 1 die {TIMES} 8 planes")
    ax_iops.legend(fontsize=8)

    gains = [d / p - 1 for d, p in zip(iops["many-die"], iops["many-plane"], strict=True)]
    ax_gain.bar(xs, gains, 0.6, color="#1f77b4")
    label_bars(ax_gain, xs.tolist(), gains, "{:+.0%}")
    mean = r.metrics.get("many_die_over_many_plane_iops_gain", float(np.mean(gains)))
    ax_gain.axhline(mean, color="#1f77b4", ls="--", lw=1.2, label=f"nandlab mean {mean:+.1%}")
    paper = r.metrics.get("paper_many_die_over_many_plane_iops_gain")
    if paper is not None:
        ax_gain.axhline(paper, color="black", ls=":", lw=1.8, label=f"paper mean {paper:+.1%}")
    ax_gain.set_xticks(xs.tolist(), labels=mixes)
    ax_gain.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax_gain.set_ylim(min(0.0, *gains) * 1.3, max(*gains, mean, paper or 0.0) * 1.3)
    ax_gain.set(xlabel="Workload mix (Table II)", ylabel="Many-die IOPS over many-plane (%)")
    ax_gain.set_title("(b) Fig. 19: many-die advantage")
    ax_gain.legend(fontsize=8, loc="upper right")

    policies = r.curve("policies")
    sizes: list[float] = []
    for policy, color in _POLICIES.items():
        for workload, (label, _) in WORKLOADS.items():
            sub = policies[(policies["policy"] == policy) & (policies["workload"] == workload)]
            sub = sub.sort_values("transfer_kb")
            sizes = sub["transfer_kb"].to_numpy(dtype=float).tolist()
            ax_policy.plot(
                sizes,
                sub["mb_per_s"],
                ls="-" if workload == "srd" else "--",
                marker="o" if workload == "srd" else "s",
                color=color,
                label=f"{policy}, {label}",
            )
    log2_axis(ax_policy, sizes)
    ax_policy.set(xlabel="Transfer size (KB)", ylabel="Throughput (MB/s)")
    ax_policy.set_title(f"(c) Fig. 22: 4 dies {TIMES} 2 planes")
    ax_policy.set_ylim(bottom=0)
    ax_policy.legend(fontsize=8, loc="center right")
    return figure_of(ax_iops)
