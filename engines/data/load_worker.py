"""The loader process: fills the private database of a ``--db FILE|FOLDER`` source from the user's files.

:mod:`engines.data.source` opens the files itself (the checks are made on the opened descriptors), hands
the descriptors to this process (``python -m engines.data.load_worker``) and kills it at the load deadline:
DuckDB's CSV sniffer and binder do not look for an interrupt (a header of 150,000 columns held an
interrupted query 13 s in the sniffer), a process can always be stopped.  A ``--db`` DuckDB file is
attached here first (:func:`probe`), under the same deadline, before the parent attaches it.

The parent sends each request as JSON on a socket (:func:`send`; the descriptors go with it)::

    {"database": path of the database file to fill, "config": DuckDB configuration,
     "max_rows": rows allowed in all, "max_bytes": bytes allowed in all,
     "nulls": the fields a CSV or TSV file means as NULL,
     "files": [{"fd": descriptor, "name": shown in messages, "format": "csv"|"tsv"|"parquet"|"jsonl"|"json",
                "compression": null|"gzip"|"zstd", "sql": "CREATE TABLE ... FROM read_csv(?, nullstr := ?) LIMIT ?",
                and for a CSV or TSV file: "probe": the same read counting every column (store_rejects on),
                and when the user gave types: "types": [[column, DuckDB type, spec]],
                "header": "SELECT * FROM read_csv(...) LIMIT 0", "typed" and "probe_typed": the load and the
                probe with "types := ?" too}]}

and reads JSON lines back on the socket: ``{"loading": i}`` before file ``i``, then one last line,
``{"ok": true, "typed": [[file, spec], ...]}`` (the specs of ``types`` that applied to each file) or
``{"stop": "rows"|"bytes"|"read"|"decompress"|"empty"|"cast", "file": i, "detail": text, ...}`` (a cast: also
``column``, ``value``, ``line``, ``type``, ``count``, ``at_least``); ``{"fail": text}`` for anything else (the
process then ends).  The process serves one request after another, so a program that opens many sources starts
it once.

A CSV or TSV file is read as a data tool reads it: the request's ``nulls`` are NULL (DuckDB's ``nullstr``), so a
numeric or date column with ``NA`` in it keeps its type.  A type the user gave for a column (``"types"``, only the
columns the file's header has: read first with ``"header"``) is DuckDB's ``types`` option, passed as a parameter.
A value that cannot be read as its column's type (given, or inferred from the first rows) stops loading: the file
is read once more with DuckDB's ``store_rejects``, so the reply names the column, the first such value, its line
and how many lines hold one (``"stop": "cast"``).  Nothing is written to the user's file.

DuckDB reads each file only as ``/proc/self/fd/N`` (``/dev/fd/N`` where there is no ``/proc``): the very
file the parent checked, and a path DuckDB cannot glob.  A compressed file reaches it decompressed through
a named pipe in the private folder.  Its connection may read exactly those paths (``allowed_paths``, which
DuckDB compares once resolved: a file renamed or replaced after the check is refused), nothing else, and
its configuration is locked before the first read.

The bounds, whatever the compression:

* rows: every read is ``... LIMIT <rows left + 1>``, so DuckDB stops one row past the cap;
* bytes: a plain file counts its size, a Parquet file the larger of its size and its pages' uncompressed
  size (from its metadata, read before any row); a ``.gz`` or ``.zst`` file is decompressed here, in
  bounded chunks, into a pipe DuckDB reads, and counted as it expands: one byte past the cap, the pipe is
  closed and DuckDB interrupted, so a gzip bomb stops at the cap, never expanded further.

Only the standard library and DuckDB are imported (``zstandard`` for ``.zst``), so the process starts fast.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import gzip
import json
import os
import select
import socket
import struct
import sys
import termios
import threading
from typing import Any, Protocol

import duckdb

CHUNK = 1 << 20  # bytes decompressed at a time
FD_DIR = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"


def fd_path(fd: int) -> str:
    """The path through which DuckDB opens descriptor ``fd`` of this process."""
    return f"{FD_DIR}/{fd}"


class Stop(Exception):
    """Loading stops: ``kind`` is rows, bytes, read, decompress, empty or cast; ``detail`` says more,
    ``extra`` goes into the reply as it is (a cast: the column, value, line, type and how many lines)."""

    def __init__(self, kind: str, detail: str = "", **extra: Any) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.extra = extra


REJECTS_LIMIT = 1000
"""Lines that cannot be read a file's probe records at most (DuckDB's ``rejects_limit``): the count says "at least"."""
SHOWN_CHARS = 200
"""A column's name or a value quoted in a reply: at most this many characters."""
_CONVERT = 'Could not convert string "'


