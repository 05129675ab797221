"""The session with PostgreSQL: one read-only psycopg connection, its settings, its errors.

The first thing a new session does is read the schema the user's URL chose (``current_schema()``, under
their ``search_path``) and then set ``search_path`` to :data:`SEARCH_PATH` (``pg_catalog, pg_temp``):
from then on an unqualified function, operator or type name resolves to PostgreSQL's own, never to one the
database defines (a ``public.lower(varchar)`` or a ``public.=`` shadowing the built-in ones, the
CVE-2018-1058 pattern); the engine names the user's tables with their schema, quoted.  Every statement
the session itself sends calls ``pg_catalog``'s functions by their qualified name.

Every transaction is ``BEGIN READ ONLY`` (psycopg's ``read_only``) on a session whose
``default_transaction_read_only`` is on, and every statement runs under ``statement_timeout`` (the
``query_timeout_s`` setting), set with ``set_config()`` and a parameter; each transaction sets
``search_path`` and ``statement_timeout`` again.  Setting the ``cancel`` event of :func:`_cancel_on`
cancels the statement running on the server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from engines.data.source import DataSourceError
from engines.sql.sandbox import SqlFailed, SqlTimedOut

try:  # psycopg is a core dependency; without it PostgreSQL sources say how to get it
    import psycopg as psycopg  # re-exported: the gate, the catalogue and the source name it
    from psycopg import errors as pg_errors
except ImportError as _e:  # pragma: no cover - exercised only on a broken install
    psycopg = None  # type: ignore[assignment]
    _IMPORT_ERROR: ImportError | None = _e
else:
    _IMPORT_ERROR = None


def redact(url: str) -> str:
    """The URL without its password (what the app and the CLI show)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def _message(e: Exception) -> str:
    diag = getattr(e, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = primary or str(e).strip() or type(e).__name__
    return text.splitlines()[0] if text else type(e).__name__


def _pg_error(e: Exception, sql: str, timeout_s: float) -> SqlFailed:
    if psycopg is not None and isinstance(e, pg_errors.QueryCanceled):
        return SqlTimedOut(
            f"The query ran longer than {timeout_s:g} s on PostgreSQL and was stopped (statement_timeout).", sql=sql
        )
    if psycopg is not None and isinstance(e, pg_errors.ReadOnlySqlTransaction):
        return SqlFailed(f"PostgreSQL refused to write: this connection is read-only ({_message(e)}).", sql=sql)
    return SqlFailed(f"PostgreSQL: {_message(e)}", sql=sql)


SEARCH_PATH = "pg_catalog, pg_temp"
"""The session's search_path: PostgreSQL's own catalogue only (pg_temp, which is never searched for functions
or operators, named last so that it is not searched first for tables and types)."""

_SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")


class _Connection:
    """One psycopg connection, read-only, used by one thread at a time; reopened when it broke.

    ``schema``: the schema the URL's ``search_path`` chose when the session first opened (None when no schema
    on it exists); the engine names the user's tables in it."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._con: Any = None
        self.schema: str | None = None
        self._open()

    def _open(self) -> None:
        try:
            con = psycopg.connect(self.url, autocommit=False, connect_timeout=10, application_name="cs224v-tui")
        except psycopg.Error as e:
            raise DataSourceError(f"Could not connect to PostgreSQL at {redact(self.url)}: {_message(e)}") from e
        con.read_only = True  # every transaction: BEGIN READ ONLY
        try:
            with con.cursor() as cur:
                # the schema the user chose (their search_path) first, then search_path = pg_catalog for the
                # session: nothing below resolves a name through the database's own schemas
                row = cur.execute("SELECT pg_catalog.current_schema()").fetchone()
                schema = row[0] if row is not None else None  # one row always; NULL with no schema on the path
                cur.execute(
                    "SELECT pg_catalog.set_config('search_path', %s, false), "
                    "pg_catalog.set_config('default_transaction_read_only', 'on', false), "
                    "pg_catalog.set_config('statement_timeout', %s, false), "
                    "pg_catalog.set_config('idle_in_transaction_session_timeout', %s, false)",
                    [SEARCH_PATH, str(int(self.timeout_s * 1000)), str(int(max(self.timeout_s, 10) * 6000))],
                )
            con.commit()
        except psycopg.Error as e:
            con.close()
            raise DataSourceError(
                f"PostgreSQL at {redact(self.url)} refused the session settings: {_message(e)}"
            ) from e
        if self._con is None:  # the first session decides the schema; a reopened one keeps it
            if schema in _SYSTEM_SCHEMAS or (schema or "").startswith(("pg_temp_", "pg_toast_temp_")):
                con.close()
                raise DataSourceError(
                    f"The current schema of {redact(self.url)} is {schema}, PostgreSQL's own: choose the schema of "
                    "your tables with search_path (e.g. ?options=-csearch_path%3Dmyschema)."
                )
            self.schema = schema
        self._con = con

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A read-only transaction with the statement timeout; rolled back at the end (nothing to keep)."""
        with self._lock:
            if self._con is None or self._con.closed or self._con.broken:
                self._open()
            con = self._con
            try:
                with con.cursor() as cur:
                    cur.execute(
                        "SELECT pg_catalog.set_config('search_path', %s, true), "
                        "pg_catalog.set_config('statement_timeout', %s, true)",
                        [SEARCH_PATH, str(int(self.timeout_s * 1000))],
                    )
                yield con
            finally:
                try:
                    con.rollback()
                except psycopg.Error:
                    pass

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()


@contextmanager
def _cancel_on(con: Any, cancel: threading.Event | None) -> Iterator[None]:
    """While the block runs, a set ``cancel`` cancels the connection's running statement on the server."""
    if cancel is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            if cancel.is_set():
                try:
                    con.cancel_safe(timeout=5)
                except Exception:  # the statement ended meanwhile, or the server is gone: nothing to stop
                    pass
                return

    watcher = threading.Thread(target=watch, name="pg-cancel", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join(6)
