"""The claude backend, offline: a real ``anthropic.AsyncAnthropic`` client over a mock HTTP transport.

Faults on the wire (malformed 200s, retries, cancelling a request in flight) are tested against a
stub server in ``test_claude_faults.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import jinja2
import pytest
from anthropic import _base_client

from engines.errors import ConfigurationError, LLMError
from engines.hybridqa.tasks import HYBRID_PARSE, SHORT_ANSWER, ParseInput, ShortAnswerInput
from engines.llm import claude
from engines.llm.claude import ClaudeBackend, extract_json_object, make_claude_backend, render_prompt
from engines.llm.protocol import Answer, Backend, Output, Results, Routed, Turn, Usage, backend_id
from engines.llm.task import Task
from engines.settings import Settings
from engines.spinach.tasks import POLICY, PRUNE_ENTRY, PolicyInput, PruneInput, kept_page
from engines.sql.tasks import CLASSIFY, PARSE, RESPOND, ROUTE, ClassifyInput, Dialogue, RespondInput
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput

# The HTTP library the installed SDK talks through: anthropic 2.x uses the ``httpx2`` fork and
# refuses ``httpx`` objects; older SDKs use ``httpx`` itself.
http: Any = getattr(_base_client, "httpx2", None) or _base_client.httpx

MODEL = "claude-test-model"  # the planner role
ROW_MODEL = "claude-test-row-model"  # the per-row role
SCHEMA = "CREATE TABLE restaurants (name TEXT, cuisines TEXT[], location TEXT, rating REAL)"


@pytest.fixture(autouse=True)
def _no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "ANTHROPIC_API_KEY": None,
        "claude_model": MODEL,
        "claude_row_model": ROW_MODEL,
        "claude_max_retries": 2,
    }
    values.update(overrides)
    return Settings(**values)


def message(text: str, *, input_tokens: int = 11, output_tokens: int = 7, stop_reason: str = "end_turn") -> dict:
    """A Messages API response body."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def error(status: int, kind: str, text: str) -> tuple[int, dict]:
    return status, {"type": "error", "error": {"type": kind, "message": text}}


OVERLOADED = error(529, "overloaded_error", "Overloaded")
RATE_LIMITED = error(429, "rate_limit_error", "Number of requests has exceeded your rate limit")


class FakeAPI:
    """A scripted Messages endpoint: each request takes the next step of the script.

    A step is a response body (answered with 200), a ``(status, body)`` pair, an optional third
    element of headers, or an exception to raise.  The last step repeats forever.
    """

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.requests: list[dict] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(json.loads(request.content))
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, tuple):
            status, body, *rest = step
            return http.Response(status, json=body, headers=rest[0] if rest else None)
        return http.Response(200, json=step)

    @property
    def prompt(self) -> str:
        """The user message of the last request."""
        return self.requests[-1]["messages"][0]["content"]


def backend(api: FakeAPI, sleeps: list[float] | None = None, **overrides: Any) -> ClaudeBackend:
    client = anthropic.AsyncAnthropic(
        api_key="test-key", max_retries=0, http_client=http.AsyncClient(transport=http.MockTransport(api))
    )
    sleep: Callable[[float], None] = sleeps.append if sleeps is not None else _no_sleep
    return ClaudeBackend(settings(**overrides), client=client, sleep=sleep)


def _no_sleep(seconds: float) -> None:  # pragma: no cover - only reached when a test forgets sleeps
    raise AssertionError(f"unexpected sleep({seconds})")


HISTORY = (Turn("thai food in palo alto", "SELECT * FROM restaurants WHERE 'thai' = ANY(cuisines)", "I found 2."),)
RESULTS = Results(
    readback="I searched for Thai restaurants in Palo Alto.",
    columns=("name", "rating", "cuisines"),
    rows=(("Siam Garden", 4.5, ("thai",)), ("Bangkok Bites", None, ("thai", "asian"))),
    total=2,
)


