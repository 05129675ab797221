"""The ``openai`` backend: any task answered by a model behind an OpenAI-compatible
chat-completions server -- Ollama, vLLM, llama.cpp's ``llama-server``, LM Studio, or OpenAI itself.

:meth:`OpenAICompatBackend.run` renders the task's template exactly as the claude backend does
(:mod:`engines.llm.prompting`: the shared system prompt, the task's jinja2 template and context),
sends it with ``POST {base_url}/chat/completions`` to the model of the task's role
(``settings.openai_model`` for the planner role, ``settings.openai_row_model`` -- by default the
same -- for per-row tasks), and turns ``choices[0].message.content`` into the task's value with
the task's ``read``.

Structured output (``settings.openai_structured``):

* ``json_schema`` (default): ``response_format={"type": "json_schema", "json_schema": {...}}``
  with the JSON schema of the task's reply (its pydantic ``reply_model``).  A server
  that refuses it with a 400 is asked again in JSON mode, and that server is remembered as one
  without schemas for the rest of the run; one that refuses JSON mode too is asked with no
  ``response_format`` (LM Studio takes only ``json_schema``; older servers only ``json_object``).
* ``json_object``: JSON mode; the reply is validated with the same pydantic model.
* ``none``: the prompt alone asks for JSON.

A task whose reply is text (``summary``, ``respond``; any task without a reply model) is sent
without a ``response_format``.

A reply that does not validate (against the pydantic model, then the task's ``read``) gets ONE
repair retry: the bad reply and what was wrong with it are sent back and the model is asked for
the JSON object again.  A second bad reply is a :class:`~engines.errors.ReplyError` for that call,
so the client returns the task's fallback (Unknown for ``answer``) and one bad reply loses only
its own row.  Usage is the sum over both requests.

Transport: ``httpx.AsyncClient`` on the shared I/O loop (:func:`~engines.llm.waiting.run_async`):
Esc cancels a request in flight (its connection is closed) within
:data:`~engines.llm.waiting.POLL_S`.

Bounds (issue 25): every response body is read through ``settings.llm_reply_max_bytes``
(:mod:`engines.llm.bounded`, the client's event hooks: error bodies and gzip too); a reply past it
fails the call with :class:`~engines.llm.bounded.ReplyTooLarge` naming this server and the setting,
and is not retried (a server that sends one will send it again).  ``settings.openai_timeout_s`` is
the overall deadline of one attempt -- connect, send and every read together, so a server that
trickles its reply a byte at a time is cut off at it too (not only one that goes silent); an attempt
past it is retried as a timeout, each with its own deadline, so a call takes at most
``(openai_max_retries + 1) * openai_timeout_s`` plus the backoff waits.  The deadline starts once
one of the ``openai_concurrency`` slots is free: waiting behind this run's own requests does not count.  At most ``settings.openai_concurrency`` requests are in flight
at once (an ``asyncio.Semaphore`` on that loop); per-row calls made from a pool of threads overlap
up to that bound.  Transient failures (408, 409, 429, 5xx, timeouts, connection errors) are retried
``settings.openai_max_retries`` times with exponential backoff that honours ``retry-after``; the
waits go through :func:`~engines.llm.waiting.pause`, so Esc interrupts them too.

Why httpx and not the ``openai`` package: httpx is already a dependency (the anthropic SDK is
built on it), and this backend needs one endpoint and one response field; the ``openai`` wheel
(2.4 MB, plus ``tqdm``) would add a second SDK whose retries must be switched off anyway (its
waits cannot be cancelled), and whose typed response models assume OpenAI's own server rather
than the compatible ones this backend is for.

The backend id (hence every cache key) holds the base URL and both model ids, and the prompt
version of the templates (:data:`engines.llm.claude.PROMPT_VERSION`, the same templates).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ValidationError

from engines.errors import ConfigurationError, LLMError, ReplyError
from engines.llm.bounded import ReplyTooLarge, async_hooks
from engines.llm.prompting import render_prompt, system_prompt
from engines.llm.protocol import Output, Usage
from engines.llm.replies import brief, excerpt, extract_json_object, speaking, whose
from engines.llm.task import I, O, Task
from engines.llm.waiting import io_loop, pause, run_async, slot
from engines.settings import Settings

__all__ = ["PROMPT_VERSION", "OpenAICompatBackend", "make_openai_backend", "reply_schema"]

log = logging.getLogger(__name__)
#: The templates are the claude backend's: their version is its version.
try:  # the claude module imports the anthropic SDK, a dependency; keep one source of truth
    from engines.llm.claude import PROMPT_VERSION
except ImportError:  # pragma: no cover - anthropic is a declared dependency
    PROMPT_VERSION = "p3"

Structured = Literal["json_schema", "json_object", "none"]
_LEVELS: tuple[Structured, ...] = ("json_schema", "json_object", "none")


def reply_model(task: Task[Any, Any]) -> type[BaseModel] | None:
    """The pydantic model of ``task``'s reply (the task's own ``reply_model``, defined with the task in
    the agent's package); ``None`` for a plain-text reply."""
    own = getattr(task, "reply_model", None)
    return own if isinstance(own, type) and issubclass(own, BaseModel) else None