class _Closed(Exception):
    """DuckDB stopped reading the pipe."""


class _Unconvertible(Exception):
    """DuckDB met a value that its column's type cannot hold."""


class _Reader(Protocol):
    """A decompressing reader (gzip's or zstandard's)."""

    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class Pump(threading.Thread):
    """Decompresses ``source`` into the pipe ``write_fd``, counting the bytes as they expand.

    :meth:`first` reads the first chunk before DuckDB starts (an empty or corrupt stream stops there);
    the thread writes it and the rest.  One byte past ``budget`` it stops, sets ``over`` and interrupts
    ``con``; a corrupt stream sets ``error`` and interrupts too (DuckDB would otherwise take the end of
    the pipe for the end of the data).  Its end of the pipe is closed only once DuckDB has read every byte
    written (or :meth:`stop` is called): DuckDB opens the pipe by its path, and an open finding no writer
    would wait for one for good."""

    def __init__(
        self, source: int, compression: str, budget: int, write_fd: int, con: duckdb.DuckDBPyConnection
    ) -> None:
        super().__init__(daemon=True)
        self._budget = budget
        self._write_fd = write_fd
        self._con = con
        self._stopped = threading.Event()
        self._pending = b""
        self.count = 0
        self.over = False
        self.error: str | None = None
        os.lseek(source, 0, os.SEEK_SET)
        self._raw = os.fdopen(source, "rb", closefd=False)
        if compression == "gzip":
            self._reader: _Reader = gzip.GzipFile(fileobj=self._raw, mode="rb")
        else:
            import zstandard  # the parent checked it is there

            self._reader = zstandard.ZstdDecompressor().stream_reader(self._raw, read_across_frames=True)

    def stop(self) -> None:
        self._stopped.set()

    def _read(self) -> bytes:
        chunk = self._reader.read(min(CHUNK, self._budget - self.count + 1))
        self.count += len(chunk)
        if self.count > self._budget:
            self.over = True
        return chunk

    def first(self) -> None:
        """Read the first chunk: raises :class:`Stop` (bytes, decompress, empty) when there is nothing to load."""
        try:
            self._pending = self._read()
        except Exception as e:  # a corrupt stream: gzip.BadGzipFile, zlib.error, zstandard.ZstdError, EOFError ...
            raise Stop("decompress", _one_line(str(e)) or type(e).__name__) from e
        if self.over:
            raise Stop("bytes")
        if not self._pending:
            raise Stop("empty")

    def run(self) -> None:
        try:
            chunk = self._pending
            while chunk and not self._stopped.is_set():
                self._write(chunk)
                chunk = self._read()
                if self.over:
                    self._interrupt()
                    return
            self._drain()
        except _Closed:
            pass
        except Exception as e:  # a corrupt stream
            self.error = _one_line(str(e)) or type(e).__name__
            self._interrupt()
        finally:
            os.close(self._write_fd)

    def close(self) -> None:
        self._reader.close()
        self._raw.close()

    def _write(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        while view:
            if self._stopped.is_set():
                raise _Closed
            try:
                view = view[os.write(self._write_fd, view) :]
            except BlockingIOError:
                select.select([], [self._write_fd], [], 0.1)
            except BrokenPipeError:
                raise _Closed from None

    def _drain(self) -> None:
        """Wait until DuckDB has read all that is in the pipe (or loading stopped)."""
        unread = array.array("i", [0])
        while not self._stopped.is_set():
            fcntl.ioctl(self._write_fd, termios.FIONREAD, unread)
            if unread[0] == 0:
                return
            self._stopped.wait(0.01)

    def _interrupt(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self._con.interrupt()


def _one_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:500]


def _detail(error: BaseException, paths: dict[str, str]) -> str:
    """DuckDB's message, its first line, with the descriptor paths written as the files' names."""
    text = _one_line(str(error))
    for path, name in sorted(paths.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, name)
    return text


def _count(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> int:
    row = con.execute(sql, params).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


class Loader:
    def __init__(self, request: dict[str, Any]) -> None:
        self.files: list[dict[str, Any]] = request["files"]
        self.rows_left: int = int(request["max_rows"])
        self.bytes_left: int = int(request["max_bytes"])
        self.nulls: list[str] = list(request.get("nulls") or [""])
        self.con = duckdb.connect(request["database"], config=request["config"])
        # DuckDB checks allowed_paths on the resolved path, so a compressed file's decompressed bytes come
        # through a named pipe of the private folder (a path that stays the same), one per file
        folder = os.path.dirname(os.path.abspath(request["database"]))
        self.names: dict[str, str] = {}
        self.streams: dict[int, str] = {}
        for i, f in enumerate(self.files):
            if f["compression"]:
                self.streams[i] = os.path.join(folder, f"stream-{i}")  # made (and removed) at each read
                self.names[self.streams[i]] = f["name"]
            else:
                self.names[fd_path(int(f["fd"]))] = f["name"]
        self.con.execute("SET allowed_paths = ?", [sorted(self.names)]).fetchall()
        self.con.execute("SET enable_external_access = false").fetchall()
        self.con.execute("SET lock_configuration = true").fetchall()

    def load(self, i: int) -> list[int]:
        """Load file ``i``; the specs of the types given that applied to it."""
        f = self.files[i]
        size = None
        if not f["compression"]:
            fd = int(f["fd"])
            size = os.fstat(fd).st_size
            if f["format"] == "parquet":
                size = max(size, self._parquet_precheck(fd))
            if size > self.bytes_left:
                raise Stop("bytes")
        options: list[Any] = [self.nulls] if "probe" in f else []
        sql, applied = f["sql"], []
        if f.get("types"):  # the columns given a type that this file's header has
            names, _ = self._read(i, lambda path: self._header(f["header"], path, options))
            chosen = {column: typ for column, typ, _ in f["types"] if column in names}
            if chosen:
                sql, options = f["typed"], [*options, chosen]
                applied = [spec for column, _, spec in f["types"] if column in chosen]
        try:
            rows, expanded = self._read(i, lambda path: self._run(sql, path, options))
        except _Unconvertible as e:  # a value its column's type cannot hold: which, read again with rejects kept
            raise self._rejected(i, f, options, str(e)) from None
        self.bytes_left -= size if size is not None else expanded
        if rows > self.rows_left:
            raise Stop("rows")
        self.rows_left -= rows
        return applied

    def _read(self, i: int, action: Any) -> tuple[Any, int]:
        """``action(path)`` over file ``i``, and the bytes a compressed one expanded to (decompressed through
        its pipe, counted against the byte bound as it expands; 0 for a plain file)."""
        f = self.files[i]
        if f["compression"]:
            return self._through_pipe(f, self.streams[i], action)
        return action(fd_path(int(f["fd"]))), 0

    def _run(self, sql: str, path: str, options: list[Any]) -> int:
        try:
            return _count(self.con, sql, [path, *options, self.rows_left + 1])
        except duckdb.ConversionException as e:
            raise _Unconvertible(_detail(e, self.names)) from e
        except duckdb.Error as e:
            raise Stop("read", _detail(e, self.names)) from e

    def _header(self, sql: str, path: str, options: list[Any]) -> set[str]:
        try:
            return {d[0] for d in self.con.execute(sql, [path, *options]).description or ()}
        except duckdb.Error as e:
            raise Stop("read", _detail(e, self.names)) from e

    def _rejected(self, i: int, f: dict[str, Any], options: list[Any], detail: str) -> Stop:
        """Read file ``i`` once more with DuckDB's rejects kept (every column read, at most REJECTS_LIMIT
        rejected lines recorded): the first value that cannot be read as its column's type, the column, the
        line and how many lines of that column were refused (``detail``, DuckDB's message, when it finds none)."""
        probe = f.get("probe_typed" if len(options) > 1 else "probe")
        if probe is None:  # not a CSV or TSV file
            return Stop("read", detail)
        try:
            limit = self.rows_left + 1
            self._read(i, lambda path: self.con.execute(probe, [path, *options, REJECTS_LIMIT, limit]).fetchall())
            found = self.con.execute(
                "WITH last AS (SELECT max(scan_id) AS scan FROM reject_scans), "
                "casts AS (SELECT e.column_name, e.line, e.error_message FROM reject_errors e, last "
                "WHERE e.scan_id = last.scan AND e.error_type = 'CAST') "
                "SELECT column_name, line, error_message, count(*) OVER (PARTITION BY column_name) FROM casts "
                "ORDER BY line LIMIT 1"
            ).fetchone()
        except (duckdb.Error, Stop):
            found = None
        if found is None:
            return Stop("read", detail)
        column, line, message, count = found
        start = message.find(_CONVERT)
        end = message.rfind("\" to '")
        value = message[start + len(_CONVERT) : end] if 0 <= start < end else None
        typ = message[end + 5 :].strip().strip("'") if value is not None else ""
        return Stop(
            "cast",
            _one_line(message),
            column=str(column)[:SHOWN_CHARS],
            value=value[:SHOWN_CHARS] if value is not None else None,
            line=int(line),
            type=typ[:SHOWN_CHARS],
            count=int(count),
            at_least=int(count) >= REJECTS_LIMIT,
        )

    def _parquet_precheck(self, fd: int) -> int:
        """The pages' uncompressed size a Parquet file declares; its declared rows past the cap stop here."""
        path = fd_path(fd)
        try:
            declared = _count(self.con, "SELECT num_rows FROM parquet_file_metadata(?)", [path])
            expanded = _count(
                self.con, "SELECT coalesce(sum(total_uncompressed_size), 0) FROM parquet_metadata(?)", [path]
            )
        except duckdb.Error as e:
            raise Stop("read", _detail(e, self.names)) from e
        if declared > self.rows_left:
            raise Stop("rows")
        return expanded

    def _through_pipe(self, f: dict[str, Any], stream: str, action: Any) -> tuple[Any, int]:
        """``action(stream)`` while the file is decompressed into the pipe ``stream``; its result and the bytes
        decompressed.  Each call decompresses the file from its start (a header read, then the load)."""
        if not os.path.exists(stream):
            os.mkfifo(stream, 0o600)
        # this process keeps a reading end open throughout, so that neither open of the pipe waits and the
        # pump's writes never fail for want of a reader before DuckDB opens it
        keeper = os.open(stream, os.O_RDONLY | os.O_NONBLOCK)
        writer = os.open(stream, os.O_WRONLY | os.O_NONBLOCK)
        try:
            pump = Pump(int(f["fd"]), f["compression"], self.bytes_left, writer, self.con)
        except BaseException:
            os.close(writer)
            os.close(keeper)
            raise
        failure: Exception | None = None
        result: Any = None
        try:
            pump.first()
            pump.start()
            result = action(stream)
        except (Stop, _Unconvertible) as e:
            failure = e
        finally:
            pump.stop()
            if pump.ident is not None:  # started: it closes the writing end itself
                pump.join()
            else:
                os.close(writer)
            os.close(keeper)
            pump.close()
            os.unlink(stream)
        if pump.over:
            raise Stop("bytes")
        if pump.error is not None:
            raise Stop("decompress", pump.error)
        if failure is not None:
            raise failure
        return result, pump.count

    def finish(self) -> None:
        self.con.execute("CHECKPOINT").fetchall()


def _emit(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def probe(request: dict[str, Any], sock: socket.socket) -> None:
    """Attach a user's DuckDB file (``request["probe"]``: the ``ATTACH ... AS "probe" (READ_ONLY)`` to run)
    and read its catalogue, as the parent is about to: here a slow or crashing file costs only this process."""
    con = duckdb.connect(":memory:", config=request["config"])
    try:
        _emit(sock, {"loading": 0})
        con.execute(request["probe"]).fetchall()
        con.execute("SELECT count(*) FROM duckdb_columns() WHERE database_name = 'probe'").fetchall()
    except duckdb.Error as e:
        _emit(sock, {"stop": "read", "file": 0, "detail": _one_line(str(e))})
        return
    finally:
        con.close()
    _emit(sock, {"ok": True})


def run(request: dict[str, Any], sock: socket.socket) -> None:
    """Load what ``request`` asks, saying on ``sock`` which file is loading and, last, how it ended."""
    if "probe" in request:
        probe(request, sock)
        return
    loader = Loader(request)
    typed: list[list[int]] = []
    try:
        for i in range(len(loader.files)):
            _emit(sock, {"loading": i})
            try:
                typed += [[i, spec] for spec in loader.load(i)]
            except Stop as e:
                _emit(sock, {**e.extra, "stop": e.kind, "file": i, "detail": e.detail})
                return
        loader.finish()
    finally:
        loader.con.close()
    _emit(sock, {"ok": True, "typed": typed})


FD_BATCH = 200
"""Descriptors sent per message (Linux takes at most 253 in one)."""


def _exactly(sock: socket.socket, size: int) -> bytes | None:
    """``size`` bytes from ``sock``, or None when it closes first."""
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """The request, its files' descriptors in place of the parent's numbers; None when the parent sends none
    (a spare loader the parent no longer needs)."""
    header = _exactly(sock, 8)
    if header is None:
        return None
    size, count = struct.unpack("!II", header)
    body = _exactly(sock, size)
    if body is None:
        return None
    request = json.loads(body)
    if not isinstance(request, dict):  # the parent sends an object: anything else is no request
        return None
    fds: list[int] = []
    while len(fds) < count:
        _, got, _, _ = socket.recv_fds(sock, 1, FD_BATCH)
        if not got:
            return None
        fds.extend(got)
    for f, fd in zip(request.get("files", ()), fds):
        f["fd"] = fd
    return request


def send(sock: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """What :func:`receive` reads: the request as JSON, then the descriptors, in batches."""
    body = json.dumps(request).encode()
    sock.sendall(struct.pack("!II", len(body), len(fds)) + body)
    for i in range(0, len(fds), FD_BATCH):
        socket.send_fds(sock, [b"\0"], fds[i : i + FD_BATCH])


def main(argv: list[str]) -> int:
    """``python -m engines.data.load_worker FD``: requests arrive on the socket ``FD``, one after another,
    and the replies go back on it; the process ends when the parent closes the socket (or kills it at a
    deadline).  It starts before it is needed, so DuckDB is imported by the time a request comes."""
    with socket.socket(fileno=int(argv[0])) as sock:
        while (request := receive(sock)) is not None:
            try:
                run(request, sock)
            except Exception as e:  # a bug, or DuckDB refusing its configuration: said, then this process ends
                _emit(sock, {"fail": f"{type(e).__name__}: {_one_line(str(e))}"})
                return 1
            finally:
                for f in request.get("files", ()):
                    os.close(f["fd"])
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # every database is closed and every reply sent: the interpreter's own teardown (a tenth of a second
    # with DuckDB loaded) would only delay whoever waits for this process to end
    os._exit(code)
