"""The ``claude`` backend: the six LLM functions answered by Claude through the ``anthropic`` SDK.

Each function renders its prompt from a jinja2 template in ``engines/llm/prompts/`` (one template
per function, plus the shared ``_system.j2`` and ``_dialogue.j2``), sends it with
``client.messages.create`` and parses the model's reply into the value the protocol promises:

* ``route``    -- asks for ``{"needs_database": bool, "reason": str}``; value :class:`Routed`
* ``parse``    -- asks for ``{"sql": str}``; value ``str``, one PostgreSQL-dialect statement
* ``classify`` -- asks for ``{"values": [...]}``; value ``tuple[str, ...]``, candidates only
* ``answer``   -- asks for ``{"value": str | null, "evidence": [...]}``; value :class:`Answer`
  (null is Unknown; evidence keeps only sentences found verbatim in the text)
* ``summary``  -- plain text; value ``str``
* ``respond``  -- plain text built only from the rows shown; value ``str``
* ``policy``   -- SPINACH's step: asks for ``{"thought", "action_name", "action_argument"}``;
  value :class:`PolicyAction` (the history is shown as SPINACH shows it: the last 10 steps, the
  observations of searches and entity pages only for the last two)
* ``hybrid_parse`` -- HybridQA's zero-shot parse: asks for ``{"sql": str}`` (SUQL over one table's
  schema, with the attempts that returned nothing); value ``str``
* ``short_answer`` -- asks for ``{"answer": str | null}``; value ``str`` ("" for null)

Errors are :class:`~engines.errors.LLMError` with a message meant for a person.  A reply that
cannot be used -- a 200 whose body is not a message (HTML, empty, a JSON list, ``content: null``),
no text, a cut-off reply, text without the JSON asked for -- is a
:class:`~engines.errors.ReplyError`: that one call fails, and ``LLM.answer`` turns it into
Unknown, so one bad reply loses only its own SUQL row.

Transient failures are retried here, by the SDK's own rule (``x-should-retry`` when the server
sends it, else 408, 409, 429 and every 5xx, timeouts and connection errors), with exponential
backoff that honours ``retry-after`` / ``retry-after-ms``.  The SDK's own retries are switched
off because its waits cannot be interrupted: ours go through :func:`~engines.llm.waiting.pause`,
so Esc stops a backoff at once, and the ``sleep`` callable is injectable for tests.

Requests go through the SDK's *async* client on the shared I/O loop
(:func:`~engines.llm.waiting.run_async`): cancelling the running operation cancels the request
in flight -- its connection is closed -- instead of waiting for the reply or the timeout.

Whenever a template changes in a way that changes what the model answers, bump
:data:`PROMPT_VERSION`: it is part of :func:`~engines.llm.protocol.backend_id`, hence of every
cache key, so stale cached answers stop matching.
"""
from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import anthropic
import jinja2

from engines.errors import ConfigurationError, LLMError, ReplyError
from engines.llm.waiting import pause, run_async
from engines.llm.protocol import Answer, Output, PolicyAction, PolicyStep, Results, Routed, Turn, Usage
from engines.settings import Settings

__all__ = [
    "PROMPT_VERSION",
    "PROMPTS_DIR",
    "MAX_TOKENS",
    "RETRYABLE_STATUS",
    "NO_KEY_MESSAGE",
    "ClaudeBackend",
    "make_claude_backend",
    "render_prompt",
    "system_prompt",
    "extract_json_object",
    "read_message",
    "Reply",
]

log = logging.getLogger(__name__)

#: Bump whenever a template (or the parsing of replies) changes what the backend returns.
PROMPT_VERSION = "p3"  # p2: the respond prompt shows the schema; p3: it shows why an empty result is empty

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

#: ``max_tokens`` of the request, per function.
MAX_TOKENS: Mapping[str, int] = {
    "route": 256,
    "parse": 1024,
    "classify": 1024,
    "answer": 1024,
    "summary": 600,
    "respond": 1024,
    "policy": 1500,
    "hybrid_parse": 1024,
    "short_answer": 256,
    "prune_entry": 512,
}

#: What the retried HTTP statuses mean (any other 5xx is retried too, as "server error"); the SDK's
#: rule, see :func:`_should_retry`.
RETRYABLE_STATUS: Mapping[int, str] = {
    408: "request timeout",
    409: "conflict",
    429: "rate limit reached",
    500: "internal server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "overloaded",
}

