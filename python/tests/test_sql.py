"""nandlab.sql: a PEP 249 connection to real SQLite on a simulated SSD."""

from __future__ import annotations

import sqlite3

import pytest

import nandlab
from nandlab import sql

SMALL = '[ssd]\npreset = "bench-ssd"\n[nand.geometry]\nblocks_per_plane = 32\n'


def test_module_globals_follow_pep_249() -> None:
    assert sql.apilevel == "2.0"
    assert sql.threadsafety == 1
    assert sql.paramstyle == "qmark"
    for name in (
        "Warning",
        "InterfaceError",
        "DataError",
        "OperationalError",
        "IntegrityError",
        "InternalError",
        "ProgrammingError",
        "NotSupportedError",
    ):
        assert issubclass(getattr(sql, name), Exception)
    assert issubclass(sql.IntegrityError, sql.DatabaseError)
    assert issubclass(sql.DatabaseError, sql.Error)
    assert nandlab.sql is sql


def test_cursor_round_trip_and_types() -> None:
    con = sql.connect(SMALL, journal_mode="wal", seed=1)
    cur = con.cursor()
    cur.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, i, r, s, b)")
    rows = [(1, 1.5, "x", b"\x00\xff"), (None, -2.0, "", b""), (True, 0.0, "é", None)]
    cur.executemany("INSERT INTO t(i, r, s, b) VALUES (?, ?, ?, ?)", rows)
    assert cur.rowcount == 3
    assert cur.lastrowid == 3
    assert con.in_transaction
    con.commit()
    assert not con.in_transaction
    cur.execute("SELECT i, r, s, b FROM t ORDER BY k")
    assert cur.description is not None and [d[0] for d in cur.description] == ["i", "r", "s", "b"]
    assert cur.fetchone() == (1, 1.5, "x", b"\x00\xff")
    assert cur.fetchmany(5) == [(None, -2.0, "", b""), (1, 0.0, "é", None)]
    assert cur.fetchone() is None
    assert list(con.execute("SELECT count(*) FROM t")) == [(3,)]
    con.close()
    with pytest.raises(sql.ProgrammingError, match="closed"):
        con.cursor().execute("SELECT 1")


def test_rollback_and_context_manager() -> None:
    con = sql.connect(SMALL, journal_mode="truncate")
    con.execute("CREATE TABLE t(x)")
    with con:
        con.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(ZeroDivisionError), con:
        con.execute("INSERT INTO t VALUES (2)")
        raise ZeroDivisionError
    con.execute("INSERT INTO t VALUES (3)")
    con.rollback()
    assert con.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert set(con.files()) == {"main.db", "main.db-journal"}


def test_errors_are_pep_249_classes_naming_the_problem() -> None:
    con = sql.connect(SMALL)
    con.execute("CREATE TABLE t(k INTEGER PRIMARY KEY)")
    con.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sql.IntegrityError, match="UNIQUE"):
        con.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sql.OperationalError, match="no such table: missing"):
        con.execute("SELECT * FROM missing")
    with pytest.raises(sql.ProgrammingError, match="syntax error"):
        con.execute("SELEC 1")
    with pytest.raises(sql.ProgrammingError, match="parameter 0"):
        con.execute("SELECT ?", (object(),))
    with pytest.raises(sql.ProgrammingError, match="sequence"):
        con.execute("SELECT ?", "x")
    with pytest.raises(sql.ProgrammingError, match="journal_mode 'memory'"):
        sql.connect(SMALL, journal_mode="memory")
    with pytest.raises(sql.OperationalError, match="no-such-device"):
        sql.connect("no-such-device.toml")
    with pytest.raises(sql.OperationalError, match="page_size_bytes 1000"):
        sql.connect(SMALL, page_size_bytes=1000)


def test_metrics_per_transaction_and_device_report() -> None:
    con = sql.connect(SMALL, journal_mode="delete", isolation_level=None)
    con.execute("CREATE TABLE t(x)")
    con.reset_metrics()
    for i in range(10):
        con.execute("INSERT INTO t VALUES (?)", (i,))
    m = con.metrics()
    assert m["journal_mode"] == "delete"
    assert m["write_transactions"] == 10
    assert m["syncs_per_tx"] >= 2
    assert (
        0 < m["commit_latency_us_p50"] <= m["commit_latency_us_p99"] <= m["commit_latency_us_max"]
    )
    assert m["waf"] >= 1.0
    assert m["energy_uj_per_tx"] > 0
    report = con.device_report()
    assert report["flush"]["requests"] >= 20
    assert report["trim"]["requests"] >= 10, "each DELETE-mode commit deletes the journal"