# --- templates -------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "context", "expected"),
    [
        (
            ROUTE,
            {"utterance": "cheaper ones?", "history": HISTORY, "schema": SCHEMA},
            ["cheaper ones?", SCHEMA, "thai food in palo alto", "needs_database"],
        ),
        (
            PARSE,
            {"utterance": "cheaper ones?", "history": HISTORY, "schema": SCHEMA},
            ["cheaper ones?", SCHEMA, HISTORY[0].sql, "PostgreSQL", "= ANY(cuisines)", '"sql"'],
        ),
        (
            CLASSIFY,
            {"value": "asian", "field": "cuisines", "candidates": ["thai", "chinese", "mexican"]},
            ['"asian"', "cuisines", '"thai"', '"chinese"', '"mexican"', '"values"'],
        ),
        (
            ANSWER,
            {"text": "The patio is heated. Dogs are welcome.", "question": "Is there a patio?"},
            ["The patio is heated. Dogs are welcome.", "Is there a patio?", '"Yes"', "null", "evidence"],
        ),
        (SUMMARY, {"text": "The patio is heated. Dogs are welcome."}, ["The patio is heated. Dogs are welcome."]),
        (
            RESPOND,
            {"utterance": "any thai?", "history": HISTORY, "results": RESULTS, "rows": RESULTS.rows, "schema": SCHEMA},
            ["any thai?", RESULTS.readback, "Siam Garden", "Bangkok Bites", "ONLY", SCHEMA],
        ),
    ],
)
def test_each_template_renders_its_inputs(task: Task, context: dict, expected: list[str]) -> None:
    prompt = render_prompt(task.template, package=task.package, **context)
    for fragment in expected:
        assert fragment in prompt, fragment
    assert "\n\n\n" not in prompt


# every task of the agent packages whose prompt a real backend renders
TASKS = (ROUTE, PARSE, CLASSIFY, RESPOND, ANSWER, SUMMARY, HYBRID_PARSE, SHORT_ANSWER, POLICY, PRUNE_ENTRY)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_templates_are_strict_about_missing_inputs(task: Task) -> None:
    with pytest.raises(jinja2.UndefinedError):
        render_prompt(task.template, package=task.package)


def test_json_in_prompts_is_not_html_escaped() -> None:
    prompt = render_prompt(
        "classify", package=CLASSIFY.package, value="fish & chips", field="cuisines", candidates=["<b>'x'</b>"]
    )
    assert '"fish & chips"' in prompt and "\"<b>'x'</b>\"" in prompt


def test_respond_prompt_without_results_and_with_zero_rows() -> None:
    direct = render_prompt(
        "respond", package=RESPOND.package, utterance="hello!", history=(), results=None, rows=(), schema=""
    )
    assert "does not need the database" in direct and "<conversation>" not in direct
    empty = Results("I searched for Thai restaurants in Fresno.", ("name",), (), 0)
    nothing = render_prompt(
        "respond", package=RESPOND.package, utterance="thai in fresno", history=(), results=empty, rows=(), schema=""
    )
    assert "nothing matched" in nothing and "relaxing" in nothing and empty.readback in nothing


# --- the six functions -----------------------------------------------------


def test_backend_satisfies_the_protocol() -> None:
    b = backend(FakeAPI(message("{}")))
    assert isinstance(b, Backend)
    assert (b.name, b.model, b.prompt_version) == ("claude", f"{MODEL},row={ROW_MODEL}", claude.PROMPT_VERSION)
    assert backend_id(b) == f"claude|{MODEL},row={ROW_MODEL}|{claude.PROMPT_VERSION}"


def test_the_default_models_are_current_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CS224V_CLAUDE_MODEL", raising=False)
    monkeypatch.delenv("CS224V_CLAUDE_ROW_MODEL", raising=False)
    s = Settings()
    assert (s.claude_model, s.claude_row_model) == ("claude-sonnet-5-5", "claude-haiku-4-5")
    monkeypatch.setenv("CS224V_CLAUDE_MODEL", "claude-opus-5")
    monkeypatch.setenv("CS224V_CLAUDE_ROW_MODEL", "claude-sonnet-5-5")
    s = Settings()
    assert (s.claude_model, s.claude_row_model) == ("claude-opus-5", "claude-sonnet-5-5")


