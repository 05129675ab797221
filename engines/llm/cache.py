"""The persistent answer cache: ``answer(text, question)`` outputs kept across runs.

An entry is keyed by

* the SHA-256 (hex) of the text, exactly as given (the text is data: it is not normalised),
* the question, normalised by :func:`normalise_question` (case, spacing and final ``?.!`` do not
  matter),
* the backend id, :func:`engines.llm.protocol.backend_id` (backend name, model, prompt version),

and holds a JSON object (for instance ``{"value": "Yes", "evidence": [...]}``) and the time it was
written.  Changing any part of the key misses.

Storage is one SQLite file, ``answers.sqlite3``, in the cache folder (by default
``Settings().cache_dir``, the platform's user cache folder).  Writes are SQLite transactions in
WAL mode, so a crash or a kill in the middle of a write leaves the previous contents intact.  A
file that is not a readable SQLite database when the cache opens (truncated, overwritten with
garbage) is moved aside to ``answers.sqlite3.corrupt-<timestamp>`` and the cache starts empty: a
cache is never worth a crash.  For the same reason, corruption found later, while reading or
writing, is logged and handled the same way instead of failing the call that used the cache.

One :class:`AnswerCache` may be shared by threads (every use of its connection is under a
lock), and several processes may use the same folder (SQLite's locking, with a busy timeout).
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any, Callable, TypeVar

from engines.errors import ConfigurationError

__all__ = ["AnswerCache", "normalise_question", "text_digest", "FILENAME", "SCHEMA_VERSION"]

log = logging.getLogger(__name__)

FILENAME = "answers.sqlite3"
#: ``PRAGMA user_version`` of the file layout below; a file with another version is moved aside.
SCHEMA_VERSION = 1
#: How long a write waits for another process's write lock before giving up.
BUSY_TIMEOUT_S = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    text_sha256 TEXT NOT NULL,
    question    TEXT NOT NULL,
    backend     TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (text_sha256, question, backend)
) WITHOUT ROWID
"""

_T = TypeVar("_T")

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s?.!]+$")


def normalise_question(question: str) -> str:
    """The form of a question used in cache keys.

    Unicode NFC, lower case, runs of whitespace collapsed to one space, ends stripped of
    whitespace and of trailing ``?``, ``.`` and ``!``: ``"Does it have a  patio? "`` and
    ``"does it have a patio"`` are the same question.
    """
    text = unicodedata.normalize("NFC", question).lower()
    text = _SPACES.sub(" ", text).strip()
    return _TRAILING.sub("", text)


