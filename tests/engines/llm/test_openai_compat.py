"""The openai backend against a stub OpenAI-compatible chat-completions server on 127.0.0.1.

The stub (tests/engines/llm/openai_stub.py) speaks the wire format; the backend talks to it over
real HTTP.  Covered: the request's shape (model of the role, system + user messages, the JSON
schema of the reply as ``response_format``), the fallback to JSON mode when the server refuses a
schema, the one repair retry and the error after it, text tasks without a format, usage, retries,
the concurrency bound, cancelling a request in flight, and the backend id.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from engines.errors import Cancelled, LLMError, ReplyError
from engines.events import CallFailed, CallFinished
from engines.llm.client import LLM, backend_from_settings
from engines.llm.openai_compat import OpenAICompatBackend
from engines.llm.protocol import Answer, backend_id
from engines.llm.waiting import cancellable
from engines.settings import Settings
from engines.sql.tasks import PARSE, Dialogue
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput
from tests.engines.llm.openai_stub import Reply, StubServer, error, ok

TEXT = "A quiet room with candles. Great pasta."
QUESTION = "is it romantic?"
GOOD = '{"value": "Yes", "evidence": ["A quiet room with candles."]}'


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    yield server
    server.close()


def settings(url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "backend": "openai",
        "openai_base_url": url,
        "openai_model": "planner-m",
        "openai_row_model": "row-m",
        "openai_max_retries": 2,
        "cache_enabled": False,
    }
    values.update(overrides)
    return Settings(**values)


def backend(url: str, **overrides: Any) -> OpenAICompatBackend:
    b = OpenAICompatBackend(settings(url, **overrides), sleep=lambda _s: None)
    return b


@pytest.fixture
def openai(stub: StubServer) -> Iterator[OpenAICompatBackend]:
    b = backend(stub.url)
    yield b
    b.close()


# --- the request ----------------------------------------------------------------------------------


def test_a_json_task_sends_the_reply_schema_to_the_row_model_and_reads_the_reply(stub, openai):
    stub.script(ok(GOOD, prompt_tokens=40, completion_tokens=9))
    events: list[Any] = []
    value = LLM(openai, emit=events.append).run(ANSWER, AnswerInput(TEXT, QUESTION))
    assert value == Answer("Yes", ("A quiet room with candles.",))
    (request,) = stub.requests
    assert stub.paths == ["/v1/chat/completions"]
    assert request["model"] == "row-m"  # answer() is a per-row task
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert TEXT in request["messages"][1]["content"] and QUESTION in request["messages"][1]["content"]
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert fmt["json_schema"]["strict"] is True
    assert set(schema["properties"]) == {"value", "evidence"} and set(schema["required"]) == {"value", "evidence"}
    assert schema["additionalProperties"] is False
    assert "authorization" not in stub.headers[0]  # no key: local servers take none
    finished = [e for e in events if isinstance(e, CallFinished)]
    assert [(e.input_tokens, e.output_tokens) for e in finished] == [(40, 9)]


def test_a_planner_task_goes_to_the_planner_model(stub, openai):
    stub.script(ok('{"sql": "SELECT 1;"}'))
    assert LLM(openai).run(PARSE, Dialogue("anything", (), "CREATE TABLE t (a INT)")) == "SELECT 1"
    assert stub.requests[0]["model"] == "planner-m"


def test_a_text_task_sends_no_response_format(stub, openai):
    stub.script(ok("A candle-lit Italian place."))
    assert LLM(openai).run(SUMMARY, SummaryInput(TEXT)) == "A candle-lit Italian place."
    assert "response_format" not in stub.requests[0]


def test_json_object_mode_when_set(stub):
    b = backend(stub.url, openai_structured="json_object")
    stub.script(ok(GOOD))
    assert LLM(b).run(ANSWER, AnswerInput(TEXT, QUESTION)).value == "Yes"
    assert stub.requests[0]["response_format"] == {"type": "json_object"}
    b.close()


def test_a_server_that_refuses_json_schema_is_asked_in_json_mode_from_then_on(stub, openai):
    def respond(request: dict) -> Reply:
        if request.get("response_format", {}).get("type") == "json_schema":
            return error(400, "response_format type json_schema is not supported")
        return ok(GOOD)

    stub.responder = respond
    llm = LLM(openai)
    assert llm.run(ANSWER, AnswerInput(TEXT, QUESTION)).value == "Yes"
    assert llm.run(ANSWER, AnswerInput(TEXT, "is it quiet?")).value == "Yes"
    assert [r["response_format"]["type"] for r in stub.requests] == ["json_schema", "json_object", "json_object"]
    assert openai.structured == "json_object"


def test_a_server_that_refuses_both_formats_is_asked_with_the_prompt_alone(stub, openai):
    def respond(request: dict) -> Reply:
        if "response_format" in request:
            return error(400, "'response_format' is not supported")
        return ok(GOOD)

    stub.responder = respond
    assert LLM(openai).run(ANSWER, AnswerInput(TEXT, QUESTION)).value == "Yes"
    assert [r.get("response_format", {}).get("type") for r in stub.requests] == ["json_schema", "json_object", None]


def test_the_api_key_is_sent_as_a_bearer_token(stub):
    b = backend(stub.url, OPENAI_API_KEY="sk-local")
    stub.script(ok(GOOD))
    LLM(b).run(ANSWER, AnswerInput(TEXT, QUESTION))
    assert stub.headers[0]["authorization"] == "Bearer sk-local"
    b.close()


# --- replies that do not validate ----------------------------------------------------------------


def test_a_reply_that_does_not_validate_gets_one_repair_retry_with_the_error(stub, openai):
    stub.script(
        ok('{"answer": "Yes"}', prompt_tokens=30, completion_tokens=4), ok(GOOD, prompt_tokens=50, completion_tokens=8)
    )
    events: list[Any] = []
    value = LLM(openai, emit=events.append).run(ANSWER, AnswerInput(TEXT, QUESTION))
    assert value.value == "Yes"
    first, second = stub.requests
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {"role": "assistant", "content": '{"answer": "Yes"}'}
    repair = second["messages"][3]
    assert repair["role"] == "user" and "value" in repair["content"]  # names what was wrong
    assert second["response_format"] == first["response_format"]
    finished = [e for e in events if isinstance(e, CallFinished)]
    assert [(e.input_tokens, e.output_tokens) for e in finished] == [(80, 12)]  # both requests counted


def test_a_second_bad_reply_is_a_failed_call_and_the_tasks_fallback(stub, openai):
    stub.script(ok("I think so!"))
    events: list[Any] = []
    assert LLM(openai, emit=events.append).run(ANSWER, AnswerInput(TEXT, QUESTION)) == Answer(None)
    assert len(stub.requests) == 2  # one repair retry, no more
    (failed,) = [e for e in events if isinstance(e, CallFailed)]
    assert "answer()" in failed.error and "repair" in failed.error


def test_a_task_without_fallback_raises_the_reply_error(stub, openai):
    stub.script(ok('{"query": "SELECT 1"}'))
    with pytest.raises(ReplyError, match="sql"):
        LLM(openai).run(PARSE, Dialogue("x", (), "CREATE TABLE t (a INT)"))
    assert len(stub.requests) == 2


def test_a_body_that_is_not_a_completion_is_a_reply_error(stub, openai):
    stub.script(Reply({"object": "list", "data": []}))
    with pytest.raises(ReplyError, match="choices"):
        openai.run(PARSE, Dialogue("x", (), "CREATE TABLE t (a INT)"))


# --- errors and retries ------------------------------------------------------------------------


def test_transient_errors_are_retried_then_answered(stub, openai):
    stub.script(error(503, "loading model"), error(429, "slow down"), ok(GOOD))
    assert LLM(openai).run(ANSWER, AnswerInput(TEXT, QUESTION)).value == "Yes"
    assert len(stub.requests) == 3


def test_transient_errors_give_up_after_the_retries_with_the_servers_message(stub, openai):
    stub.script(error(503, "model is loading"))
    with pytest.raises(LLMError, match="503.*model is loading"):
        openai.run(PARSE, Dialogue("x", (), "CREATE TABLE t (a INT)"))
    assert len(stub.requests) == 3  # openai_max_retries=2


def test_an_unknown_model_names_the_model_and_how_to_get_it(stub, openai):
    stub.script(error(404, "model 'row-m' not found, try pulling it first"))
    with pytest.raises(LLMError, match=r"not found.*'row-m'.*ollama pull row-m"):
        LLM(openai).run(ANSWER, AnswerInput(TEXT, QUESTION))
    assert len(stub.requests) == 1


def test_no_server_is_a_clear_error():
    b = backend("http://127.0.0.1:9/v1", openai_max_retries=0)
    with pytest.raises(LLMError, match="Could not reach the model server at http://127.0.0.1:9/v1"):
        b.run(PARSE, Dialogue("x", (), "CREATE TABLE t (a INT)"))
    b.close()


# --- concurrency and cancellation ----------------------------------------------------------------


def test_calls_from_many_threads_overlap_up_to_the_concurrency_bound(stub):
    b = backend(stub.url, openai_concurrency=3)
    stub.script(Reply(ok(GOOD).body, delay_s=0.25))
    llm = LLM(b)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda q=q: results.append(llm.run(ANSWER, AnswerInput(TEXT, q))))
        for q in [f"question {n}?" for n in range(9)]
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert len(results) == 9 and all(r.value == "Yes" for r in results)
    assert 2 <= stub.most_in_flight <= 3
    b.close()


def test_a_cancel_aborts_the_request_in_flight(stub, openai):
    stub.script(Reply(ok(GOOD).body, delay_s=30))
    cancel = threading.Event()
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            LLM(openai, cancel=cancel).run(ANSWER, AnswerInput(TEXT, QUESTION))
        except BaseException as e:
            outcome.append(e)

    worker = threading.Thread(target=call)
    worker.start()
    deadline = time.monotonic() + 5
    while not stub.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stub.requests, "the request never reached the server"
    start = time.monotonic()
    cancel.set()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - start < 2
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)
    assert stub.hung_up.wait(3)  # the connection was closed, not left to run out


def test_a_cancel_interrupts_the_backoff_wait(stub):
    b = OpenAICompatBackend(settings(stub.url, openai_max_retries=5))  # the real, cancellable pause
    stub.script(Reply(error(503, "busy").body, status=503, headers={"retry-after": "20"}))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(Cancelled), cancellable(cancel):
        b.run(PARSE, Dialogue("x", (), "CREATE TABLE t (a INT)"))
    assert time.monotonic() - start < 5
    b.close()


# --- settings and identity --------------------------------------------------------------------


def test_the_backend_id_names_the_server_the_models_and_the_prompt_version(stub):
    a = backend_from_settings(settings(stub.url))
    b = backend_from_settings(settings(stub.url.replace("127.0.0.1", "localhost")))
    c = backend_from_settings(settings(stub.url, openai_model="other"))
    ids = {backend_id(x) for x in (a, b, c)}
    assert len(ids) == 3
    assert backend_id(a).startswith("openai|planner-m,row=row-m@" + stub.url + "|")
    assert backend_id(a).endswith("|" + a.prompt_version)
    for x in (a, b, c):
        x.close()


def test_the_row_model_defaults_to_the_model():
    b = OpenAICompatBackend(Settings(backend="openai", openai_model="llama3.2"))
    assert (b.planner_model, b.row_model) == ("llama3.2", "llama3.2")
    b.close()


def test_a_cached_answer_is_not_asked_again(stub, tmp_path):
    from engines.llm.cache import AnswerCache

    b = backend(stub.url)
    stub.script(ok(GOOD))
    with AnswerCache(tmp_path) as cache:
        llm = LLM(b, cache=cache)
        assert llm.run(ANSWER, AnswerInput(TEXT, QUESTION)).value == "Yes"
        assert llm.run(ANSWER, AnswerInput(TEXT, QUESTION)).value == "Yes"
    assert len(stub.requests) == 1
    b.close()


def test_settings_refuse_a_base_url_that_is_not_http():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="http"):
        Settings(openai_base_url="file:///etc/passwd")


def test_usage_with_cached_prompt_tokens_is_recorded(stub, openai):
    stub.script(ok(GOOD, prompt_tokens=1200, completion_tokens=10, cached=1024))
    llm = LLM(openai)
    llm.run(ANSWER, AnswerInput(TEXT, QUESTION))
    totals = llm.usage
    assert (totals.calls, totals.input_tokens, totals.output_tokens, totals.cached_input_tokens) == (1, 1200, 10, 1024)
    assert totals.cost_usd is None and totals.unpriced == 1  # a local model has no price


def test_a_reasoning_models_thinking_is_not_the_reply(stub, openai):
    stub.script(ok("<think>The text mentions candles {so yes}.</think>\nA candle-lit place."))
    assert LLM(openai).run(SUMMARY, SummaryInput(TEXT)) == "A candle-lit place."
