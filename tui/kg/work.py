"""What the Knowledge-graph tab's workers do, in their threads: open the SPINACH session (the graph, its
endpoint, the question sets), give it another backend's LLM, run a SPARQL query, search, open an entity page,
run the agent on a question and score it, load and score a trajectory file.  Each returns a typed result the tab
renders (:class:`~tui.kg.console.QueryRan`, :class:`~tui.kg.browser.Searched`,
:class:`~tui.kg.browser.PageOpened`, :class:`~engines.spinach.scoring.Scored`).  No Textual here:
:class:`KgRunner` holds the session."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.api import Scored, score_loaded, score_run
from tui.kg.browser import PageOpened, Searched
from tui.kg.console import QueryRan

if TYPE_CHECKING:
    from engines.api import Settings, SpinachSession, Trajectory


class KgRunner:
    """The tab's SPINACH session (opened on first need) and the work done on it.  ``clock`` is the app's
    injected one (None: ``time.perf_counter``); ``now`` and ``emit`` the tab's (read at each call)."""

    def __init__(
        self, *, clock: Callable[[], float] | None, now: Callable[[], float], emit: Callable[[Any], None]
    ) -> None:
        self.clock = clock
        self._now = now
        self._emit = emit
        self.session: SpinachSession | None = None
        self._session_lock = threading.Lock()

    def _open(self, settings: Settings) -> SpinachSession:
        from engines.api import llm_from_settings, open_spinach

        llm = llm_from_settings(settings, clock=self.clock or time.perf_counter)
        return open_spinach(settings, llm=llm)

    def current(self, settings: Settings) -> SpinachSession:
        """The session, opened with ``settings`` if none is yet."""
        with self._session_lock:
            if self.session is None:
                self.session = self._open(settings)
            return self.session

    def reopen(self, settings: Settings) -> tuple[Settings, SpinachSession]:
        """The same graph with a new LLM for the policy (another backend)."""
        from engines.api import llm_from_settings

        session = self.current(settings)
        fresh = session.with_llm(llm_from_settings(settings, clock=self.clock or time.perf_counter))
        fresh.settings = settings
        with self._session_lock:
            self.session = fresh
        return settings, fresh

    def query(self, settings: Settings, query: str) -> QueryRan:
        session = self.current(settings)
        start = self._now()
        result = session.endpoint.execute(query)
        return QueryRan(result, self._now() - start)

    def search(self, settings: Settings, text: str) -> Searched:
        return Searched(text, self.current(settings).endpoint.search(text))

    def page(self, settings: Settings, entity: str, came_from: str | None) -> PageOpened:
        endpoint = self.current(settings).endpoint
        page = endpoint.page(entity)
        examples = endpoint.property_examples(page.id, 8) if page.datatype else ()
        return PageOpened(page, tuple(examples), came_from)

    def run(self, settings: Settings, question_id: str, cancel: threading.Event) -> Scored:
        """Run the agent on a question of the question sets (its steps stream out through ``emit``), scored."""
        session = self.current(settings)
        question = session.question(question_id)
        trajectory = session.agent.run(question.question, emit=self._emit, cancel=cancel)
        return score_run(session, trajectory, question)

    def load(self, settings: Settings, path: str) -> tuple[list[Trajectory], str, Scored]:
        """Every trajectory of a JSON file (ours or SPINACH's logs), its name, and the first one scored."""
        from engines.api import TrajectoryError
        from engines.api import load_trajectories as load

        trajectories = load(Path(path).expanduser(), max_bytes=settings.input_file_max_mb << 20)
        if not trajectories:
            raise TrajectoryError(f"{path} holds no trajectory.")
        name = Path(path).name
        source = name if len(trajectories) < 2 else f"{name} · 1 of {len(trajectories)}"
        return trajectories, name, self.score(settings, trajectories[0], source, len(trajectories) - 1)

    def score(self, settings: Settings, trajectory: Trajectory, source: str, others: int) -> Scored:
        """A loaded trajectory scored against its question's gold (when the question sets hold it)."""
        return score_loaded(self.current(settings), trajectory, source=source, others=others)