NO_KEY_MESSAGE = (
    "The claude backend needs an Anthropic API key: set ANTHROPIC_API_KEY (or choose the sim backend)."
)

#: How many earlier turns of the dialogue the prompts show (the most recent ones).
MAX_HISTORY_TURNS = 20
#: How many result rows ``respond`` shows the model, and how long a shown cell may be.
MAX_ROWS_SHOWN = 50
MAX_CELL_CHARS = 300
#: The functions of the per-row role (many small calls): they use ``settings.claude_row_model``;
#: every other function uses the planner model ``settings.claude_model``.
ROW_FUNCTIONS = frozenset({"answer", "summary", "short_answer"})

#: Longest excerpt of a malformed reply quoted in an error message.
EXCERPT_CHARS = 160


# --- prompts ---------------------------------------------------------------


def _to_json(value: Any) -> str:
    """JSON for a prompt: unlike jinja2's ``tojson`` it does not HTML-escape ``<``, ``>``, ``&``, ``'``."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _cell(value: Any) -> Any:
    """A result cell as the model is shown it: JSON-friendly, long strings shortened."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_cell(v) for v in value]
    text = str(value)
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 1].rstrip() + "…"
    return text


def _row_json(columns: Sequence[str], row: Sequence[Any]) -> str:
    """One result row as a JSON object ``{column: value}``."""
    return _to_json({str(c): _cell(v) for c, v in zip(columns, row)})


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS_DIR),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["json"] = _to_json
    env.globals["row_json"] = _row_json
    return env


_ENV = _environment()


def render_prompt(function: str, **context: Any) -> str:
    """Render the prompt template of ``function`` (``route.j2`` ...) with ``context``.

    Undefined variables raise :class:`jinja2.UndefinedError` (the environment is strict), so a
    template and its caller cannot silently drift apart.  Runs of blank lines are collapsed.
    """
    text = _ENV.get_template(f"{function}.j2").render(**context)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def system_prompt() -> str:
    """The system prompt shared by every function."""
    return render_prompt("_system")


# --- parsing replies -------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…")


def extract_json_object(text: str, function: str) -> dict[str, Any]:
    """The JSON object in a model reply.

    Accepts a bare object, an object in a fenced code block (```json ... ```), or an object with
    prose around it.  Anything else raises :class:`LLMError` naming ``function`` and quoting an
    excerpt of the reply.
    """
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(stripped)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    # An object somewhere inside prose: try each opening brace in turn.
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _end = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ReplyError(f"Claude's {function}() reply is not the JSON object asked for: {_excerpt(text)}")


def _malformed(function: str, problem: str, text: str) -> ReplyError:
    return ReplyError(f"Claude's {function}() reply {problem}: {_excerpt(text)}")


def _normalise_for_match(text: str) -> str:
    """Case, whitespace and quote-style insensitive form, to check evidence is verbatim."""
    text = text.translate(str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'}))
    return " ".join(text.split()).casefold()


_YES_NO = re.compile(r"(yes|no)[.!]?", re.IGNORECASE)
_UNKNOWN_WORDS = frozenset({"", "unknown", "null", "none given", "not stated", "n/a"})


def _parse_routed(text: str) -> Routed:
    obj = extract_json_object(text, "route")
    flag = obj.get("needs_database")
    if isinstance(flag, str) and flag.strip().lower() in ("true", "false"):
        flag = flag.strip().lower() == "true"
    if not isinstance(flag, bool):
        raise _malformed("route", 'has no boolean "needs_database"', text)
    reason = obj.get("reason", "")
    return Routed(needs_database=flag, reason=str(reason).strip() if reason is not None else "")


def _parse_sql(text: str) -> str:
    obj = extract_json_object(text, "parse")
    sql = obj.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        raise _malformed("parse", 'has no "sql" string', text)
    return sql.strip().rstrip(";").strip()


def _parse_values(text: str, candidates: Sequence[str]) -> tuple[str, ...]:
    obj = extract_json_object(text, "classify")
    values = obj.get("values")
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list):
        raise _malformed("classify", 'has no "values" list', text)
    exact = {c: c for c in candidates}
    folded: dict[str, str] = {}
    for c in candidates:
        folded.setdefault(c.strip().casefold(), c)
    chosen: list[str] = []
    for value in values:
        if not isinstance(value, str):
            continue
        match = exact.get(value) or folded.get(value.strip().casefold())
        if match is None:
            log.debug("classify: dropped %r, not among the candidates", value)
        elif match not in chosen:
            chosen.append(match)
    return tuple(chosen)


