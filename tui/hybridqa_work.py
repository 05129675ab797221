"""What the HybridQA tab's workers do, in their threads: open a source's session (the generated tables or the
real ones), rebuild the sessions for another backend, run a question through the pipeline and grade it — and
the typed results they hand back to the tab (:class:`Opened`, :class:`Answered`).  No Textual here:
:class:`HybridRunner` holds the sessions, the tab renders what comes back."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines.api import HybridAnswer, HybridSession, Score, Settings
    from worlds.hybridqa import HybridQuestion

SOURCES: tuple[str, ...] = ("generated", "real")
"""Where the tables come from: the generated flag-bearer world, or the real HybridQA dev tables."""


@dataclass(frozen=True)
class Opened:
    """A session on one source; ``settings`` are set when a backend switch rebuilt it."""

    source: str
    session: HybridSession
    settings: Settings | None = None


@dataclass(frozen=True)
class Answered:
    """A question run through the pipeline, graded, and how long it took on the injected clock."""

    table: str
    question: HybridQuestion
    answer: HybridAnswer
    score: Score
    elapsed_s: float


class HybridRunner:
    """The tab's sessions, one per source opened (opened on first need, all swapped for another backend), and
    the pipeline runs on them.  ``clock`` is the app's injected one (for the engine); ``now`` and ``emit`` the
    tab's (read at each call, so a test may wrap them)."""

    def __init__(
        self, *, clock: Callable[[], float] | None, now: Callable[[], float], emit: Callable[[Any], None]
    ) -> None:
        self.clock = clock
        self._now = now
        self._emit = emit
        self.sessions: dict[str, HybridSession] = {}
        self._session_lock = threading.Lock()  # opening / swapping sessions
        self._run_lock = threading.Lock()  # held while the engine runs (closing waits for it)

    def _open(self, settings: Settings, source: str) -> HybridSession:
        from engines.api import open_hybridqa

        return open_hybridqa(settings, source=source, clock=self.clock)

    def open(self, settings: Settings, source: str) -> Opened:
        """The session of ``source``, opened with ``settings`` if it is not yet."""
        with self._session_lock:
            session = self.sessions.get(source)
            if session is None:
                session = self.sessions[source] = self._open(settings, source)
            return Opened(source, session)

    def reopen(self, settings: Settings, source: str) -> Opened:
        """A fresh session of ``source`` with ``settings``; the others close (once no run holds them)."""
        fresh = self._open(settings, source)
        with self._session_lock:
            old, self.sessions = self.sessions, {source: fresh}
        with self._run_lock:
            for session in old.values():
                session.close()
        return Opened(source, fresh, settings)

    def ask(
        self, source: str, table: str, question: HybridQuestion, improvements: Any, cancel: threading.Event
    ) -> Answered:
        """Run ``question`` on ``table`` of ``source`` with ``improvements``, and grade the answer."""
        with self._session_lock:
            session = self.sessions[source]
        with self._run_lock:
            start = self._now()
            answer = session.pipeline.ask(
                table, question.question, improvements=improvements, emit=self._emit, cancel=cancel
            )
            score = session.grade(question, answer)
            return Answered(table, question, answer, score, self._now() - start)

    def close(self, wait_s: float = 2.0) -> None:
        """Close every session; a running question stops at its next call, so wait (briefly) for it first."""
        acquired = self._run_lock.acquire(timeout=wait_s)
        try:
            with self._session_lock:
                for session in self.sessions.values():
                    session.close()
                self.sessions.clear()
        finally:
            if acquired:
                self._run_lock.release()
