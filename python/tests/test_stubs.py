import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_stubs_match_the_extension_module() -> None:
    env = dict(os.environ, MYPYPATH=str(REPO / "python"))
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "nandlab._nandlab"],
        capture_output=True,
        check=False,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_package_type_checks() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "-p", "nandlab"],
        capture_output=True,
        check=False,
        text=True,
        env=dict(os.environ, MYPYPATH=str(REPO / "python")),
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout + out.stderr