def _strict(schema: Any) -> Any:
    """A pydantic JSON schema made strict (every object closed, every property required), as
    OpenAI's ``strict`` structured output and the local servers' grammars want it."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items() if k != "default"}  # strict schemas take no defaults
        if out.get("type") == "object" and "properties" in out:
            out["additionalProperties"] = False
            out["required"] = list(out["properties"])
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def reply_schema(task: Task[Any, Any]) -> dict[str, Any] | None:
    """The strict JSON schema of ``task``'s reply (``None`` for a text reply or an unknown task)."""
    model = reply_model(task)
    if model is None:
        return None
    own = getattr(task, "reply_schema", None)  # the task's schema, computed once per model
    schema = own() if callable(own) and getattr(task, "reply_model", None) is model else model.model_json_schema()
    strict: dict[str, Any] = _strict(schema)  # a dict made strict is a dict
    return strict


# --- the HTTP side ---------------------------------------------------------------------------------


_RETRYABLE = {408: "request timeout", 409: "conflict", 429: "rate limit reached"}


class _Deadline(Exception):
    """One attempt ran past the backend's overall deadline (raised inside the coroutine)."""


class _Status(Exception):
    """A non-2xx response (raised inside the coroutine, handled by the retry loop)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response

    @property
    def status(self) -> int:
        return self.response.status_code

    def detail(self) -> str:
        """The server's own explanation (``error.message`` of an OpenAI error body, or the text), shortened."""
        return brief(self._detail())

    def _detail(self) -> str:
        try:
            body = self.response.json()
        except ValueError:
            return excerpt(self.response.text or "")
        if isinstance(body, dict):
            inner = body.get("error")
            if isinstance(inner, dict) and isinstance(message := inner.get("message"), str):
                return message
            if isinstance(inner, str):
                return inner
            if isinstance(message := body.get("message"), str):
                return message
            if isinstance(detail := body.get("detail"), str):
                return detail
        return excerpt(self.response.text or "")


def _retry_after(response: httpx.Response) -> float | None:
    headers = response.headers
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        date = email.utils.parsedate_tz(raw)
        return None if date is None else max(email.utils.mktime_tz(date) - time.time(), 0.0)


def _retryable(status: int) -> bool:
    return status in _RETRYABLE or status >= 500


def _tokens(usage: dict[str, Any], *path: str) -> int | None:
    value: Any = usage
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(usage: Any) -> Usage:
    """``usage`` of a chat completion as a :class:`Usage` (cached prompt tokens too, when the
    Usage type records them)."""
    usage = usage if isinstance(usage, dict) else {}
    values: dict[str, Any] = {
        "input_tokens": _tokens(usage, "prompt_tokens"),
        "output_tokens": _tokens(usage, "completion_tokens"),
    }
    cached = _tokens(usage, "prompt_tokens_details", "cached_tokens")
    if "cached_input_tokens" in getattr(Usage, "__dataclass_fields__", {}):
        values["cached_input_tokens"] = cached
    return Usage(**values)


