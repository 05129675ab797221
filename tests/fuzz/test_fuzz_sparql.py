"""Fuzz ``sparql`` on both stores: SERVICE/FROM/LOAD in many spellings (\\u escapes, no spaces,
prefixed names) aimed at a recording server on 127.0.0.1 and a canary file, updates, catastrophic
regexes, deep nesting, ORDER BY over mixed terms.  No traceback, no crash, no hang, no connection."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S, SLACK_S
from tests.fuzz.properties import assert_cli, assert_engine_outcome, assert_offline, fuzz_settings
from tests.fuzz.strategies import fill, sparql_query

STORES = ("memory", "oxigraph")
FEEDBACKS = {"rows", "empty", "syntax_error", "timeout"}
START_S = 60.0
"""Opening an endpoint builds the world and starts its SPARQL worker process (a second or two, far more on a
loaded machine): that is start-up, not a query, so it gets its own limit."""


@pytest.fixture
def warm(worker):
    """The worker's endpoints open before the examples are timed (again after a hang restarted the worker)."""
    for store in STORES:
        worker.call("sparql", "ASK {}", store, limit_s=START_S)
    return worker


@fuzz_settings(60)
@given(query=sparql_query(), store=st.sampled_from(STORES))
@example(query="SELECT * WHERE { SERVICE<{URL}/sparql>{ ?s ?p ?o } }", store="oxigraph")  # issue 10 item 2
@example(query="SELECT * WHERE { SERV\\u0049CE <{URL}/sparql> { ?s ?p ?o } }", store="memory")  # issue 10 item 2
@example(query="SELECT * FROM<{URL}/g> WHERE { ?s ?p ?o }", store="memory")  # issue 10 item 2
@example(query="SELECT ?b ?a WHERE { ?a ?x ?b } ORDER BY ?b ?a", store="oxigraph")  # issue 10 item 3: a Rust panic
@example(
    query='SELECT ?z WHERE { BIND("' + "a" * 40 + 'b" AS ?z) FILTER REGEX(?z, "^(a+)+$") }', store="memory"
)  # issue 10 item 3: a catastrophic regex (Python's re cannot be interrupted)
def test_sparql_queries(warm, recorder, canary, query, store):
    q = fill(query, recorder.url, str(canary))
    before = recorder.count()
    out = warm.call("sparql", q, store).result
    assert_engine_outcome(out, f"[{store}] {q}")
    if out["outcome"] != "error":
        assert out["outcome"] in FEEDBACKS, out
    assert_offline(recorder, before, f"[{store}] {q}")


@fuzz_settings(3)
@given(query=sparql_query(), store=st.sampled_from(STORES))
def test_cli_sparql(worker, recorder, canary, query, store):
    argv = ["sparql", fill(query, recorder.url, str(canary)), "--store", store, "--json"]
    before = recorder.count()
    # each CLI run opens its own endpoint, so its limit includes the start-up
    assert_cli(worker.call("cli", argv, limit_s=START_S + QUERY_TIMEOUT_S + SLACK_S).result, argv, as_json=True)
    assert_offline(recorder, before, repr(argv))
