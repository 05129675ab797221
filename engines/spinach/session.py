"""Wiring for the Knowledge-graph tab, the CLI and the tests: the graph, an LLM, the agent (and over the built-in
world, its question sets).

    session = open_spinach(settings)                 # sim or claude, from the settings
    session = open_spinach(settings, graph=graph)    # over a graph already opened (engines.compose.open_graph)
    session.endpoint.execute("SELECT …")             # the graph: a GraphSource (four feedbacks)
    session.endpoint.search("Ashford"); session.endpoint.page("Q1053")   # the entity browser
    trajectory = session.agent.run(question, emit=…, cancel=…)           # StepTaken, RolledBack, …
    session.score(trajectory, question_id)           # row-wise F1 against the gold answer

The question sets (with their gold SPARQL) are evaluator data: the session hands the agent only a
question's text; gold rows are computed here, for scoring, by running the gold query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engines.errors import EngineError
from engines.eval.metrics import row_em, row_f1
from engines.kg import open_kg
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.spinach.agent import AgentOptions, SpinachAgent
from engines.spinach.trajectory import Trajectory
from worlds import kg

if TYPE_CHECKING:
    from engines.sources import GraphSource


@dataclass
class SpinachSession:
    settings: Settings
    world: kg.KGWorld | None  # the built-in world, or None over a user's graph
    endpoint: GraphSource
    llm: LLM
    agent: SpinachAgent
    questions: kg.QuestionSets
    _gold: dict[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict, repr=False)

    def question(self, question_id: str) -> kg.KGQuestion:
        try:
            return self.questions.by_id(question_id)
        except KeyError:
            if not (self.questions.simple or self.questions.forum):  # a user's graph: the sets are the world's
                raise EngineError(
                    f"No question {question_id!r}: {graph_name(self.endpoint)} has no question sets "
                    "(they belong to the built-in world)."
                ) from None
            raise EngineError(
                f"No question {question_id!r}: ids look like simple_01 … simple_40 and c1_1 … c8_7."
            ) from None

    def gold(self, question_id: str) -> tuple[Mapping[str, Any], ...]:
        """The gold answer rows of a question (its gold query, executed)."""
        if question_id not in self._gold:
            self._gold[question_id] = self.endpoint.execute(self.question(question_id).gold_sparql).bindings
        return self._gold[question_id]

    def score(self, trajectory: Trajectory, question_id: str) -> dict[str, float]:
        gold = list(self.gold(question_id))
        pred = list(trajectory.answer)
        return {"em": row_em(pred, gold), "f1": row_f1(pred, gold)}

    def close(self) -> None:
        """Close the graph (its worker process, a remote endpoint's connections)."""
        self.endpoint.close()

    def with_llm(self, llm: LLM, options: AgentOptions | None = None) -> SpinachSession:
        """The same world and endpoint with another policy (e.g. claude next to sim)."""
        return SpinachSession(
            self.settings,
            self.world,
            self.endpoint,
            llm,
            SpinachAgent(self.endpoint, llm, options or self.agent.options),
            self.questions,
            self._gold,
        )


def open_spinach(
    settings: Settings,
    *,
    graph: GraphSource | None = None,
    store: str | None = None,
    built: kg.Built | None = None,
    options: AgentOptions | None = None,
    llm: LLM | None = None,
) -> SpinachSession:
    """The graph, the LLM the settings choose and the agent.

    ``graph``: a graph already opened (a user's RDF files, a remote endpoint: :func:`engines.compose.open_graph`);
    it has no question sets (the built-in world's gold answers are not its).  Without it, the graph the settings
    name (``kg_endpoint``, ``kg_rdf``) unless a world is given (``built``), else the built-in world (default
    seed), built only then, with its endpoint and question sets.  The hidden truth of ``built`` only makes the
    question sets; the session keeps the world alone.

    Raises ``ConfigurationError`` when the settings choose ``claude`` without an API key.
    """
    llm = llm or llm_from_settings(settings)
    if graph is None and built is None:
        from engines.kg.sources import open_graph

        graph = open_graph(settings)  # the settings' own graph (kg_endpoint / kg_rdf), or None
    if graph is not None:
        # whether the graph speaks Wikidata's vocabulary: a remote endpoint is asked here, in the caller's worker,
        # not later on the app's own thread (which reads it to show the graph's IRIs)
        _ = graph.wikidata
        return SpinachSession(settings, None, graph, llm, SpinachAgent(graph, llm, options), kg.QuestionSets((), ()))
    world, truth = built or kg.build(kg.DEFAULT_SEED)
    kwargs = {"store": store} if store else {}  # the endpoint's default store (Oxigraph) unless given
    endpoint = open_kg(settings, world=world, **kwargs)  # the one builder of the built-in world's endpoint
    agent = SpinachAgent(endpoint, llm, options)
    return SpinachSession(settings, world, endpoint, llm, agent, kg.questions(world, truth))


def graph_name(endpoint: GraphSource) -> str:
    """The graph an endpoint queries, for people: a user's RDF files by name, a remote endpoint by URL, else the
    built-in world."""
    import os

    found = getattr(endpoint, "rdf_source", None)
    if found is not None:
        names = [os.fsencode(p).decode("utf-8", "backslashreplace") for p in found.paths]
        shown = ", ".join(os.path.basename(n) for n in names[:3])
        return shown + (f" and {len(names) - 3} more files" if len(names) > 3 else "")
    url = getattr(endpoint, "url", None)
    if isinstance(url, str):
        return f"the endpoint {url}"
    return "this graph"
