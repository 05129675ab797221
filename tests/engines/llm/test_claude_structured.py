"""Claude as the SDK means it, against the stub Messages API on 127.0.0.1 (issue 13 parts 1 and 3):
structured output (the reply model's JSON schema is sent, the reply validated with it), prompt
caching markers on the shared prefix, usage and cost accounting, the unknown/retired model's
message with the models the key can use, and bounded concurrent requests.  Hermetic, no key."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from engines.errors import LLMError, ReplyError
from engines.events import CallFinished
from engines.llm.client import LLM, llm_from_settings
from engines.llm.prompting import render_prompt, system_prompt
from engines.llm.usage import estimate_tokens
from engines.settings import ModelPrice, Settings
from engines.spinach.tasks import POLICY, PRUNE_ENTRY, PolicyInput, PruneInput
from engines.sql.tasks import CLASSIFY, PARSE, ROUTE, ClassifyInput, Dialogue
from engines.suql import tasks as suql_tasks
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput
from tests.engines.llm.test_claude import ROW_MODEL, message
from tests.engines.llm.test_claude_faults import (
    Step,
    StubAPI,
    claude_at,
    error_body,
    ok,
)

SCHEMA = "CREATE TABLE restaurants (name TEXT, cuisines TEXT[], location TEXT, rating REAL)"


@pytest.fixture
def stub() -> Iterator[StubAPI]:
    api = StubAPI()
    yield api
    api.close()


def events_of(llm_backend: Any, **kw: Any) -> tuple[LLM, list]:
    seen: list = []
    return LLM(llm_backend, emit=seen.append, **kw), seen


# --- structured output ---------------------------------------------------------------------------


def test_a_json_reply_is_asked_for_with_its_reply_model_s_schema(stub: StubAPI) -> None:
    backend = claude_at(stub.url)
    stub.script(ok('{"value": "Yes", "evidence": ["The patio is heated."]}'))
    assert backend.run(ANSWER, AnswerInput("The patio is heated.", "Is there a patio?")).value.value == "Yes"
    sent = stub.requests[0]
    fmt = sent["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["schema"]
    assert schema["type"] == "object" and set(schema["properties"]) == {"value", "evidence"}
    assert schema["additionalProperties"] is False and "value" in schema["required"]
    # neither forced tool use (an error on Sonnet 5.5) nor a non-default temperature (refused on 5.x)
    assert not {"tools", "tool_choice", "temperature", "top_p", "top_k"} & set(sent)


@pytest.mark.parametrize(
    "call, properties",
    [
        (lambda b: b.run(ROUTE, Dialogue("hi", (), SCHEMA)), {"needs_database", "reason"}),
        (lambda b: b.run(PARSE, Dialogue("thai food", (), SCHEMA)), {"sql"}),
        (lambda b: b.run(CLASSIFY, ClassifyInput("thai", "cuisines", ("thai",))), {"values"}),
        (lambda b: b.run(POLICY, PolicyInput("q?", (), 0)), {"thought", "action_name", "action_argument"}),
        (lambda b: b.run(PRUNE_ENTRY, PruneInput("q?", "a\nb")), {"keep"}),
    ],
)
def test_every_json_task_sends_its_schema(stub: StubAPI, call: Any, properties: set[str]) -> None:
    stub.script(ok("{}"))  # the reply does not matter here: the request does
    with pytest.raises(LLMError):
        call(claude_at(stub.url))
    assert set(stub.requests[0]["output_config"]["format"]["schema"]["properties"]) == properties


def test_the_policy_schema_names_the_five_actions(stub: StubAPI) -> None:
    stub.script(ok('{"thought": "look", "action_name": "search_wikidata", "action_argument": "Q1"}'))
    claude_at(stub.url).run(POLICY, PolicyInput("q?", (), 0))
    action = stub.requests[0]["output_config"]["format"]["schema"]["properties"]["action_name"]
    assert action["enum"] == [
        "search_wikidata",
        "get_wikidata_entry",
        "get_property_examples",
        "execute_sparql",
        "stop",
    ]


def test_a_plain_text_task_asks_for_no_format(stub: StubAPI) -> None:
    stub.script(ok("A heated patio."))
    assert claude_at(stub.url).run(SUMMARY, SummaryInput("The patio is heated.")).value == "A heated patio."
    assert "output_config" not in stub.requests[0]


def test_a_reply_that_does_not_validate_names_the_field(stub: StubAPI) -> None:
    stub.script(ok('{"value": {"nested": 1}, "evidence": []}'))
    with pytest.raises(ReplyError, match=r'answer\(\) reply has a "value" that is not valid'):
        claude_at(stub.url).run(ANSWER, AnswerInput("text", "q?"))


# --- prompt caching --------------------------------------------------------------------------------


def long_schema(columns: int) -> str:
    return "CREATE TABLE wide (" + ", ".join(f"column_number_{i} TEXT" for i in range(columns)) + ")"


def test_a_long_shared_prefix_goes_first_with_cache_control(stub: StubAPI) -> None:
    schema = long_schema(300)  # ~7,000 characters: well past Sonnet's 1,024-token minimum
    assert estimate_tokens(schema) > 1024
    stub.script(ok('{"sql": "SELECT 1"}'))
    claude_at(stub.url, claude_model="claude-sonnet-5-5").run(PARSE, Dialogue("how many rows?", (), schema))
    content = stub.requests[0]["messages"][0]["content"]
    assert isinstance(content, list) and len(content) == 2
    prefix, rest = content
    assert prefix["cache_control"] == {"type": "ephemeral"} and "cache_control" not in rest
    assert schema in prefix["text"] and "how many rows?" not in prefix["text"]
    assert "how many rows?" in rest["text"]
    # the same prompt as a single string would be: the prefix, then the rest
    assert prefix["text"] + "\n\n" + rest["text"] == render_prompt(
        "parse", package=PARSE.package, utterance="how many rows?", history=[], schema=schema
    )


def test_a_short_prefix_is_not_marked(stub: StubAPI) -> None:
    stub.script(ok('{"sql": "SELECT 1"}'))
    claude_at(stub.url, claude_model="claude-sonnet-5-5").run(PARSE, Dialogue("how many rows?", (), SCHEMA))
    content = stub.requests[0]["messages"][0]["content"]
    assert isinstance(content, str) and SCHEMA in content and "cache_control" not in json.dumps(stub.requests[0])


def test_the_minimum_depends_on_the_model(stub: StubAPI) -> None:
    schema = long_schema(150)  # ~3,500 characters: enough for Sonnet (1,024 tokens), not for Haiku 4.5 (4,096)
    stub.script(ok('{"sql": "SELECT 1"}'))
    claude_at(stub.url, claude_model="claude-sonnet-5-5").run(PARSE, Dialogue("q", (), schema))
    claude_at(stub.url, claude_model="claude-haiku-4-5").run(PARSE, Dialogue("q", (), schema))
    assert isinstance(stub.requests[0]["messages"][0]["content"], list)
    assert isinstance(stub.requests[1]["messages"][0]["content"], str)


# --- usage and cost --------------------------------------------------------------------------------

PRICES = {ROW_MODEL: ModelPrice(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25)}


def reply_with_usage(**usage: int) -> Step:
    body = message('{"value": "Yes", "evidence": []}')
    body["model"] = ROW_MODEL
    body["usage"] = usage
    return Step(body)


def test_every_call_records_its_tokens_and_cost_and_the_run_sums_them(stub: StubAPI) -> None:
    stub.script(
        reply_with_usage(
            input_tokens=1000, cache_read_input_tokens=3000, cache_creation_input_tokens=500, output_tokens=200
        )
    )
    llm, seen = events_of(claude_at(stub.url), prices=PRICES)
    llm.run(ANSWER, AnswerInput("The patio is heated.", "Is there a patio?"))
    elsewhere: list = []
    llm.bind(emit=elsewhere.append).run(
        ANSWER, AnswerInput("Dogs are welcome.", "Are dogs allowed?")
    )  # a binding shares the totals
    finished = [e for e in seen if isinstance(e, CallFinished)]
    assert len(finished) == 1 and len(elsewhere) == 2  # the bound LLM reports to its own listener
    call = finished[0]
    # every prompt token counts as input, the cached ones included
    assert (call.input_tokens, call.output_tokens, call.cached_input_tokens) == (4500, 200, 3000)
    expected = (1000 * 1.0 + 3000 * 0.1 + 500 * 1.25 + 200 * 5.0) / 1_000_000
    assert call.cost_usd == pytest.approx(expected) and call.model == ROW_MODEL and not call.estimated
    assert llm.usage.as_json() == {
        "input_tokens": 9000,
        "output_tokens": 400,
        "cached_input_tokens": 6000,
        "cost_usd": pytest.approx(2 * expected),
        "estimated": False,
    }


def test_a_model_without_a_price_has_tokens_but_no_cost(stub: StubAPI) -> None:
    stub.script(reply_with_usage(input_tokens=10, output_tokens=2))
    llm, seen = events_of(claude_at(stub.url), prices={"some-other-model": PRICES[ROW_MODEL]})
    llm.run(ANSWER, AnswerInput("text", "q?"))
    call = next(e for e in seen if isinstance(e, CallFinished))
    assert call.input_tokens == 10 and call.cost_usd is None
    assert llm.usage.as_json()["cost_usd"] is None and llm.usage.unpriced == 1


def test_a_dated_model_id_takes_its_family_s_price(stub: StubAPI) -> None:
    body = message('{"value": null, "evidence": []}')
    body["model"] = "claude-haiku-4-5-20251001"
    body["usage"] = {"input_tokens": 1_000_000, "output_tokens": 0}
    stub.script(Step(body))
    llm, _ = events_of(claude_at(stub.url), prices=Settings().llm_prices)
    llm.run(ANSWER, AnswerInput("text", "q?"))
    assert llm.usage.as_json()["cost_usd"] == pytest.approx(Settings().llm_prices["claude-haiku-4-5"].input)


def test_a_cached_answer_costs_nothing(stub: StubAPI, tmp_path: Any) -> None:
    from engines.llm.cache import AnswerCache

    stub.script(reply_with_usage(input_tokens=100, output_tokens=10))
    llm = LLM(claude_at(stub.url), cache=AnswerCache(tmp_path), prices=PRICES)
    llm.run(ANSWER, AnswerInput("text", "q?"))
    llm.run(ANSWER, AnswerInput("text", "q?"))
    assert len(stub.requests) == 1 and llm.usage.as_json()["input_tokens"] == 100


def test_prices_are_dated_and_overridable_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CS224V_LLM_PRICES", json.dumps({"my-model": {"input": 3, "output": 4}}))
    monkeypatch.setenv("CS224V_LLM_PRICES_AS_OF", "2027-01-02")
    s = Settings()
    assert s.llm_prices["my-model"] == ModelPrice(input=3, output=4)
    assert "claude-sonnet-5-5" in s.llm_prices and "claude-haiku-4-5" in s.llm_prices  # merged over the defaults
    assert s.llm_prices_as_of == "2027-01-02"
    monkeypatch.setenv("CS224V_LLM_PRICES", json.dumps({"claude-haiku-4-5": {"input": -1, "output": 4}}))
    with pytest.raises(ValueError):
        Settings()


def test_the_sim_reports_the_tokens_its_prompts_would_have_used() -> None:
    seen: list = []
    llm = llm_from_settings(Settings(cache_enabled=False), emit=seen.append)
    text, question = "The patio is heated. Dogs are welcome.", "Is there a patio?"
    answer = llm.run(ANSWER, AnswerInput(text, question))
    call = next(e for e in seen if isinstance(e, CallFinished))
    prompt = render_prompt("answer", package=ANSWER.package, text=text, question=question)
    assert call.estimated and call.input_tokens == estimate_tokens(system_prompt()) + estimate_tokens(prompt)
    assert call.output_tokens == estimate_tokens(json.dumps(suql_tasks.ANSWER.encode(answer)))
    # an estimate costs nothing: no price, no model (issue 26)
    assert call.cost_usd is None and call.model is None
    assert llm.usage.as_json()["input_tokens"] == call.input_tokens and llm.usage.as_json()["cost_usd"] is None


# --- an unknown or retired model -------------------------------------------------------------------


def test_a_retired_model_gets_the_api_s_message_and_the_models_the_key_can_use(stub: StubAPI) -> None:
    stub.models = ["claude-sonnet-5-5", "claude-haiku-4-5"]
    stub.script(Step(error_body("not_found_error", "model: claude-sonnet-4-5"), status=404))
    backend = claude_at(stub.url, claude_model="claude-sonnet-4-5")
    with pytest.raises(LLMError) as caught:
        backend.run(PARSE, Dialogue("x", (), SCHEMA))
    text = str(caught.value)
    assert "'claude-sonnet-4-5'" in text and "model: claude-sonnet-4-5" in text  # the API's own error
    assert "Models this key can use: claude-sonnet-5-5, claude-haiku-4-5." in text
    assert "CS224V_CLAUDE_MODEL" in text and stub.model_lists == 1
    assert len(stub.requests) == 1  # a 404 is not retried


def test_when_the_models_cannot_be_listed_the_message_says_so(stub: StubAPI) -> None:
    stub.models = None  # GET /v1/models answers 404 too
    stub.script(Step(error_body("not_found_error", "model: nope"), status=404))
    with pytest.raises(LLMError, match=r"model: nope.*the model list was refused \(404\).*CS224V_CLAUDE_ROW_MODEL"):
        claude_at(stub.url).run(ANSWER, AnswerInput("text", "q?"))


# --- concurrency -----------------------------------------------------------------------------------


def test_concurrent_calls_overlap_up_to_llm_concurrency(stub: StubAPI) -> None:
    lock = threading.Lock()
    state = {"now": 0, "most": 0}

    def slow(_request: dict) -> Step:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        return ok('{"value": "Yes", "evidence": []}')

    stub.responder = slow
    backend = claude_at(stub.url, llm_concurrency=2)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(backend.run(ANSWER, AnswerInput(f"text {i}", "q?")).value))
        for i in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert len(results) == 6 and all(a.value == "Yes" for a in results)
    assert state["most"] == 2  # overlapping, and never more than the setting


def test_a_cancel_ends_the_wait_for_a_free_slot_too(stub: StubAPI) -> None:
    from engines.errors import Cancelled
    from engines.llm.waiting import cancellable

    stub.script(Step(message('{"value": "Yes", "evidence": []}'), delay_s=10.0))
    backend = claude_at(stub.url, llm_concurrency=1)
    cancel = threading.Event()
    outcomes: list[str] = []

    def call(i: int) -> None:
        with cancellable(cancel):
            try:
                backend.run(ANSWER, AnswerInput(f"text {i}", "q?"))
                outcomes.append("answered")
            except Cancelled:
                outcomes.append("cancelled")

    threads = [threading.Thread(target=call, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while len(stub.requests) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    assert len(stub.requests) == 1  # the second call waits for the one slot
    started = time.monotonic()
    cancel.set()
    for t in threads:
        t.join(timeout=5)
    assert outcomes == ["cancelled", "cancelled"] and time.monotonic() - started < 3
    assert len(stub.requests) == 1  # the waiting call never sent its request
