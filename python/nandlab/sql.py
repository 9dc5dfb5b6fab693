"""Real SQLite on a simulated SSD, as a DB-API 2.0 (PEP 249) connection.

SQLite itself (bundled in the extension) runs on a VFS whose files live on the simulated SSD:
every page it reads or writes goes through the controller and takes simulated time::

    from nandlab import sql
    con = sql.connect("bench-ssd", journal_mode="wal")
    cur = con.cursor()
    cur.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)")
    cur.executemany("INSERT INTO t(v) VALUES (?)", [("a",), ("b",)])
    con.commit()
    cur.execute("SELECT k, v FROM t").fetchall()
    con.metrics()["commit_latency_us_p99"], con.metrics()["waf"]

Transactions follow the ``sqlite3`` module's default: a ``BEGIN`` is issued before the first
INSERT, UPDATE, DELETE or REPLACE outside a transaction, and ``commit()`` ends it;
``isolation_level=None`` gives autocommit (every statement is its own transaction).
Parameters use the ``qmark`` style (``?``). Metrics (docs/sql.md) count per transaction:
host page reads and writes, syncs, NAND reads, programs and erases, WAF, energy (µJ) and the
simulated commit latency.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any

from nandlab._nandlab import SqlConnection, run_tpcc

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
    "tpcc",
]

apilevel = "2.0"
threadsafety = 1  # threads may share the module, not connections
paramstyle = "qmark"

JOURNAL_MODES = ("delete", "truncate", "persist", "wal", "off", "atomic")


class Warning(Exception):  # PEP 249 names it so (shadows the builtin here only)
    """PEP 249 warning."""


class Error(Exception):
    """Base of every error of this module."""


class InterfaceError(Error):
    """Misuse of the interface (a closed connection or cursor)."""


class DatabaseError(Error):
    """An error of the database."""


class DataError(DatabaseError):
    """A value out of range."""


class OperationalError(DatabaseError):
    """SQLite or the simulated device failed to run the statement."""


class IntegrityError(DatabaseError):
    """A constraint failed."""


class InternalError(DatabaseError):
    """An internal error (a nandlab bug)."""


class ProgrammingError(DatabaseError):
    """Bad SQL or bad parameters."""


class NotSupportedError(DatabaseError):
    """Not supported here."""


# PEP 249 constructors: values are stored as ``sqlite3``'s default adapters store them
# (dates and times as ISO 8601 text, binary as a BLOB)
Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> datetime.date:
    """The local date of ``ticks`` seconds since the epoch."""
    return Date(*time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:
    """The local time of day of ``ticks`` seconds since the epoch."""
    return Time(*time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:
    """The local date and time of ``ticks`` seconds since the epoch."""
    return Timestamp(*time.localtime(ticks)[:6])


class DBAPITypeObject:
    """A PEP 249 type object: equal to each Python type its column values may have (SQLite
    types values, not columns: ``description``'s type code is ``None``, compare the values)."""

    def __init__(self, name: str, *types: type) -> None:
        self.name = name
        self.types = types

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DBAPITypeObject):
            return self is other
        return isinstance(other, type) and issubclass(other, self.types)

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<nandlab.sql.{self.name}>"


STRING = DBAPITypeObject("STRING", str)
BINARY = DBAPITypeObject("BINARY", bytes, bytearray, memoryview)
NUMBER = DBAPITypeObject("NUMBER", int, float)
DATETIME = DBAPITypeObject("DATETIME", datetime.date, datetime.time)
ROWID = DBAPITypeObject("ROWID", int)


def _adapt(value: Any) -> Any:
    """A parameter as SQLite stores it: dates and times as ISO 8601 text (as ``sqlite3``'s
    default adapters), bytearray and memoryview as bytes."""
    if isinstance(value, datetime.datetime):
        return value.isoformat(" ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


# the statement's first keyword, after whitespace and SQL comments (-- to the end of the
# line, /* ... */)
_DML = re.compile(
    r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?(?:\*/|$))*(INSERT|UPDATE|DELETE|REPLACE)\b",
    re.IGNORECASE | re.DOTALL,
)


def _error(e: Exception) -> Error:
    """The PEP 249 error for an exception of the extension."""
    message = str(e)
    if isinstance(e, TypeError) or "parameter" in message:
        return ProgrammingError(message)
    if "constraint failed" in message:
        return IntegrityError(message)
    if "syntax error" in message or "one statement" in message or "no statement" in message:
        return ProgrammingError(message)
    if "out of 64-bit range" in message:
        return DataError(message)
    return OperationalError(message)


def _check_str(name: str, value: Any, optional: bool = False) -> None:
    """Refuses an argument that is not a string (or None when ``optional``), naming it."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        expected = "a string or None" if optional else "a string"
        raise ProgrammingError(f"{name} {value!r}: expected {expected}")


def _device_text(device: Any) -> str:
    """``device`` as a string (a path-like is taken as its path), or an error naming it."""
    if isinstance(device, os.PathLike):
        return os.fspath(device)  # type: ignore[no-any-return]
    _check_str("device", device)
    return str(device)


def _check_int(name: str, value: Any, optional: bool = False, low: int = 0) -> None:
    """Refuses an argument that is not an int >= ``low`` (bools excluded; or None when
    ``optional``), naming it."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an integer or None" if optional else "an integer"
        raise ProgrammingError(f"{name} {value!r}: expected {expected}")
    if value < low:
        raise ProgrammingError(f"{name} {value}: expected an integer >= {low}")
    if value >= 1 << 64:
        raise ProgrammingError(f"{name} {value}: expected an integer below 2**64")