@pytest.mark.parametrize("mode", sql.JOURNAL_MODES)
def test_same_results_as_the_standard_library(mode: str) -> None:
    script = [
        "CREATE TABLE t(k INTEGER PRIMARY KEY, a, b TEXT)",
        "INSERT INTO t(a, b) VALUES (1, 'x'), (2, 'y'), (3, NULL)",
        "UPDATE t SET a = a * 10 WHERE k > 1",
        "DELETE FROM t WHERE b IS NULL",
        "SELECT k, a, b, length(b) FROM t ORDER BY k",
    ]
    ours = sql.connect(SMALL, journal_mode=mode)
    theirs = sqlite3.connect(":memory:")
    for statement in script:
        got = ours.execute(statement).fetchall()
        want = theirs.execute(statement).fetchall()
        assert got == want, statement
    ours.commit()
    theirs.commit()


def test_tpcc_reports_tpmc_and_keeps_consistency() -> None:
    r = sql.tpcc(SMALL, "wal", warehouses=1, terminals=10, transactions=150, seed=2, small=True)
    assert r["tpmc"] > 0
    assert r["consistency_violations"] == []
    assert sum(n for _, n in r["transactions"]) == 150
    assert r["metrics"]["write_transactions"] > 100
    with pytest.raises(sql.OperationalError, match="terminals 11"):
        sql.tpcc(SMALL, terminals=11, small=True)


def test_wrong_arguments_to_connect_and_tpcc_name_the_argument() -> None:
    """Guards against connect(db_name="") opening SQLite's temporary database (nothing reached
    the SSD) and against errors like "'NoneType' object has no attribute 'lower'"."""
    for db_name in ("", ":memory:", "file:x?mode=memory"):
        with pytest.raises(sql.ProgrammingError, match="db_name"):
            sql.connect(db_name=db_name)
    with pytest.raises(sql.ProgrammingError, match="journal_mode None"):
        sql.connect(journal_mode=None)  # type: ignore[arg-type]
    with pytest.raises(sql.ProgrammingError, match="device 3"):
        sql.connect(3)  # type: ignore[arg-type]
    with pytest.raises(sql.ProgrammingError, match="page_size_bytes '4096'"):
        sql.connect(page_size_bytes="4096")  # type: ignore[arg-type]
    with pytest.raises(sql.ProgrammingError, match=r"warehouses 1\.5"):
        sql.tpcc(warehouses=1.5)  # type: ignore[arg-type]
    with pytest.raises(sql.ProgrammingError, match="journal_mode None"):
        sql.tpcc(journal_mode=None)  # type: ignore[arg-type]


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


def _interrupted_child(code: str) -> tuple[int, str]:
    """Runs ``code`` in a new Python process leading its own process group, sends SIGINT to
    the group once the child prints ``ready`` (as Ctrl-C on a terminal does) and returns the
    exit status and output; fails if it has not stopped 30 s later."""
    import os
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        process_group=0,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    os.killpg(child.pid, signal.SIGINT)
    try:
        output, _ = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        raise AssertionError("the SQL call did not stop on SIGINT") from None
    return child.returncode, output


def test_sigint_stops_a_query_with_keyboard_interrupt() -> None:
    """Before: SIGINT was ignored inside a statement (a notebook kernel hung on an endless
    query until SIGKILL)."""
    code, output = _interrupted_child(
        "from nandlab import sql\n"
        f"con = sql.connect({SMALL!r})\n"
        "con.execute('CREATE TABLE t(x)')\n"
        "print('ready', flush=True)\n"
        "try:\n"
        f"    con.execute({ENDLESS!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt')\n"
        "    print(con.execute('SELECT count(*) FROM t').fetchone())\n"
    )
    assert code == 0, output
    assert "KeyboardInterrupt\n(0,)" in output, output


def test_sigint_stops_executescript_and_tpcc() -> None:
    code, output = _interrupted_child(
        "import json\n"
        "from nandlab import sql\n"
        f"con = sql.connect({SMALL!r})\n"
        "print('ready', flush=True)\n"
        "try:\n"
        f"    con.executescript('CREATE TABLE t(x); {ENDLESS};')\n"
        "except KeyboardInterrupt:\n"
        "    print('script stopped')\n"
        "import os, signal, threading\n"
        "threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    sql.tpcc(small=True, transactions=100_000_000)\n"
        "except KeyboardInterrupt as e:\n"
        "    r = json.loads(e.partial_json) if hasattr(e, 'partial_json') else {}\n"
        "    print('tpcc stopped', r.get('interrupted', 'in the load'))\n"
    )
    assert code == 0, output
    assert "script stopped" in output, output
    assert "tpcc stopped" in output, output


