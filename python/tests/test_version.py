import subprocess
from pathlib import Path

import nandlab

REPO = Path(__file__).resolve().parents[2]


def test_version_matches_the_cli() -> None:
    cli = REPO / "target" / "release" / "nandlab"
    out = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"nandlab {nandlab.__version__}"


def test_version_is_semver() -> None:
    parts = nandlab.version().split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)
