"""Self-contained HTML reports of results folders: the figures, summary metrics and CSV curves.

``python -m nandlab report OUTDIR`` (or `write_report`) takes a folder written by
``nandlab reproduce``, ``run``, ``replay``, ``fio`` or ``sweep``, or a folder of such
folders, and writes one HTML file with every figure embedded as a PNG, the summary metrics
beside the paper's values, and the CSV curves as tables. Experiments without a figure function
in `nandlab.plots.FIGURES` still get their tables.
"""

from __future__ import annotations

import base64
import html
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from nandlab import _nandlab, plots
from nandlab.experiments import Reproduction, list_experiments

ROWS_MAX = 200
"""Rows of a CSV curve shown in the report; longer curves are cut with a note."""
ROWS_OPEN_MAX = 20
"""Curves up to this many rows are shown unfolded."""
FIGURE_DPI = 120


def find_results(root: str | Path) -> list[Path]:
    """`root` if it is a results folder (`plots.RESULT_FILES`), else every results folder
    below it (not those inside another one, such as a sweep's cache), sorted."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such folder")
    if any((root / name).is_file() for name in plots.RESULT_FILES):
        return [root]
    candidates = sorted({p.parent for name in plots.RESULT_FILES for p in root.rglob(name)})
    found: list[Path] = []
    for folder in candidates:
        if not any(folder.is_relative_to(f) for f in found):
            found.append(folder)
    if not found:
        raise FileNotFoundError(
            f"{root}: no results in it or its subfolders (summary.json of `nandlab reproduce`, "
            "report.json of `nandlab run`, `replay` or `fio`, sweep.csv of `nandlab sweep`)"
        )
    return found


def write_report(root: str | Path, output: str | Path | None = None) -> Path:
    """Writes the HTML report of `root` to `output` (default root/report.html)."""
    root = Path(root)
    html_text = build_html(root)
    path = Path(output) if output is not None else root / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html_text, encoding="utf-8")
    return path


def build_html(root: str | Path) -> str:
    """The report of every results folder in `root`, as one HTML document."""
    root = Path(root)
    folders = find_results(root)
    results = [plots.load(folder) for folder in folders]
    about = {e.id: (e.reference, e.title) for e in list_experiments()}
    about["run"] = ("nandlab run | replay | fio", "a run of a stack config, trace or fio job")
    about["sweep"] = ("nandlab sweep", "a sweep: every metric at every point of a grid")
    anchors = _anchors([_relative(f, root) for f in folders])
    contents = "\n".join(
        f'<li><a href="#{a}">{html.escape(r.experiment)}</a>'
        f"{_where(r, root)} — {html.escape(about.get(r.experiment, ('', ''))[1])}</li>"
        for r, a in zip(results, anchors, strict=True)
    )
    sections = "\n".join(
        _section(r, a, root, about.get(r.experiment)) for r, a in zip(results, anchors, strict=True)
    )
    return _PAGE.format(
        title=html.escape(f"nandlab report: {root.resolve().name}"),
        root=html.escape(str(root)),
        version=html.escape(_nandlab.version()),
        contents=contents,
        sections=sections,
    )


def metrics_table(metrics: dict[str, float]) -> pd.DataFrame:
    """Metric, value and the paper's value (from the matching ``paper_`` key) of a summary.

    ``paper_X`` matches metric ``X``; ``paper_X_min`` / ``paper_X_max`` match ``X`` as a bound
    (shown ≥ / ≤); otherwise a paper key matches the one metric whose name starts with ``X_``.
    Paper keys matching no metric get their own row with an empty value.
    """
    measured = {k: v for k, v in metrics.items() if not k.startswith("paper_")}
    paper_of: dict[str, str] = {}
    unmatched: list[tuple[str, str]] = []
    for key, value in metrics.items():
        if not key.startswith("paper_"):
            continue
        name, bound = key.removeprefix("paper_"), ""
        for suffix, sign in (("_min", "≥ "), ("_max", "≤ ")):
            if name not in measured and name.endswith(suffix):
                name, bound = name.removesuffix(suffix), sign
        if name not in measured:
            starting = [m for m in measured if m.startswith(name + "_")]
            name = starting[0] if len(starting) == 1 else name
        if name in measured and name not in paper_of:
            paper_of[name] = bound + _number(value)
        else:
            unmatched.append((key.removeprefix("paper_"), bound + _number(value)))
    rows = [(k, _number(v), paper_of.get(k, "")) for k, v in measured.items()]
    rows += [(name, "", paper) for name, paper in unmatched]
    return pd.DataFrame(rows, columns=["metric", "value", "paper"])


def _number(value: float) -> str:
    """A readable number: thousands separated, four significant digits, no needless exponent."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    if abs(value) >= 1e-3:
        return f"{value:.4g}"
    return f"{value:.2e}"


