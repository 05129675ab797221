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

Loading is bounded, whatever the files hold (:mod:`engines.data.load_worker` does the reading):

* it runs in a loader process, killed at the deadline ``load_timeout_s`` (DuckDB's sniffer and binder
  cannot be interrupted; describing the tables shares the deadline, in this process).  The loader serves
  one load after another, so a program that opens many sources starts it once;
* rows are capped by ``load_max_rows`` and bytes, counted as ``.gz``/``.zst`` files expand, by
  ``load_max_bytes``, both over all the files of the source together;
* a path is a path, never a glob: each file is opened here, checked on its descriptor (a regular file,
  not empty; in a folder, still inside the folder), and DuckDB reads that descriptor (``/proc/self/fd/N``),
  so ``x*.csv`` is that one file and a sibling is never read;
* no symbolic link leads out of a ``--db`` folder: a link whose target is outside it, or anything that is
  not a regular file (a FIFO, a device), is refused with a message naming it, and nothing is loaded.
  The check is made on the opened descriptor (where ``/proc`` tells its path) so a link swapped in
  between the check and the read changes nothing.

Files are read as a data tool reads them:

* a CSV or TSV file's ``NA``, ``N/A``, ``NaN``, ``null``, ``NULL`` and empty fields are NULL (DuckDB's
  ``nullstr``), so a numeric or date column with missing values keeps its type; ``db_nulls`` (``--null TOKEN``)
  replaces the tokens (an empty field is always NULL), ``db_types`` (``--type COLUMN=TYPE``) gives a column its
  type, parsed by sqlglot and passed to DuckDB as a parameter.  A value that cannot be read as its column's
  type (given, or inferred from the first lines) stops loading with a message naming the file, the column, the
  value, its line and how many more lines hold one;
* one naming rule for the tables files become (:func:`table_name`, :func:`table_names`): a character that is
  not a letter, a digit or ``_`` becomes ``_``, ``t_`` goes before a name that does not start with a letter or
  ``_``, and in a folder a name already taken gets ``_2`` (``_3`` ...).  A DuckDB file's tables keep their names;
* the description (:mod:`engines.data.describe`) says which file a table came from, which fields were read as
  NULL, where each column's type came from and how many of its values are NULL.

