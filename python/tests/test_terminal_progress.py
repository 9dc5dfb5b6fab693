"""Issue 31 item 2: every command that can run for more than a few seconds shows its progress
on a terminal (``crash --cuts 100000`` once ran for 3 minutes silently) and stops on Ctrl-C
with exit status 130. Each command runs on a pseudo-terminal until its progress line appears,
then gets SIGINT."""

import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli import NANDLAB

LONG_SCRIPT = "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);\n" + "".join(
    f"BEGIN; INSERT INTO t VALUES({i}, 'row {i}'); COMMIT;\n" for i in range(200_000)
)

# (arguments, what the progress line says)
COMMANDS = [
    (["crash", "--cuts", "100000"], "cut-recover cycles"),
    (["crash", "--engine", "--cuts", "100000"], "cut-recover cycles"),
    (["sql-crash", "--cuts", "100000"], "power cuts"),
    (["sql", "{script}"], "statements"),
    (["tpcc", "--transactions", "1000000"], "tpcc: loading the tables"),
    (["tpcc", "--transactions", "1000000"], "/1,000,000"),
    (["bench", "sql", "--requests", "10000000"], "transactions"),
    (["bench", "ssd"], "bench ssd"),
]


def progress_then_interrupt(argv: list[str], label: str) -> tuple[str, int]:
    """Runs `argv` with stdout and stderr on a pseudo-terminal until `label` is drawn (at most
    60 s), then sends SIGINT; returns the terminal's text and the exit status."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    interrupted = False
    while True:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if not interrupted and (label.encode() in seen or time.monotonic() > deadline):
            child.send_signal(signal.SIGINT)
            interrupted = True
        if interrupted and child.poll() is not None and not ready:
            break
    status = child.wait(timeout=60)
    os.close(leader)
    return seen.decode(errors="replace"), status


@pytest.mark.parametrize(("args", "label"), COMMANDS, ids=[" ".join(c[0][:2]) for c in COMMANDS])
def test_long_commands_show_progress_on_a_terminal_and_stop_on_ctrl_c(
    args: list[str], label: str, tmp_path: Path
) -> None:
    script = tmp_path / "long.sql"
    script.write_text(LONG_SCRIPT)
    argv = [str(NANDLAB), *(a.replace("{script}", str(script)) for a in args)]
    text, status = progress_then_interrupt(argv, label)
    assert label in text, text[-2000:]
    assert status == 130, (status, text[-2000:])
