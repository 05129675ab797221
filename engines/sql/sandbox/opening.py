"""Worlds and users' databases, opened read-only.

A loader fills a fresh database file in a private temporary folder (full SQL power, no file or network
access but the paths it is given); that file, or a user's existing DuckDB file, is then attached
``READ_ONLY`` under the name ``world`` to a new in-memory connection, whose configuration is locked once
external access is off again.  Even a statement that slipped past the gate cannot change, drop or add to
the tables a query sees.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
from sqlglot import exp

from engines.sql.sandbox.connection import _HARDENED_CONFIG, Limits, _open, lock
from engines.sql.sandbox.errors import SqlFailed, _strip_ansi
from engines.sql.sandbox.statements import _run_internal

Loader = Callable[[duckdb.DuckDBPyConnection], None]
"""Fills a fresh connection with a world's tables (e.g. ``RestaurantWorld.load``)."""

WORLD_DATABASE = "world"
"""The name the read-only database of a sandbox is attached under."""


@functools.cache
def _no_fsync() -> dict[str, str]:
    """The setting that spares the filled database file its fsyncs (six for a world), where DuckDB has it.

    The file is a scratch copy in a private temporary folder, removed with the sandbox: a crash loses the
    folder anyway, so waiting for the disk buys nothing (it cost a busy disk up to a second per sandbox)."""
    con = duckdb.connect(":memory:")
    try:
        known = con.execute("SELECT count(*) FROM duckdb_settings() WHERE name = 'fsync_mode'").fetchall()[0][0]
    finally:
        con.close()
    return {"fsync_mode": "NONE"} if known else {}


def new_workdir() -> str:
    """A private temporary folder for a sandbox's database file and spill space."""
    return tempfile.mkdtemp(prefix="cs224v-sandbox-")


def database_path(workdir: str) -> str:
    """Where the database a loader fills lives in ``workdir``."""
    return os.path.join(workdir, "world.duckdb")


def loader_config(workdir: str, limits: Limits) -> dict[str, Any]:
    """The DuckDB configuration of a loader's connection: hardened, bounded by ``limits`` (spilling into
    ``workdir``), external access on only so that the loader can set ``allowed_paths``: it must then turn
    access off and lock the configuration before it reads anything."""
    return {
        **_HARDENED_CONFIG,
        **limits.config(os.path.join(workdir, "spill")),
        **_no_fsync(),
        "enable_external_access": True,
    }


def fill_database(loader: Loader, workdir: str, limits: Limits, read_paths: Sequence[str | os.PathLike[str]]) -> str:
    """Let ``loader`` fill a fresh database file in ``workdir``; returns its path.

    The loader runs with full SQL power but no file or network access; errors it raises propagate
    unchanged.  ``read_paths``: files the loader may read (DuckDB's ``allowed_paths``); every other path
    stays closed to it.
    """
    path = database_path(workdir)
    allowed = [os.fspath(p) for p in read_paths]
    config = {**_HARDENED_CONFIG, **limits.config(os.path.join(workdir, "spill")), **_no_fsync()}
    if allowed:  # DuckDB takes allowed_paths only once the database runs, and only while access is on
        config["enable_external_access"] = True
    con = _open(path, config)
    try:
        if allowed:
            con.execute("SET allowed_paths = ?", [allowed]).fetchall()
            con.execute("SET enable_external_access = false").fetchall()
            lock(con)
        loader(con)
        con.execute("CHECKPOINT").fetchall()
    finally:
        con.close()
    return path


def attach_statement(path: str, name: str = WORLD_DATABASE) -> exp.Attach:
    """``ATTACH 'path' AS "name" (READ_ONLY)``, the path a quoted literal."""
    return exp.Attach(
        this=exp.alias_(exp.Literal.string(path), name, quoted=True),
        expressions=[exp.AttachOption(this=exp.var("READ_ONLY"))],
    )


def attach_config(workdir: str, limits: Limits) -> dict[str, Any]:
    """The configuration of a connection that attaches a database file: external access on until it is
    attached (:func:`attach_read_only` then turns it off and locks the configuration)."""
    return {**_HARDENED_CONFIG, "enable_external_access": True, **limits.config(os.path.join(workdir, "spill"))}


def attach_read_only(path: str, limits: Limits, workdir: str) -> duckdb.DuckDBPyConnection:
    """A new in-memory connection with the database file ``path`` attached ``READ_ONLY`` as ``world``,
    external access off and the configuration locked.  Raises :class:`SqlFailed` if DuckDB cannot open it."""
    # External access is on only until the world is attached: nothing else runs meanwhile.
    con = _open(":memory:", attach_config(workdir, limits))
    try:
        cursor = con.cursor()
        try:
            _run_internal(cursor, attach_statement(path), duckdb.StatementType.ATTACH)
        except duckdb.Error as e:
            raise SqlFailed(f"The database {path!r} could not be opened read-only: {_strip_ansi(str(e))}") from e
        finally:
            cursor.close()
        con.execute("SET enable_external_access = false").fetchall()
        lock(con)
        return con
    except BaseException:
        con.close()
        raise


def _remove_workdir(workdir: str | None) -> None:
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