def connect(
    device: str = "bench-ssd",
    journal_mode: str = "delete",
    *,
    seed: int | None = None,
    page_size_bytes: int | None = None,
    cache_size: int | None = None,
    synchronous: str | None = None,
    db_name: str = "main.db",
    isolation_level: str | None = "",
) -> Connection:
    """A new database on a new simulated SSD.

    ``device`` is an SSD preset name (``nandlab.ssd_presets()``), a path to a device file or a
    stack config, or device TOML text; the SSD keeps page bytes (``payload = "full"``).
    ``journal_mode`` is one of delete, truncate, persist, wal (exclusive locking mode: the VFS
    has no shared memory), off, or atomic (batch atomic writes on the transactional FTL, X-FTL:
    no journal; docs/sql.md). ``page_size_bytes``, ``cache_size`` and ``synchronous`` set
    the SQLite pragmas of those names. ``isolation_level`` is ``""`` (deferred transactions
    opened before DML, as ``sqlite3``), ``"DEFERRED"``, ``"IMMEDIATE"``, ``"EXCLUSIVE"`` or
    ``None`` (autocommit).
    """
    device = _device_text(device)
    _check_str("journal_mode", journal_mode)
    _check_str("db_name", db_name)
    _check_str("synchronous", synchronous, optional=True)
    _check_str("isolation_level", isolation_level, optional=True)
    _check_int("seed", seed, optional=True)
    _check_int("page_size_bytes", page_size_bytes, optional=True, low=1)
    # a negative cache_size is SQLite's size in KiB
    _check_int("cache_size", cache_size, optional=True, low=-(1 << 62))
    if db_name.strip() in ("", ":memory:") or db_name.startswith("file:"):
        raise ProgrammingError(
            f"db_name {db_name!r}: a file name is needed (SQLite keeps '' and ':memory:' "
            "databases off the simulated SSD)"
        )
    if journal_mode.lower() not in JOURNAL_MODES:
        raise ProgrammingError(
            f"journal_mode {journal_mode!r}: expected one of {', '.join(JOURNAL_MODES)}"
        )
    if isolation_level is not None and isolation_level.upper() not in (
        "",
        "DEFERRED",
        "IMMEDIATE",
        "EXCLUSIVE",
    ):
        raise ProgrammingError(
            f"isolation_level {isolation_level!r}: expected '', DEFERRED, IMMEDIATE, "
            "EXCLUSIVE or None"
        )
    try:
        inner = SqlConnection(
            device,
            journal_mode,
            seed=seed,
            page_size_bytes=page_size_bytes,
            cache_size=cache_size,
            synchronous=synchronous,
            db_name=db_name,
        )
    except (ValueError, TypeError, OverflowError) as e:
        raise OperationalError(str(e)) from None
    return Connection(inner, isolation_level)


def tpcc(
    device: str = "bench-ssd",
    journal_mode: str = "wal",
    *,
    warehouses: int = 1,
    terminals: int = 10,
    transactions: int = 2000,
    seed: int = 0,
    small: bool = False,
) -> dict[str, Any]:
    """The TPC-C-like workload (nine tables, the five transactions in the standard mix) on
    SQLite on a new simulated SSD, as ``nandlab tpcc`` runs it: a dict with ``tpmc``
    (committed New-Orders per simulated minute), ``transactions`` (by type),
    ``new_order_rollbacks``, ``sim_time_s``, ``metrics`` (per-transaction device metrics,
    load excluded) and ``consistency_violations`` (TPC-C conditions 1-4; empty when they
    hold). ``small`` loads a hundredth of TPC-C's population. Ctrl-C raises
    ``KeyboardInterrupt``; during the transactions its ``partial_json`` attribute holds the
    report of those that completed (``"interrupted": true``)."""
    device = _device_text(device)
    _check_str("journal_mode", journal_mode)
    for name, value, low in (
        ("warehouses", warehouses, 1),
        ("terminals", terminals, 1),
        ("transactions", transactions, 0),
        ("seed", seed, 0),
    ):
        _check_int(name, value, low=low)
    if not isinstance(small, bool):
        raise ProgrammingError(f"small {small!r}: expected True or False")
    try:
        text = run_tpcc(device, journal_mode, warehouses, terminals, transactions, seed, small)
    except (ValueError, TypeError, OverflowError) as e:
        raise _error(e) from None
    result: dict[str, Any] = json.loads(text)
    return result


