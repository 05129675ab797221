"""What the Knowledge-graph tab's workers do, in their threads: open the graph (a
:class:`~engines.sources.GraphSource`), run a SPARQL query on it, search it, open an entity page, open the SPINACH
session when the agent is asked (or give it another backend's LLM), run the agent on a question and score it, load
and score a trajectory file.  Each returns a typed result the tab renders (:class:`~tui.kg.console.QueryRan`,
:class:`~tui.kg.browser.Searched`, :class:`~tui.kg.browser.PageOpened`, :class:`~engines.spinach.scoring.Scored`).
No Textual here: :class:`KgRunner` holds the graph and the session."""

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
    from engines.api import GraphSource, Settings, SpinachSession, Trajectory
    from worlds.kg import KGQuestion


class KgRunner:
    """The tab's graph and SPINACH session, each opened on first need, and the work done on them.  ``clock`` is the
    app's injected one (None: ``time.perf_counter``); ``now`` and ``emit`` the tab's (read at each call).

    The console and the browser query :attr:`graph`.  A graph the user named (``--endpoint``, ``--rdf``: the
    settings' ``kg_endpoint`` / ``kg_rdf``) is opened by :func:`engines.compose.open_graph`: no world is built and
    no session, which is built over that graph when the agent is asked.  Else the graph is the built-in world's,
    whose SPINACH session is opened with it (one build of the world gives the graph and the question sets the
    stepper lists)."""

    def __init__(
        self, *, clock: Callable[[], float] | None, now: Callable[[], float], emit: Callable[[Any], None]
    ) -> None:
        self.clock = clock
        self._now = now
        self._emit = emit
        self.graph: GraphSource | None = None
        self.session: SpinachSession | None = None
        self._session_lock = threading.Lock()

    def _open(self, settings: Settings, graph: GraphSource | None) -> SpinachSession:
        from engines.api import llm_from_settings, open_spinach

        llm = llm_from_settings(settings, clock=self.clock or time.perf_counter)
        return open_spinach(settings, graph=graph, llm=llm)

    def open(self, settings: Settings) -> GraphSource:
        """The graph, opened with ``settings`` if none is yet (see the class)."""
        with self._session_lock:
            if self.graph is None:
                if settings.kg_endpoint is not None or settings.kg_rdf:
                    from engines.api import open_graph

                    graph = open_graph(settings)
                    # whether it speaks Wikidata's vocabulary: a remote endpoint is asked here, in the worker, not
                    # later on the app's own thread (which reads it to show the graph's IRIs)
                    _ = graph.wikidata
                    self.graph = graph
                else:
                    self.session = self._open(settings, None)
                    self.graph = self.session.endpoint
            return self.graph

    def current(self, settings: Settings) -> SpinachSession:
        """The session (the agent), opened with ``settings`` if none is yet: over the graph already open."""
        graph = self.open(settings)
        with self._session_lock:
            if self.session is None:
                self.session = self._open(settings, graph)
            return self.session

    def close(self) -> None:
        """Stop the graph's worker process now (the app is closing): a query in flight is not waited for, it ends
        saying the worker stopped.  Never waits for a graph being opened (that one ends with the process)."""
        graph = self.graph
        if graph is not None:
            graph.close()

    def question(self, question_id: str) -> KGQuestion | None:
        """The question of the sets with this id; None while the graph is not open yet.  Raises EngineError for an
        id not in the sets, or on a user's graph, which has none (its session is not needed to say so)."""
        if self.session is not None:
            return self.session.question(question_id)
        if self.graph is None:
            return None
        from engines.api import EngineError, graph_name

        raise EngineError(
            f"No question {question_id!r}: {graph_name(self.graph)} has no question sets "
            "(they belong to the built-in world)."
        )

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
        graph = self.open(settings)
        start = self._now()
        result = graph.execute(query)
        return QueryRan(result, self._now() - start)

    def search(self, settings: Settings, text: str) -> Searched:
        return Searched(text, self.open(settings).search(text))

    def page(self, settings: Settings, entity: str, came_from: str | None) -> PageOpened:
        graph = self.open(settings)
        page = graph.page(entity)
        examples = graph.property_examples(page.id, 8) if page.datatype else ()
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
