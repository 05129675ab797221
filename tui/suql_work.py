"""What the SUQL tab's workers do, in their threads: open the session on a world, swap it for another backend
or world, run a query or compare the modes under the run lock — and the typed results they hand back to the
tab (:class:`Opened`, :class:`NeedsConsent`, :class:`QueryRan`; a comparison is the engine's
:class:`~engines.suql.compare.Comparison`).  No Textual here: :class:`SuqlRunner` holds the session, the tab
renders what comes back."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines.api import Comparison, Example, Settings, SuqlResult, SuqlSession

MODE_NAMES: tuple[str, ...] = ("A", "B", "C", "D", "E", "F", "G")
"""The execution modes of lecture 7 §3.3 (their titles come from ``engines.suql.plan.MODES``)."""
DEFAULT_MODE = "E"
DEFAULT_WORLD = "restaurants"
PAPER_WORLD = "restaurants"
"""The world the SUQL paper's 100 queries are written for (they read the ``restaurants`` table)."""
COMPARE_PROGRESS_EVERY = 10
"""While comparing modes, the table's call counts are refreshed every this many calls."""


@dataclass(frozen=True)
class Opened:
    """A session on a world, with what the controls list."""

    session: SuqlSession
    worlds: tuple[tuple[str, str], ...]  # (name, title)
    modes: tuple[tuple[str, str], ...]  # (name, title)
    lecture: tuple[Example, ...]
    paper: tuple[Example, ...]


@dataclass(frozen=True)
class NeedsConsent:
    """A query not run: with a paid backend it may make ``expected`` LLM calls, above the confirm threshold."""

    sql: str
    mode: str
    expected: int


@dataclass(frozen=True)
class QueryRan:
    """A finished query and its elapsed time on the injected clock."""

    result: SuqlResult
    elapsed_s: float


class SuqlRunner:
    """The tab's SUQL session (opened on first need, swapped whole) and the engine runs on it.

    ``db`` is your own tables (``--db SOURCE``) or None; ``clock`` the app's injected one (for the engine),
    ``now`` and ``emit`` the tab's (read at each call, so a test may wrap them).
    """

    def __init__(
        self,
        *,
        db: str | None,
        clock: Callable[[], float] | None,
        now: Callable[[], float],
        emit: Callable[[Any], None],
    ) -> None:
        self.db = db
        self.clock = clock
        self._now = now
        self._emit = emit
        self.session: SuqlSession | None = None
        self._session_lock = threading.Lock()  # opening / swapping the session
        self._run_lock = threading.Lock()  # held while the engine runs (closing waits for it)

    def _open(self, settings: Settings, world: str) -> SuqlSession:
        from engines.api import open_suql

        if self.db is not None and world == self.db:  # your own tables
            return open_suql(settings, source=self.db, clock=self.clock)
        return open_suql(settings, world=world, clock=self.clock)

    def _opened(self, session: SuqlSession) -> Opened:
        from engines.api import MODES, WORLDS, paper_queries

        paper = tuple(paper_queries(session.settings)) if session.world_name == PAPER_WORLD else ()
        own = ((self.db, "your data"),) if self.db is not None else ()
        return Opened(
            session=session,
            worlds=own + tuple((w.name, w.title) for w in WORLDS.values()),
            modes=tuple((m.name, m.title) for m in MODES.values()),
            lecture=tuple(session.examples),
            paper=paper,
        )

    def current(self, settings: Settings, world: str) -> SuqlSession:
        """The session, opened on ``world`` with ``settings`` if none is yet."""
        with self._session_lock:
            if self.session is None:
                self.session = self._open(settings, world)
            return self.session

    def open(self, settings: Settings, world: str) -> Opened:
        """The session (opened if need be) and what the controls list."""
        return self._opened(self.current(settings, world))

    def reopen(self, settings: Settings, world: str) -> tuple[Settings, Opened]:
        """A fresh session on ``world`` with ``settings``; the old one closes once no run holds it."""
        fresh = self._open(settings, world)
        with self._session_lock:
            old, self.session = self.session, fresh
        if old is not None:
            with self._run_lock:
                old.close()
        return settings, self._opened(fresh)

    def query(
        self, session: SuqlSession, sql: str, mode: str, cancel: threading.Event, consented: bool = False
    ) -> QueryRan | NeedsConsent:
        """Run ``sql`` in ``mode`` (unless a paid backend may make more calls than the settings allow unasked)."""
        with self._run_lock:
            expected = None if consented else session.calls_to_confirm(sql, mode)
            if expected is not None:
                return NeedsConsent(sql, mode, expected)
            start = self._now()
            result = session.engine.run(sql, mode=mode, emit=self._emit, cancel=cancel)
            return QueryRan(result, self._now() - start)

    def settle(
        self, session: SuqlSession, result: SuqlResult, rows: tuple[int, ...] | None, cancel: threading.Event
    ) -> QueryRan:
        """Settle ``result``'s rows to verify (``rows``: their positions; ``None``: all): the engine asks their
        remaining conditions and runs the query again over the answers it has (``SuqlEngine.settle``)."""
        with self._run_lock:
            start = self._now()
            settled = session.engine.settle(result, rows, emit=self._emit, cancel=cancel)
            return QueryRan(settled, self._now() - start)

    def compare(self, session: SuqlSession, sql: str, cancel: threading.Event) -> Comparison:
        """Run ``sql`` in all seven modes (the engine's comparison)."""
        from engines.api import compare_modes

        with self._run_lock:
            return compare_modes(
                session.engine,
                sql,
                emit=self._emit,
                cancel=cancel,
                clock=self._now,
                progress_every=COMPARE_PROGRESS_EVERY,
            )

    def close(self, wait_s: float = 2.0) -> None:
        """Close the session; a running query stops at its next call, so wait (briefly) for it first."""
        acquired = self._run_lock.acquire(timeout=wait_s)
        try:
            with self._session_lock:
                if self.session is not None:
                    self.session.close()
                    self.session = None
        finally:
            if acquired:
                self._run_lock.release()