class Connection:
    """A SQLite database on a simulated SSD (PEP 249 connection)."""

    Error = Error
    Warning = Warning
    InterfaceError = InterfaceError
    DatabaseError = DatabaseError
    DataError = DataError
    OperationalError = OperationalError
    IntegrityError = IntegrityError
    InternalError = InternalError
    ProgrammingError = ProgrammingError
    NotSupportedError = NotSupportedError

    def __init__(self, inner: SqlConnection, isolation_level: str | None) -> None:
        self._inner = inner
        self.isolation_level = isolation_level

    def _live(self) -> SqlConnection:
        if self._inner.closed:
            raise ProgrammingError("connection: closed")
        return self._inner

    def _run(self, sql: str, params: Sequence[Any]) -> tuple[list[str], list[list[Any]], int, int]:
        inner = self._live()
        _check_str("sql", sql)
        params = [_adapt(p) for p in params]
        if self.isolation_level is not None and not inner.in_transaction and _DML.match(sql):
            self._raw(f"BEGIN {self.isolation_level}")
        return self._raw(sql, params)

    def _raw(
        self, sql: str, params: Sequence[Any] = ()
    ) -> tuple[list[str], list[list[Any]], int, int]:
        try:
            return self._live().execute(sql, list(params))
        except (ValueError, TypeError, OverflowError) as e:
            raise _error(e) from None

    @property
    def in_transaction(self) -> bool:
        """True inside a transaction (``commit()`` or ``rollback()`` ends it)."""
        return self._live().in_transaction

    def cursor(self) -> Cursor:
        return Cursor(self)

    def commit(self) -> None:
        if self._live().in_transaction:
            self._raw("COMMIT")

    def rollback(self) -> None:
        if self._live().in_transaction:
            self._raw("ROLLBACK")

    def close(self) -> None:
        """Closes the database; an open transaction is rolled back (PEP 249)."""
        if not self._inner.closed:
            if self._inner.in_transaction:
                self._raw("ROLLBACK")
            self._inner.close()

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Cursor:
        """A new cursor that has executed ``sql`` (as ``sqlite3``)."""
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]]) -> Cursor:
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql: str) -> Cursor:
        """Commits an open transaction, then runs every statement of ``sql`` as written."""
        _check_str("sql", sql)
        self.commit()
        cursor = self.cursor()
        try:
            self._live().execute_script(sql)
        except (ValueError, TypeError) as e:
            raise _error(e) from None
        return cursor

    def metrics(self) -> dict[str, Any]:
        """Per-transaction device metrics since the connection opened (or
        ``reset_metrics()``): write_transactions, host_pages_written_per_tx, syncs_per_tx,
        nand_pages_programmed_per_tx, nand_blocks_erased_per_tx, energy_uj_per_tx, waf,
        commit_latency_us_p50/p99/max (simulated), sim_time_us, totals, … (docs/sql.md)."""
        result: dict[str, Any] = json.loads(self._live().metrics_json())
        return result

    def reset_metrics(self) -> None:
        self._live().reset_metrics()

    def device_report(self) -> dict[str, Any]:
        """The SSD's own report since it was built (latencies, GC, wear, energy)."""
        result: dict[str, Any] = json.loads(self._live().device_report_json())
        return result

    def files(self) -> dict[str, int]:
        """The files on the simulated disk and their sizes in bytes."""
        return dict(self._live().files())

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # as sqlite3: commit on success, roll back on an exception; the connection stays open
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


class Cursor:
    """A PEP 249 cursor: results are fetched whole when a statement runs."""

    arraysize: int = 1

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._rows: list[tuple[Any, ...]] = []
        self._at = 0
        self._closed = False
        self.description: tuple[tuple[str, None, None, None, None, None, None], ...] | None = None
        self.rowcount = -1
        self.lastrowid: int | None = None

    def _check(self) -> None:
        if self._closed:
            raise ProgrammingError("cursor: closed")

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Cursor:
        self._check()
        if isinstance(parameters, (str, bytes)) or not isinstance(parameters, Sequence):
            raise ProgrammingError("parameters: a sequence (tuple or list) for qmark style")
        columns, rows, changes, rowid = self.connection._run(sql, parameters)
        self._rows = [tuple(r) for r in rows]
        self._at = 0
        if columns:
            self.description = tuple((c, None, None, None, None, None, None) for c in columns)
            self.rowcount = -1
        else:
            self.description = None
            self.rowcount = changes if _DML.match(sql) else -1
        self.lastrowid = rowid
        return self

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]]) -> Cursor:
        self._check()
        total = 0
        for parameters in seq_of_parameters:
            self.execute(sql, parameters)
            if self.description is not None:
                raise ProgrammingError("executemany: the statement returns rows")
            total += max(self.rowcount, 0)
        self.rowcount = total
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        self._check()
        if self._at >= len(self._rows):
            return None
        row = self._rows[self._at]
        self._at += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        self._check()
        n = self.arraysize if size is None else size
        rows = self._rows[self._at : self._at + n]
        self._at += len(rows)
        return rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        self._check()
        rows = self._rows[self._at :]
        self._at = len(self._rows)
        return rows

    def close(self) -> None:
        self._closed = True
        self._rows = []

    def setinputsizes(self, sizes: Any) -> None:
        """Does nothing (PEP 249 allows it)."""

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        """Does nothing (PEP 249 allows it)."""

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row
