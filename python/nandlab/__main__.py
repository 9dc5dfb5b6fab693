"""Command line of the Python package: ``python -m nandlab report OUTDIR [--output FILE]``."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command in `argv`; returns the exit code (2 for a bad folder)."""
    parser = argparse.ArgumentParser(prog="python -m nandlab", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = commands.add_parser(
        "report",
        help="self-contained HTML report of a results folder",
        description="Writes one HTML file with the figures, summary metrics and CSV curves of "
        "OUTDIR: a folder written by `nandlab reproduce`, `run`, `replay`, `fio` or `sweep`, or a "
        "folder of such folders.",
    )
    report.add_argument("outdir", type=Path, metavar="OUTDIR")
    report.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="FILE",
        help="the HTML file to write (default: OUTDIR/report.html)",
    )
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args.outdir, args.output)
    parser.error(f"unknown command {args.command}")


def _report(outdir: Path, output: Path | None) -> int:
    from nandlab.report import write_report

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            path = write_report(outdir, output)
    except (OSError, ValueError) as error:
        print(f"nandlab report: error: {error}", file=sys.stderr)
        return 2
    for warning in caught:
        print(f"nandlab report: warning: {warning.message}", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
