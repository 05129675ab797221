"""The persistent answer cache: ``answer()`` and ``summary()`` outputs kept across runs.

An entry is keyed by everything that shapes the output:

* the function (``answer``, ``summary``): the same text and question asked of two functions are
  two entries,
* the SHA-256 (hex) of the text, exactly as given,
* the question, exactly as given: nothing is normalised, because a backend is shown the exact
  text (the simulated LLM's seeded mistakes are drawn from it, and a real model may read
  ``"IS IT ROMANTIC"`` and ``"is it romantic?"`` differently), so two spellings may get two answers,
* the backend id, :func:`engines.llm.protocol.backend_id`: backend name, model and prompt version
  (for the simulated LLM the "model" holds its seed and error rates),

and holds a JSON object (for instance ``{"value": "Yes", "evidence": [...]}``), a checksum of the
key and the payload, and the time it was written.  Changing any part of the key misses, and an
entry whose checksum does not match (a flipped bit) is never served.

Storage is one SQLite file, ``answers.sqlite3``, in the cache folder (the settings'
``cache_dir``, by default the platform's user cache folder: :meth:`AnswerCache.from_settings`).  Writes are SQLite transactions in
WAL mode, so a crash or a kill in the middle of a write leaves the previous contents intact.

A cache is never worth a crash, nor a wait.  Whatever goes wrong with the file — damaged,
read-only, locked by another process, a full disk, a folder that cannot be created, a directory
where the file should be — the trouble is reported as one line (a ``logging`` warning of this
module's logger, the ``on_warning`` callback, and :attr:`AnswerCache.warnings`), once per
problem per file per process, and the run goes on with what still works:

* damaged (not a database, malformed, an unknown format or layout): moved aside to
  ``answers.sqlite3.corrupt-<timestamp>`` and started afresh, once no other cache has it open
  (see below); while another has, or if it cannot be moved, uncached;
* read-only (the file or its folder): opened read-only (as an immutable file when the folder
  cannot hold SQLite's ``-shm`` file and no write-ahead log is pending); stored answers are still
  served, new ones are not stored.  Opening never needs a write when the file already holds the
  current layout; a read-only file that is empty or of the old layout runs uncached;
* locked past a short busy timeout (:data:`BUSY_TIMEOUT_S`): no more writes this run (in WAL mode
  reads do not wait for a writer); a lock that stops reads too turns the cache off;
* full disk or any other I/O error on a write: no more writes this run;
* missing (a folder that cannot be created, a directory in the file's place): uncached.

One :class:`AnswerCache` may be shared by threads (every use of its connection is under a
lock), and several processes may use the same folder at once (every cs224v-tui process shares it by
default):

* opening reads the file's layout (its version, its tables, a quick check) in one read transaction,
  so it never sees a layout another process is half-way through setting up; a new (or old-layout)
  file is set up in one write transaction that looks again once it holds the write lock;
* while a cache has the file open it holds a shared advisory lock (``flock``) on the folder.  A
  damaged file is moved aside only under the exclusive lock, that is when no other cache (of any
  process) has it open, and only if it is still the file found damaged; when another cache holds
  the folder past the busy timeout, the run goes on uncached (one warning) and the file is left for
  a later run.  Where the file system cannot lock a folder, a damaged file is never moved aside;
* the file's header is read by hand (an unknown format is damage) only when no cache of this
  process has the file open: closing a descriptor of the file would drop SQLite's own locks on it
  (POSIX locks belong to a process, and any close of the file releases them).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from engines.settings import Settings  # lazy at run time: importing this module stays cheap

__all__ = ["AnswerCache", "AnswerStore", "text_digest", "FILENAME", "SCHEMA_VERSION", "BUSY_TIMEOUT_S"]

log = logging.getLogger(__name__)

FILENAME = "answers.sqlite3"
#: ``PRAGMA user_version`` of the file layout below.  Version 1 (no function in the key, questions
#: normalised) is dropped on open: its entries may be poisoned.  Any other version is moved aside.
SCHEMA_VERSION = 2
#: How long an operation waits for another process's lock before the cache gives up on it.
BUSY_TIMEOUT_S = 1.0

_COLUMNS = ("function", "text_sha256", "question", "backend", "payload", "checksum", "created_at")
_SCHEMA = """
CREATE TABLE answers (
    function    TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    question    TEXT NOT NULL,
    backend     TEXT NOT NULL,
    payload     TEXT NOT NULL,
    checksum    TEXT NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (function, text_sha256, question, backend)
) WITHOUT ROWID
"""
_KEY_WHERE = "function = ? AND text_sha256 = ? AND question = ? AND backend = ?"

try:
    import fcntl
except ImportError:  # not POSIX: no folder lock, so a damaged file is never moved aside
    fcntl = None  # type: ignore[assignment]

#: Test seam: when set, called as ``_hook(step, cache)`` at these steps (in the thread doing them):
#: ``"layout-read"`` inside the read transaction that read the layout, before it ends;
#: ``"layout-write"`` inside the write transaction that sets the layout up, before its commit;
#: ``"move-aside"`` under the folder's exclusive lock, just before a damaged file is renamed;
#: ``"put"`` inside a :meth:`AnswerCache.put` transaction, before its commit.
_hook: Callable[[str, AnswerCache], None] | None = None

_T = TypeVar("_T")
#: The (write, read) format versions of an SQLite header: 1 rollback journal, 2 WAL.
_FORMATS = {(1, 1), (2, 2), (1, 2), (2, 1)}
_ELSEWHERE = "(set CS224V_CACHE_DIR to another folder, or CS224V_CACHE_ENABLED=false)"
#: What SQLite work may raise on a damaged or unusable file.
_DB_ERRORS = (sqlite3.Error, UnicodeDecodeError)
_Key = tuple[str, str, str, str]

# (database path, problem) pairs already reported in this process: one line per problem per run.
_reported: set[tuple[str, str]] = set()
_reported_lock = threading.Lock()

# The database files (st_dev, st_ino) this process has connections to, and how many.
_open_here: dict[tuple[int, int], int] = {}
_open_here_lock = threading.Lock()


def _step(name: str, cache: AnswerCache) -> None:
    hook = _hook
    if hook is not None:
        hook(name, cache)


def text_digest(text: str) -> str:
    """SHA-256 hex digest of ``text`` (UTF-8): the text part of a cache key."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _checksum(key: _Key, payload: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in (*key, payload):
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def _lenient_text(data: bytes) -> str:
    # A flipped bit may leave a stored string that is not UTF-8: decode it anyway (the checksum
    # then fails) instead of letting sqlite3 raise on the whole row.
    return data.decode("utf-8", "replace")


