"""The policy step of the LLM layer: the POLICY task emits call events; sim and claude backends (offline)."""

from __future__ import annotations

import json

import pytest

from engines.errors import LLMError
from engines.events import CallFinished, CallStarted
from engines.llm.claude import render_prompt
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.spinach.tasks import POLICY, PolicyAction, PolicyInput, PolicyStep
from engines.spinach.tasks import policy_steps as _policy_steps
from tests.engines.llm.test_claude import FakeAPI, backend, message

HISTORY = [
    PolicyStep("Find it.", "search_wikidata", "Pallasca", "Pallasca (Q1053): province of Kestavia"),
    PolicyStep("Read it.", "get_wikidata_entry", "Q1053", "label: Pallasca\nP17 (country): Kestavia (Q1047)"),
    PolicyStep("Mountains?", "search_wikidata", "mountain", "mountain (Q1007): large natural elevation"),
    PolicyStep("Query.", "execute_sparql", "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 }", "m\nQ1341\n[1 row x 1 column]"),
]


def test_llm_policy_goes_through_the_call_events():
    events = []
    llm = LLM(SimBackend(seed=3), emit=events.append)
    action = llm.run(POLICY, PolicyInput("What is the highest mountain in Pallasca, and how high is it?", (), 0))
    assert isinstance(action, PolicyAction) and action.action_name == "search_wikidata"
    assert [type(e) for e in events] == [CallStarted, CallFinished]
    assert events[0].function == "policy" and events[1].verdict.startswith("search_wikidata(")


def test_sim_backend_policy_is_the_sim_policy():
    from engines.spinach.sim_policy import decide

    q = "Who directed Night Ferry?"
    assert SimBackend(seed=5).run(POLICY, PolicyInput(q, tuple(HISTORY[:0]), 0)).value == decide(
        q, [], seed=5, sample=0
    )


def test_policy_prompt_shows_the_state_as_spinach_does():
    steps, omitted = _policy_steps(HISTORY)
    prompt = render_prompt("policy", package=POLICY.package, question="How high?", steps=steps, omitted=omitted)
    assert '"How high?"' in prompt and "execute_sparql(SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 })" in prompt
    assert "province of Kestavia" not in prompt  # an older search: observation hidden
    assert "large natural elevation" in prompt and "[1 row x 1 column]" in prompt
    long = [HISTORY[0]] * 14
    steps, omitted = _policy_steps(long)
    assert omitted == 4 and len(steps) == 10


def test_claude_policy_parses_the_reply():
    reply = {"thought": "Look for the mountain class.", "action_name": "search_wikidata", "action_argument": "mountain"}
    api = FakeAPI(message(json.dumps(reply)))
    out = backend(api).run(POLICY, PolicyInput("What is the highest mountain in Pallasca?", tuple(HISTORY), 2))
    assert out.value == PolicyAction("Look for the mountain class.", "search_wikidata", "mountain")
    assert api.requests[0]["max_tokens"] == POLICY.max_tokens == 1500
    assert "What is the highest mountain in Pallasca?" in api.prompt


@pytest.mark.parametrize(
    "reply, fragment",
    [
        ('{"thought": "x", "action_name": "fly", "action_argument": ""}', "unknown action"),
        ('{"thought": "x", "action_argument": "q"}', "action_name"),
        ('{"thought": "x", "action_name": "execute_sparql", "action_argument": ""}', "no query"),
        ("I would search.", "policy()"),
    ],
)
def test_claude_policy_malformed(reply, fragment):
    with pytest.raises(LLMError, match=fragment):
        backend(FakeAPI(message(reply))).run(POLICY, PolicyInput("q?", (), 0))


def test_claude_policy_stop_and_suffix():
    out = backend(FakeAPI(message('{"thought": "done", "action_name": "stop()", "action_argument": null}'))).run(
        POLICY, PolicyInput("q?", tuple(HISTORY), 0)
    )
    assert out.value == PolicyAction("done", "stop", "")