Bad input — a missing or unreadable path, an empty file, a format DuckDB cannot read, a value its column's type
cannot hold, a bound reached — is a :class:`DataSourceError` that says what to do, never a traceback.  The
user's files are only ever opened for reading.
"""

from __future__ import annotations

import atexit
import errno
import importlib
import importlib.util
import json
import os
import re
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot import exp

import engines
from engines.data.describe import SchemaDescription, TableInfo, describe
from engines.data.load_worker import send
from engines.errors import EngineError
from engines.settings import Settings
from engines.sources import SqlGate, SuqlRunner, TableKind, TableSource
from engines.sql.sandbox import Limits, QueryResult, Sandbox, SqlError, attach_config, attach_statement

if TYPE_CHECKING:
    from engines.llm.client import LLM
    from engines.sql.classify import EnumSpec
    from engines.suql.examples import Example

__all__ = [
    "DEFAULT_NULLS",
    "FORMATS",
    "DataSource",
    "DataSourceError",
    "TypeSpec",
    "agent_schema",
    "open_source",
    "parse_type",
    "table_name",
    "table_names",
]


class DataSourceError(EngineError):
    """The data source cannot be opened: the message says why and what would work."""


# File name endings -> format.  Compressed files (.gz, .zst) are read by DuckDB as they are.
FORMATS: dict[str, TableKind] = {
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
_COMPRESSION_NAMES = {".gz": "gzip", ".zst": "zstd"}
MAX_FOLDER_FILES = 500
"""The most data files a ``--db`` folder may hold (each is a table, and each is held open while loading)."""
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

# One naming rule for the tables files become: a character that is not an identifier character (a letter, a
# digit or "_") becomes "_", a name that does not start with a letter or "_" gets the prefix "t_", and a name
# another file of the folder already has gets the suffix "_2" ("_3" ...).
_NOT_IDENTIFIER = re.compile(r"\W")
LEADING = "t_"

DEFAULT_NULLS = ("NA", "N/A", "NaN", "null", "NULL")
"""The fields of a CSV or TSV file read as NULL besides empty ones (as R and pandas write missing values), so a
numeric or date column keeps its type; ``--null`` (the ``db_nulls`` setting) replaces them."""
MAX_NULL_TOKENS = 100
"""At most this many ``--null`` tokens, ..."""
MAX_TOKEN_CHARS = 100
"""... each at most this many characters."""
MAX_TYPE_SPECS = 500
"""At most this many ``--type COLUMN=TYPE``, ..."""
MAX_SPEC_CHARS = 1000
"""... each at most this many characters."""


@dataclass
class DataSource:
    """An opened data source, a :class:`~engines.sources.TableSource`: query it through ``sandbox``; ``schema`` is
    the engine's description.  :class:`engines.data.postgres.PostgresSource` is the one over PostgreSQL."""

    name: str  # what the user gave, as shown (a URL without its password)
    kind: TableKind  # csv | tsv | parquet | jsonl | json | directory | duckdb | postgresql
    sandbox: SqlGate  # engines.sql.sandbox.Sandbox, or the gate over PostgreSQL
    schema: SchemaDescription
    files: tuple[str, ...] = ()  # the files read (resolved paths)
    _on_close: list[Callable[[], None]] = field(default_factory=list, repr=False)

    lazy = False
    """Whether tables are described only when needed (PostgreSQL): ``schema`` is then what is known so far."""

    @property
    def enum_fields(self) -> Mapping[str, EnumSpec]:
        """The enumerations the description found (an agent's ``classify()`` maps the user's words onto them)."""
        return self.schema.enum_fields

    def parser_schema(self, *, suql: bool = False) -> str:
        """The schema text an agent's parser is shown: the description rendered (with SUQL's functions)."""
        return self.schema.render(suql=suql)

    def described(self, tables: Iterable[str] | None = None) -> SchemaDescription:
        """The description with ``tables`` (all when None) described from their data.  A source of files or a
        DuckDB file is described whole on opening: ``schema``."""
        return self.schema

    def described_for(self, question: str) -> SchemaDescription:
        """The description the parser is shown for ``question``: with the tables it mentions described."""
        return self.schema

    def run_sql(self, sql: str) -> QueryResult:
        """One read-only statement through the gate."""
        return self.sandbox.run(sql)

    def suql_engine(self, llm: LLM, settings: Settings, *, pool: int = 1) -> SuqlRunner:
        """SUQL over the loaded tables: :class:`engines.suql.execute.SuqlEngine` on the gate, bounded by
        ``settings`` (``suql_cap``, ``suql_call_budget``, ``suql_ranker``)."""
        from engines.suql.execute import SuqlEngine

        if not isinstance(self.sandbox, Sandbox):
            raise TypeError(f"{self.name}: SUQL runs on a DuckDB sandbox, not on {type(self.sandbox).__name__}")
        return SuqlEngine.from_settings(self.sandbox, llm, settings, pool=pool)

    def examples(self) -> tuple[Example, ...]:
        """Queries to start from, made from the description (:func:`engines.data.examples.examples_for`)."""
        from engines.data.examples import examples_for

        return examples_for(self.schema, self.sandbox)

    def close(self) -> None:
        self.sandbox.close()
        for fn in self._on_close:
            fn()

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _stem(path: str) -> str:
    """The file's name without the format's ending (and a compression's)."""
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
    return base


def agent_schema(
    data: TableSource, *, suql: bool = False
) -> Callable[[str], tuple[str, Mapping[str, EnumSpec]]] | None:
    """For a source described lazily (PostgreSQL), what an agent's ``schema_for`` is: for a question, the
    schema text (with SUQL's functions when ``suql``) and the enumerations, the tables it mentions described
    first; None for a source described on opening."""
    if not data.lazy:
        return None

    def schema_for(question: str) -> tuple[str, Mapping[str, EnumSpec]]:
        description = data.described_for(question)
        return description.render(suql=suql), description.enum_fields

    return schema_for


def table_name(path: str) -> str:
    """The table a file becomes: its name without the format's ending (and a compression's), every character
    that is not an identifier character (a letter, a digit or ``_``) replaced by ``_``, and ``t_`` before a name
    that would not start with a letter or ``_`` (``seattle-weather.csv`` is ``seattle_weather``,
    ``sales.2024.csv`` ``sales_2024``, ``2024.csv`` ``t_2024``).  In a folder, :func:`table_names` also makes
    the names different."""
    name = _NOT_IDENTIFIER.sub("_", _stem(path)) or "data"
    return name if name[0].isalpha() or name[0] == "_" else LEADING + name


def table_names(paths: list[str]) -> list[str]:
    """The tables the files of a folder become (:func:`table_name`), each different from the others (names are
    compared as DuckDB does, regardless of case): a file whose name needs no change keeps it first, and a name
    taken gets the suffix ``_2`` (``_3`` ...), in the files' order (``a-b.csv`` beside ``a_b.csv`` is ``a_b_2``)."""
    names = [table_name(p) for p in paths]
    taken: set[str] = set()
    out: list[str | None] = [None] * len(paths)
    for i, (path, name) in enumerate(zip(paths, names)):  # names as written first
        if name == _stem(path) and name.casefold() not in taken:
            out[i] = name
            taken.add(name.casefold())
    for i, name in enumerate(names):
        if out[i] is not None:
            continue
        candidate, n = name, 1
        while candidate.casefold() in taken:
            n += 1
            candidate = f"{name}_{n}"
        out[i] = candidate
        taken.add(candidate.casefold())
    return [name for name in out if name is not None]


