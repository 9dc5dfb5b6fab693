"""The `nandlab` binary the Python tests compare against: built by ``make build`` into
``$CARGO_TARGET_DIR`` (default ``target/``) of the repository."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NANDLAB = REPO / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "nandlab"
