"""Issue 31 item 8, the users' small papercuts that had no test of their own: `nandlab info`,
the README's commands that paste as they are, and `note:` lines on stderr."""

import json
import re
import subprocess
from pathlib import Path

from cli import NANDLAB, REPO


def nandlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NANDLAB), *args], capture_output=True, text=True, check=False, timeout=120
    )


def test_info_prints_geometry_capacity_and_timings() -> None:
    done = nandlab("info", "bench-ssd")
    assert done.returncode == 0, done.stderr
    for row in ("geometry", "capacity", "timing", "bus", "over-provisioning"):
        assert row in done.stdout, done.stdout
    info = json.loads(nandlab("info", "slc", "--json").stdout)
    assert info["geometry"]["pages_per_block"] == 64
    assert info["raw_capacity_bytes"] == 4096 * 64 * 2048
    assert info["read_us"] == [25.0] and info["erase_us"] == 1500.0
    bad = nandlab("info", "no-such-device")
    assert bad.returncode == 2 and "no-such-device" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_readme_commands_paste_as_they_are() -> None:
    # `[a|b]` alternatives in a command broke when pasted into a shell (issue 31 item 8)
    commands = [
        line
        for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
        if re.match(r"\s*(\$ )?(nandlab|make|\.venv/bin/python|python3?) ", line)
    ]
    assert commands
    for line in commands:
        assert not re.search(r"\[[^\]]*\|[^\]]*\]", line), line


def test_notes_go_to_stderr(tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[j]\nioengine=libaio\nrw=randwrite\nnumber_ios=200\n")
    done = nandlab("fio", str(job), "--json")
    assert done.returncode == 0, done.stderr
    assert "note: ioengine=libaio" in done.stderr
    assert "note:" not in done.stdout
    json.loads(done.stdout)  # stdout is the result alone