def file_format(path: str) -> TableKind | None:
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


def open_source(spec: str, settings: Settings) -> DataSource:
    """Open ``spec`` (a path or a ``postgresql://`` URL) read-only and describe it, under ``settings``' bounds."""
    deadline = time.monotonic() + settings.load_timeout_s
    spec = (spec or "").strip()
    if not spec:
        raise DataSourceError(f"No data source given: name {SUPPORTED}.")
    if re.match(r"(?i)^postgres(ql)?://", spec):
        if settings.db_nulls is not None or settings.db_types:
            raise DataSourceError(_not_text_files("a PostgreSQL database"))
        try:
            postgres = importlib.import_module("engines.data.postgres")
        except ImportError as e:
            raise DataSourceError(f"PostgreSQL sources are not available in this installation ({e}).") from e
        found: DataSource = postgres.open_postgres(spec, settings)  # imported by name: a module of its own
        return found
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", spec):
        raise DataSourceError(f"{spec.split('://')[0]}:// sources are not supported: name {SUPPORTED}.")
    path = os.path.realpath(os.path.expanduser(spec))  # a link named on the command line is followed
    try:
        st = os.stat(path)
    except OSError:
        raise DataSourceError(f"No such file or folder: {spec}") from None
    if stat.S_ISDIR(st.st_mode):
        return _open_files(spec, _folder_files(spec, path), settings, kind="directory", deadline=deadline)
    if not stat.S_ISREG(st.st_mode):
        raise DataSourceError(f"{spec} is {_what(st.st_mode)}, not a regular file: name a data file or a folder.")
    if not os.access(path, os.R_OK):
        raise DataSourceError(f"The file {spec} cannot be read (permission denied).")
    if st.st_size == 0:
        raise DataSourceError(f"The file {spec} is empty: there is no table in it.")
    fmt = file_format(path)
    if fmt is not None:
        shown = os.path.basename(spec.rstrip("/\\")) or spec
        opened = _open_file(path, table_name(path), fmt, shown=shown, place=spec)
        return _open_files(spec, [opened], settings, kind=fmt, deadline=deadline)
    if _is_duckdb_file(path):
        if settings.db_nulls is not None or settings.db_types:
            raise DataSourceError(_not_text_files(spec))
        return _open_duckdb(spec, path, settings, deadline)
    raise DataSourceError(
        f"Cannot tell the format of {spec}: its name should end in "
        f"{', '.join(FORMATS)} (optionally {' or '.join(COMPRESSIONS)}), or {', '.join(DUCKDB_ENDINGS)}."
    )


# --- opening the files: the checks are made on the opened descriptor ---------------------------------


@dataclass
class _File:
    table: str
    fmt: TableKind
    path: str  # resolved
    name: str  # as messages name it: the file's name
    fd: int  # open for reading; DuckDB reads it as /proc/self/fd/N
    compression: str | None  # gzip | zstd | None