@pytest.mark.parametrize(
    ("function", "role"),
    [
        ("route", MODEL),
        ("parse", MODEL),
        ("classify", MODEL),
        ("respond", MODEL),
        ("policy", MODEL),
        ("hybrid_parse", MODEL),
        ("prune_entry", MODEL),
        ("answer", ROW_MODEL),
        ("summary", ROW_MODEL),
        ("short_answer", ROW_MODEL),
    ],
)
def test_per_row_calls_use_the_row_model_and_the_rest_the_planner(function: str, role: str) -> None:
    replies = {
        "route": '{"needs_database": true, "reason": "r"}',
        "parse": '{"sql": "SELECT 1"}',
        "classify": '{"values": []}',
        "respond": "Hi.",
        "summary": "Short.",
        "answer": '{"value": null}',
        "policy": '{"thought": "t", "action_name": "stop", "action_argument": ""}',
        "hybrid_parse": '{"sql": "SELECT 1"}',
        "short_answer": '{"answer": "x"}',
        "prune_entry": '{"keep": [0]}',
    }
    api = FakeAPI(message(replies[function]))
    b = backend(api)
    calls = {
        "route": lambda: b.run(ROUTE, Dialogue("x", (), SCHEMA)),
        "parse": lambda: b.run(PARSE, Dialogue("x", (), SCHEMA)),
        "classify": lambda: b.run(CLASSIFY, ClassifyInput("x", "cuisines", ("thai",))),
        "respond": lambda: b.run(RESPOND, RespondInput("x", (), None)),
        "summary": lambda: b.run(SUMMARY, SummaryInput("text")),
        "answer": lambda: b.run(ANSWER, AnswerInput("text", "q?")),
        "policy": lambda: b.run(POLICY, PolicyInput("q", ())),
        "hybrid_parse": lambda: b.run(HYBRID_PARSE, ParseInput("q", SCHEMA)),
        "short_answer": lambda: b.run(SHORT_ANSWER, ShortAnswerInput("q", RESULTS)),
        "prune_entry": lambda: b.run(PRUNE_ENTRY, PruneInput("q", "a\nb")),
    }
    calls[function]()
    assert api.requests[0]["model"] == role


def test_both_models_are_in_the_backend_id() -> None:
    base = backend_id(backend(FakeAPI(message("{}"))))
    assert backend_id(backend(FakeAPI(message("{}")), claude_row_model="claude-other")) != base
    assert backend_id(backend(FakeAPI(message("{}")), claude_model="claude-other")) != base


def test_route_sends_the_rendered_prompt_and_parses_the_reply() -> None:
    api = FakeAPI(message('{"needs_database": true, "reason": "It refines the search."}', input_tokens=120))
    out = backend(api).run(ROUTE, Dialogue("cheaper ones?", tuple(HISTORY), SCHEMA))
    assert out == Output(Routed(True, "It refines the search."), Usage(120, 7), MODEL)
    sent = api.requests[0]
    assert sent["model"] == MODEL
    assert sent["max_tokens"] == ROUTE.max_tokens == 256
    assert sent["system"] == claude.system_prompt()
    assert sent["messages"] == [
        {
            "role": "user",
            "content": render_prompt(
                "route", package=ROUTE.package, utterance="cheaper ones?", history=HISTORY, schema=SCHEMA
            ),
        }
    ]


def test_parse_returns_the_sql_and_shows_the_history() -> None:
    sql = "SELECT * FROM restaurants WHERE 'thai' = ANY(cuisines) AND price = 'cheap';"
    api = FakeAPI(message(json.dumps({"sql": sql})))
    out = backend(api).run(PARSE, Dialogue("cheaper ones?", tuple(HISTORY), SCHEMA))
    assert out.value == sql.rstrip(";")
    assert HISTORY[0].sql in api.prompt and SCHEMA in api.prompt


def test_classify_keeps_only_candidates() -> None:
    api = FakeAPI(message('{"values": ["thai", "Chinese", "korean", "thai", 7]}'))
    out = backend(api).run(CLASSIFY, ClassifyInput("asian", "cuisines", ("thai", "chinese", "mexican")))
    assert out.value == ("thai", "chinese")  # korean is not a candidate; case mapped onto the candidate
    assert '"mexican"' in api.prompt


def test_classify_with_no_match() -> None:
    out = backend(FakeAPI(message('{"values": []}'))).run(CLASSIFY, ClassifyInput("martian", "cuisines", ("thai",)))
    assert out.value == ()


def test_answer_with_value_and_verbatim_evidence() -> None:
    text = "The patio is heated.  Dogs are welcome. Parking is hard."
    reply = {"value": "yes", "evidence": ["The patio is heated.", "Invented sentence about a patio."]}
    out = backend(FakeAPI(message(json.dumps(reply)))).run(ANSWER, AnswerInput(text, "Is there a patio?"))
    assert out.value == Answer("Yes", ("The patio is heated.",))  # the invented sentence is dropped


