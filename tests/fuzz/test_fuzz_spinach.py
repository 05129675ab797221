"""Fuzz ``spinach``: the SPINACH agent with the simulated policy on hostile and random questions
(small budgets), and the CLI with ``--save`` pointing anywhere.  No traceback, no hang, no
connection."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S
from tests.fuzz.properties import assert_cli, assert_engine_outcome, assert_offline, fuzz_settings
from tests.fuzz.strategies import ANY_CHAR, fill, nasty_text, sparql_query, utterance

SPINACH_LIMIT_S = QUERY_TIMEOUT_S + 9  # a few actions, each at most one query
QUESTIONS = st.one_of(
    utterance(),
    nasty_text(6),
    sparql_query(),
    st.sampled_from(
        (
            "Who is the mayor of Q1?",
            "How many people live in the biggest city?",
            "Which films did wd:Q5 direct? SERVICE <{URL}/sparql> { ?s ?p ?o }",
        )
    ),
)


@fuzz_settings(25)
@given(question=QUESTIONS, store=st.sampled_from(("memory", "oxigraph")), budget=st.integers(1, 3))
def test_spinach_agent(worker, recorder, canary, question, store, budget):
    q = fill(question, recorder.url, str(canary))
    before = recorder.count()
    out = worker.call("spinach", q, store, budget, 2 * budget, limit_s=SPINACH_LIMIT_S * budget).result
    assert_engine_outcome(out, q)
    assert_offline(recorder, before, q)


SAVE_KINDS = ("ok", "directory", "missing-folder", "under-a-file", "empty", "nul", "surrogate")


@fuzz_settings(8)
@given(
    question=st.one_of(utterance(), st.text(ANY_CHAR, max_size=20)),
    save=st.sampled_from(SAVE_KINDS),
    as_json=st.booleans(),
)
@example(question="Who is the mayor of Q1?", save="directory", as_json=False)  # issue 10 item 5
@example(question="Who is the mayor of Q1?", save="missing-folder", as_json=False)  # issue 10 item 5
@example(question="Who is the mayor of Q1?", save="under-a-file", as_json=False)  # issue 10 item 5 (found here)
@example(question="Who is the mayor of Q1?", save="empty", as_json=True)  # issue 10 item 5: '' is '.' (found here)
@example(question="Who is the mayor of Q1?", save="nul", as_json=False)  # issue 10 item 5: ValueError (found here)
def test_cli_spinach_save(worker, files, question, save, as_json):
    a_file = files / "a-file.json"
    a_file.write_text("{}", encoding="utf-8")
    path = {
        "ok": str(files / "trajectory.json"),
        "directory": str(files),
        "missing-folder": str(files / "missing" / "t.json"),
        "under-a-file": str(a_file / "t.json"),
        "empty": "",
        "nul": str(files / "a\x00b.json"),
        "surrogate": str(files) + "/\udcff.json",
    }[save]
    argv = ["spinach", question, "--save", path, *(["--json"] if as_json else [])]
    assert_cli(worker.call("cli", argv, limit_s=SPINACH_LIMIT_S * 5).result, argv, as_json=as_json)