def _what(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


def _inside(path: str, folder: str) -> bool:
    """``path`` (resolved) lies within ``folder`` (resolved), below it."""
    try:
        return path != folder and os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def _opened_path(fd: int) -> str | None:
    """The path the kernel holds for an open descriptor (Linux's /proc), or None where it cannot tell."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _compression(path: str) -> str | None:
    low = path.lower()
    return next((name for ending, name in _COMPRESSION_NAMES.items() if low.endswith(ending)), None)


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in does not block the open
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _open_file(path: str, table: str, fmt: TableKind, *, shown: str, place: str, folder: str | None = None) -> _File:
    """Open the data file at ``path`` (resolved) for reading and check the descriptor: a regular file, not
    empty, and, for a file of ``folder``, inside that folder.  ``shown`` names it, ``place`` in messages."""
    compression = _compression(path)
    if fmt == "parquet" and compression:
        raise DataSourceError(
            f"{place}: a Parquet file compresses its own data; it cannot be read inside {compression} compression."
        )
    if compression == "zstd" and importlib.util.find_spec("zstandard") is None:
        raise DataSourceError(
            f"{place}: reading a .zst file needs the zstandard package (pip install zstandard), "
            "so that its size can be bounded as it expands."
        )
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:  # the resolved path became a link between the check and the open
            raise DataSourceError(f"{place} changed while it was being opened (it is now a link): try again.") from e
        raise DataSourceError(f"{place} cannot be read: {e.strerror or e}.") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataSourceError(f"{place} is {_what(st.st_mode)}, not a regular file: it is not read.")
        if folder is not None:
            opened = _opened_path(fd)
            if opened is not None:
                inside = _inside(opened, folder)
            else:  # no /proc: the descriptor must be the file the resolved path names now
                now = os.stat(path, follow_symlinks=False)
                inside = _inside(path, folder) and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)
            if not inside:
                raise DataSourceError(_outside(place))
        if st.st_size == 0:
            raise DataSourceError(
                f"The file {place} is empty: "
                + ("there is no table in it." if folder is None else "remove it or give it a header and rows.")
            )
    except BaseException:
        os.close(fd)
        raise
    return _File(table, fmt, path, shown, fd, compression)


def _outside(place: str) -> str:
    return (
        f"{place} is a link to a file outside the folder: links out of a --db folder are not followed, "
        "so nothing was loaded. Copy the file into the folder, or remove the link."
    )


def _folder_files(spec: str, folder: str) -> list[_File]:
    """Every data file directly in ``folder`` (resolved), opened: hidden files and sub-folders left out."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        raise DataSourceError(f"The folder {spec} cannot be read: {e.strerror or e}.") from e
    chosen: list[tuple[str, TableKind, str, str]] = []  # (file name, format, where messages say it is, resolved path)
    for entry in entries:
        fmt = file_format(entry.name)
        if entry.name.startswith(".") or fmt is None:
            continue
        place = f"{entry.name} in {spec}"
        try:
            if entry.is_dir():  # a folder (or a link to one) named like a file: left out, as sub-folders are
                continue
            st = os.stat(entry.path)
        except OSError as e:  # a dangling link, a file gone meanwhile
            raise DataSourceError(f"{place} cannot be read: {e.strerror or e}.") from e
        target = os.path.realpath(entry.path)
        if not _inside(target, folder):
            raise DataSourceError(_outside(place))
        if not stat.S_ISREG(st.st_mode):
            raise DataSourceError(f"{place} is {_what(st.st_mode)}, not a regular file: it is not read.")
        if len(chosen) == MAX_FOLDER_FILES:
            raise DataSourceError(
                f"The folder {spec} holds more than {MAX_FOLDER_FILES} data files: "
                "give a folder with fewer (each file is a table)."
            )
        chosen.append((entry.name, fmt, place, target))
    if not chosen:
        raise DataSourceError(
            f"The folder {spec} holds no CSV, TSV, Parquet or JSON-lines file (names ending in {', '.join(FORMATS)})."
        )
    found: list[_File] = []
    try:
        for (name, fmt, place, target), table in zip(chosen, table_names([c[0] for c in chosen])):
            found.append(_open_file(target, table, fmt, shown=name, place=place, folder=folder))
    except BaseException:
        _close(found)
        raise
    return found


def _close(files: list[_File]) -> None:
    for f in files:
        try:
            os.close(f.fd)
        except OSError:
            pass


# --- loading: in a child process, bounded ------------------------------------------------------------


def _reader(fmt: str, *, typed: bool = False, rejects: bool = False) -> exp.Expr:
    """``read_csv(?, ...)`` and friends: the path is the query's first parameter (a descriptor's path, which
    has no ending: compression is said, none, since compressed files arrive through a pipe decompressed).
    A CSV or TSV file's NULL fields are the next parameter (``nullstr``), then with ``typed`` the types given
    to its columns (``types``, a struct of column names and type names), then with ``rejects`` the most
    rejected lines to record (``store_rejects``)."""
    path = exp.Placeholder()

    def option(name: str, value: str | exp.Expr) -> exp.Expr:
        return exp.PropertyEQ(
            this=exp.var(name), expression=exp.Literal.string(value) if isinstance(value, str) else value
        )

    if fmt in ("csv", "tsv"):
        options = [option("delim", "\t")] if fmt == "tsv" else []
        options += [option("compression", "none"), option("nullstr", exp.Placeholder())]
        if typed:
            options.append(option("types", exp.Placeholder()))
        if rejects:
            options += [option("store_rejects", exp.true()), option("rejects_limit", exp.Placeholder())]
        return exp.func("read_csv", path, *options)
    if fmt == "parquet":
        return exp.func("read_parquet", path)
    fmt_name = "newline_delimited" if fmt == "jsonl" else "auto"
    return exp.func("read_json", path, option("format", fmt_name), option("compression", "none"))


def _load_sql(f: _File, *, typed: bool = False) -> str:
    """``CREATE TABLE "t" AS SELECT * FROM read_csv(?, ...) LIMIT ?``: the path, the reader's parameters, then
    the rows allowed plus one."""
    create = exp.Create(
        this=exp.to_identifier(f.table, quoted=True),
        kind="TABLE",
        expression=exp.select("*").from_(_reader(f.fmt, typed=typed)).limit(exp.Placeholder()),
    )
    return create.sql(dialect="duckdb")


def _probe_sql(f: _File, *, typed: bool = False) -> str:
    """Every column of the file read (``count(COLUMNS(*))``), DuckDB's rejects kept: which value of which column
    stopped a load.  The parameters: the load's, the most rejects recorded, then the rows allowed plus one."""
    rows = exp.select("*").from_(_reader(f.fmt, typed=typed, rejects=True)).limit(exp.Placeholder())
    every = exp.Count(this=exp.Columns(this=exp.Star()))
    return exp.select(every).from_(rows.subquery("r")).sql(dialect="duckdb")


def _header_sql(f: _File) -> str:
    """The file's columns without a row (``LIMIT 0``): which of the columns given a type it has."""
    return exp.select("*").from_(_reader(f.fmt)).limit(0).sql(dialect="duckdb")


# --- reading CSV and TSV files as a data tool reads them: NULL fields, types the user gives ----------------


@dataclass(frozen=True)
class TypeSpec:
    """A ``--type COLUMN=TYPE`` (``TABLE.COLUMN=TYPE`` for one table of a folder)."""

    written: str  # as the user gave it
    table: str | None  # the table it is for; None: every CSV or TSV table with the column
    column: str
    type: str  # DuckDB's text for the type: sqlglot's rendering of the tree it parsed


def null_tokens(settings: Settings) -> tuple[str, ...]:
    """The fields of a CSV or TSV file read as NULL: ``db_nulls`` (``--null``) or :data:`DEFAULT_NULLS`, and
    always the empty field."""
    given = DEFAULT_NULLS if settings.db_nulls is None else tuple(settings.db_nulls)
    if len(given) > MAX_NULL_TOKENS:
        raise DataSourceError(f"--null was given {len(given):,} times: at most {MAX_NULL_TOKENS} tokens are read.")
    for token in given:
        if len(token) > MAX_TOKEN_CHARS:
            raise DataSourceError(f"--null {token[:20]!r}…: a NULL token is at most {MAX_TOKEN_CHARS} characters long.")
    return tuple(dict.fromkeys([*given, ""]))


def parse_type(text: str) -> str:
    """A DuckDB type as the user wrote it (``DATE``, ``DECIMAL(10,2)``, ``VARCHAR[]``), parsed strictly by
    sqlglot (the whole text, one type that DuckDB names, not a name of the user's) and written back from the
    tree: the text passed on is sqlglot's, never the user's.  Raises :class:`ValueError` when it is not one."""
    import sqlglot
    from sqlglot.errors import ErrorLevel, SqlglotError

    dialect = sqlglot.Dialect.get_or_raise("duckdb")
    try:
        tokens = dialect.tokenize(text)
        parsed = dialect.parser(error_level=ErrorLevel.RAISE).parse_into(exp.DataType, tokens, text)
    except (SqlglotError, RecursionError) as e:
        raise ValueError(f"{text!r} is not a DuckDB type") from e
    if len(parsed) != 1 or not isinstance(parsed[0], exp.DataType):
        raise ValueError(f"{text!r} is not one DuckDB type")
    kinds = {node.this for node in parsed[0].find_all(exp.DataType)}
    if kinds & {exp.DataType.Type.USERDEFINED, exp.DataType.Type.UNKNOWN}:
        raise ValueError(f"{text!r} is not a DuckDB type")
    return parsed[0].sql(dialect="duckdb")


def type_specs(settings: Settings, tables: list[str]) -> list[TypeSpec]:
    """The ``db_types`` (``--type COLUMN=TYPE``) read against the source's CSV and TSV ``tables``: a ``TABLE.``
    before the column names one of them, else the spec is for every one with the column."""
    written = tuple(settings.db_types)
    if len(written) > MAX_TYPE_SPECS:
        raise DataSourceError(f"--type was given {len(written):,} times: at most {MAX_TYPE_SPECS} are read.")
    by_name = {t.casefold(): t for t in tables}
    specs: list[TypeSpec] = []
    for text in written:
        shown = text if len(text) <= 80 else text[:80] + "…"
        if len(text) > MAX_SPEC_CHARS:
            raise DataSourceError(f"--type {shown!r}: at most {MAX_SPEC_CHARS} characters.")
        target, sep, typ = text.rpartition("=")  # a type has no "=", a column name may
        if not sep or not target or not typ.strip():
            raise DataSourceError(f"--type {shown!r}: write COLUMN=TYPE, e.g. --type zip=VARCHAR or --type day=DATE.")
        try:
            duck = parse_type(typ.strip())
        except ValueError as e:
            raise DataSourceError(
                f"--type {shown!r}: {e} (e.g. VARCHAR, BIGINT, DOUBLE, DECIMAL(10,2), DATE, TIMESTAMP, BOOLEAN)."
            ) from None
        head, dot, rest = target.partition(".")
        table = by_name.get(head.casefold()) if dot and rest else None
        specs.append(TypeSpec(text, table, rest if table else target, duck))
    return specs


@dataclass
class _Reading:
    """How a source's CSV and TSV files are read, and what the load said of it."""

    nulls: tuple[str, ...]
    specs: list[TypeSpec]
    typed: set[tuple[str, str]] = field(default_factory=set)  # (table, column) given a type by a spec

    def for_file(self, f: _File) -> list[tuple[int, TypeSpec]]:
        return [(k, spec) for k, spec in enumerate(self.specs) if spec.table in (None, f.table)]


def _reading(spec: str, files: list[_File], settings: Settings) -> _Reading:
    tables = [f.table for f in files if f.fmt in ("csv", "tsv")]
    if not tables and (settings.db_nulls is not None or settings.db_types):
        raise DataSourceError(_not_text_files(spec))
    return _Reading(null_tokens(settings), type_specs(settings, tables))


def _not_text_files(spec: str) -> str:
    return (
        f"--null and --type (CS224V_DB_NULLS, CS224V_DB_TYPES) say how CSV and TSV files are read, and {spec} holds "
        "none: a Parquet or JSON file, a DuckDB or PostgreSQL database keeps its own types and NULLs."
    )


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def _worker_env() -> dict[str, str]:
    """The environment of the loader process: this one, with the folder that holds ``engines`` first on its
    path (the child runs with ``-P``: the current folder is not searched)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(engines.__file__ or "")))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


class _Worker:
    """A loader process (``python -m engines.data.load_worker``): requests and replies go over a socket."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "engines.data.load_worker", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,  # read once it has ended, for what went wrong
                pass_fds=[theirs.fileno()],
                env=_worker_env(),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self.owner = os.getpid()

    def exchange(self, request: dict[str, Any], fds: list[int], deadline: float) -> list[dict[str, Any]]:
        """Send ``request`` with ``fds``; its replies up to the last (``ok``, ``stop`` or ``fail``), or those
        before the loader ended.  Raises :class:`TimeoutError` at ``deadline``."""
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        send(self.sock, request, fds)
        messages: list[dict[str, Any]] = []
        pending = b""
        while True:
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return messages
            pending += chunk
            *lines, pending = pending.split(b"\n")
            messages += [json.loads(line) for line in lines if line.strip()]
            if messages and messages[-1].keys() & {"ok", "stop", "fail"}:
                return messages

    def discard(self) -> str:
        """Stop the process; the last line it wrote on its standard error (or how it ended)."""
        self.sock.close()  # an idle loader ends on its own when its socket closes
        try:
            err = self.proc.communicate(timeout=1)[1]
        except subprocess.TimeoutExpired:
            self.proc.kill()
            err = self.proc.communicate()[1]
        lines = (err or b"").decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else f"exit status {self.proc.returncode}"


# A loader process serves one load after another: a program that opens many sources (the app, the tests)
# starts Python and DuckDB once.  It is kept while idle for IDLE_S, and never across a deadline or a failure.
IDLE_S = 60.0
_idle_lock = threading.Lock()
_idle: _Worker | None = None
_idle_timer: threading.Timer | None = None


def _take_worker() -> _Worker:
    global _idle, _idle_timer
    with _idle_lock:
        worker, _idle = _idle, None
        timer, _idle_timer = _idle_timer, None
    if timer is not None:
        timer.cancel()
    if worker is not None and worker.owner == os.getpid():  # (a forked copy leaves its parent's loader alone)
        if worker.proc.poll() is None:
            return worker
        worker.discard()
    return _Worker()


def _keep_worker(worker: _Worker) -> None:
    global _idle, _idle_timer
    timer = threading.Timer(IDLE_S, _discard_idle)
    timer.daemon = True
    spare: _Worker | None = worker
    with _idle_lock:
        if _idle is None:
            _idle, _idle_timer, spare = worker, timer, None
    if spare is not None:  # another load kept its loader meanwhile
        spare.discard()
    else:
        timer.start()


def _discard_idle() -> None:
    """Stop the idle loader, if there is one."""
    global _idle, _idle_timer
    with _idle_lock:
        worker, _idle = _idle, None
        timer, _idle_timer = _idle_timer, None
    if timer is not None:
        timer.cancel()
    if worker is not None and worker.owner == os.getpid():
        worker.discard()


atexit.register(_discard_idle)


def _exchange(
    spec: str, request: dict[str, Any], fds: list[int], settings: Settings, deadline: float, names: list[str]
) -> dict[str, Any]:
    """Run ``request`` in a loader process, killed at ``deadline``; its last reply (``ok`` or ``stop``).
    The deadline or a loader that fails is a :class:`DataSourceError` naming the file it was at (``names``)."""
    try:
        worker = _take_worker()
    except OSError as e:
        raise DataSourceError(f"{spec} could not be loaded: the loader process did not start ({e}).") from e
    timed_out = False
    try:
        messages = worker.exchange(request, fds, deadline)
    except TimeoutError:
        timed_out, messages = True, []
    except OSError:  # the loader ended before it took the request
        messages = []
    except BaseException:  # interrupted (Ctrl-C): the loader goes too
        worker.proc.kill()
        worker.discard()
        raise
    current = next((m["loading"] for m in reversed(messages) if "loading" in m), None)
    name = names[current] if current is not None else os.path.basename(spec.rstrip("/\\")) or spec
    final = messages[-1] if messages and messages[-1].keys() & {"ok", "stop", "fail"} else None
    if timed_out:
        worker.proc.kill()
        worker.discard()
        raise DataSourceError(
            f"Loading {name} took longer than {settings.load_timeout_s:g} s, so it was stopped "
            "(the deadline load_timeout_s; CS224V_LOAD_TIMEOUT_S raises it)."
        )
    if final is None or "fail" in final:
        why = worker.discard()
        raise DataSourceError(
            f"{spec} could not be loaded: the loader process failed at {name} ({final['fail'] if final else why})."
        )
    _keep_worker(worker)
    return final


def _file_request(f: _File, reading: _Reading) -> dict[str, Any]:
    request: dict[str, Any] = {
        "fd": f.fd,
        "name": f.name,
        "format": f.fmt,
        "compression": f.compression,
        "sql": _load_sql(f),
    }
    if f.fmt in ("csv", "tsv"):
        request["probe"] = _probe_sql(f)
        types = reading.for_file(f)
        if types:
            request["types"] = [[spec.column, spec.type, k] for k, spec in types]
            request["header"] = _header_sql(f)
            request["typed"] = _load_sql(f, typed=True)
            request["probe_typed"] = _probe_sql(f, typed=True)
    return request


def _load(
    spec: str,
    files: list[_File],
    settings: Settings,
    reading: _Reading,
    database: str,
    config: dict[str, Any],
    deadline: float,
) -> None:
    """Fill ``database`` from ``files`` in a loader process (:mod:`engines.data.load_worker`), killed at
    ``deadline``; a bound reached, a file DuckDB cannot read, a value that cannot be read as its column's type
    or a ``--type`` for a column no file has is a :class:`DataSourceError`.  ``reading.typed`` gets the columns
    given a type."""
    request = {
        "database": database,
        "config": config,
        "max_rows": settings.load_max_rows,
        "max_bytes": settings.load_max_bytes,
        "nulls": list(reading.nulls),
        "files": [_file_request(f, reading) for f in files],
    }
    final = _exchange(spec, request, [f.fd for f in files], settings, deadline, [f.name for f in files])
    if "ok" in final:
        used = {int(k) for _, k in final.get("typed", ())}
        for i, k in final.get("typed", ()):
            reading.typed.add((files[int(i)].table, reading.specs[int(k)].column))
        unused = next((s for k, s in enumerate(reading.specs) if k not in used), None)
        if unused is not None:
            column = _quoted(unused.column)
            if unused.table is not None:
                where = next(f.name for f in files if f.table == unused.table) + f" has no column {column}"
            elif len(files) == 1:
                where = f"{files[0].name} has no column {column}"
            else:
                where = f"no CSV or TSV file in {spec} has a column {column}"
            raise DataSourceError(
                f"--type {_argument(unused.written)}: {where} (names are compared exactly, case included)."
            )
        return
    f = files[int(final["file"])]
    together = " (all its files together)" if len(files) > 1 else ""
    kind = final["stop"]
    if kind == "rows":
        raise DataSourceError(
            f"{f.name} goes past the load cap of {settings.load_max_rows:,} rows{together}, so loading stopped "
            "(load_max_rows; CS224V_LOAD_MAX_ROWS raises it)."
        )
    if kind == "bytes":
        raise DataSourceError(
            f"{f.name} goes past the load cap of {_size(settings.load_max_bytes)}{together} once decompressed, "
            "so loading stopped (load_max_bytes; CS224V_LOAD_MAX_BYTES raises it)."
        )
    if kind == "empty":
        raise DataSourceError(f"The file {f.name} is empty once decompressed: there is no table in it.")
    if kind == "decompress":
        raise DataSourceError(f"{f.name} could not be decompressed ({f.compression}): {final.get('detail', '')}")
    if kind == "cast":
        raise DataSourceError(_cast_message(f, final, reading))
    raise DataSourceError(f"{f.name} could not be read as a {KINDS[f.fmt]}: {final.get('detail', '')}")


def _quoted(text: Any) -> str:
    """A name or value of the user's file in a message: in double quotes, escaped as JSON (one line)."""
    return json.dumps(str(text), ensure_ascii=False)


def _argument(text: str) -> str:
    """A command-line argument in a message: as it is when it is a plain word, else quoted (one line)."""
    return text if re.fullmatch(r"[\w.=(),-]+", text) else _quoted(text)


def _cast_message(f: _File, final: dict[str, Any], reading: _Reading) -> str:
    """A value that cannot be read as its column's type: the file, column, type, value, line and how many."""
    column, typ = str(final.get("column", "")), str(final.get("type", "")) or "its type"
    spec = next((spec for _, spec in reading.for_file(f) if spec.column == column), None)
    given = spec is not None
    if spec is not None:  # the type as given (DuckDB's message names its internal type: INT32 for INTEGER)
        typ = spec.type
    how = "given with --type" if given else "inferred from its first lines"
    value = final.get("value")
    holds = f"holds {_quoted(value)}" if value is not None else "holds such a value"
    count = int(final.get("count", 1))
    more = count - 1
    others = ""
    if more > 0:
        lines = f"{'at least ' if final.get('at_least') else ''}{more:,} more line{'s' if more != 1 else ''}"
        others = f" ({lines} too)"
    return (
        f"{f.name}: the column {_quoted(column)} cannot be read as {typ} ({how}): line {int(final.get('line', 0)):,} "
        f"{holds}{others}. Nothing was loaded and the file is unchanged. Read such fields as NULL with --null "
        f"(CS224V_DB_NULLS; it replaces the default tokens {', '.join(DEFAULT_NULLS)}), or keep the column as text "
        f"with --type {_argument(column + '=VARCHAR')} (CS224V_DB_TYPES)."
    )


def _open_files(spec: str, files: list[_File], settings: Settings, *, kind: TableKind, deadline: float) -> DataSource:
    try:
        reading = _reading(spec, files, settings)
        sandbox = Sandbox.create_external(
            lambda database, config: _load(spec, files, settings, reading, database, config, deadline),
            row_cap=settings.row_cap,
            timeout_s=settings.query_timeout_s,
            limits=Limits.from_settings(settings),
        )
    except DataSourceError:
        raise
    except (SqlError, duckdb.Error) as e:
        raise DataSourceError(f"{spec} could not be loaded: {_first_line(str(e))}") from e
    finally:
        _close(files)
    origins = {f.table: _Origin(f.name, f.fmt, reading) for f in files}
    return _described(spec, kind, sandbox, tuple(f.path for f in files), settings, deadline, origins)


def _probe_duckdb(spec: str, path: str, settings: Settings, deadline: float) -> None:
    """Attach the DuckDB file once in the loader process, under the deadline, before this process does:
    a file that takes too long to open (a huge write-ahead log to replay) or crashes DuckDB costs that
    process only."""
    with tempfile.TemporaryDirectory(prefix="cs224v-probe-") as workdir:
        request = {
            "probe": attach_statement(path, "probe").sql(dialect="duckdb"),
            "config": attach_config(workdir, Limits.from_settings(settings)),
        }
        shown = os.path.basename(spec.rstrip("/\\")) or spec
        final = _exchange(spec, request, [], settings, deadline, [shown])
    if "stop" in final:
        raise DataSourceError(f"{spec} could not be opened as a DuckDB database: {final.get('detail', '')}")


def _open_duckdb(spec: str, path: str, settings: Settings, deadline: float) -> DataSource:
    _probe_duckdb(spec, path, settings, deadline)
    try:
        sandbox = Sandbox.open_database(
            path, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s, limits=Limits.from_settings(settings)
        )
    except (SqlError, duckdb.Error) as e:
        raise DataSourceError(f"{spec} could not be opened as a DuckDB database: {_first_line(str(e))}") from e
    return _described(spec, "duckdb", sandbox, (path,), settings, deadline)


@dataclass(frozen=True)
class _Origin:
    """The file a table was read from, and how."""

    name: str  # the file's name
    fmt: str
    reading: _Reading


def _with_origin(table: TableInfo, origin: _Origin | None) -> TableInfo:
    """``table``'s description with where its types came from: a CSV, TSV or JSON file's are inferred from the
    values (a CSV or TSV column's given with ``--type``), every other source's are its own (declared); a CSV or
    TSV table says which fields were read as NULL."""
    if origin is None:
        return replace(table, columns=tuple(replace(c, type_from="declared") for c in table.columns))
    text = origin.fmt in ("csv", "tsv")
    inferred = "inferred" if origin.fmt != "parquet" else "declared"
    columns = tuple(
        replace(c, type_from="given" if (table.name, c.name) in origin.reading.typed else inferred)
        for c in table.columns
    )
    return replace(table, columns=columns, file=origin.name, null_tokens=origin.reading.nulls if text else None)


def _described(
    spec: str,
    kind: TableKind,
    sandbox: Sandbox,
    files: tuple[str, ...],
    settings: Settings,
    deadline: float,
    origins: dict[str, _Origin] | None = None,
) -> DataSource:
    try:
        tables = sandbox.tables()
        if not tables:
            raise DataSourceError(f"{spec} holds no table.")
        schema = describe(
            sandbox,
            tables,
            source=os.path.basename(spec.rstrip("/\\")) or spec,
            kind=KINDS[kind],
            deadline=deadline,
            deadline_note=f"the deadline load_timeout_s ({settings.load_timeout_s:g} s)",
        )
        found = origins or {}
        schema = replace(
            schema,
            tables=tuple(_with_origin(t, found.get(t.name) if t.schema is None else None) for t in schema.tables),
        )
    except BaseException:
        sandbox.close()
        raise
    return DataSource(spec, kind, sandbox, schema, files)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message
