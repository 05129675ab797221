"""Running one checked SELECT on a cursor: DuckDB's own parse must see one SELECT, a watchdog interrupts it
after the time limit, and at most the row cap (plus one, to tell that there were more) is fetched."""

from __future__ import annotations

import threading
import time

import duckdb

from engines.sql.sandbox.errors import SqlFailed, SqlRefused, SqlTimedOut, _from_duckdb
from engines.sql.sandbox.policy import _ONLY_SELECT
from engines.sql.sandbox.results import QueryResult


class _Watchdog:
    """Interrupts a cursor's query when ``timeout_s`` passes before the block ends."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, timeout_s: float) -> None:
        self._cursor = cursor
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            try:
                self._cursor.interrupt()
            except duckdb.Error:  # the cursor closed meanwhile: nothing left to stop
                pass

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        with self._lock:  # after this, _fire can no longer touch the cursor
            self._done = True


def single_select(cursor: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
    """DuckDB's own parse of ``sql``: it must be exactly one SELECT."""
    statements = cursor.extract_statements(sql)
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise SqlRefused(f"{_ONLY_SELECT}; DuckDB does not read this as a single SELECT query.", sql=sql)
    return statements[0]


def execute(cursor: duckdb.DuckDBPyConnection, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
    """Run ``sql`` (DuckDB SQL the gate checked) on ``cursor`` and close it; at most ``row_cap`` rows kept.

    Raises :class:`SqlRefused`, :class:`SqlFailed` or :class:`SqlTimedOut`, never a DuckDB error."""
    started = time.perf_counter()
    try:
        with _Watchdog(cursor, timeout_s) as watchdog:
            try:
                statement = single_select(cursor, sql)
                cursor.execute(statement)
                columns = tuple(str(d[0]) for d in cursor.description or ())
                rows = cursor.fetchmany(row_cap + 1)
            except duckdb.InterruptException as e:
                if watchdog.fired:
                    raise SqlTimedOut(f"The query ran longer than {timeout_s:g} s and was stopped.", sql=sql) from e
                raise _from_duckdb(e, sql) from e
            except duckdb.Error as e:
                raise _from_duckdb(e, sql) from e
            except (ValueError, OverflowError, TypeError) as e:  # a value Python cannot hold
                raise SqlFailed(f"DuckDB returned a value Python cannot read: {e}", sql=sql) from e
    finally:
        cursor.close()
    return QueryResult(
        sql=sql,
        columns=columns,
        rows=tuple(tuple(row) for row in rows[:row_cap]),
        truncated=len(rows) > row_cap,
        elapsed_s=time.perf_counter() - started,
    )