def _add(a: Usage, b: Usage) -> Usage:
    def plus(x: int | None, y: int | None) -> int | None:
        return None if x is None and y is None else (x or 0) + (y or 0)

    return Usage(
        **{name: plus(getattr(a, name), getattr(b, name)) for name in getattr(Usage, "__dataclass_fields__", {})}
    )


def read_completion(
    function: str, response: httpx.Response, who: str = "The model server"
) -> tuple[str, str | None, Usage]:
    """(text, finish reason, usage) of a 200 chat-completions response; a body that is not a
    completion is a :class:`ReplyError` naming ``who`` sent it and what was wrong."""
    shown = response.text if response.content else ""

    def bad(problem: str) -> ReplyError:
        tail = f": {excerpt(shown)}" if shown.strip() else "."
        return ReplyError(f"{who} returned a 200 to {function}() whose body {problem}{tail}")

    try:
        data = response.json()
    except (ValueError, RecursionError):
        raise bad("is not JSON") from None
    if not isinstance(data, dict):
        raise bad("is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad('has no "choices"')
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise bad('has a choice with no "message"')
    content = message.get("content")
    if content is None:
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            raise ReplyError(f"The model refused {function}(): {excerpt(refusal)}")
        content = ""
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        raise bad('has a "content" that is not text')
    finish = choices[0].get("finish_reason")
    return _THINKING.sub("", content, count=1), finish if isinstance(finish, str) else None, _usage(data.get("usage"))


#: A reasoning model's thinking at the start of its reply (Qwen3, DeepSeek-R1 on a local server):
#: not the reply.
_THINKING = re.compile(r"\A\s*<think>.*?</think>\s*", re.DOTALL)


REPAIR = (
    "Your reply could not be used: {error}\n"
    "Reply again with only the JSON object asked for, nothing before or after it."
)


class OpenAICompatBackend:
    """The :class:`~engines.llm.protocol.Backend` answered through an OpenAI-compatible server.

    ``transport`` is injectable (an ``httpx.AsyncBaseTransport``, for tests); ``sleep`` waits
    between retries (by default :func:`pause`, which a cancel interrupts).  Thread-safe: calls from
    many threads share the one client; the only mutable state is the structured-output level a
    server has been found to accept, under a lock.
    """

    name = "openai"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] = pause,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
    ) -> None:
        self.base_url: str = settings.openai_base_url.rstrip("/")
        self.planner_model: str = settings.openai_model
        self.row_model: str = settings.openai_row_model or settings.openai_model
        self.max_retries: int = settings.openai_max_retries
        self.timeout_s: float = settings.openai_timeout_s
        self.concurrency: int = settings.openai_concurrency
        self.reply_max_bytes: int = settings.llm_reply_max_bytes
        #: How errors name this backend (never "Claude": issue 25).
        self.server = f"The OpenAI-compatible server at {self.base_url}"
        self._level: Structured = settings.openai_structured
        self._level_lock = threading.Lock()
        self._sleep = sleep
        self._base_delay = base_delay
        self._max_delay = max_delay
        headers = {"content-type": "application/json"}
        if settings.openai_api_key is not None:
            headers["authorization"] = f"Bearer {settings.openai_api_key.get_secret_value()}"
        self._client = httpx.AsyncClient(
            base_url=self.base_url + "/",
            headers=headers,
            timeout=httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)),
            limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency),
            transport=transport,
            event_hooks=async_hooks(self.reply_max_bytes, self.server),  # every body read through the cap
        )
        self._gates: dict[int, asyncio.Semaphore] = {}
        self._system = system_prompt()

    @property
    def model(self) -> str:
        """Both model ids and the server: part of the backend id, hence of every cache key."""
        return f"{self.planner_model},row={self.row_model}@{self.base_url}"

    @property
    def structured(self) -> Structured:
        """The structured-output level in use (lowered when the server refused a higher one)."""
        with self._level_lock:
            return self._level

    def model_for(self, task: Task[Any, Any]) -> str:
        return self.row_model if task.role == "row" else self.planner_model

    def speaker(self, task: Task[Any, Any]) -> str:
        """Who wrote a reply to ``task``, as the reply errors name it (:func:`engines.llm.replies.whose`)."""
        return f"The OpenAI-compatible model {self.model_for(task)}"

    def __repr__(self) -> str:
        return f"OpenAICompatBackend(model={self.model!r}, structured={self.structured!r})"

    def close(self) -> None:
        run_async(self._client.aclose())

    # -- any task --------------------------------------------------------------------------------

    def run(self, task: Task[I, O], input: I) -> Output[O]:
        prompt = _plain_prompt(render_prompt(task.template, package=task.package, **task.context(input)))
        messages: list[dict[str, str]] = [
            {"role": "system", "content": self._system},
            {"role": "user", "content": prompt},
        ]
        model = reply_model(task)
        json_reply = model is not None
        text, usage = self._complete(task, messages, json_reply)
        try:
            with speaking(self.speaker(task)):
                return Output(self._read(task, input, model, text), usage, self.model_for(task))
        except ReplyError as first:
            log.info("openai %s(): the reply does not validate (%s); asking once more", task.name, first)
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": REPAIR.format(error=_plain(first))},
            ]
            text, more = self._complete(task, messages, json_reply)
            usage = _add(usage, more)
            try:
                with speaking(self.speaker(task)):
                    return Output(self._read(task, input, model, text), usage, self.model_for(task))
            except ReplyError as second:
                raise ReplyError(f"{second} (after one repair retry; the first reply: {_plain(first)})") from second

    def _read(self, task: Task[I, O], input: I, model: type[BaseModel] | None, text: str) -> O:
        if not text.strip():
            raise ReplyError(f"{whose(task.name)} is empty.")
        if model is not None:
            obj = extract_json_object(text, task.name)
            try:
                model.model_validate(obj)
            except ValidationError as e:
                problems = "; ".join(
                    f"{'.'.join(map(str, err['loc'])) or 'reply'}: {err['msg']}" for err in e.errors()[:3]
                )
                raise ReplyError(
                    f"{whose(task.name)} does not match its schema ({problems}): {excerpt(text)}"
                ) from None
        return task.read(text, input)

    # -- the request -------------------------------------------------------------------------------

    def _body(
        self, task: Task[Any, Any], messages: list[dict[str, str]], level: Structured, json_reply: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_for(task),
            "messages": messages,
            "max_tokens": task.max_tokens,
            "stream": False,
        }
        if not json_reply or level == "none":
            return body
        schema = reply_schema(task)
        if level == "json_schema" and schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": f"{task.name}_reply", "schema": schema, "strict": True},
            }
        else:
            body["response_format"] = {"type": "json_object"}
        return body

    def _gate(self) -> asyncio.Semaphore:
        # Only ever called on the I/O loop's thread: a semaphore belongs to its loop (a forked
        # child starts another loop, hence the key).
        loop = asyncio.get_running_loop()
        gate = self._gates.get(id(loop))
        if gate is None:
            gate = self._gates[id(loop)] = asyncio.Semaphore(self.concurrency)
        return gate

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        """One request, within the overall deadline once it has a slot; its body read through the cap."""
        async with slot(self._gate()):
            try:
                async with asyncio.timeout(self.timeout_s):
                    response = await self._client.post("chat/completions", content=json.dumps(body, ensure_ascii=False))
            except TimeoutError:
                raise _Deadline() from None
        if response.status_code >= 300:
            raise _Status(response)
        return response

    def _complete(self, task: Task[Any, Any], messages: list[dict[str, str]], json_reply: bool) -> tuple[str, Usage]:
        """One completion (retries, the structured-output fallback); its text and usage."""
        function = task.name
        level = self.structured
        attempts = self.max_retries + 1
        attempt = 1
        while True:
            body = self._body(task, messages, level, json_reply)
            try:
                response = run_async(self._post(body))
            except ReplyTooLarge as error:  # not transient: the same request would get the same reply
                raise error.to(function) from None
            except _Status as error:
                status = error.status
                if status == 400 and "response_format" in body:
                    # the server may not take this response_format: ask again with the next one
                    # down; when it was the level in use, remember that for the rest of the run
                    sent: Structured = body["response_format"]["type"]
                    lower = _LEVELS[_LEVELS.index(sent) + 1]
                    log.warning(
                        "openai: the server refused response_format %s (%s); using %s", sent, error.detail(), lower
                    )
                    if sent == level:
                        with self._level_lock:
                            if _LEVELS.index(self._level) < _LEVELS.index(lower):
                                self._level = lower
                    level = lower
                    continue  # not a retry: another request shape
                if not _retryable(status):
                    raise self._refusal(error, task) from None
                if attempt >= attempts:
                    raise LLMError(
                        f"The model server at {self.base_url} answered {status} "
                        f"({_RETRYABLE.get(status, 'server error')}) after {attempts} attempt"
                        f"{'s' if attempts != 1 else ''}: {error.detail()}"
                    ) from None
                delay = self._delay(attempt, _retry_after(error.response))
            except (httpx.TimeoutException, _Deadline) as error:
                if attempt >= attempts:
                    raise LLMError(
                        f"{self.server} did not finish its reply to {function}() within "
                        f"{self.timeout_s:g}s ({attempts} attempt{'s' if attempts != 1 else ''}; "
                        f"CS224V_OPENAI_TIMEOUT_S is the deadline of each)."
                    ) from error
                delay = self._delay(attempt)
            except httpx.TransportError as error:
                if attempt >= attempts:
                    raise LLMError(
                        f"Could not reach the model server at {self.base_url}: {error or type(error).__name__} "
                        f"(is it running? Ollama: `ollama serve`; set CS224V_OPENAI_BASE_URL or --base-url)"
                    ) from error
                delay = self._delay(attempt)
            else:
                text, finish, usage = read_completion(function, response, self.server)
                if finish == "length":
                    log.warning("openai %s(): the reply was cut off at %d tokens", function, task.max_tokens)
                return text, usage
            log.info("openai %s(): attempt %d failed, retrying in %.1fs", function, attempt, delay)
            self._sleep(delay)
            attempt += 1

    def _delay(self, attempt: int, retry_after: float | None = None) -> float:
        delay = self._base_delay * 2.0 ** (attempt - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self._max_delay)

    def _refusal(self, error: _Status, task: Task[Any, Any]) -> LLMError:
        status, detail = error.status, error.detail()
        where = f"The model server at {self.base_url}"
        if status in (401, 403):
            return LLMError(
                f"{where} refused the key ({status}): {detail} (set OPENAI_API_KEY or CS224V_OPENAI_API_KEY)"
            )
        if status == 404:
            return LLMError(
                f"{where} found no such model or endpoint (404): {detail} (is the model "
                f"{self.model_for(task)!r} pulled, e.g. `ollama pull {self.model_for(task)}`, and does the "
                f"base URL end in /v1?)"
            )
        if status == 413:
            return ReplyError(f"{where} refused the request as too large (413): {detail}")
        if status == 400:
            return ReplyError(f"{where} rejected the {task.name}() request (400): {detail}")
        return LLMError(f"{where} answered with HTTP status {status}: {detail}")


def _plain_prompt(text: str) -> str:
    """The prompt without the prompt-caching mark of the claude backend, if the templates carry one
    (an OpenAI-compatible server caches a shared prefix by itself, when it does)."""
    from engines.llm import prompting

    mark = getattr(prompting, "CACHE_BREAK", None)
    return text.replace(mark, "") if isinstance(mark, str) and mark else text


def _plain(error: Exception) -> str:
    return " ".join(str(error).split())


def make_openai_backend(
    settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None, sleep: Callable[[float], None] = pause
) -> OpenAICompatBackend:
    """The openai backend for ``settings`` (no key needed: local servers take none)."""
    if not settings.openai_model.strip():
        raise ConfigurationError("The openai backend needs a model: set CS224V_OPENAI_MODEL or --model.")
    io_loop()  # start the I/O loop before the first request
    return OpenAICompatBackend(settings, transport=transport, sleep=sleep)