def test_answer_null_is_unknown() -> None:
    out = backend(FakeAPI(message('{"value": null, "evidence": []}'))).run(
        ANSWER, AnswerInput("Dogs are welcome.", "Is there a patio?")
    )
    assert out.value == Answer(None)
    assert out.value.unknown and out.value.render() == "Unknown"


def test_answer_extracted_value() -> None:
    api = FakeAPI(message('{"value": "Pad thai", "evidence": ["Try the pad thai."]}'))
    out = backend(api).run(ANSWER, AnswerInput("Try the pad thai.", "What dish is recommended?"))
    assert out.value == Answer("Pad thai", ("Try the pad thai.",))


def test_summary_and_respond_return_plain_text() -> None:
    api = FakeAPI(message("  A heated patio; dogs welcome.\n"), message("I found Siam Garden and Bangkok Bites."))
    b = backend(api)
    assert (
        b.run(SUMMARY, SummaryInput("The patio is heated. Dogs are welcome.")).value == "A heated patio; dogs welcome."
    )
    out = b.run(RESPOND, RespondInput("any thai?", tuple(HISTORY), RESULTS))
    assert out.value == "I found Siam Garden and Bangkok Bites."
    assert RESULTS.readback in api.prompt and "Siam Garden" in api.prompt


def test_respond_without_results() -> None:
    api = FakeAPI(message("Hello! Ask me about restaurants."))
    assert backend(api).run(RESPOND, RespondInput("hi", (), None)).value == "Hello! Ask me about restaurants."
    assert "does not need the database" in api.prompt and "<schema>" not in api.prompt


def test_a_direct_reply_is_shown_what_the_database_holds() -> None:
    api = FakeAPI(message("Hello! Ask me about courses."))
    backend(api).run(RESPOND, RespondInput("hello", (), None, "CREATE TABLE courses (course_id TEXT, title TEXT)"))
    assert "<schema>\nCREATE TABLE courses (course_id TEXT, title TEXT)\n</schema>" in api.prompt


def test_every_output_carries_usage() -> None:
    api = FakeAPI(message('{"values": ["thai"]}', input_tokens=321, output_tokens=9))
    assert backend(api).run(CLASSIFY, ClassifyInput("thai", "cuisines", ("thai",))).usage == Usage(321, 9)


# --- parsing replies -------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"needs_database": false, "reason": "A greeting."}\n```',
        '```\n{"needs_database": false, "reason": "A greeting."}\n```',
        'Here is my answer:\n```json\n{"needs_database": false, "reason": "A greeting."}\n```\nHope it helps.',
        'Sure. {"needs_database": false, "reason": "A greeting."} That is all.',
    ],
)
def test_fenced_or_wrapped_json_is_accepted(reply: str) -> None:
    assert backend(FakeAPI(message(reply))).run(ROUTE, Dialogue("hello", (), SCHEMA)).value == Routed(
        False, "A greeting."
    )


@pytest.mark.parametrize(
    ("function", "reply", "fragment"),
    [
        ("route", "I think it does need the database.", "route()"),
        ("route", '{"needs_database": "maybe", "reason": "?"}', "needs_database"),
        ("parse", "SELECT * FROM restaurants", "parse()"),
        ("parse", '{"query": "SELECT 1"}', '"sql"'),
        ("classify", '["thai"]', "classify()"),
        ("answer", '{"evidence": []}', '"value"'),
        ("answer", '{"value": ["a", "b"]}', "answer()"),
    ],
)
def test_malformed_output_raises_llm_error(function: str, reply: str, fragment: str) -> None:
    b = backend(FakeAPI(message(reply)))
    calls = {
        "route": lambda: b.run(ROUTE, Dialogue("x", (), SCHEMA)),
        "parse": lambda: b.run(PARSE, Dialogue("x", (), SCHEMA)),
        "classify": lambda: b.run(CLASSIFY, ClassifyInput("x", "cuisines", ("thai",))),
        "answer": lambda: b.run(ANSWER, AnswerInput("text", "question?")),
    }
    with pytest.raises(LLMError) as caught:
        calls[function]()
    message_ = str(caught.value)
    assert f"{function}()" in message_ and fragment in message_
    assert repr(" ".join(reply.split()))[:40] in message_  # quotes what came back


def test_an_excerpt_of_a_long_reply_is_shortened() -> None:
    with pytest.raises(LLMError) as caught:
        backend(FakeAPI(message("no json here " * 100))).run(PARSE, Dialogue("x", (), SCHEMA))
    assert len(str(caught.value)) < 300