def _parse_answer(reply: str, source: str) -> Answer:
    obj = extract_json_object(reply, "answer")
    if "value" not in obj:
        raise _malformed("answer", 'has no "value"', reply)
    value = obj["value"]
    if value is None:
        return Answer(None)
    if isinstance(value, bool):
        value = "Yes" if value else "No"
    elif isinstance(value, (int, float)):
        value = str(value)
    elif not isinstance(value, str):
        raise _malformed("answer", 'has a "value" that is neither text nor null', reply)
    value = value.strip()
    if value.casefold() in _UNKNOWN_WORDS:
        return Answer(None)
    if _YES_NO.fullmatch(value):
        value = "Yes" if value[0] in "yY" else "No"
    raw = obj.get("evidence") or []
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise _malformed("answer", 'has an "evidence" that is not a list', reply)
    haystack = _normalise_for_match(source)
    evidence: list[str] = []
    for sentence in raw:
        if not isinstance(sentence, str) or not sentence.strip():
            continue
        sentence = sentence.strip()
        if _normalise_for_match(sentence) not in haystack:
            log.debug("answer: dropped evidence not found verbatim in the text: %r", sentence)
        elif sentence not in evidence:
            evidence.append(sentence)
    return Answer(value, tuple(evidence))


POLICY_ACTIONS = ("search_wikidata", "get_wikidata_entry", "get_property_examples", "execute_sparql", "stop")
#: SPINACH shows the policy its last 10 steps, and search / entity-page observations only for the last two.
POLICY_STEPS_SHOWN = 10


def _policy_steps(history: Sequence[PolicyStep]) -> tuple[list[dict[str, Any]], int]:
    shown = list(history)[-POLICY_STEPS_SHOWN:]
    steps = []
    for i, step in enumerate(shown):
        bulky = step.action_name in ("get_wikidata_entry", "search_wikidata") and i < len(shown) - 2
        steps.append({
            "thought": step.thought,
            "action_name": step.action_name,
            "action_argument": step.action_argument,
            "observation": step.observation,
            "show_observation": not bulky and step.action_name != "stop",
        })
    return steps, len(history) - len(shown)


def _parse_kept_lines(text: str, count: int) -> tuple[int, ...]:
    """``{"keep": [line numbers]}`` -> the valid numbers, in page order; the first two lines
    (label, description) are always kept."""
    obj = extract_json_object(text, "prune_entry")
    keep = obj.get("keep")
    if not isinstance(keep, list):
        raise _malformed("prune_entry", 'has no "keep" list', text)
    chosen = {int(k) for k in keep if isinstance(k, (int, float, str)) and str(k).strip().lstrip("-").isdigit()}
    chosen |= {0, 1}
    return tuple(sorted(k for k in chosen if 0 <= k < count))


def _parse_policy_action(text: str) -> PolicyAction:
    obj = extract_json_object(text, "policy")
    name = obj.get("action_name")
    if not isinstance(name, str) or not name.strip():
        raise _malformed("policy", 'has no "action_name"', text)
    name = name.strip().removesuffix("()")
    if name not in POLICY_ACTIONS:
        raise _malformed("policy", f"names an unknown action {name!r}", text)
    argument = obj.get("action_argument", "")
    if argument is None:
        argument = ""
    if not isinstance(argument, str):
        argument = json.dumps(argument, ensure_ascii=False)
    if name == "execute_sparql" and not argument.strip():
        raise _malformed("policy", "asks to execute_sparql with no query", text)
    thought = obj.get("thought", "")
    return PolicyAction(str(thought).strip() if thought is not None else "", name, argument.strip())


def _parse_short_answer(text: str) -> str:
    obj = extract_json_object(text, "short_answer")
    if "answer" not in obj:
        raise _malformed("short_answer", 'has no "answer"', text)
    value = obj["answer"]
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        value = value[0] if value else ""
    value = str(value).strip().strip('"').strip()
    return "" if value.casefold() in _UNKNOWN_WORDS else value


def _parse_text(function: str, text: str) -> str:
    stripped = text.strip()
    if not stripped:
        raise ReplyError(f"Claude's {function}() reply is empty.")
    return stripped


# --- the backend -----------------------------------------------------------


