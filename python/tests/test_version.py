import subprocess

from cli import NANDLAB

import nandlab


def test_version_matches_the_cli() -> None:
    out = subprocess.run([str(NANDLAB), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"nandlab {nandlab.__version__}"


def test_version_is_semver() -> None:
    parts = nandlab.version().split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)
