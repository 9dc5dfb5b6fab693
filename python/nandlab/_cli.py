"""The ``nandlab`` console script that ``pip install .`` puts on PATH: the Rust command line
(``crates/cli``), run in this process. Its worker processes (``sweep``, ``reproduce --jobs``)
run this same script, since this process's own executable is the Python interpreter."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def main() -> int:
    """Runs ``nandlab`` with the process's arguments; returns its exit status."""
    from nandlab._nandlab import cli_main

    script = Path(sys.argv[0]).resolve()
    worker = script if script.is_file() and os.access(script, os.X_OK) else None
    # Ctrl-C as for the binary: the commands that keep partial results install their own
    # handler; the others end at once (Python's handler would wait for the command to return)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    return cli_main(sys.argv[1:], worker)


if __name__ == "__main__":
    sys.exit(main())
