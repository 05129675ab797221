"""Fuzz ``suql``: hostile SUQL (answer()/summary() in odd places, quoted aliases and types, attack
statements) in every execution mode, A-F and B-duckdb.  No traceback, no hang, data intact."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S
from tests.fuzz.properties import assert_cli, assert_engine_outcome, assert_offline, fuzz_settings
from tests.fuzz.strategies import MODES, SUQL_ATTACKS, fill, suql_query

SUQL_LIMIT_S = QUERY_TIMEOUT_S + 9  # a SUQL run is several statements and LLM calls


@fuzz_settings(60)
@given(query=suql_query(), mode=st.sampled_from(MODES))
@example(query=SUQL_ATTACKS[0], mode="A")  # issue 10 item 1: the alias pasted into the scratch table's CREATE TABLE
@example(query=SUQL_ATTACKS[4], mode="E")  # issue 10 item 1: a quoted type written back unquoted
def test_suql_queries(worker, recorder, canary, query, mode):
    q = fill(query, recorder.url, str(canary))
    before = recorder.count()
    out = worker.call("suql", q, mode, limit_s=SUQL_LIMIT_S).result
    assert_engine_outcome(out, f"[{mode}] {q}")
    assert_offline(recorder, before, q)


@fuzz_settings(4)
@given(query=suql_query(), mode=st.sampled_from(MODES))
def test_cli_suql(worker, recorder, canary, query, mode):
    argv = ["suql", fill(query, recorder.url, str(canary)), "--mode", mode, "--json"]
    assert_cli(worker.call("cli", argv, limit_s=SUQL_LIMIT_S).result, argv, as_json=True)