class _Corrupt(Exception):
    """The database file is not usable (found while opening)."""


class _ReadOnly(Exception):
    """The file needs a write before it can be used, and cannot be written."""


class _FolderLock:
    """An advisory lock (``flock``) on the cache folder: shared while a cache has the file open,
    exclusive to move a damaged file aside.  ``flock`` locks belong to an open file description, so
    two caches of one process exclude each other as two processes do; they never touch SQLite's
    own (POSIX) locks, which are on other files."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._fd: int | None = None
        self._held = False

    def acquire(self, *, exclusive: bool, timeout_s: float) -> bool | None:
        """True once held; False if another holder kept it past ``timeout_s``; None if this
        system cannot lock the folder (no ``fcntl``, or the file system refuses)."""
        if fcntl is None:
            return None
        if not self._held:
            # Opened afresh each time it is not held: the folder may have been replaced meanwhile.
            self._close_fd()
            try:
                self._fd = os.open(self._folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return None
        assert self._fd is not None
        operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        deadline = time.monotonic() + timeout_s
        pause = 0.001
        while True:
            try:
                fcntl.flock(self._fd, operation)
            except OSError as error:
                # A refused conversion (shared to exclusive) has dropped the lock held before.
                self._held = False
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                    return None
            else:
                self._held = True
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.02)

    def release(self) -> None:
        if self._held and self._fd is not None and fcntl is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            except OSError:
                pass
        self._held = False

    def close(self) -> None:
        self.release()
        self._close_fd()

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None


class AnswerStore(Protocol):
    """What :meth:`engines.llm.client.LLM.run` reads answers from and writes them to: an :class:`AnswerCache`, or
    the cache of a batched run (:func:`engines.llm.batch.wrap_cache`)."""

    def get(self, function: str, text: str, question: str, backend: str) -> dict[str, Any] | None: ...

    def put(self, function: str, text: str, question: str, backend: str, payload: dict[str, Any]) -> None: ...


class AnswerCache:
    """A persistent, thread-safe map ``(function, text, question, backend id) -> JSON object``.

    ``folder`` is created if needed; :meth:`from_settings` opens the settings' ``cache_dir``.
    Nothing the file system or SQLite does makes the constructor or a method raise: see the
    module docstring.  ``on_warning`` is called with each one-line warning (once per problem).
    The cache is a context manager that closes itself.
    """

    def __init__(
        self,
        folder: Path | str,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.folder = Path(folder).expanduser().absolute()
        self.path = self.folder / FILENAME
        self._clock = clock
        self._busy_timeout_s = busy_timeout_s
        self._on_warning = on_warning
        self._lock = threading.Lock()
        self._closed = False
        self._conn: sqlite3.Connection | None = None
        self._readable = False
        self._writable = False
        self._folder_lock = _FolderLock(self.folder)
        self._file_key: tuple[int, int] | None = None  # the open file, in _open_here
        #: The one-line warnings this cache reported (each problem once).
        self.warnings: list[str] = []
        self._open()

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> AnswerCache:
        """The cache in ``settings.cache_dir``."""
        return cls(settings.cache_dir, **kwargs)

    # -- public API ----------------------------------------------------------

    @property
    def readable(self) -> bool:
        """Whether stored answers are served (false: running uncached)."""
        return self._conn is not None and self._readable

    @property
    def writable(self) -> bool:
        """Whether new answers are stored."""
        return self._conn is not None and self._writable

    def get(self, function: str, text: str, question: str, backend: str) -> dict[str, Any] | None:
        """The payload stored for this key, or ``None`` (a miss)."""
        key: _Key = (function, text_digest(text), question, backend)

        def read(conn: sqlite3.Connection) -> tuple[str, str] | None:
            found: tuple[str, str] | None = conn.execute(
                f"SELECT payload, checksum FROM answers WHERE {_KEY_WHERE}", key
            ).fetchone()
            return found

        row = self._run(read, write=False, default=None)
        if row is None:
            return None
        raw, checksum = row
        payload: Any = None
        if isinstance(raw, str) and checksum == _checksum(key, raw):
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = None
        if not isinstance(payload, dict):
            self._warn("entry", "dropped a damaged entry (its checksum does not match)")
            self._run(lambda conn: self._delete(conn, key), write=True, default=None)
            return None
        return payload

    def put(self, function: str, text: str, question: str, backend: str, payload: dict[str, Any]) -> None:
        """Store ``payload`` (a JSON-serialisable dict) for this key, replacing any previous one.

        Raises :class:`TypeError` or :class:`ValueError` if ``payload`` is not a JSON object (a
        caller's bug); trouble with the file is a warning, never an exception.
        """
        if not isinstance(payload, dict):
            raise TypeError(f"an answer cache payload must be a dict, not {type(payload).__name__}")
        encoded = json.dumps(payload, ensure_ascii=False, sort_keys=True, allow_nan=False)
        key: _Key = (function, text_digest(text), question, backend)
        row = (*key, encoded, _checksum(key, encoded), self._clock())

        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute(
                    f"INSERT OR REPLACE INTO answers ({', '.join(_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)", row
                )
                _step("put", self)

        self._run(write, write=True, default=None)

    def clear(self) -> None:
        """Delete every entry."""

        def wipe(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute("DELETE FROM answers")

        self._run(wipe, write=True, default=None)

    def __len__(self) -> int:
        return self._run(
            lambda conn: conn.execute("SELECT count(*) FROM answers").fetchone()[0], write=False, default=0
        )

    def close(self) -> None:
        """Close the database (checkpointing the WAL).  Idempotent."""
        with self._lock:
            self._closed = True
            self._drop_connection()
            self._folder_lock.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.folder)!r})"

    # -- warnings ------------------------------------------------------------

    def _warn(self, problem: str, message: str) -> None:
        """Report ``message`` as one line, unless this problem was already reported for this file."""
        with _reported_lock:
            first = (str(self.path), problem) not in _reported
            _reported.add((str(self.path), problem))
        if not first:
            return
        line = _one_line(f"answer cache {self.path}: {message}")
        self.warnings.append(line)
        log.warning("%s", line)
        if self._on_warning is not None:
            try:
                self._on_warning(line)
            except Exception:  # a listener's bug must not break the cache either
                log.exception("answer cache: the warning listener failed")

    # -- running an operation ------------------------------------------------

    @staticmethod
    def _delete(conn: sqlite3.Connection, key: _Key) -> None:
        with conn:
            conn.execute(f"DELETE FROM answers WHERE {_KEY_WHERE}", key)

    def _run(self, op: Callable[[sqlite3.Connection], _T], *, write: bool, default: _T) -> _T:
        """Run ``op`` on the connection under the lock; any SQLite trouble gives ``default``."""
        with self._lock:
            if self._closed:
                raise ValueError("the answer cache is closed")
            conn = self._conn
            if conn is None or not (self._writable if write else self._readable):
                return default
            try:
                return op(conn)
            except _DB_ERRORS as error:
                self._trouble(error, write=write)
                return default

    def _trouble(self, error: Exception, *, write: bool) -> None:
        """Decide what an error during an operation means for the rest of the run (lock held)."""
        code = _primary_code(error)
        if _is_corruption(error):
            # SQLite's own word that the file is damaged: set aside once no other cache uses it.
            self._recover(f"is damaged ({error})", look_again=False)
            return
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            if write:
                self._writable = False
                self._warn("locked-write", f"locked by another process ({error}); storing no new answers this run")
            else:
                self._drop_connection()
                self._warn("locked", f"locked by another process ({error}); running uncached")
            return
        if write:
            self._writable = False
            if code == sqlite3.SQLITE_FULL:
                self._warn("full", f"the disk is full ({error}); storing no new answers this run")
            elif code == sqlite3.SQLITE_READONLY:
                self._warn("read-only", f"read-only ({error}); serving stored answers, storing no new ones")
            else:
                self._warn("write", f"cannot write ({error}); storing no new answers this run")
            return
        self._drop_connection()
        self._warn("read", f"cannot read ({error}); running uncached")

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        self._readable = self._writable = False
        if self._file_key is not None:
            with _open_here_lock:
                left = _open_here.get(self._file_key, 0) - 1
                if left > 0:
                    _open_here[self._file_key] = left
                else:
                    _open_here.pop(self._file_key, None)
            self._file_key = None
        self._folder_lock.release()

    def _use(self, conn: sqlite3.Connection, *, writable: bool) -> None:
        """Keep ``conn`` as the open connection (counted in :data:`_open_here`)."""
        self._conn, self._readable, self._writable = conn, True, writable
        try:
            st = os.stat(self.path)
        except OSError:
            return
        self._file_key = (st.st_dev, st.st_ino)
        with _open_here_lock:
            _open_here[self._file_key] = _open_here.get(self._file_key, 0) + 1

    # -- opening -------------------------------------------------------------

    def _open(self) -> None:
        with self._lock:
            self._open_locked()

    def _open_locked(self) -> None:
        """Open the database read-write, else read-only, else not at all (with a warning)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            if not self.folder.is_dir():
                self._warn(
                    "folder", f"cannot create the folder ({error.strerror or error}); running uncached " + _ELSEWHERE
                )
                return
        held = self._folder_lock.acquire(exclusive=False, timeout_s=self._busy_timeout_s)
        if held is False:
            self._warn(
                "locked", "another process is setting a damaged file aside (the folder is locked); running uncached"
            )
            return
        damage = self._try_open(read_header=not self._open_here())
        if damage is not None:
            self._recover(f"is damaged ({damage})", look_again=True)
        if self._conn is None:
            self._folder_lock.release()

    def _open_here(self) -> bool:
        """Whether a cache of this process has the file open (then its header is not read by hand)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        with _open_here_lock:
            return _open_here.get((st.st_dev, st.st_ino), 0) > 0

    def _try_open(self, *, read_header: bool) -> Exception | None:
        """Open the file; the damage found (nothing reported yet), or None: opened, or reported."""
        try:
            exists = self.path.exists()
            odd = self.path.is_symlink() or (exists and not self.path.is_file())
        except OSError as error:
            self._warn(
                "folder", f"cannot look into the folder ({error.strerror or error}); running uncached " + _ELSEWHERE
            )
            return None
        if odd:
            self._warn("not-a-file", "is not a regular file; running uncached " + _ELSEWHERE)
            return None
        try:
            if exists and read_header:
                self._check_header()
            conn = self._connect("rw" if exists else "rwc")
            try:
                self._prepare(conn, writable=True)
            except BaseException:
                conn.close()
                raise
        except (_Corrupt, *_DB_ERRORS) as error:
            if _is_corruption(error):
                return error
            if _primary_code(error) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                self._warn("locked", f"locked by another process ({error}); running uncached")
            elif exists:
                self._open_read_only(error)
            else:
                self._warn("open", f"cannot be created ({error}); running uncached " + _ELSEWHERE)
            return None
        except _ReadOnly as error:
            self._warn("read-only", f"read-only and {error}; running uncached")
            return None
        self._use(conn, writable=True)
        return None

    def _recover(self, why: str, *, look_again: bool) -> None:
        """The file is damaged: move it aside and start afresh, under the folder's exclusive lock
        (no other cache has it open) and only if it is still the file found damaged.

        ``look_again``: the verdict came from opening, and is checked again under the lock (a
        verdict of SQLite's during a run stands).  With ``self._lock`` held.
        """
        judged = self._file_key
        if judged is None:
            try:
                st = os.stat(self.path)
                judged = (st.st_dev, st.st_ino)
            except OSError:
                judged = None
        self._drop_connection()  # (releases the shared lock)
        held = self._folder_lock.acquire(exclusive=True, timeout_s=self._busy_timeout_s)
        if held is None:
            self._warn(
                "corrupt-unlocked",
                f"{why}; left as it is, since this file system cannot tell whether another process uses it; "
                "running uncached " + _ELSEWHERE,
            )
            return
        if not held:
            self._warn(
                "corrupt-in-use", f"{why}; another process is using it, so it is left as it is; running uncached"
            )
            return
        try:
            try:
                st = os.stat(self.path)
                now: tuple[int, int] | None = (st.st_dev, st.st_ino)
            except OSError:
                now = None
            if now != judged:
                # Another process has set it aside (and maybe started afresh) meanwhile.
                self._after_recovery(self._try_open(read_header=True))
                return
            if look_again:
                damage = self._try_open(read_header=True)
                if damage is None:
                    return  # usable after all (opened), or another trouble (reported)
                why = f"is damaged ({damage})"
            _step("move-aside", self)
            if self._move_aside(why):
                self._after_recovery(self._try_open(read_header=True))
        finally:
            if self._conn is not None:
                self._folder_lock.release()  # exclusive to shared: released, then taken again
                self._folder_lock.acquire(exclusive=False, timeout_s=self._busy_timeout_s)
            else:
                self._folder_lock.release()

    def _after_recovery(self, damage: Exception | None) -> None:
        if damage is not None:
            self._warn("open", f"a fresh file is unusable too ({damage}); running uncached")

    def _open_read_only(self, first: Exception) -> None:
        """The file exists but cannot be opened read-write: read it, if it holds the current layout."""
        attempts = ["ro"]
        wal = self.path.with_name(FILENAME + "-wal")
        try:
            pending = wal.exists() and wal.stat().st_size > 0
        except OSError:
            pending = True
        if not pending:
            # No write-ahead log to replay: the main file alone is the whole database, and reading it
            # as immutable needs no -shm file (which a read-only folder cannot hold).
            attempts.append("ro&immutable=1")
        error: Exception = first
        for mode in attempts:
            try:
                conn = self._connect(mode)
                try:
                    self._prepare(conn, writable=False)
                except BaseException:
                    conn.close()
                    raise
            except _ReadOnly as reason:
                self._warn("read-only", f"read-only and {reason}; running uncached")
                return
            except (_Corrupt, *_DB_ERRORS) as problem:
                if _is_corruption(problem):
                    self._warn("corrupt", f"is damaged ({problem}) and read-only; running uncached")
                    return
                error = problem
                continue
            self._use(conn, writable=False)
            self._warn("read-only", f"cannot be written ({first}); serving stored answers, storing no new ones")
            return
        self._warn("open", f"cannot be opened ({error}); running uncached")

    def _connect(self, mode: str) -> sqlite3.Connection:
        conn = sqlite3.connect(
            f"{self.path.as_uri()}?mode={mode}",
            uri=True,
            timeout=self._busy_timeout_s,
            check_same_thread=False,  # shared by worker threads; self._lock serialises use
            isolation_level="DEFERRED",
        )
        conn.text_factory = _lenient_text
        try:
            conn.execute(
                "PRAGMA synchronous=NORMAL"
            )  # per connection, not a write: in WAL mode, durable across app crashes
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_header(self) -> None:
        """SQLite opens a file whose header names an unknown write format read-only, without a word:
        for this cache, which only ever writes formats 1 and 2, that is damage."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return  # unreadable: SQLite will say why
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            header = os.pread(fd, 100, 0)
        except OSError:
            return
        finally:
            os.close(fd)
        if (
            len(header) == 100
            and header.startswith(b"SQLite format 3\x00")
            and (header[18], header[19]) not in _FORMATS
        ):
            raise _Corrupt(f"unknown file format {header[18]}/{header[19]}")

    @staticmethod
    def _layout(conn: sqlite3.Connection) -> tuple[int, list[str]]:
        """``PRAGMA user_version`` and the names of the schema's objects (call inside a transaction)."""
        # Reading the header: garbage fails here with "file is not a database".
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        names = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")]
        return version, names

    @staticmethod
    def _judge(conn: sqlite3.Connection, version: int, names: list[str]) -> str | None:
        """None: the current layout; "empty" or "of an old layout": to be set up; else raises _Corrupt."""
        if version == SCHEMA_VERSION:
            try:
                conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM answers LIMIT 0")
            except sqlite3.OperationalError as error:
                raise _Corrupt(f"unexpected table layout: {error}") from error
            return None
        if version == 0 and names:
            raise _Corrupt(f"not an answer cache (it holds {', '.join(names[:3])})")
        if version not in (0, 1):
            raise _Corrupt(f"unknown layout version {version}")
        return "empty" if version == 0 else "of an old layout"

    def _prepare(self, conn: sqlite3.Connection, *, writable: bool) -> None:
        """Check the file; write to it only if it is new or of the old layout (and ``writable``)."""
        # One read transaction: the version, the schema and the check see one state of the file, never
        # a layout another process is half-way through setting up (it is all there, or none of it).
        conn.execute("BEGIN")
        try:
            version, names = self._layout(conn)
            check = conn.execute("PRAGMA quick_check").fetchall()
            if check != [("ok",)]:
                raise _Corrupt("; ".join(str(r[0]) for r in check[:3]))
            state = self._judge(conn, version, names)
            _step("layout-read", self)
        finally:
            _end(conn)
        if state is None:
            return
        # A new file (version 0, nothing in it) or the old layout (1, whose entries may be poisoned).
        if not writable:
            raise _ReadOnly(state)
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchone()
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Look again under the write lock: another process may have set the file up since.
                version, names = self._layout(conn)
                if self._judge(conn, version, names) is not None:
                    conn.execute("DROP TABLE IF EXISTS answers")
                    conn.execute(_SCHEMA)
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                _step("layout-write", self)
                conn.commit()
            finally:
                _end(conn)
        except sqlite3.OperationalError as error:
            if _primary_code(error) == sqlite3.SQLITE_READONLY:
                raise _ReadOnly(state) from error
            raise

    def _move_aside(self, why: str) -> bool:
        """Rename the database file (and its WAL and shared-memory files) to ``*.corrupt-<timestamp>``.

        Reports one line either way; False if the file could not be moved (then: uncached).
        """
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self._clock()))
        suffix = f".corrupt-{stamp}"
        n = 1
        while self.path.with_name(self.path.name + suffix).exists():
            n += 1
            suffix = f".corrupt-{stamp}-{n}"
        try:
            for name in (FILENAME, FILENAME + "-wal", FILENAME + "-shm"):
                source = self.folder / name
                if source.exists():
                    source.rename(self.folder / (name + suffix))
        except OSError as error:
            self._warn("corrupt", f"{why} and cannot be moved aside ({error.strerror or error}); running uncached")
            return False
        self._warn("corrupt", f"{why}; moved it to {self.path.name + suffix} and started afresh")
        return True


def _end(conn: sqlite3.Connection) -> None:
    """Roll back what is left of a transaction (after its commit, nothing is)."""
    if conn.in_transaction:
        try:
            conn.rollback()
        except sqlite3.Error:
            pass


def _primary_code(error: BaseException) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _is_corruption(error: BaseException) -> bool:
    """Whether an SQLite error means the file itself is damaged (rather than busy or unwritable)."""
    if isinstance(error, (_Corrupt, UnicodeDecodeError)):
        return True  # (SQLite's message about a damaged schema may quote bytes that are not UTF-8)
    code = _primary_code(error)
    if code is not None:
        return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_FORMAT)
    message = str(error).lower()
    return "malformed" in message or "not a database" in message or "corrupt" in message


def _one_line(text: str, width: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