def _api_message(error: anthropic.APIStatusError) -> str:
    """The API's own explanation of an error response (``error.message`` of the body)."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
    return str(getattr(error, "message", "") or error)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


def _should_retry(error: anthropic.APIStatusError) -> bool:
    """The SDK's rule (``_should_retry`` of its base client): the server's ``x-should-retry``
    when it sends one, else 408, 409, 429 and every 5xx."""
    header = error.response.headers.get("x-should-retry")
    if header == "true":
        return True
    if header == "false":
        return False
    status = error.status_code
    return status in (408, 409, 429) or status >= 500


def _status_name(status: int) -> str:
    return RETRYABLE_STATUS.get(status) or ("server error" if status >= 500 else "error")


def _retry_after(error: anthropic.APIStatusError) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, or ``retry-after`` in seconds or as
    an HTTP date (as the SDK reads them); ``None`` when there is no usable one."""
    try:
        headers = error.response.headers
    except AttributeError:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            seconds = float(raw_ms) / 1000
        except ValueError:
            seconds = -1.0
        if seconds >= 0:
            return seconds
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        date = email.utils.parsedate_tz(raw)
        if date is None:
            return None
        seconds = email.utils.mktime_tz(date) - time.time()
    return seconds if seconds >= 0 else None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class Reply:
    """What a Messages API response says, as far as the backend needs it."""

    text: str  # the text blocks, joined
    stop_reason: str | None
    usage: Usage


def read_message(function: str, response: Any) -> Reply:
    """The :class:`Reply` in a 200 response (an ``httpx`` response) of the Messages API.

    A body that is not a message -- not JSON (an HTML page from a proxy), empty, a JSON list, an
    error object, no ``content`` list, blocks that are not objects, a text block without text --
    raises :class:`ReplyError` naming what was wrong and quoting the start of the body.
    """
    body: bytes = response.content or b""
    media = (response.headers.get("content-type") or "").split(";")[0].strip() or "no content type"
    shown = body.decode("utf-8", "replace")

    def bad(problem: str, quote: bool = True) -> ReplyError:
        tail = f": {_excerpt(shown)}" if quote else "."
        return ReplyError(f"Claude returned a 200 to {function}() whose body {problem}{tail}")

    if not body.strip():
        raise bad(f"is empty ({media})", quote=False)
    try:
        data = json.loads(body)
    except ValueError:  # includes UnicodeDecodeError
        raise bad(f"is not JSON ({media})") from None
    except RecursionError:
        raise bad("is JSON nested too deeply to read") from None
    if not isinstance(data, dict):
        raise bad(f"is a JSON {_json_kind(data)}, not a message object")
    if data.get("type") == "error":
        inner = data.get("error")
        detail = inner.get("message") if isinstance(inner, dict) else None
        raise bad(f"is an error: {detail}" if isinstance(detail, str) else "is an error object")
    if "content" not in data:
        raise bad('is a message with no "content"')
    content = data["content"]
    if not isinstance(content, list):
        raise bad(f'has a "content" that is {_json_kind(content)}, not a list of blocks')
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            raise bad(f'has a "content" block that is a JSON {_json_kind(block)}, not an object')
        if block.get("type") != "text":
            continue  # thinking, tool use ...: not the reply's text
        text = block.get("text")
        if not isinstance(text, str):
            raise bad(f'has a text block whose "text" is {_json_kind(text)}, not a string')
        parts.append(text)
    stop = data.get("stop_reason")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}

    def tokens(name: str) -> int | None:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Reply("".join(parts), stop if isinstance(stop, str) else None, Usage(tokens("input_tokens"), tokens("output_tokens")))


