"""The claude backend under faults, against a stub Messages API on 127.0.0.1.

The stub speaks the wire format (``POST /v1/messages``, JSON bodies, error objects, headers) and
the backend talks to it through the real ``anthropic`` SDK with ``base_url`` pointed at it: no
mock of our own code.  Covered: malformed 200s get a message that names what was wrong, the
statuses the SDK retries are retried (408 among them), a bad reply costs only its own call (it
becomes Unknown through ``LLM.answer``), and a cancel aborts a request in flight at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest

from engines.errors import Cancelled, LLMError, ReplyError
from engines.events import CallFailed, CallStarted
from engines.llm.claude import ClaudeBackend
from engines.llm.client import LLM
from engines.llm.protocol import Answer
from engines.llm.waiting import cancellable
from engines.settings import Settings
from engines.sql.tasks import PARSE, Dialogue
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput
from tests.engines.llm.test_claude import MODEL, ROW_MODEL, message  # the Messages API body the other Claude tests use
from tests.loopback_http import LoopbackServer, Reply


def error_body(kind: str, text: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": text}}


Step = Reply  # one HTTP answer of the stub (tests.loopback_http.Reply)


def ok(text: str, **kw: Any) -> Step:
    return Step(message(text, **kw))


class StubAPI(LoopbackServer):
    """A Messages API on 127.0.0.1: each request is answered by ``responder(request_json)``.

    ``requests`` holds the decoded request bodies; ``hangups`` counts requests whose client closed
    the connection while the stub was still delaying its answer.
    """

    name = "stub-anthropic"

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.models: list[str] | None = None  # what GET /v1/models lists (None: 404)
        self.model_lists = 0  # GET /v1/models requests answered
        super().__init__()
        self.responder = lambda _request: ok("{}")

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Step:
        if method == "GET":
            return self._models(path)
        request = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append(request)
        return self.responder(request)

    def _models(self, path: str) -> Step:
        if path.split("?")[0] != "/v1/models" or self.models is None:
            return Step(error_body("not_found_error", path), status=404)
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"} for m in self.models
        ]
        with self._lock:
            self.model_lists += 1
        return Step(
            {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )


@pytest.fixture
def stub() -> Iterator[StubAPI]:
    api = StubAPI()
    yield api
    api.close()


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "ANTHROPIC_API_KEY": None,
        "claude_model": MODEL,
        "claude_row_model": ROW_MODEL,
        "claude_max_retries": 2,
    }
    values.update(overrides)
    return Settings(**values)


def claude_at(
    url: str, *, sleep: Callable[[float], None] | None = None, timeout_s: float = 60.0, **overrides: Any
) -> ClaudeBackend:
    """The claude backend with the real SDK client pointed at ``url``."""
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=url, max_retries=0, timeout=timeout_s)
    return ClaudeBackend(
        settings(claude_timeout_s=timeout_s, **overrides),
        client=client,
        sleep=sleep if sleep is not None else _no_sleep,
    )


def _no_sleep(seconds: float) -> None:  # pragma: no cover - only reached when a test forgets sleeps
    raise AssertionError(f"unexpected sleep({seconds})")


@pytest.fixture
def claude(stub: StubAPI) -> Iterator[ClaudeBackend]:
    backend = claude_at(stub.url, sleep=[].append)
    yield backend
    backend.close()


# --- malformed 200s --------------------------------------------------------------------------

MALFORMED = [
    pytest.param(
        Step(b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html; charset=utf-8"),
        "whose body is not JSON (text/html): '<html><body><h1>502 Bad Gateway",
        id="html",
    ),
    pytest.param(Step(b""), "whose body is empty (application/json)", id="empty"),
    pytest.param(Step(b"   \n"), "whose body is empty", id="blank"),
    pytest.param(
        Step(b"\xff\xfe\x00garbage", content_type="application/octet-stream"),
        "whose body is not JSON (application/octet-stream)",
        id="not-utf8",
    ),
    pytest.param(
        Step(b'{"id": "msg_1", "content": [{"type": "text", "te'),
        "whose body is not JSON (application/json)",
        id="truncated-json",
    ),
    pytest.param(Step([message('{"value": "Yes"}')]), "is a JSON array, not a message object", id="json-list"),
    pytest.param(Step(b"[" * 100_000 + b"]" * 100_000), "is JSON nested too deeply to read", id="deeply-nested"),
    pytest.param(Step("just a string"), "is a JSON string, not a message object", id="json-string"),
    pytest.param(Step(None), "is a JSON null, not a message object", id="json-null"),
    pytest.param(
        Step({**message("x"), "content": None}), 'has a "content" that is null, not a list of blocks', id="content-null"
    ),
    pytest.param(
        Step({**message("x"), "content": "Yes"}), 'has a "content" that is string, not a list', id="content-string"
    ),
    pytest.param(
        Step({"id": "msg_1", "type": "message", "role": "assistant"}),
        'is a message with no "content"',
        id="missing-content",
    ),
    pytest.param(Step({}), 'is a message with no "content"', id="empty-object"),
    pytest.param(
        Step({**message("x"), "content": ["Yes"]}),
        'has a "content" block that is a JSON string, not an object',
        id="block-not-object",
    ),
    pytest.param(
        Step({**message("x"), "content": [{"type": "text", "text": None}]}),
        'has a text block whose "text" is null, not a string',
        id="text-null",
    ),
    pytest.param(
        Step({**message("x"), "content": [{"type": "text"}]}),
        'has a text block whose "text" is null',
        id="text-missing",
    ),
    pytest.param(
        Step(error_body("overloaded_error", "Overloaded")), "whose body is an error: Overloaded", id="error-in-200"
    ),
    pytest.param(
        Step({**message("x"), "content": []}), "answer() reply has no text (stop reason: end_turn)", id="no-blocks"
    ),
    pytest.param(
        Step({**message("x"), "content": [{"type": "thinking", "thinking": "hmm"}], "stop_reason": "refusal"}),
        "answer() reply has no text (stop reason: refusal)",
        id="refusal",
    ),
    pytest.param(
        ok("I think the answer is yes, there is a patio."),
        "answer() reply is not the JSON object asked for",
        id="text-without-json",
    ),
    pytest.param(ok('{"evidence": []}'), 'answer() reply has no "value"', id="json-missing-value"),
    pytest.param(ok('{"value": "Yes", "evid', stop_reason="max_tokens"), "cut off at 1024 tokens", id="cut-off"),
]


@pytest.mark.parametrize(("step", "expected"), MALFORMED)
def test_a_malformed_200_names_what_was_wrong(stub: StubAPI, claude: ClaudeBackend, step: Step, expected: str) -> None:
    stub.script(step)
    with pytest.raises(ReplyError) as caught:
        claude.run(ANSWER, AnswerInput("The patio is heated.", "Is there a patio?"))
    text = str(caught.value)
    assert expected in text
    assert "Error:" not in text and "AttributeError" not in text and "Traceback" not in text
    assert len(text) < 400
    assert len(stub.requests) == 1  # not retried: a malformed 200 is this call's failure


@pytest.mark.parametrize(
    ("step", "expected"),
    [p for p in MALFORMED if p.id in ("html", "empty", "json-list", "content-null", "text-without-json", "cut-off")],
)
def test_through_the_llm_a_malformed_reply_is_a_failed_call_and_unknown(
    stub: StubAPI, claude: ClaudeBackend, step: Step, expected: str
) -> None:
    stub.script(step)
    events: list = []
    answer = LLM(claude, emit=events.append).run(
        ANSWER, AnswerInput("The patio is heated.", "Is there a patio?"), row_key="#7 Patio Place"
    )
    assert answer == Answer(None)
    started, failed = events
    assert isinstance(started, CallStarted) and started.row_key == "#7 Patio Place"
    assert isinstance(failed, CallFailed) and failed.call_id == started.call_id and expected in failed.error


def test_a_malformed_summary_is_none_and_a_failed_call(stub: StubAPI, claude: ClaudeBackend) -> None:
    stub.script(Step(b"<html>oops</html>", content_type="text/html"))
    events: list = []
    assert LLM(claude, emit=events.append).run(SUMMARY, SummaryInput("The patio is heated.")) is None
    assert isinstance(events[-1], CallFailed) and "not JSON (text/html)" in events[-1].error


def test_a_malformed_reply_to_a_non_row_function_still_raises(stub: StubAPI, claude: ClaudeBackend) -> None:
    """Only answer() and summary() have a 'row' to lose; parse() failing fails its turn."""
    stub.script(Step(b"<html>oops</html>", content_type="text/html"))
    with pytest.raises(LLMError, match=r"not JSON \(text/html\)"):
        LLM(claude).run(PARSE, Dialogue("thai food", (), "CREATE TABLE t (x INT)"))


def test_a_well_formed_reply_still_parses(stub: StubAPI, claude: ClaudeBackend) -> None:
    reply = message('{"value": "Yes", "evidence": ["The patio is heated."]}', input_tokens=50, output_tokens=9)
    reply["content"].insert(0, {"type": "thinking", "thinking": "The text mentions a patio.", "signature": "s"})
    reply["usage"]["cache_read_input_tokens"] = 3
    stub.script(Step(reply))
    out = claude.run(ANSWER, AnswerInput("The patio is heated.", "Is there a patio?"))
    assert out.value == Answer("Yes", ("The patio is heated.",))
    # input_tokens counts every prompt token: the 50 not cached and the 3 read from the cache
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cached_input_tokens) == (53, 9, 3)
    sent = stub.requests[0]
    assert sent["model"] == ROW_MODEL and sent["messages"][0]["role"] == "user"  # answer() is a per-row call


# --- retries -----------------------------------------------------------------------------------

RETRIED = [408, 409, 429, 500, 502, 503, 504, 520, 529]


@pytest.mark.parametrize("status", RETRIED)
def test_the_statuses_the_sdk_retries_are_retried(stub: StubAPI, status: int) -> None:
    sleeps: list[float] = []
    backend = claude_at(stub.url, sleep=sleeps.append)
    stub.script(Step(error_body("api_error", "try again"), status=status), ok('{"value": null, "evidence": []}'))
    assert backend.run(ANSWER, AnswerInput("text", "q?")).value == Answer(None)
    assert len(stub.requests) == 2 and sleeps == [1.0]
    backend.close()


def test_408_forever_gives_up_with_a_message(stub: StubAPI) -> None:
    sleeps: list[float] = []
    backend = claude_at(stub.url, sleep=sleeps.append, claude_max_retries=2)
    stub.script(Step(error_body("timeout_error", "Request timed out"), status=408))
    with pytest.raises(LLMError, match=r"Anthropic API request timeout \(408\) after 3 attempts"):
        backend.run(SUMMARY, SummaryInput("text"))
    assert len(stub.requests) == 3 and sleeps == [1.0, 2.0]
    backend.close()


@pytest.mark.parametrize(
    ("status", "header", "retried"), [(503, "false", False), (400, "true", True), (404, "false", False)]
)
def test_the_server_s_x_should_retry_is_obeyed(stub: StubAPI, status: int, header: str, retried: bool) -> None:
    sleeps: list[float] = []
    backend = claude_at(stub.url, sleep=sleeps.append)
    stub.script(
        Step(error_body("api_error", "nope"), status=status, headers={"x-should-retry": header}), ok("A summary.")
    )
    if retried:
        assert backend.run(SUMMARY, SummaryInput("text")).value == "A summary."
        assert len(stub.requests) == 2
    else:
        with pytest.raises(LLMError, match=rf"\({status}\)"):
            backend.run(SUMMARY, SummaryInput("text"))
        assert len(stub.requests) == 1 and sleeps == []
    backend.close()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "4500"}, 4.5),
        ({"retry-after": "6"}, 6.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 1.0),  # a date in the past: our own backoff
        ({"retry-after": "soon"}, 1.0),
    ],
)
def test_retry_after_headers(stub: StubAPI, headers: dict[str, str], expected: float) -> None:
    sleeps: list[float] = []
    backend = claude_at(stub.url, sleep=sleeps.append)
    stub.script(Step(error_body("rate_limit_error", "slow down"), status=429, headers=headers), ok("A summary."))
    backend.run(SUMMARY, SummaryInput("text"))
    assert sleeps == [expected]
    backend.close()


def test_413_loses_only_its_own_call(stub: StubAPI, claude: ClaudeBackend) -> None:
    stub.script(
        Step(error_body("request_too_large", "Request exceeds the maximum allowed number of bytes."), status=413)
    )
    events: list = []
    assert LLM(claude, emit=events.append).run(ANSWER, AnswerInput("a very long text", "q?")) == Answer(None)
    assert "too large (413)" in events[-1].error and len(stub.requests) == 1


def test_401_is_not_a_row_error(stub: StubAPI, claude: ClaudeBackend) -> None:
    stub.script(Step(error_body("authentication_error", "invalid x-api-key"), status=401))
    with pytest.raises(LLMError, match=r"rejected the key \(401\)") as caught:
        LLM(claude).run(ANSWER, AnswerInput("text", "q?"))
    assert not isinstance(caught.value, ReplyError)


# --- cancelling --------------------------------------------------------------------------------


def test_cancel_aborts_a_request_in_flight(stub: StubAPI, claude: ClaudeBackend) -> None:
    """The stub takes 30 s to answer; a cancel 0.2 s in returns within a second and hangs up."""
    stub.script(Step(message('{"value": "Yes", "evidence": []}'), delay_s=30))
    cancel = threading.Event()
    events: list = []
    llm = LLM(claude, cancel=cancel, emit=events.append)
    cancelled_at: list[float] = []

    def press_esc() -> None:
        cancelled_at.append(time.monotonic())
        cancel.set()

    threading.Timer(0.2, press_esc).start()
    with pytest.raises(Cancelled):
        llm.run(ANSWER, AnswerInput("The patio is heated.", "Is there a patio?"))
    returned_at = time.monotonic()
    assert cancelled_at and returned_at - cancelled_at[0] < 1.0
    assert isinstance(events[-1], CallFailed) and events[-1].error == "Cancelled."
    assert stub.hung_up.wait(5), "the HTTP request was left running"
    assert stub.hangups == 1 and len(stub.requests) == 1


def test_the_backend_can_be_used_again_after_a_cancel(stub: StubAPI, claude: ClaudeBackend) -> None:
    stub.script(Step(message("slow"), delay_s=30), ok("A summary."))
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    with cancellable(cancel), pytest.raises(Cancelled):
        claude.run(SUMMARY, SummaryInput("text"))
    assert claude.run(SUMMARY, SummaryInput("text")).value == "A summary."


def test_cancel_stops_a_retry_wait(stub: StubAPI) -> None:
    """The default sleep is the cancellable pause: a long retry-after does not hold Esc up."""
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=stub.url, max_retries=0)
    backend = ClaudeBackend(settings(), client=client)  # the real, cancellable wait
    stub.script(Step(error_body("overloaded_error", "Overloaded"), status=529, headers={"retry-after": "25"}))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(Cancelled):
        LLM(backend, cancel=cancel).run(SUMMARY, SummaryInput("text"))
    assert time.monotonic() - start < 2.0 and len(stub.requests) == 1
    backend.close()


def test_a_timeout_is_still_a_timeout(stub: StubAPI) -> None:
    """Without a cancel the SDK's own timeout ends a request that hangs."""
    backend = claude_at(stub.url, sleep=[].append, timeout_s=0.3, claude_max_retries=1)
    stub.script(Step(message("slow"), delay_s=30))
    with pytest.raises(LLMError, match=r"did not answer within 0.3s, after 2 attempts"):
        backend.run(SUMMARY, SummaryInput("text"))
    assert len(stub.requests) == 2
    backend.close()


