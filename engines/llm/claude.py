"""The ``claude`` backend: any task answered by Claude through the ``anthropic`` SDK.

:meth:`ClaudeBackend.run` renders the task's jinja2 template (:mod:`engines.llm.prompting`; each
agent package keeps its tasks' templates in its ``prompts/`` folder, engines/llm/prompts the shared
``_system.j2``) with the task's context, sends it with ``client.messages.create`` to the model of
the task's role -- ``settings.claude_model`` for the planner role (parser, agents, SPINACH's
policy), ``settings.claude_row_model`` for per-row tasks (answer(), summary(), short answers) --
and turns the reply's text into the task's value with the task's ``read`` (in the agent package:
engines/sql/tasks.py, engines/suql/tasks.py, engines/hybridqa/tasks.py, engines/spinach/tasks.py).

Structured output: a task with a ``reply_model`` (every task whose reply is a JSON object) sends
the model's JSON schema as ``output_config={"format": {"type": "json_schema", "schema": ...}}``
(made API-ready by the SDK's ``anthropic.transform_schema``), so the reply is that object; the
task's ``read`` still validates it with the same pydantic model.  No forced tool use and no
temperature: Sonnet 5.5 refuses forced tool use, and the 5.x models take only the default
temperature.

Prompt caching: a template's shared prefix (up to ``{{ cache_break }}``: instructions, schema,
rules, examples) goes first, as its own text block with ``cache_control`` when system prompt and
prefix together are long enough to be cached by the model (:data:`MIN_CACHE_TOKENS`, estimated
at :data:`~engines.llm.usage.CHARS_PER_TOKEN` characters a token); else the prompt is one string.

Usage: every reply's ``usage`` (input, output, cache-read and cache-write tokens) is the call's
:class:`~engines.llm.protocol.Usage`, with the model that answered, for the client to price.

An unknown or retired model (404): the API's own message, plus the models the key can use
(``client.models.list()``) and the setting to change.

Concurrency: ``run`` may be called from many threads at once; the requests share one client on
the I/O loop, and at most ``settings.llm_concurrency`` are in flight (an asyncio semaphore on that
loop, so a cancelled wait for a free slot ends at once too).

Errors are :class:`~engines.errors.LLMError` with a message meant for a person.  A reply that
cannot be used -- a 200 whose body is not a message (HTML, empty, a JSON list, ``content: null``),
no text, a cut-off reply, text without the JSON asked for -- is a
:class:`~engines.errors.ReplyError`: that one call fails, and the client returns the task's
fallback (Unknown for ``answer``), so one bad reply loses only its own SUQL row.

Transient failures are retried here, by the SDK's own rule (``x-should-retry`` when the server
sends it, else 408, 409, 429 and every 5xx, timeouts and connection errors), with exponential
backoff that honours ``retry-after`` / ``retry-after-ms``.  The SDK's own retries are switched
off because its waits cannot be interrupted: ours go through :func:`~engines.llm.waiting.pause`,
so Esc stops a backoff at once, and the ``sleep`` callable is injectable for tests.

Requests go through the SDK's *async* client on the shared I/O loop
(:func:`~engines.llm.waiting.run_async`): cancelling the running operation cancels the request
in flight -- its connection is closed -- instead of waiting for the reply or the timeout.

Bounds (issue 25): the reply is taken with the SDK's ``with_streaming_response`` and read through
``settings.llm_reply_max_bytes`` (:func:`engines.llm.bounded.limit`; the client this backend builds
has it as event hooks, so error bodies the SDK reads itself and gzip bodies are bounded too).  A
reply past the cap fails the call with :class:`~engines.llm.bounded.ReplyTooLarge` naming Claude,
the API's URL and the setting; it is not retried.  ``settings.claude_timeout_s`` is the overall
deadline of one attempt (connect, send and every read: ``asyncio.timeout``), so a trickling reply
ends there too; an attempt past it is retried as a timeout, each with its own deadline.

Whenever a template changes in a way that changes what the model answers, bump
:data:`PROMPT_VERSION`: it is part of :func:`~engines.llm.protocol.backend_id`, hence of every
cache key, so stale cached answers stop matching.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic

from engines.errors import ConfigurationError, LLMError, ReplyError
from engines.llm.bounded import ReplyTooLarge, async_hooks, limit, origin
from engines.llm.prompting import (  # noqa: F401 - re-exported: the prompt layer, as before
    MAX_CELL_CHARS,
    MAX_HISTORY_TURNS,
    MAX_ROWS_SHOWN,
    render_parts,
    render_prompt,
    system_prompt,
)
from engines.llm.protocol import Output, Usage
from engines.llm.replies import EXCERPT_CHARS, brief, extract_json_object, speaking  # noqa: F401
from engines.llm.replies import excerpt as _excerpt
from engines.llm.task import I, O, Task
from engines.llm.usage import estimate_tokens
from engines.llm.waiting import pause, run_async, slot
from engines.settings import Settings

__all__ = [
    "PROMPT_VERSION",
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
PROMPT_VERSION = "p5"  # p2: the respond prompt shows the schema; p3: it shows why an empty result is empty; p4: structured output (JSON schema); p5: no prompt's example names the restaurant world (parse, classify, route)

#: The shortest prompt prefix each model caches, in tokens (Anthropic's prompt-caching minimums:
#: 4096 for Haiku 4.5 and Opus 4.5+, 1024 for the Sonnet models); the longest matching prefix of the
#: model id counts, else :data:`DEFAULT_MIN_CACHE_TOKENS`.
MIN_CACHE_TOKENS: Mapping[str, int] = {
    "claude-haiku-4-5": 4096,
    "claude-haiku": 2048,
    "claude-opus": 4096,
    "claude-sonnet": 1024,
}
DEFAULT_MIN_CACHE_TOKENS = 1024

#: How many model ids an unknown-model message lists at most.
MODELS_LISTED = 20

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

NO_KEY_MESSAGE = "The claude backend needs an Anthropic API key: set ANTHROPIC_API_KEY (or choose the sim backend)."


def _http_library() -> Any:
    """The HTTP library the installed SDK talks through (``httpx2`` for anthropic 2.x, ``httpx`` before):
    a body the backend reads itself raises that library's errors, not the SDK's."""
    for cls in anthropic.DefaultAsyncHttpxClient.__mro__:
        root = cls.__module__.partition(".")[0]
        if root.startswith("httpx"):
            return importlib.import_module(root)
    return importlib.import_module("httpx")  # pragma: no cover - every SDK's client is an httpx client


HTTP: Any = _http_library()


def _request_of(error: Exception) -> Any:
    try:
        return error.request  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):
        return None


def who(response: Any) -> str:
    """How a bound error names this backend: Claude, and the API's address (ANTHROPIC_BASE_URL may move it)."""
    return f"Claude (the Anthropic API at {origin(response)})"


