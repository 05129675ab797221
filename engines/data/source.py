"""A user's own tables as a data source: a CSV, TSV, Parquet or JSON-lines file, a folder of them, a
DuckDB database file, or (through ``engines.data.postgres``) a PostgreSQL database.

:func:`open_source` turns what the user gave (``--db SOURCE``) into a :class:`DataSource`: the SQL gate
over the data (:class:`engines.sql.sandbox.Sandbox`) and the engine's own description of it
(:mod:`engines.data.describe`).

Nothing any query does can write to the user's files:

* files are read once, by the sandbox's loader, into a private temporary database (one table per
  file, named after the file's stem); the loader's connection may read exactly those files (DuckDB's
  ``allowed_paths``, external access otherwise off, the configuration locked) and the path reaches
  DuckDB only as a query parameter, never as SQL text.  Queries then run on that private copy,
  attached read-only, under the gate's rules;
* a DuckDB database file is attached ``READ_ONLY`` (:meth:`Sandbox.open_database`): the queries read
  it in place, and DuckDB itself refuses any write.

Bad input — a missing or unreadable path, an empty file, a format DuckDB cannot read, two files that
would make the same table — is a :class:`DataSourceError` that says what to do, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
from sqlglot import exp

from engines.data.describe import SchemaDescription, describe
from engines.errors import EngineError
from engines.settings import Settings
from engines.sql.sandbox import Limits, Sandbox, SqlError

__all__ = ["FORMATS", "DataSource", "DataSourceError", "open_source", "table_name"]


class DataSourceError(EngineError):
    """The data source cannot be opened: the message says why and what would work."""


# File name endings -> format.  Compressed files (.gz, .zst) are read by DuckDB as they are.
FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}
COMPRESSIONS = (".gz", ".zst")
DUCKDB_ENDINGS = (".duckdb", ".ddb", ".db")
KINDS = {
    "csv": "CSV file",
    "tsv": "TSV file",
    "parquet": "Parquet file",
    "jsonl": "JSON-lines file",
    "json": "JSON file",
    "directory": "folder of files",
    "duckdb": "DuckDB database",
    "postgresql": "PostgreSQL database",
}
SUPPORTED = "a CSV, TSV, Parquet or JSON-lines file, a folder of them, a DuckDB database file or a postgresql:// URL"

# Characters the gate refuses in a table name (it would look like a path): replaced by "_".
_PATH_CHARS = re.compile(r"[/\\:.*?~]")


@dataclass
class DataSource:
    """An opened data source: query it through ``sandbox``; ``schema`` is the engine's description."""

    name: str  # what the user gave, as shown (a URL without its password)
    kind: str  # csv | tsv | parquet | jsonl | json | directory | duckdb | postgresql
    sandbox: Any  # engines.sql.sandbox.Sandbox, or a gate with the same methods (PostgreSQL)
    schema: SchemaDescription
    files: tuple[str, ...] = ()  # the files read (resolved paths)
    make_engine: Callable[..., Any] | None = None
    """For a source whose structured part runs elsewhere (PostgreSQL): ``make_engine(llm, settings, pool=n)``
    returns the SUQL engine over it; None: ``engines.suql.execute.SuqlEngine`` over ``sandbox``."""
    _on_close: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def close(self) -> None:
        self.sandbox.close()
        for fn in self._on_close:
            fn()

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def table_name(path: str) -> str:
    """The table a file becomes: its name without the format's ending (and a compression's), with the
    characters the gate would read as a path (``. / \\ : * ? ~``) replaced by ``_``."""
    base = os.path.basename(path)
    low = base.lower()
    for comp in COMPRESSIONS:
        if low.endswith(comp):
            base, low = base[: -len(comp)], low[: -len(comp)]
            break
    for ending in FORMATS:
        if low.endswith(ending):
            base = base[: -len(ending)]
            break
    return _PATH_CHARS.sub("_", base) or "data"


def file_format(path: str) -> str | None:
    low = os.path.basename(path).lower()
    for comp in COMPRESSIONS:
        if low.endswith(comp):
            low = low[: -len(comp)]
            break
    return next((fmt for ending, fmt in FORMATS.items() if low.endswith(ending)), None)


def _is_duckdb_file(path: str) -> bool:
    """A DuckDB database: its name ends in .duckdb/.ddb/.db, or its header carries DuckDB's magic bytes."""
    if path.lower().endswith(DUCKDB_ENDINGS):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return False
    return head[8:12] == b"DUCK"