def test_calls_from_many_threads_share_the_client(stub: StubAPI, claude: ClaudeBackend) -> None:
    def respond(request: dict) -> Step:
        number = re.search(r"text number (\d+)", request["messages"][0]["content"])
        return ok(f"Summary {number.group(1) if number else '?'}.")

    stub.responder = respond
    results: dict[int, Any] = {}

    def work(i: int) -> None:
        results[i] = claude.run(SUMMARY, SummaryInput(f"text number {i}")).value

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {i: f"Summary {i}." for i in range(12)} and len(stub.requests) == 12


# --- the I/O loop the requests run on --------------------------------------------------------


def test_run_async_returns_results_and_raises_the_coroutine_s_own_errors() -> None:
    import asyncio

    from engines.llm.waiting import run_async

    async def value() -> int:
        await asyncio.sleep(0.01)
        return 7

    async def times_out() -> None:
        await asyncio.sleep(0.12)  # longer than a poll: the wait must not mistake its TimeoutError for its own
        raise TimeoutError("the coroutine's own")

    cancel = threading.Event()
    assert run_async(value()) == 7
    with cancellable(cancel):
        assert run_async(value()) == 7
        with pytest.raises(TimeoutError, match="the coroutine's own"):
            run_async(times_out())


def test_run_async_under_a_set_cancel_flag_does_not_start() -> None:
    from engines.llm.waiting import run_async

    started: list[bool] = []

    async def work() -> None:
        started.append(True)

    cancel = threading.Event()
    cancel.set()
    with cancellable(cancel), pytest.raises(Cancelled):
        run_async(work())
    assert started == []
