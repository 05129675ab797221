"""Fuzz ``ask``: hostile and random utterances to the Text-to-SQL agent and the SUQL agent
(dialogues of one to three turns).  No traceback, no hang, data intact."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S
from tests.fuzz.properties import assert_cli, assert_engine_outcome, fuzz_settings
from tests.fuzz.strategies import utterance

ASK_LIMIT_S = QUERY_TIMEOUT_S + 9


@fuzz_settings(30)
@given(utterances=st.lists(utterance(), min_size=1, max_size=3), use_suql=st.booleans())
def test_agent_dialogues(worker, utterances, use_suql):
    out = worker.call("ask", utterances, use_suql, limit_s=ASK_LIMIT_S * len(utterances)).result
    assert_engine_outcome(out, repr(utterances))


@fuzz_settings(4)
@given(utterances=st.lists(utterance(), min_size=1, max_size=2), use_suql=st.booleans())
def test_cli_ask(worker, utterances, use_suql):
    argv = ["ask", *utterances, "--json", *(["--suql"] if use_suql else [])]
    assert_cli(worker.call("cli", argv, limit_s=ASK_LIMIT_S * len(utterances)).result, argv, as_json=True)