class ClaudeBackend:
    """The :class:`~engines.llm.protocol.Backend` answered by Claude.

    ``client`` is injectable: an ``anthropic.AsyncAnthropic`` (tests point one at a stub server,
    or give it a mock transport); by default one is built from ``settings`` with the SDK's own
    retries off.  It is only ever used on the shared I/O loop (:func:`run_async`), which is what
    lets a cancel abort a request in flight.  ``sleep`` waits between retries (by default
    :func:`pause`, which a cancel interrupts); the n-th retry waits
    ``min(base_delay * 2**(n-1), max_delay)`` seconds, or the server's ``retry-after`` when it
    asks for longer (still capped at ``max_delay``).

    Thread-safe: it holds no mutable state, and calls from many threads share the one client.
    """

    name = "claude"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        settings: Settings,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        sleep: Callable[[float], None] = pause,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
    ) -> None:
        self.planner_model: str = settings.claude_model
        self.row_model: str = settings.claude_row_model
        self.max_retries: int = settings.claude_max_retries
        self.timeout_s: float = settings.claude_timeout_s
        self._sleep = sleep
        self._base_delay = base_delay
        self._max_delay = max_delay
        if client is None:
            if settings.anthropic_api_key is None:
                raise ConfigurationError(NO_KEY_MESSAGE)
            client = anthropic.AsyncAnthropic(
                api_key=settings.anthropic_api_key.get_secret_value(),
                max_retries=0,  # retries are ours (see _create)
                timeout=settings.claude_timeout_s,
            )
        elif not isinstance(client, anthropic.AsyncAnthropic):
            raise TypeError(
                f"ClaudeBackend needs an anthropic.AsyncAnthropic client (so a request in flight can be "
                f"cancelled), not {type(client).__name__}"
            )
        elif client.max_retries != 0:
            client = client.with_options(max_retries=0)
        self._client = client
        self._system = system_prompt()

    @property
    def model(self) -> str:
        """Both model ids (planner and per-row role): part of the backend id, hence of every cache key."""
        return f"{self.planner_model},row={self.row_model}"

    def model_for(self, function: str) -> str:
        """The model that answers ``function``: the row model for per-row calls, else the planner."""
        return self.row_model if function in ROW_FUNCTIONS else self.planner_model

    def __repr__(self) -> str:
        return f"ClaudeBackend(model={self.model!r}, prompt_version={self.prompt_version!r})"

    def close(self) -> None:
        """Close the client's connections (the backend is unusable afterwards)."""
        run_async(self._client.close())

    # -- the six functions ---------------------------------------------------

    def route(self, utterance: str, history: Sequence[Turn], schema: str) -> Output:
        prompt = render_prompt("route", utterance=utterance, history=_recent(history), schema=schema)
        return self._call("route", prompt, _parse_routed)

    def parse(self, utterance: str, history: Sequence[Turn], schema: str) -> Output:
        prompt = render_prompt("parse", utterance=utterance, history=_recent(history), schema=schema)
        return self._call("parse", prompt, _parse_sql)

    def classify(self, value: str, field: str, candidates: Sequence[str]) -> Output:
        candidates = list(candidates)
        prompt = render_prompt("classify", value=value, field=field, candidates=candidates)
        return self._call("classify", prompt, lambda reply: _parse_values(reply, candidates))

    def answer(self, text: str, question: str) -> Output:
        prompt = render_prompt("answer", text=text, question=question)
        return self._call("answer", prompt, lambda reply: _parse_answer(reply, text))

    def summary(self, text: str) -> Output:
        prompt = render_prompt("summary", text=text)
        return self._call("summary", prompt, lambda reply: _parse_text("summary", reply))

    def respond(self, utterance: str, history: Sequence[Turn], results: Results | None, schema: str = "") -> Output:
        rows = results.rows[:MAX_ROWS_SHOWN] if results is not None else ()
        prompt = render_prompt(
            "respond", utterance=utterance, history=_recent(history), results=results, rows=rows, schema=schema
        )
        return self._call("respond", prompt, lambda reply: _parse_text("respond", reply))

    def prune_entry(self, question: str, entry: str) -> Output:
        lines = entry.splitlines()
        prompt = render_prompt("prune_entry", question=question, lines=list(enumerate(lines)))
        return self._call("prune_entry", prompt, lambda reply: _parse_kept_lines(reply, len(lines)))

    def policy(self, question: str, history: Sequence[PolicyStep], sample: int = 0) -> Output:
        # ``sample`` needs no use here: Claude samples at its default temperature 1.0, so a
        # retry after a rollback draws a new action by itself.
        steps, omitted = _policy_steps(history)
        prompt = render_prompt("policy", question=question, steps=steps, omitted=omitted)
        return self._call("policy", prompt, _parse_policy_action)

    def hybrid_parse(self, question: str, schema: str, failed: Sequence[str] = ()) -> Output:
        prompt = render_prompt("hybrid_parse", question=question, schema=schema, failed=list(failed))
        return self._call("hybrid_parse", prompt, _parse_sql)

    def short_answer(self, question: str, results: Results) -> Output:
        rows = results.rows[:MAX_ROWS_SHOWN]
        prompt = render_prompt("short_answer", question=question, results=results, rows=rows)
        return self._call("short_answer", prompt, _parse_short_answer)

    # -- the API call --------------------------------------------------------

    def _call(self, function: str, prompt: str, parse: Callable[[str], Any]) -> Output:
        """Send ``prompt``, parse the reply's text with ``parse``; the value with its token usage."""
        reply = self._create(function, prompt)
        cut_off = reply.stop_reason == "max_tokens"
        if cut_off:
            log.warning("claude %s(): the reply was cut off at %d tokens", function, MAX_TOKENS[function])
        if not reply.text.strip():
            raise ReplyError(f"Claude's {function}() reply has no text (stop reason: {reply.stop_reason}).")
        try:
            value = parse(reply.text)
        except LLMError as error:
            if cut_off:
                raise ReplyError(f"{error} (the reply was cut off at {MAX_TOKENS[function]} tokens)") from error
            raise
        return Output(value, reply.usage)

    async def _post(self, function: str, prompt: str) -> Any:
        """One Messages API request; the raw ``httpx`` response of a 2xx (errors raise)."""
        raw = await self._client.messages.with_raw_response.create(
            model=self.model_for(function),
            max_tokens=MAX_TOKENS[function],
            system=self._system,
            messages=[{"role": "user", "content": prompt}],
        )
        return raw.http_response

    def _create(self, function: str, prompt: str) -> Reply:
        """The request with retries on transient failures; errors become :class:`LLMError`.

        Cancelling the current operation aborts a request in flight or a backoff wait
        (:class:`~engines.errors.Cancelled`).
        """
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                response = run_async(self._post(function, prompt))
            except anthropic.APIStatusError as error:
                status = error.status_code
                if not _should_retry(error):
                    raise self._refusal(error, function) from error
                if last:
                    raise LLMError(
                        f"Anthropic API {_status_name(status)} ({status}) after {_attempts(attempts)}."
                    ) from error
                delay = self._delay(attempt, _retry_after(error))
                log.info("claude %s(): %s (%d), retrying in %.1fs", function, _status_name(status), status, delay)
            except anthropic.APITimeoutError as error:
                if last:
                    raise LLMError(
                        f"The Anthropic API did not answer within {self.timeout_s:g}s, "
                        f"after {_attempts(attempts)}."
                    ) from error
                delay = self._delay(attempt)
                log.info("claude %s(): timed out, retrying in %.1fs", function, delay)
            except anthropic.APIConnectionError as error:
                if last:
                    cause = error.__cause__ or error
                    raise LLMError(
                        f"Could not reach the Anthropic API after {_attempts(attempts)}: {cause}"
                    ) from error
                delay = self._delay(attempt)
                log.info("claude %s(): connection error, retrying in %.1fs", function, delay)
            except anthropic.AnthropicError as error:
                raise LLMError(f"The Anthropic API call failed: {error}") from error
            else:
                return read_message(function, response)
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed ``attempt`` (1-based): exponential, or the server's wish."""
        delay = self._base_delay * 2 ** (attempt - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self._max_delay)

    def _refusal(self, error: anthropic.APIStatusError, function: str) -> LLMError:
        """The error for a response that is not retried.  A request too large (413: this call's
        text is too long) is a :class:`ReplyError`: other calls may well go through."""
        status = error.status_code
        detail = _api_message(error)
        if status == 401:
            return LLMError("The Anthropic API rejected the key (401): check ANTHROPIC_API_KEY.")
        if status == 403:
            return LLMError(f"The Anthropic API refused the request (403): {detail}")
        if status == 404:
            return LLMError(
                f"The Anthropic API found no such resource (404): {detail} "
                f"(is the model {self.model_for(function)!r} right? Set "
                f"{'CS224V_CLAUDE_ROW_MODEL' if function in ROW_FUNCTIONS else 'CS224V_CLAUDE_MODEL'} to change it.)"
            )
        if status == 400:
            return LLMError(f"The Anthropic API rejected the request (400): {detail}")
        if status == 413:
            return ReplyError(f"The Anthropic API refused the request as too large (413): {detail}")
        if status < 400 or status >= 600:
            return LLMError(f"The Anthropic API answered with HTTP status {status}: {detail}")
        return LLMError(f"The Anthropic API returned an error ({status}): {detail}")


def _recent(history: Sequence[Turn]) -> list[Turn]:
    return list(history)[-MAX_HISTORY_TURNS:]


def make_claude_backend(
    settings: Settings,
    *,
    client: anthropic.AsyncAnthropic | None = None,
    sleep: Callable[[float], None] = pause,
) -> ClaudeBackend:
    """The claude backend for ``settings``.

    Raises :class:`ConfigurationError` with a plain message when no API key is configured (unless
    a ready ``client`` is given).
    """
    if client is None and settings.anthropic_api_key is None:
        raise ConfigurationError(NO_KEY_MESSAGE)
    return ClaudeBackend(settings, client=client, sleep=sleep)
