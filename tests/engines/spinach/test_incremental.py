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
from worlds import kg as K

QUIET = replace(DEFAULT, p_repeat=0, p_typo=0, p_stop_early=0, p_format=0, p_extra=0, p_clause_slip=0)


@pytest.fixture(scope="module")
def built():
    return K.build()


@pytest.fixture(scope="module")
def endpoint(built):
    return Endpoint.from_world(built.world, store="memory", cache_size=1 << 14)


@pytest.fixture(scope="module")
def qsets(built):
    return K.questions(*built)


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
