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

Bad input — a missing or unreadable path, an empty file, a format DuckDB cannot read, two files that
would make the same table, a bound reached — is a :class:`DataSourceError` that says what to do, never
a traceback.  The user's files are only ever opened for reading.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
from sqlglot import exp

import engines
from engines.data.describe import SchemaDescription, describe
from engines.data.load_worker import send
from engines.errors import EngineError
from engines.settings import Settings
from engines.sql.sandbox import Limits, Sandbox, SqlError, attach_config, attach_statement

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
    deadline = time.monotonic() + settings.load_timeout_s
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
        return _open_duckdb(spec, path, settings, deadline)
    raise DataSourceError(
        f"Cannot tell the format of {spec}: its name should end in "
        f"{', '.join(FORMATS)} (optionally {' or '.join(COMPRESSIONS)}), or {', '.join(DUCKDB_ENDINGS)}."
    )


# --- opening the files: the checks are made on the opened descriptor ---------------------------------


@dataclass
class _File:
    table: str
    fmt: str
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


def _open_file(path: str, table: str, fmt: str, *, shown: str, place: str, folder: str | None = None) -> _File:
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
    found: list[_File] = []
    tables: dict[str, str] = {}
    try:
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
            name = table_name(entry.name)
            if name.casefold() in tables:
                raise DataSourceError(
                    f"The files {tables[name.casefold()]} and {entry.name} in {spec} would both be the table "
                    f"{name!r}: rename one of them."
                )
            if len(found) == MAX_FOLDER_FILES:
                raise DataSourceError(
                    f"The folder {spec} holds more than {MAX_FOLDER_FILES} data files: "
                    "give a folder with fewer (each file is a table)."
                )
            tables[name.casefold()] = entry.name
            found.append(_open_file(target, name, fmt, shown=entry.name, place=place, folder=folder))
        if not found:
            raise DataSourceError(
                f"The folder {spec} holds no CSV, TSV, Parquet or JSON-lines file (names ending in {', '.join(FORMATS)})."
            )
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


def _reader(fmt: str) -> exp.Expression:
    """``read_csv(?)`` and friends: the path is the query's first parameter (a descriptor's path, which
    has no ending: compression is said, none, since compressed files arrive through a pipe decompressed)."""
    path = exp.Placeholder()

    def option(name: str, value: str) -> exp.Expression:
        return exp.PropertyEQ(this=exp.var(name), expression=exp.Literal.string(value))

    if fmt == "csv":
        return exp.func("read_csv", path, option("compression", "none"))
    if fmt == "tsv":
        return exp.func("read_csv", path, option("delim", "\t"), option("compression", "none"))
    if fmt == "parquet":
        return exp.func("read_parquet", path)
    fmt_name = "newline_delimited" if fmt == "jsonl" else "auto"
    return exp.func("read_json", path, option("format", fmt_name), option("compression", "none"))


def _load_sql(f: _File) -> str:
    """``CREATE TABLE "t" AS SELECT * FROM read_csv(?) LIMIT ?``: the path, then the rows allowed plus one."""
    create = exp.Create(
        this=exp.to_table(exp.to_identifier(f.table, quoted=True)),
        kind="TABLE",
        expression=exp.select("*").from_(_reader(f.fmt)).limit(exp.Placeholder()),
    )
    return create.sql(dialect="duckdb")


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
    with _idle_lock:
        if _idle is None:
            _idle, _idle_timer, worker = worker, timer, None
    if worker is not None:  # another load kept its loader meanwhile
        worker.discard()
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


def _load(
    spec: str, files: list[_File], settings: Settings, database: str, config: dict[str, Any], deadline: float
) -> None:
    """Fill ``database`` from ``files`` in a loader process (:mod:`engines.data.load_worker`), killed at
    ``deadline``; a bound reached or a file DuckDB cannot read is a :class:`DataSourceError`."""
    request = {
        "database": database,
        "config": config,
        "max_rows": settings.load_max_rows,
        "max_bytes": settings.load_max_bytes,
        "files": [
            {"fd": f.fd, "name": f.name, "format": f.fmt, "compression": f.compression, "sql": _load_sql(f)}
            for f in files
        ],
    }
    final = _exchange(spec, request, [f.fd for f in files], settings, deadline, [f.name for f in files])
    if "ok" in final:
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
    raise DataSourceError(f"{f.name} could not be read as a {KINDS[f.fmt]}: {final.get('detail', '')}")


def _open_files(spec: str, files: list[_File], settings: Settings, *, kind: str, deadline: float) -> DataSource:
    try:
        sandbox = Sandbox.create_external(
            lambda database, config: _load(spec, files, settings, database, config, deadline),
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
    return _described(spec, kind, sandbox, tuple(f.path for f in files), settings, deadline)


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


def _described(
    spec: str, kind: str, sandbox: Sandbox, files: tuple[str, ...], settings: Settings, deadline: float
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
    except BaseException:
        sandbox.close()
        raise
    return DataSource(spec, kind, sandbox, schema, files)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message
