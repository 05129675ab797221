"""The simulated policy builds its query a piece at a time (lecture 8 §3.1, §3.4: start simple, execute each fragment,
add one piece), and slips in complex clauses (§4.4: sort, LIMIT, path modifiers) on a seeded draw."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engines.kg import Endpoint
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.spinach.agent import SpinachAgent
from engines.spinach.shape import query_shape
from engines.spinach.sim_policy import DEFAULT

QUIET = replace(DEFAULT, p_repeat=0, p_typo=0, p_stop_early=0, p_format=0, p_extra=0, p_clause_slip=0)


@pytest.fixture(scope="module")
def endpoint(world):
    """A memory store with a cache (overrides the Oxigraph one of conftest.py)."""
    return Endpoint.from_world(world, store="memory", cache_size=1 << 14)


def _executed(trajectory) -> list[tuple[int, str]]:
    return [
        (query_shape(s.argument).counts.get("triples", 0), s.feedback)
        for s in trajectory.state
        if s.action == "execute_sparql" and s.feedback != "syntax_error"
    ]


def test_a_query_of_several_clauses_is_built_a_piece_at_a_time(endpoint, qsets):
    c1 = next(q for q in qsets.forum if q.category == "C1")  # musician, instrument, its class: three clauses
    t = SpinachAgent(endpoint, LLM(SimBackend(policy_params=replace(QUIET, p_incremental=1.0)))).run(c1.question)
    sizes = [n for n, _fb in _executed(t)]
    assert sizes[:2] == [1, 2]  # the first clause alone, then one more piece
    assert _executed(t)[0][1] == "rows" and max(sizes) >= 3
    whole = SpinachAgent(endpoint, LLM(SimBackend(policy_params=replace(QUIET, p_incremental=0.0)))).run(c1.question)
    assert _executed(whole)[0][0] >= 3  # written whole: the first query is the whole one
    assert len(t.state) > len(whole.state)


def test_a_failing_piece_is_debugged_where_it_was_added(endpoint, qsets):
    """The naive subclass clause returns nothing once added: the policy probes that clause (the instrument's values
    and page) before anything else, and the answer uses the subclass path."""
    c1 = next(q for q in qsets.forum if q.category == "C1")
    t = SpinachAgent(endpoint, LLM(SimBackend(policy_params=replace(QUIET, p_incremental=1.0)))).run(c1.question)
    calls = [s.call() for s in t.state]
    empty = next(i for i, s in enumerate(t.state) if s.action == "execute_sparql" and s.feedback == "empty")
    after = calls[empty + 1]
    assert "?instrument" in after or after.startswith("get_wikidata_entry")
    assert "P279" in (t.final_sparql or "")


def test_complex_clause_slips_turn_the_sort_round(endpoint, qsets):
    c3 = next(q for q in qsets.forum if q.category == "C3" and "highest" in q.question)
    slipping = replace(QUIET, p_clause_slip=1.0, p_verify=0)
    queries = []
    for seed in range(224, 240):
        t = SpinachAgent(endpoint, LLM(SimBackend(seed=seed, policy_params=slipping))).run(c3.question)
        queries.append(t.final_sparql or "")
    assert any("ORDER BY ASC" in q for q in queries)  # "highest" written as ascending: rows, and wrong
    careful = SpinachAgent(endpoint, LLM(SimBackend(policy_params=replace(QUIET, p_verify=0)))).run(c3.question)
    assert "ORDER BY DESC" in (careful.final_sparql or "")


def _first_query_index(trajectory) -> int:
    return next(i for i, s in enumerate(trajectory.state) if s.action == "execute_sparql")


def test_the_page_of_the_entity_whose_properties_it_reads_comes_before_the_first_query(endpoint, qsets):
    """Confirm before relying (§3.4, §1.4): even a property it is sure of (P57, director) is read off the film's page
    first; an entity the query only points at (born *in* Ashford) shows nothing of the property on its page, and no
    page is read for it."""
    film = next(q for q in qsets.forum if q.question.startswith("Who directed Northern Lights"))
    t = SpinachAgent(endpoint, LLM(SimBackend(policy_params=QUIET))).run(film.question)
    before = [s.call() for s in t.state[: _first_query_index(t)]]
    assert any(c.startswith("get_wikidata_entry") for c in before), before
    assert t.state[-1].action == "stop" and "P57" in (t.final_sparql or "")
    born = next(
        q for q in qsets.forum if q.question.startswith("Which people were born in Ashford, the city in Tirenne")
    )
    t = SpinachAgent(endpoint, LLM(SimBackend(policy_params=QUIET))).run(born.question)
    assert not any(s.action == "get_wikidata_entry" for s in t.state[: _first_query_index(t)])


def test_a_count_runs_its_pattern_first_and_a_clause_of_two_patterns_adds_them_one_at_a_time(endpoint, qsets):
    """A COUNT of an empty pattern is a row (0), so the pattern runs alone first; the award clause's date is a
    second piece, added after the award alone returned rows."""
    count = next(q for q in qsets.forum if q.question.startswith("How many people were born in"))
    t = SpinachAgent(endpoint, LLM(SimBackend(policy_params=replace(QUIET, p_incremental=1.0)))).run(count.question)
    queries = [s.argument for s in t.state if s.action == "execute_sparql"]
    assert "COUNT" not in queries[0] and any("COUNT" in q for q in queries[1:])
    award = next(q for q in qsets.forum if q.category == "C5")
    t = SpinachAgent(endpoint, LLM(SimBackend(policy_params=replace(QUIET, p_incremental=1.0)))).run(award.question)
    first = next(s for s in t.state if s.action == "execute_sparql")
    assert "P166" in first.argument and "P585" not in first.argument and first.feedback == "rows"


def test_a_guess_is_drawn_anew_after_a_rollback():
    """At temperature 1 a rerun differs (§3.5): with the award clause's naive variant failed, its probes used up and
    nothing learnt, whether the policy guesses the next variant is drawn anew for each rollback count (``sample``),
    so a stop rolled back for want of ideas is not redrawn the same way every time."""
    from engines.spinach.expert.clauses import fragment
    from engines.spinach.expert.debugging import _blind, next_probe
    from engines.spinach.expert.state import read_state
    from engines.spinach.tasks import PolicyStep

    question = "Who received the Golden Reel Award, and when? Return each laureate and the point in time of the award."
    rows = "laureate\nQ1265\nQ1284\n[2 rows x 1 column]"
    history = [
        PolicyStep("", "search_wikidata", "Golden Reel Award", "Golden Reel Award (Q1113): award given in Tirenne"),
        PolicyStep("", "execute_sparql", "SELECT * WHERE {\n  ?laureate wdt:P166 wd:Q1113 .\n}\nLIMIT 5", rows),
        PolicyStep("", "get_property_examples", "P166", "Ilse Oduya (Q1125) -- award received (P166) --> X (Q1114)"),
        PolicyStep("", "get_wikidata_entry", "Q1265", "label: Florin Rook\nP31 (instance of): human (Q1000)"),
    ]
    mind = read_state(question, history, 224, DEFAULT)
    clause = mind.goal.clauses[0]
    failed_query = f"SELECT ?laureate ?date WHERE {{ {fragment(mind, clause, 0, [])} }}"
    history.append(PolicyStep("", "execute_sparql", failed_query, "Query returned empty result."))
    guesses = []
    for sample in range(16):
        mind = read_state(question, history, 224, DEFAULT, sample)
        assert next_probe(mind, clause, loud=True) is None and not mind.facts  # nothing left to learn
        guesses.append(_blind(mind, clause, {failed_query}, 0))
    assert 0 < sum(guesses) < len(guesses)  # some retries guess the next variant, some keep the failed one
