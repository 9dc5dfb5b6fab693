"""The ``nandlab`` command that installing the package puts on PATH (``[project.scripts]``,
``nandlab._cli``): the Rust command line run in-process, with the binary's outputs, exit
statuses and sweep workers (which run the script itself)."""

import subprocess
import sys
from pathlib import Path

from cli import NANDLAB

REPO = Path(__file__).resolve().parents[2]
# pip and `maturin develop` install console scripts beside the environment's interpreter
SCRIPT = Path(sys.executable).parent / "nandlab"


def run(program: Path, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(program), *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_the_script_is_installed_and_prints_what_the_binary_prints() -> None:
    assert SCRIPT.is_file(), f"no console script at {SCRIPT} (pip install . / make develop)"
    for args in (["--version"], ["info", "mlc1", "--json"], ["presets"]):
        script, binary = run(SCRIPT, *args), run(NANDLAB, *args)
        assert script.returncode == 0, script.stderr
        assert script.stdout == binary.stdout, args


def test_errors_keep_their_message_and_exit_status() -> None:
    for args, status in ((["run", "no-such.toml"], 2), (["sweep", "x.toml", "--jobs", "0"], 2)):
        script, binary = run(SCRIPT, *args), run(NANDLAB, *args)
        assert (script.returncode, script.stderr) == (binary.returncode, binary.stderr), args
        assert script.returncode == status, script.stderr


def test_sweep_workers_run_the_script(tmp_path: Path) -> None:
    sweep = REPO / "examples" / "ssd-gc-sweep.toml"
    script = run(SCRIPT, "sweep", str(sweep), "--jobs", "2", "--out", str(tmp_path / "script"))
    binary = run(NANDLAB, "sweep", str(sweep), "--jobs", "2", "--out", str(tmp_path / "bin"))
    # (workers that ran the interpreter instead, `python sweep-worker`, fail the sweep)
    assert script.returncode == 0, script.stderr
    assert binary.returncode == 0, binary.stderr
    assert (tmp_path / "script" / "sweep.csv").read_text() == (
        tmp_path / "bin" / "sweep.csv"
    ).read_text()