def text_digest(text: str) -> str:
    """SHA-256 hex digest of ``text`` (UTF-8): the text part of a cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Corrupt(Exception):
    """The database file is not usable (raised while opening)."""


class AnswerCache:
    """A persistent, thread-safe map ``(text, question, backend id) -> JSON object``.

    ``folder`` is created if needed; ``None`` means the ``cache_dir`` of the default
    :class:`~engines.settings.Settings`.  Use :meth:`from_settings` to honour a settings object.
    The cache is a context manager that closes itself.
    """

    def __init__(self, folder: Path | str | None = None, *, clock: Callable[[], float] = time.time) -> None:
        if folder is None:
            from engines.settings import Settings  # lazy: keeps importing this module cheap

            folder = Settings().cache_dir
        self.folder = Path(folder).expanduser()
        self.path = self.folder / FILENAME
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ConfigurationError(
                f"Cannot create the answer cache folder {self.folder}: {error.strerror or error}. "
                "Set CS224V_CACHE_DIR to a writable folder, or CS224V_CACHE_ENABLED=false."
            ) from error
        self._conn: sqlite3.Connection | None = self._open()

    @classmethod
    def from_settings(cls, settings: Any) -> AnswerCache:
        """The cache in ``settings.cache_dir``."""
        return cls(settings.cache_dir)

    # -- public API ----------------------------------------------------------

    def get(self, text: str, question: str, backend: str) -> dict[str, Any] | None:
        """The payload stored for this key, or ``None`` (a miss)."""
        key = (text_digest(text), normalise_question(question), backend)

        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT payload FROM answers WHERE text_sha256 = ? AND question = ? AND backend = ?", key
            ).fetchone()
            return None if row is None else row[0]

        raw = self._run(read, default=None)
        if raw is None:
            return None
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            log.warning("answer cache: dropping an unreadable entry")
            self._run(lambda conn: self._delete(conn, key), default=None)
            return None
        return payload

    def put(self, text: str, question: str, backend: str, payload: dict[str, Any]) -> None:
        """Store ``payload`` (a JSON-serialisable dict) for this key, replacing any previous one.

        Raises :class:`TypeError` or :class:`ValueError` if ``payload`` is not a JSON object.
        """
        if not isinstance(payload, dict):
            raise TypeError(f"an answer cache payload must be a dict, not {type(payload).__name__}")
        encoded = json.dumps(payload, ensure_ascii=False, sort_keys=True, allow_nan=False)
        row = (text_digest(text), normalise_question(question), backend, encoded, self._clock())

        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute(
                    "INSERT OR REPLACE INTO answers (text_sha256, question, backend, payload, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    row,
                )

        self._run(write, default=None, retry=True)

    def clear(self) -> None:
        """Delete every entry."""

        def wipe(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute("DELETE FROM answers")

        self._run(wipe, default=None)

    def __len__(self) -> int:
        return self._run(lambda conn: conn.execute("SELECT count(*) FROM answers").fetchone()[0], default=0)

    def close(self) -> None:
        """Close the database (checkpointing the WAL).  Idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.folder)!r})"

    # -- internals -----------------------------------------------------------

    @staticmethod
    def _delete(conn: sqlite3.Connection, key: tuple[str, str, str]) -> None:
        with conn:
            conn.execute("DELETE FROM answers WHERE text_sha256 = ? AND question = ? AND backend = ?", key)

    def _run(self, op: Callable[[sqlite3.Connection], _T], *, default: _T, retry: bool = False) -> _T:
        """Run ``op`` on the connection under the lock.

        If the file turns out to be corrupt, it is moved aside, the cache restarts empty, and
        ``op`` is run again on the fresh file when ``retry`` (writes) or ``default`` is returned
        (reads: a miss).  Other SQLite errors (a locked database past the busy timeout, a full
        disk) are logged and also give ``default``: the cache must never fail the caller.
        """
        with self._lock:
            conn = self._connection()
            try:
                return op(conn)
            except sqlite3.DatabaseError as error:
                if not _is_corruption(error):
                    log.warning("answer cache %s: %s", self.path, error)
                    return default
                log.warning("answer cache %s is corrupt (%s); starting afresh", self.path, error)
                conn.close()
                self._conn = None
                self._move_aside()
                self._conn = self._open()
                if not retry:
                    return default
                try:
                    return op(self._conn)
                except sqlite3.DatabaseError as again:
                    log.warning("answer cache %s: %s", self.path, again)
                    return default

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("the answer cache is closed")
        return self._conn

    def _open(self) -> sqlite3.Connection:
        """Open (and if needed create) the database; a corrupt or foreign file is moved aside."""
        try:
            return self._connect()
        except (_Corrupt, sqlite3.DatabaseError) as error:
            if isinstance(error, sqlite3.OperationalError) and not _is_corruption(error):
                raise  # e.g. locked or unopenable: not a reason to discard the file
            log.warning("answer cache %s is unreadable (%s); moving it aside", self.path, error)
            self._move_aside()
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_S,
            check_same_thread=False,  # shared by worker threads; self._lock serialises use
            isolation_level="DEFERRED",
        )
        try:
            # Reading the journal mode reads the header: garbage fails here with "not a database".
            conn.execute("PRAGMA journal_mode=WAL").fetchone()
            conn.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: durable across app crashes
            check = conn.execute("PRAGMA quick_check").fetchall()
            if check != [("ok",)]:
                raise _Corrupt("; ".join(str(r[0]) for r in check[:3]))
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise _Corrupt(f"unknown layout version {version}")
            with conn:
                conn.execute(_SCHEMA)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            # The table must have the columns this module uses (a foreign file may have another).
            try:
                conn.execute("SELECT text_sha256, question, backend, payload, created_at FROM answers LIMIT 0")
            except sqlite3.OperationalError as error:
                raise _Corrupt(f"unexpected table layout: {error}") from error
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self) -> None:
        """Rename the database file (and its WAL and shared-memory files) to ``*.corrupt-<timestamp>``."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self._clock()))
        suffix = f".corrupt-{stamp}"
        n = 1
        while self.path.with_name(self.path.name + suffix).exists():
            n += 1
            suffix = f".corrupt-{stamp}-{n}"
        for name in (FILENAME, FILENAME + "-wal", FILENAME + "-shm"):
            source = self.folder / name
            if source.exists():
                try:
                    source.rename(self.folder / (name + suffix))
                except OSError:
                    source.unlink(missing_ok=True)
        log.warning("answer cache: moved the unreadable file to %s", self.path.name + suffix)


def _is_corruption(error: sqlite3.DatabaseError) -> bool:
    """Whether an SQLite error means the file itself is damaged (rather than busy or unwritable)."""
    if isinstance(error, _Corrupt):
        return True
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    message = str(error).lower()
    return "malformed" in message or "not a database" in message or "corrupt" in message