def test_a_reply_cut_off_at_max_tokens_says_so() -> None:
    with pytest.raises(LLMError, match="cut off"):
        backend(FakeAPI(message('{"sql": "SELECT', stop_reason="max_tokens"))).run(PARSE, Dialogue("x", (), SCHEMA))


def test_empty_text_raises() -> None:
    with pytest.raises(LLMError, match=r"summary\(\)"):
        backend(FakeAPI(message("   "))).run(SUMMARY, SummaryInput("text"))


def test_extract_json_object_prefers_the_first_object() -> None:
    assert extract_json_object('{"a": 1} and {"b": 2}', "route") == {"a": 1}
    assert extract_json_object('noise { not json } then {"b": [1, {"c": 2}]}', "route") == {"b": [1, {"c": 2}]}


# --- retries and errors ----------------------------------------------------


def test_429_then_success_retries_once_with_backoff() -> None:
    sleeps: list[float] = []
    api = FakeAPI(RATE_LIMITED, message('{"values": ["thai"]}'))
    out = backend(api, sleeps).run(CLASSIFY, ClassifyInput("thai", "cuisines", ("thai",)))
    assert out.value == ("thai",)
    assert len(api.requests) == 2
    assert sleeps == [1.0]


def test_retry_after_header_is_honoured() -> None:
    sleeps: list[float] = []
    api = FakeAPI((*RATE_LIMITED, {"retry-after": "7"}), message('{"values": []}'))
    backend(api, sleeps).run(CLASSIFY, ClassifyInput("x", "cuisines", ("thai",)))
    assert sleeps == [7.0]


def test_529_forever_gives_up_after_max_retries_plus_one_attempts() -> None:
    sleeps: list[float] = []
    api = FakeAPI(OVERLOADED)
    with pytest.raises(LLMError, match=r"Anthropic API overloaded \(529\) after 3 attempts"):
        backend(api, sleeps, claude_max_retries=2).run(ROUTE, Dialogue("x", (), SCHEMA))
    assert len(api.requests) == 3
    assert sleeps == [1.0, 2.0]  # exponential


def test_backoff_is_capped() -> None:
    sleeps: list[float] = []
    api = FakeAPI(error(503, "api_error", "unavailable"))
    client = anthropic.AsyncAnthropic(
        api_key="k", max_retries=0, http_client=http.AsyncClient(transport=http.MockTransport(api))
    )
    b = ClaudeBackend(settings(claude_max_retries=6), client=client, sleep=sleeps.append, base_delay=0.5, max_delay=4.0)
    with pytest.raises(LLMError, match=r"\(503\) after 7 attempts"):
        b.run(SUMMARY, SummaryInput("text"))
    assert sleeps == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried(status: int) -> None:
    sleeps: list[float] = []
    api = FakeAPI(error(status, "api_error", "oops"), message("A summary."))
    assert backend(api, sleeps).run(SUMMARY, SummaryInput("text")).value == "A summary."
    assert sleeps == [1.0]


