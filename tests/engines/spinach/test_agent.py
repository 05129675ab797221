"""The SPINACH agent: the ReAct loop, rollback on repeats and premature stops, budgets, events, cancel."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from engines.events import CallFinished, CallStarted, Event
from engines.kg import Endpoint
from engines.llm.client import LLM
from engines.llm.protocol import Output
from engines.llm.task import Task
from engines.spinach.agent import AgentOptions, SpinachAgent
from engines.spinach.events import AgentFinished, AgentStarted, RolledBack, StepTaken
from engines.spinach.tasks import POLICY, PRUNE_ENTRY, PolicyAction, PruneInput
from worlds import kg as K


@pytest.fixture(scope="module")
def endpoint(world):
    """The memory store the endpoint picks by default (overrides the Oxigraph one of conftest.py)."""
    return Endpoint.from_world(world)


class Scripted:
    """A backend whose policy follows a script (a function of the state), recording what it was shown."""

    name = "scripted"
    model = "scripted"
    prompt_version = "1"

    def __init__(self, script) -> None:
        self.script = script
        self.calls: list[tuple[int, int]] = []  # (len(history), sample)

    def run(self, task: Task, input: Any) -> Output:
        if task is not POLICY:
            raise NotImplementedError(task.name)  # prune_entry: the agent keeps the page whole when pruning fails
        self.calls.append((len(input.history), input.sample))
        return Output(self.script(input.history, input.sample))


MOUNTAINS = "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 . } LIMIT 3"


def run(endpoint, script, options=None, cancel=None):
    events: list[Event] = []
    backend = Scripted(script)
    agent = SpinachAgent(endpoint, LLM(backend), options or AgentOptions())
    trajectory = agent.run("Which mountains are there?", emit=events.append, cancel=cancel)
    return trajectory, events, backend


def test_a_plain_run_and_its_events(endpoint):
    plan = [
        PolicyAction("find it", "search_wikidata", "mountain"),
        PolicyAction("query", "execute_sparql", MOUNTAINS),
        PolicyAction("done", "stop", ""),
    ]
    trajectory, events, _ = run(endpoint, lambda h, s: plan[len(h)])
    assert isinstance(events[0], AgentStarted) and isinstance(events[-1], AgentFinished)
    taken = [e.step for e in events if isinstance(e, StepTaken)]
    assert [s.action for s in taken] == ["search_wikidata", "execute_sparql", "stop"]
    assert sum(isinstance(e, CallStarted) for e in events) == sum(isinstance(e, CallFinished) for e in events) == 3
    assert trajectory.finish == "stop" and trajectory.final_sparql == MOUNTAINS
    assert len(trajectory.answer) == 3 and trajectory.columns == ("m",)
    assert taken[1].feedback == "rows" and taken[1].row_count == 3 and "[3 rows x 1 column]" in taken[1].observation
    assert "mountain (Q1007)" in taken[0].observation
    assert (taken[2].in_state, taken[2].total) == (3, 3)


def test_a_repeat_is_rolled_back_and_resampled(endpoint):
    def script(h, sample):
        if len(h) == 0:
            return PolicyAction("find", "search_wikidata", "mountain")
        if len(h) == 1 and sample == 0:
            return PolicyAction("again", "search_wikidata", "mountain")  # the loop
        if len(h) == 1:
            return PolicyAction("query", "execute_sparql", MOUNTAINS)
        return PolicyAction("done", "stop", "")

    trajectory, events, backend = run(endpoint, script)
    rolled = [e for e in events if isinstance(e, RolledBack)]
    assert len(rolled) == 1 and rolled[0].reason == "repeat" and rolled[0].to_step == 1 and rolled[0].discarded == (2,)
    assert [s.rolled_back for s in trajectory.steps] == [False, True, False, False]
    assert trajectory.steps[1].observation.startswith("(not run")
    assert (1, 0) in backend.calls and (1, 1) in backend.calls  # asked again with a new sample
    assert trajectory.actions_in_state == 3 and trajectory.rollbacks == 1 and trajectory.finish == "stop"


def test_a_premature_stop_is_rolled_back(endpoint):
    def script(h, sample):
        if len(h) == 0:
            return PolicyAction("q", "execute_sparql", "SELECT ?x WHERE { ?x wdt:P31 wd:Q424242 }")
        if sample == 0:
            return PolicyAction("give up", "stop", "")
        if len(h) == 1:
            return PolicyAction("q", "execute_sparql", MOUNTAINS)
        return PolicyAction("done", "stop", "")

    trajectory, events, _ = run(endpoint, script)
    assert [e.reason for e in events if isinstance(e, RolledBack)] == ["premature stop"]
    assert trajectory.finish == "stop" and len(trajectory.answer) == 3


def test_budget_of_15_in_the_state(endpoint):
    trajectory, _, _ = run(endpoint, lambda h, s: PolicyAction("look", "search_wikidata", f"mount {len(h)}"))
    assert trajectory.finish == "budget" and trajectory.actions_in_state == 15 and len(trajectory.steps) == 15


def test_budget_of_30_in_all(endpoint):
    def script(h, sample):
        if len(h) < 2:
            return PolicyAction("look", "search_wikidata", f"mount {len(h)}")
        return PolicyAction("again", "search_wikidata", "mount 1")  # loops forever

    trajectory, events, _ = run(endpoint, script)
    assert trajectory.finish == "budget" and len(trajectory.steps) == 30 and trajectory.actions_in_state == 2
    assert sum(isinstance(e, RolledBack) for e in events) == 28


def test_without_rollback_repeats_stay_and_cost_the_budget(endpoint):
    def script(h, sample):
        return PolicyAction("again", "search_wikidata", "mountain")

    trajectory, events, _ = run(endpoint, script, AgentOptions(rollback=False))
    assert not any(isinstance(e, RolledBack) for e in events)
    assert trajectory.finish == "budget" and trajectory.actions_in_state == 15


def test_cancel(endpoint):
    cancel = threading.Event()

    def script(h, sample):
        cancel.set()
        return PolicyAction("look", "search_wikidata", "mountain")

    trajectory, _, _ = run(endpoint, script, cancel=cancel)
    assert trajectory.finish == "cancelled" and len(trajectory.steps) == 1


def test_disabled_tools_observe_so(endpoint):
    plan = [
        PolicyAction("s", "search_wikidata", "mountain"),
        PolicyAction("q", "execute_sparql", MOUNTAINS),
        PolicyAction("d", "stop", ""),
    ]
    trajectory, _, _ = run(endpoint, lambda h, s: plan[len(h)], AgentOptions(disabled=("search_wikidata",)))
    assert trajectory.steps[0].observation == "The action search_wikidata is not available."


def test_an_unknown_action_ends_the_run_with_an_error(endpoint):
    trajectory, _, _ = run(endpoint, lambda h, s: PolicyAction("?", "fly", "away"))
    assert trajectory.finish == "error" and "fly" in (trajectory.error or "")


def test_refused_queries_are_an_observation(endpoint):
    plan = [
        PolicyAction("q", "execute_sparql", "DELETE WHERE { ?s ?p ?o }"),
        PolicyAction("q", "execute_sparql", MOUNTAINS),
        PolicyAction("d", "stop", ""),
    ]
    trajectory, _, _ = run(endpoint, lambda h, s: plan[len(h)])
    assert trajectory.steps[0].feedback == "refused" and trajectory.steps[0].observation.startswith("Query refused")


def test_first_five_and_last_five_rows(endpoint):
    plan = [
        PolicyAction("q", "execute_sparql", "SELECT ?c WHERE { ?c wdt:P31 wd:Q1003 . }"),
        PolicyAction("d", "stop", ""),
    ]
    trajectory, _, _ = run(endpoint, lambda h, s: plan[len(h)])
    lines = trajectory.steps[0].observation.splitlines()
    assert len(lines) == 1 + 5 + 1 + 5 + 1 and "(27 omitted)" in lines[6] and lines[-1] == "[37 rows x 1 column]"
    assert len(trajectory.answer) == 37


def test_session_wiring():
    from engines.settings import Settings
    from engines.spinach.session import open_spinach

    session = open_spinach(Settings())
    q = session.questions.simple[0]
    t = session.agent.run(q.question)
    scores = session.score(t, q.id)
    assert set(scores) == {"em", "f1"} and 0 <= scores["f1"] <= 1
    assert session.gold(q.id) and session.endpoint.search("Ashford")
    other = session.with_llm(session.llm, AgentOptions(rollback=False))
    assert other.endpoint is session.endpoint and not other.agent.options.rollback


def _lines(endpoint, qid: str) -> int:
    try:
        return len(endpoint.page(qid).render().splitlines())
    except Exception:
        return 0


class Pruning(Scripted):
    """A non-simulated backend: entity pages are pruned to the question before the policy sees them."""

    def run(self, task: Task, input: Any) -> Output:
        if task is not PRUNE_ENTRY:
            return super().run(task, input)
        self.pruned = input.entry
        keep = [i for i, line in enumerate(input.entry.splitlines()) if i < 2 or line.startswith("P31")]
        return Output(tuple(keep))


def test_entity_pages_are_pruned_to_the_question_with_a_real_llm(endpoint):
    page_of = max((f"Q{n}" for n in range(1000, 1300)), key=lambda q: _lines(endpoint, q))
    script = lambda history, sample: (  # noqa: E731
        PolicyAction("look at the class", "get_wikidata_entry", page_of)
        if not history
        else PolicyAction("done", "stop", "")
    )
    backend = Pruning(script)
    trajectory = SpinachAgent(endpoint, LLM(backend), AgentOptions(rollback=False)).run("Which mountains are there?")
    full = endpoint.page(page_of).render()
    observed = trajectory.steps[0].observation
    assert backend.pruned == full
    assert len(observed.splitlines()) < len(full.splitlines())
    assert observed.splitlines()[:2] == full.splitlines()[:2]


def test_the_simulated_pruner_keeps_a_short_page_whole(endpoint):
    """Pages are pruned with the simulated backend too (tests/engines/spinach/test_prune.py); a page of two claims
    is kept whole (at least two claims are kept)."""
    from engines.llm.sim import SimBackend

    page = "label: a\ndescription: b\nP31 (instance of): c (Q1)\nP17 (country): d (Q2)"
    assert SimBackend().run(PRUNE_ENTRY, PruneInput("q", page)).value == (0, 1, 2, 3)


PROBE = "SELECT ?x WHERE { ?x wdt:P31 wd:Q1007 . } LIMIT 1"  # a check: it happens to return rows
NOTHING = "SELECT ?x WHERE { ?x wdt:P31 wd:Q424242 }"


def test_a_probe_run_after_the_answer_is_not_the_answer(endpoint):
    plan = [
        PolicyAction("the whole query", "execute_sparql", MOUNTAINS),
        PolicyAction("verify", "execute_sparql", PROBE),
        PolicyAction("my query answers it", "stop", MOUNTAINS),
    ]
    trajectory, events, _ = run(endpoint, lambda h, s: plan[len(h)])
    assert not any(isinstance(e, RolledBack) for e in events)
    assert trajectory.finish == "stop" and trajectory.final_sparql == MOUNTAINS and len(trajectory.answer) == 3


def test_a_stop_whose_answer_returned_nothing_is_premature_even_after_a_probe_with_rows(endpoint):
    def script(h, sample):
        if len(h) == 0:
            return PolicyAction("the whole query", "execute_sparql", NOTHING)
        if len(h) == 1:
            return PolicyAction("debug a fragment", "execute_sparql", PROBE)  # rows
        if sample == 0:
            return PolicyAction("give up", "stop", NOTHING)  # the answer it means returned nothing
        if len(h) == 2:
            return PolicyAction("fixed", "execute_sparql", MOUNTAINS)
        return PolicyAction("done", "stop", MOUNTAINS)

    trajectory, events, _ = run(endpoint, script)
    assert [e.reason for e in events if isinstance(e, RolledBack)] == ["premature stop"]
    assert trajectory.final_sparql == MOUNTAINS and len(trajectory.answer) == 3


def test_a_bare_stop_means_the_last_executed_query_and_a_budget_end_the_last_named(endpoint):
    plan = [
        PolicyAction("q", "execute_sparql", MOUNTAINS),
        PolicyAction("q", "execute_sparql", PROBE),
        PolicyAction("done", "stop", ""),
    ]
    trajectory, _, _ = run(endpoint, lambda h, s: plan[len(h)])
    assert trajectory.final_sparql == PROBE  # SPINACH's stop(): "marks the last executed SPARQL query"

    def stubborn(h, sample):  # names an empty answer again and again, after a probe with rows
        if len(h) == 0:
            return PolicyAction("q", "execute_sparql", NOTHING)
        if len(h) == 1:
            return PolicyAction("probe", "execute_sparql", PROBE)
        return PolicyAction("stop", "stop", NOTHING)

    trajectory, _, _ = run(endpoint, stubborn)
    assert trajectory.finish == "budget" and trajectory.final_sparql is None and trajectory.answer == ()


def test_lookups_on_a_local_endpoint_are_kept_and_a_remote_one_is_asked_each_time(monkeypatch):
    """search / entity page / property examples on a local endpoint (an in-memory graph that never changes) are
    computed once per argument, with the same observation; on any other endpoint (a remote one) every call asks."""
    from engines.spinach.tools import Tools

    endpoint = Endpoint.from_world(K.build().world)  # its own: nothing kept from the other tests

    calls: list[str] = []
    for name in ("search", "page", "property_examples"):
        original = getattr(endpoint, name)

        def counted(*a, _name=name, _original=original, **k):
            calls.append(_name)
            return _original(*a, **k)

        monkeypatch.setattr(endpoint, name, counted)
    first = Tools(endpoint)  # each agent makes its own Tools: what is kept belongs to the endpoint
    seen = (first.search_wikidata("Pallasca"), first.get_wikidata_entry("Q1007"), first.get_property_examples("P31"))
    again = Tools(endpoint, disabled=("execute_sparql",))
    assert (
        again.search_wikidata("Pallasca"),
        again.get_wikidata_entry("wd:Q1007"),
        again.get_property_examples("wdt:P31"),
    ) == seen
    assert calls == ["search", "page", "property_examples"]
    assert again.get_wikidata_entry("Q999999999") == first.get_wikidata_entry("Q999999999")  # an unknown entity too
    assert calls.count("page") == 2

    class Remote:  # what a RemoteEndpoint offers the tools
        def __init__(self) -> None:
            self.asked = 0

        def search(self, text, **_k):
            self.asked += 1
            return endpoint.search(text)

    remote = Remote()
    tools = Tools(remote)  # type: ignore[arg-type]
    assert tools.search_wikidata("Pallasca") == tools.search_wikidata("Pallasca") == seen[0]
    assert remote.asked == 2


def test_a_query_shape_is_kept_and_cannot_be_changed():
    from engines.spinach.shape import query_shape

    q = "SELECT ?m ?mLabel WHERE { ?m wdt:P31 wd:Q1007 ; wdt:P2044 ?h . } ORDER BY DESC(?h) LIMIT 1"
    shape = query_shape(q)
    assert query_shape(q) is shape and shape.counts["triples"] == 2
    with pytest.raises(TypeError):
        shape.counts["triples"] = 5  # type: ignore[index]
    from pyparsing import ParseException

    for _ in range(2):  # a query that does not parse raises, every time
        with pytest.raises(ParseException):
            query_shape("SELECT ?m WHERE { ?m wdt:P31 ")