def open_source(spec: str, settings: Settings | None = None) -> DataSource:
    """Open ``spec`` (a path or a ``postgresql://`` URL) read-only and describe it."""
    settings = settings or Settings()
    spec = (spec or "").strip()
    if not spec:
        raise DataSourceError(f"No data source given: name {SUPPORTED}.")
    if re.match(r"(?i)^postgres(ql)?://", spec):
        try:
            postgres = importlib.import_module("engines.data.postgres")
        except ImportError as e:
            raise DataSourceError(f"PostgreSQL sources are not available in this installation ({e}).") from e
        return postgres.open_postgres(spec, settings)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", spec):
        raise DataSourceError(f"{spec.split('://')[0]}:// sources are not supported: name {SUPPORTED}.")
    path = os.path.realpath(os.path.expanduser(spec))
    if not os.path.exists(path):
        raise DataSourceError(f"No such file or folder: {spec}")
    if os.path.isdir(path):
        return _open_files(spec, _folder_files(spec, path), settings, kind="directory")
    if not os.access(path, os.R_OK):
        raise DataSourceError(f"The file {spec} cannot be read (permission denied).")
    if os.path.getsize(path) == 0:
        raise DataSourceError(f"The file {spec} is empty: there is no table in it.")
    fmt = file_format(path)
    if fmt is not None:
        return _open_files(spec, [(table_name(path), fmt, path)], settings, kind=fmt)
    if _is_duckdb_file(path):
        return _open_duckdb(spec, path, settings)
    raise DataSourceError(
        f"Cannot tell the format of {spec}: its name should end in "
        f"{', '.join(FORMATS)} (optionally {' or '.join(COMPRESSIONS)}), or {', '.join(DUCKDB_ENDINGS)}."
    )


def _folder_files(spec: str, folder: str) -> list[tuple[str, str, str]]:
    """(table, format, path) of every data file directly in ``folder`` (hidden files and sub-folders left out)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        raise DataSourceError(f"The folder {spec} cannot be read: {e.strerror or e}.") from e
    found: list[tuple[str, str, str]] = []
    tables: dict[str, str] = {}
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_file():
            continue
        fmt = file_format(entry.name)
        if fmt is None:
            continue
        path = os.path.realpath(entry.path)
        if os.path.getsize(path) == 0:
            raise DataSourceError(f"The file {entry.name} in {spec} is empty: remove it or give it a header and rows.")
        name = table_name(entry.name)
        if name.casefold() in tables:
            raise DataSourceError(
                f"The files {tables[name.casefold()]} and {entry.name} in {spec} would both be the table {name!r}: "
                "rename one of them."
            )
        tables[name.casefold()] = entry.name
        found.append((name, fmt, path))
    if not found:
        raise DataSourceError(
            f"The folder {spec} holds no CSV, TSV, Parquet or JSON-lines file (names ending in {', '.join(FORMATS)})."
        )
    return found


def _reader(fmt: str) -> exp.Expression:
    """``read_csv(?)`` and friends: the path is the query's one parameter."""
    path = exp.Placeholder()
    if fmt == "csv":
        return exp.func("read_csv", path)
    if fmt == "tsv":
        return exp.func("read_csv", path, exp.PropertyEQ(this=exp.var("delim"), expression=exp.Literal.string("\t")))
    if fmt == "parquet":
        return exp.func("read_parquet", path)
    fmt_name = "newline_delimited" if fmt == "jsonl" else "auto"
    return exp.func("read_json", path, exp.PropertyEQ(this=exp.var("format"), expression=exp.Literal.string(fmt_name)))


def _open_files(spec: str, files: list[tuple[str, str, str]], settings: Settings, *, kind: str) -> DataSource:
    def load(con: duckdb.DuckDBPyConnection) -> None:
        for name, fmt, path in files:
            create = exp.Create(
                this=exp.to_table(exp.to_identifier(name, quoted=True)),
                kind="TABLE",
                expression=exp.select("*").from_(_reader(fmt)),
            )
            try:
                con.execute(create.sql(dialect="duckdb"), [path]).fetchall()
            except duckdb.Error as e:
                raise DataSourceError(
                    f"{os.path.basename(path)} could not be read as a {KINDS[fmt]}: {_first_line(str(e))}"
                ) from e

    try:
        sandbox = Sandbox.create(
            load,
            row_cap=settings.row_cap,
            timeout_s=settings.query_timeout_s,
            limits=Limits.from_settings(settings),
            read_paths=[path for _, _, path in files],
        )
    except DataSourceError:
        raise
    except (SqlError, duckdb.Error) as e:
        raise DataSourceError(f"{spec} could not be loaded: {_first_line(str(e))}") from e
    return _described(spec, kind, sandbox, tuple(p for _, _, p in files))


def _open_duckdb(spec: str, path: str, settings: Settings) -> DataSource:
    try:
        sandbox = Sandbox.open_database(
            path, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s, limits=Limits.from_settings(settings)
        )
    except (SqlError, duckdb.Error) as e:
        raise DataSourceError(f"{spec} could not be opened as a DuckDB database: {_first_line(str(e))}") from e
    return _described(spec, "duckdb", sandbox, (path,))


def _described(spec: str, kind: str, sandbox: Sandbox, files: tuple[str, ...]) -> DataSource:
    try:
        tables = sandbox.tables()
        if not tables:
            raise DataSourceError(f"{spec} holds no table.")
        schema = describe(sandbox, tables, source=os.path.basename(spec.rstrip("/\\")) or spec, kind=KINDS[kind])
    except BaseException:
        sandbox.close()
        raise
    return DataSource(spec, kind, sandbox, schema, files)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message