def test_401_fails_at_once() -> None:
    sleeps: list[float] = []
    api = FakeAPI(error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(LLMError, match=r"rejected the key \(401\)"):
        backend(api, sleeps).run(SUMMARY, SummaryInput("text"))
    assert len(api.requests) == 1 and sleeps == []


def test_400_fails_at_once_with_the_api_message() -> None:
    sleeps: list[float] = []
    api = FakeAPI(error(400, "invalid_request_error", "max_tokens: must be positive"))
    with pytest.raises(LLMError, match=r"\(400\): max_tokens: must be positive"):
        backend(api, sleeps).run(SUMMARY, SummaryInput("text"))
    assert len(api.requests) == 1 and sleeps == []


def test_timeouts_are_retried() -> None:
    sleeps: list[float] = []
    api = FakeAPI(http.ReadTimeout("slow"), message('{"value": null, "evidence": []}'))
    assert backend(api, sleeps).run(ANSWER, AnswerInput("text", "q?")).value == Answer(None)
    assert len(api.requests) == 2 and sleeps == [1.0]


def test_timeouts_forever_give_up() -> None:
    sleeps: list[float] = []
    api = FakeAPI(http.ReadTimeout("slow"))
    with pytest.raises(LLMError, match=r"did not answer within 60s, after 2 attempts"):
        backend(api, sleeps, claude_max_retries=1).run(ANSWER, AnswerInput("text", "q?"))
    assert len(api.requests) == 2


def test_connection_errors_are_retried() -> None:
    sleeps: list[float] = []
    api = FakeAPI(http.ConnectError("connection refused"))
    with pytest.raises(LLMError, match=r"Could not reach the Anthropic API after 3 attempts"):
        backend(api, sleeps).run(SUMMARY, SummaryInput("text"))
    assert sleeps == [1.0, 2.0]


def test_no_retries_configured_means_one_attempt() -> None:
    api = FakeAPI(OVERLOADED)
    with pytest.raises(LLMError, match=r"overloaded \(529\) after 1 attempt\b"):
        backend(api, [], claude_max_retries=0).run(SUMMARY, SummaryInput("text"))
    assert len(api.requests) == 1


# --- construction ----------------------------------------------------------


def test_no_key_is_a_configuration_error_with_a_plain_message() -> None:
    expected = "The claude backend needs an Anthropic API key: set ANTHROPIC_API_KEY (or choose the sim backend)."
    with pytest.raises(ConfigurationError) as caught:
        make_claude_backend(settings())
    assert str(caught.value) == expected
    with pytest.raises(ConfigurationError):
        ClaudeBackend(settings())


def test_a_key_builds_a_client_without_sdk_retries() -> None:
    b = make_claude_backend(settings(ANTHROPIC_API_KEY="sk-ant-test", claude_timeout_s=12.5))
    assert isinstance(b._client, anthropic.AsyncAnthropic)  # so that a request in flight can be cancelled
    assert b._client.max_retries == 0
    assert b._client.timeout == 12.5
    assert b._client.api_key == "sk-ant-test"


def test_an_injected_client_with_sdk_retries_has_them_switched_off() -> None:
    api = FakeAPI(OVERLOADED)
    client = anthropic.AsyncAnthropic(
        api_key="k", max_retries=3, http_client=http.AsyncClient(transport=http.MockTransport(api))
    )
    b = make_claude_backend(settings(claude_max_retries=0), client=client, sleep=[].append)
    with pytest.raises(LLMError):
        b.run(SUMMARY, SummaryInput("text"))
    assert len(api.requests) == 1


# --- SPINACH: the entity page pruned to the question ----------------------------------------------

PAGE = "label: Anna Varga\ndescription: fictional violinist\nP31 instance of: human\nP1303 instrument: violin\nP2048 height: 170"


def test_prune_entry_renders_numbered_lines_and_keeps_what_the_model_chose() -> None:
    api = FakeAPI(message('{"keep": [3, 99, "2"]}'))
    out = backend(api).run(PRUNE_ENTRY, PruneInput("Which instruments does Anna Varga play?", PAGE))
    assert "3: P1303 instrument: violin" in api.prompt and "Which instruments" in api.prompt
    assert out.value == (0, 1, 2, 3)  # label and description always; 99 is not a line


def test_prune_entry_through_the_client_returns_the_pruned_page() -> None:
    from engines.llm.client import LLM

    api = FakeAPI(message('{"keep": [3]}'))
    text = kept_page(PAGE, LLM(backend(api)).run(PRUNE_ENTRY, PruneInput("Which instruments?", PAGE)))
    assert text.splitlines() == ["label: Anna Varga", "description: fictional violinist", "P1303 instrument: violin"]


def test_prune_entry_malformed_reply_is_an_llm_error() -> None:
    with pytest.raises(LLMError, match="prune_entry"):
        backend(FakeAPI(message("I would keep the violin."))).run(PRUNE_ENTRY, PruneInput("q", PAGE))


def test_a_sync_client_is_refused_plainly() -> None:
    client = anthropic.Anthropic(
        api_key="k", max_retries=0, http_client=http.Client(transport=http.MockTransport(FakeAPI(message("x"))))
    )
    with pytest.raises(TypeError, match="AsyncAnthropic"):
        ClaudeBackend(settings(), client=client)


def test_an_unknown_model_names_the_role_and_its_setting() -> None:
    missing = (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: nope"}})
    with pytest.raises(LLMError, match=rf"{ROW_MODEL}.*CS224V_CLAUDE_ROW_MODEL"):
        backend(FakeAPI(missing)).run(ANSWER, AnswerInput("text", "q?"))
    with pytest.raises(LLMError, match=rf"'{MODEL}'.*CS224V_CLAUDE_MODEL "):
        backend(FakeAPI(missing)).run(PARSE, Dialogue("x", (), SCHEMA))