def test_pep_249_constructors_and_type_objects() -> None:
    """PEP 249's constructors and type objects; dates and times are stored as ``sqlite3``'s
    default adapters store them (ISO 8601 text)."""
    import datetime

    assert sql.Date(2024, 2, 29) == datetime.date(2024, 2, 29)
    assert sql.Time(13, 5, 0) == datetime.time(13, 5)
    assert sql.Timestamp(2024, 2, 29, 13, 5, 1) == datetime.datetime(2024, 2, 29, 13, 5, 1)
    assert sql.Binary(b"\x00\x01") == b"\x00\x01"
    import time

    ticks = time.mktime((2001, 9, 9, 1, 46, 40, 0, 0, -1))
    assert sql.DateFromTicks(ticks) == datetime.date(2001, 9, 9)
    assert sql.TimeFromTicks(ticks) == datetime.time(1, 46, 40)
    assert sql.TimestampFromTicks(ticks) == datetime.datetime(2001, 9, 9, 1, 46, 40)
    assert sql.STRING == str and sql.BINARY == bytes and sql.NUMBER == int  # noqa: E721 (PEP 249 type objects compare with ==)
    assert sql.NUMBER == float and sql.ROWID == int and sql.DATETIME == datetime.date  # noqa: E721 (PEP 249 type objects compare with ==)
    assert sql.STRING != bytes and sql.NUMBER != str and sql.BINARY != sql.STRING  # noqa: E721 (PEP 249 type objects compare with ==)
    con = sql.connect(SMALL, seed=1)
    values = (
        sql.Date(2024, 2, 29),
        sql.Time(13, 5, 0),
        sql.Timestamp(2024, 2, 29, 13, 5, 1),
        sql.Binary(b"\x00\xff"),
        bytearray(b"ab"),
    )
    con.execute("CREATE TABLE t(d, t, ts, b, ba)")
    con.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", values)
    row = con.execute("SELECT * FROM t").fetchone()
    ref = sqlite3.connect(":memory:")
    ref.execute("CREATE TABLE t(d, t, ts, b, ba)")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # sqlite3's default adapters
        # (the standard module has no adapter for a time of day: nandlab stores its ISO text)
        ref_values = tuple(v.isoformat() if type(v).__name__ == "time" else v for v in values)
        ref.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", ref_values)
    assert row == ref.execute("SELECT * FROM t").fetchone()
    assert row is not None and sql.BINARY == type(row[3]) and sql.STRING == type(row[0])  # noqa: E721


def test_comments_before_dml_still_open_a_transaction() -> None:
    """A DML statement after SQL comments opens the implicit transaction as without them
    (rollback() then undoes it) and reports its rowcount."""
    con = sql.connect(SMALL, seed=1)
    con.execute("CREATE TABLE t(x)")
    for statement in (
        "-- a comment\nINSERT INTO t VALUES (1)",
        "/* block\n comment */ INSERT INTO t VALUES (1)",
        "  -- one\n  /* two */\n-- three\nINSERT INTO t VALUES (1)",
    ):
        cur = con.execute(statement)
        assert con.in_transaction, statement
        assert cur.rowcount == 1
        con.rollback()
    assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_more_wrong_arguments_name_the_argument() -> None:
    for call, name in (
        (lambda: sql.connect(seed=-1), "seed -1"),
        (lambda: sql.connect(seed=1 << 64), "seed"),
        (lambda: sql.connect(page_size_bytes=0), "page_size_bytes 0"),
        (lambda: sql.tpcc(seed=-3), "seed -3"),
        (lambda: sql.tpcc(warehouses=0), "warehouses 0"),
        (lambda: sql.tpcc(terminals=-1), "terminals -1"),
        (lambda: sql.connect(SMALL).execute(None), "sql None"),  # type: ignore[arg-type]
        (lambda: sql.connect(SMALL).executescript(b"SELECT 1"), "sql b"),  # type: ignore[arg-type]
    ):
        with pytest.raises(sql.ProgrammingError, match=name):
            call()