class _Deadline(Exception):
    """One attempt ran past ``claude_timeout_s`` (raised inside the coroutine)."""


# --- the backend -----------------------------------------------------------


def _api_message(error: anthropic.APIStatusError) -> str:
    """The API's own explanation of an error response (``error.message`` of the body), shortened to a line."""
    return brief(_api_detail(error))


def _api_detail(error: anthropic.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(message := inner.get("message"), str):
            return message
        if isinstance(message := body.get("message"), str):
            return message
    if isinstance(body, str):  # not a JSON error (an HTML page): its start only
        return _excerpt(body)
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
    kinds: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return kinds.get(type(value), type(value).__name__)


def min_cache_tokens(model: str) -> int:
    """The shortest prefix ``model`` caches (see :data:`MIN_CACHE_TOKENS`)."""
    best = max((key for key in MIN_CACHE_TOKENS if model.startswith(key)), key=len, default=None)
    return MIN_CACHE_TOKENS[best] if best is not None else DEFAULT_MIN_CACHE_TOKENS


@dataclass(frozen=True)
class Reply:
    """What a Messages API response says, as far as the backend needs it."""

    text: str  # the text blocks, joined
    stop_reason: str | None
    usage: Usage
    model: str | None = None  # the model that answered, as the response names it


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

    plain, written, read = (
        tokens("input_tokens"),
        tokens("cache_creation_input_tokens"),
        tokens("cache_read_input_tokens"),
    )
    total = None if plain is None and written is None and read is None else (plain or 0) + (written or 0) + (read or 0)
    model = data.get("model")
    return Reply(
        "".join(parts),
        stop if isinstance(stop, str) else None,
        Usage(total, tokens("output_tokens"), read, written),
        model if isinstance(model, str) and model else None,
    )


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
        self.concurrency: int = settings.llm_concurrency
        self.reply_max_bytes: int = settings.llm_reply_max_bytes
        self._slots: asyncio.Semaphore | None = None  # made on the I/O loop, at the first request
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._slots_lock = threading.Lock()
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
                # every body through the cap, error bodies the SDK reads itself included
                http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=async_hooks(self.reply_max_bytes, who)),
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

    def model_for(self, task: Task[Any, Any]) -> str:
        """The model that answers ``task``: the row model for per-row tasks, else the planner's."""
        return self.row_model if task.role == "row" else self.planner_model

    def __repr__(self) -> str:
        return f"ClaudeBackend(model={self.model!r}, prompt_version={self.prompt_version!r})"

    def close(self) -> None:
        """Close the client's connections (the backend is unusable afterwards)."""
        run_async(self._client.close())

    # -- any task --------------------------------------------------------------

    def run(self, task: Task[I, O], input: I) -> Output[O]:
        """The task's prompt sent to the model of its role; the reply read by the task."""
        prefix, rest = render_parts(task.template, package=task.package, **task.context(input))
        return self._call(task, self.content(task, prefix, rest), lambda reply: task.read(reply, input))

    def content(self, task: Task[Any, Any], prefix: str, rest: str) -> str | list[dict[str, Any]]:
        """The user message: the shared prefix first, as its own block marked for prompt caching
        when system prompt and prefix are long enough for the task's model to cache; else one string."""
        if prefix and estimate_tokens(self._system) + estimate_tokens(prefix) >= min_cache_tokens(self.model_for(task)):
            return [
                {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": rest},
            ]
        return "\n\n".join(part for part in (prefix, rest) if part)

    def request(self, task: Task[Any, Any], content: str | list[dict[str, Any]]) -> dict[str, Any]:
        """The Messages API parameters of one call (also the ``params`` of a batch request)."""
        params: dict[str, Any] = {
            "model": self.model_for(task),
            "max_tokens": task.max_tokens,
            "system": self._system,
            "messages": [{"role": "user", "content": content}],
        }
        schema = task.reply_schema()
        if schema is not None:
            params["output_config"] = {"format": {"type": "json_schema", "schema": anthropic.transform_schema(schema)}}
        return params

    # -- the API call --------------------------------------------------------

    def _call(self, task: Task[Any, Any], prompt: str | list[dict[str, Any]], parse: Callable[[str], O]) -> Output[O]:
        """Send ``prompt``, parse the reply's text with ``parse``; the value with its token usage."""
        function = task.name
        reply = self._create(task, prompt)
        cut_off = reply.stop_reason == "max_tokens"
        if cut_off:
            log.warning("claude %s(): the reply was cut off at %d tokens", function, task.max_tokens)
        if not reply.text.strip():
            raise ReplyError(f"Claude's {function}() reply has no text (stop reason: {reply.stop_reason}).")
        try:
            with speaking("Claude"):
                value = parse(reply.text)
        except LLMError as error:
            if cut_off:
                raise ReplyError(f"{error} (the reply was cut off at {task.max_tokens} tokens)") from error
            raise
        return Output(value, reply.usage, reply.model or self.model_for(task))

    def _slots_on_loop(self) -> asyncio.Semaphore:
        """The semaphore of the running I/O loop (a new loop, after the old one was closed, gets its own)."""
        loop = asyncio.get_running_loop()
        with self._slots_lock:
            if self._slots is None or self._slots_loop is not loop:
                self._slots, self._slots_loop = asyncio.Semaphore(self.concurrency), loop
            return self._slots

    async def _post(self, task: Task[Any, Any], prompt: str | list[dict[str, Any]]) -> Any:
        """One Messages API request (once one of the ``llm_concurrency`` slots is free), within the
        overall deadline; the ``httpx`` response of a 2xx, its body read through the cap (errors raise)."""
        async with slot(self._slots_on_loop()):
            try:
                async with asyncio.timeout(self.timeout_s):
                    streamed = self._client.messages.with_streaming_response.create(**self.request(task, prompt))
                    async with streamed as raw:
                        response = raw.http_response
                        limit(response, self.reply_max_bytes, who)  # an injected client has no hooks
                        await response.aread()
            except TimeoutError:
                raise _Deadline() from None
            except HTTP.TimeoutException as error:  # a read of a body (ours, or an error body the SDK reads)
                raise anthropic.APITimeoutError(request=_request_of(error)) from error
            except HTTP.RequestError as error:  # the connection lost in the middle of a body
                raise anthropic.APIConnectionError(request=_request_of(error)) from error
        return response

    async def _model_ids(self) -> list[str]:
        """The ids of the models the key can use (the Models API, first page)."""
        try:
            async with asyncio.timeout(self.timeout_s):
                page = await self._client.models.list(limit=100)
        except TimeoutError:
            raise _Deadline() from None
        return [model.id for model in page.data]

    def available_models(self) -> list[str] | str:
        """The models the key can use, or why they could not be listed."""
        try:
            return run_async(self._model_ids())
        except _Deadline:
            return f"the model list did not come within {self.timeout_s:g}s"
        except anthropic.APIStatusError as error:
            return f"the model list was refused ({error.status_code}): {_api_message(error)}"
        except anthropic.AnthropicError as error:
            cause = error.__cause__ if isinstance(error.__cause__, LLMError) else error  # a reply past the cap
            return f"the model list could not be fetched: {cause}"

    def _create(self, task: Task[Any, Any], prompt: str | list[dict[str, Any]]) -> Reply:
        """The request with retries on transient failures; errors become :class:`LLMError`.

        Cancelling the current operation aborts a request in flight or a backoff wait
        (:class:`~engines.errors.Cancelled`).
        """
        function = task.name
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                response = run_async(self._post(task, prompt))
            except ReplyTooLarge as error:  # not transient: the same request would get the same reply
                raise error.to(function) from None
            except anthropic.APIStatusError as error:
                status = error.status_code
                if not _should_retry(error):
                    raise self._refusal(error, task) from error
                if last:
                    raise LLMError(
                        f"Anthropic API {_status_name(status)} ({status}) after {_attempts(attempts)}."
                    ) from error
                delay = self._delay(attempt, _retry_after(error))
                log.info("claude %s(): %s (%d), retrying in %.1fs", function, _status_name(status), status, delay)
            except (anthropic.APITimeoutError, _Deadline) as error:
                # the SDK's timeout (a read that waits that long) or ours (the whole attempt, a trickle too)
                if last:
                    raise LLMError(
                        f"The Anthropic API did not answer within {self.timeout_s:g}s, after {_attempts(attempts)}: "
                        f"no complete reply to {function}() (CS224V_CLAUDE_TIMEOUT_S is the deadline of each attempt)."
                    ) from error
                delay = self._delay(attempt)
                log.info("claude %s(): timed out, retrying in %.1fs", function, delay)
            except anthropic.APIConnectionError as error:
                if last:
                    cause = error.__cause__ or error
                    raise LLMError(f"Could not reach the Anthropic API after {_attempts(attempts)}: {cause}") from error
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
        delay = self._base_delay * 2.0 ** (attempt - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self._max_delay)

    def _refusal(self, error: anthropic.APIStatusError, task: Task[Any, Any]) -> LLMError:
        """The error for a response that is not retried.  A request too large (413: this call's
        text is too long) is a :class:`ReplyError`: other calls may well go through."""
        status = error.status_code
        detail = _api_message(error)
        if status == 401:
            return LLMError("The Anthropic API rejected the key (401): check ANTHROPIC_API_KEY.")
        if status == 403:
            return LLMError(f"The Anthropic API refused the request (403): {detail}")
        if status == 404:
            setting = "CS224V_CLAUDE_ROW_MODEL" if task.role == "row" else "CS224V_CLAUDE_MODEL"
            models = self.available_models()
            if isinstance(models, str):
                listed = f"({models}.)"
            elif not models:
                listed = "(the key can use no models.)"
            else:
                more = f", and {len(models) - MODELS_LISTED} more" if len(models) > MODELS_LISTED else ""
                listed = f"Models this key can use: {', '.join(models[:MODELS_LISTED])}{more}."
            return LLMError(
                f"The Anthropic API does not know the model {self.model_for(task)!r} of {task.name}() "
                f"(404): {detail}. It may be retired. {listed} Set {setting} to choose another."
            )
        if status == 400:
            return LLMError(f"The Anthropic API rejected the request (400): {detail}")
        if status == 413:
            return ReplyError(f"The Anthropic API refused the request as too large (413): {detail}")
        if status < 400 or status >= 600:
            return LLMError(f"The Anthropic API answered with HTTP status {status}: {detail}")
        return LLMError(f"The Anthropic API returned an error ({status}): {detail}")


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