def _relative(folder: Path, root: Path) -> str:
    return folder.relative_to(root).as_posix() if folder != root else root.resolve().name


def _where(r: Reproduction, root: Path) -> str:
    """The folder of `r` when its name is not the experiment id."""
    name = _relative(r.out, root)
    return "" if name == r.experiment else f" <code>{html.escape(name)}</code>"


def _anchors(names: Sequence[str]) -> list[str]:
    """HTML ids, one per folder, unique."""
    anchors: list[str] = []
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "results"
        anchor, n = base, 1
        while anchor in anchors:
            n += 1
            anchor = f"{base}-{n}"
        anchors.append(anchor)
    return anchors


def _section(r: Reproduction, anchor: str, root: Path, about: tuple[str, str] | None) -> str:
    reference, title = (
        about
        if about
        else ("", "no description: an experiment this version of nandlab does not list")
    )
    parts = [
        f'<section id="{anchor}">',
        f"<h2>{html.escape(r.experiment)}{_where(r, root)}"
        f" <small>{html.escape(reference)}</small></h2>",
        f"<p>{html.escape(title)}</p>",
        '<p class="note">Interrupted (Ctrl-C): the points finished before it.</p>'
        if r.interrupted
        else "",
        _figure(r),
        "<h3>Summary metrics</h3>",
        metrics_table(r.metrics).to_html(index=False, border=0, classes="metrics"),
        "<h3>Curves</h3>" if r.curves() else "",
        *(_curve(r, name) for name in r.curves()),
        "</section>",
    ]
    return "\n".join(p for p in parts if p)


def _figure(r: Reproduction) -> str:
    if r.experiment not in plots.FIGURES:
        return '<p class="note">No figure function for this experiment; tables only.</p>'
    try:
        fig = plots.FIGURES[r.experiment](r)
        png = plots.png_bytes(fig, dpi=FIGURE_DPI)
    except Exception as error:  # a broken figure must not lose the rest of the report
        warnings.warn(f"{r.out}: figure of {r.experiment} failed: {error}", stacklevel=2)
        return f'<p class="error">Figure failed: {html.escape(repr(error))}</p>'
    data = base64.b64encode(png).decode("ascii")
    alt = html.escape(f"figure of {r.experiment}")
    return f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"></figure>'


def _curve(r: Reproduction, name: str) -> str:
    try:
        df = r.curve(name)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as error:
        return f'<p class="error">{html.escape(name)}.csv: {html.escape(str(error))}</p>'
    rows = len(df)
    shown = df.head(ROWS_MAX)
    note = f", first {ROWS_MAX} shown" if rows > ROWS_MAX else ""
    table = shown.to_html(index=False, border=0, classes="curve", na_rep="", float_format=_number)
    opened = " open" if rows <= ROWS_OPEN_MAX else ""
    summary = f"{name}.csv — {rows} rows, {len(df.columns)} columns{note}"
    return f"<details{opened}><summary>{html.escape(summary)}</summary>\n{table}\n</details>"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }}
h1 {{ margin-bottom: 0.2em; }}
h2 {{ border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 2.5em; }}
h2 small {{ color: #666; font-weight: normal; font-size: 0.6em; }}
figure {{ margin: 1em 0; }}
img {{ max-width: 100%; height: auto; border: 1px solid #eee; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }}
th, td {{ padding: 0.2em 0.8em; text-align: right; border-bottom: 1px solid #eee; }}
th {{ background: #f4f4f4; }}
td:first-child, th:first-child {{ text-align: left; }}
table.metrics td:last-child {{ color: #444; font-style: italic; }}
details {{ margin: 0.4em 0; }}
summary {{ cursor: pointer; color: #245; }}
.note {{ color: #666; }}
.error {{ color: #a00; font-weight: bold; }}
code {{ background: #f4f4f4; padding: 0 0.3em; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>Results in <code>{root}</code>, reported by nandlab {version}. Values in the
<em>paper</em> column are the paper's reference values (the <code>paper_</code> keys of
summary.json).</p>
<nav><ul>
{contents}
</ul></nav>
{sections}
</body>
</html>
"""
