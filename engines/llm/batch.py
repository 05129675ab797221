"""``--batch``: a long headless run's Claude calls sent through the Message Batches API (half price).

Headless runs make their calls one after another, each waiting for its reply, while a batch is
answered within hours.  So a batched run is *two-phase, in rounds*:

1. **collect** -- the run is made once with every Claude call that is not already answered
   *queued* instead of sent: the call raises :class:`Deferred` (an unusable reply), so a task with a
   fallback (``answer()`` -> Unknown, ``summary()``) goes on and a task without one fails its own
   item (a question, a query), and the run moves on to the next.  Every queued request is the exact
   Messages API request the direct call would send (``ClaudeBackend.request``).
2. The queued requests are submitted as one message batch (several when there are more than
   :data:`MAX_PER_BATCH`), polled every ``settings.batch_poll_s`` seconds with progress shown, and
   their results stored (:class:`BatchStore`, ``batches.sqlite3`` in the cache folder) under the
   SHA-256 of the request.
3. The run is made again.  Calls whose request has a result are answered from it; calls that
   depend on earlier replies (the short answer after a parse, the next SPINACH step after a policy
   step, a second parse after one that returned nothing) are new requests, queued for the next
   round.  Rounds go on until one queues nothing new, at most ``settings.batch_rounds``.
4. The last run -- the one whose output is printed -- answers every call from the results, and
   sends the few it still lacks (past the round cap) directly, at full price, saying how many.

Resuming: the batch id is stored the moment a batch is created, before any wait.  A run that is
interrupted (Ctrl-C, a closed laptop) and started again first collects the batches it left
behind, then goes on: requests already answered are not sent again.

What can be batched: every call of a claude-backend run.  What cannot be batched in one round:
a call whose *input* depends on another call's reply -- each such step of a chain costs one round
(HybridQA: parse, then short answer: 2 rounds; a retry after an empty result: 3; SPINACH: one
round per policy step, so a 15-step agent needs more rounds than the default cap and its tail is
sent directly).  A run whose control flow depends on replies (SUQL's LIMIT stopping once enough
rows are Yes) may queue more calls in the collect round than the final run uses: they are paid
(at half price) and kept in the store and the answer cache.

Bounds (issue 25): the results download is read line by line, never whole: a line (one request's
result) longer than ``settings.llm_reply_max_bytes``, more lines than the batch has requests, or a
download that takes longer than ``settings.claude_timeout_s`` per started 1,000 requests stops it
with an error that says so.  The results read so far are stored as they come (in the SQLite store:
nothing read is lost), and the batch stays pending, so running the command again resumes it.  The
client this module builds reads every other body (a batch object) through the same cap.

The engines know nothing of this: :func:`wrap` (called by ``backend_from_settings`` for the
claude backend) wraps the backend while a :class:`BatchRun` is active.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from engines.errors import ConfigurationError, LLMError, ReplyError
from engines.llm.bounded import ReplyTooLarge, reply_limit, sync_hooks
from engines.llm.protocol import NO_USAGE, Backend, Output
from engines.llm.replies import brief, excerpt, speaking
from engines.llm.task import I, O, Task
from engines.llm.waiting import pause

if TYPE_CHECKING:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    from engines.llm.cache import AnswerStore
from engines.settings import Settings

__all__ = ["MAX_PER_BATCH", "BatchRun", "BatchStore", "Deferred", "active", "request_key", "wrap"]

log = logging.getLogger(__name__)

T = TypeVar("T")
#: Requests per message batch (the API takes up to 100,000 or 256 MB; smaller batches finish sooner).
MAX_PER_BATCH = 10_000
FILENAME = "batches.sqlite3"
#: Requests whose results download gets one ``claude_timeout_s`` (a download of N requests gets
#: ``ceil(N / RESULTS_PER_TIMEOUT)`` of them).
RESULTS_PER_TIMEOUT = 1_000
#: Results stored at once while a download goes on.
STORE_EVERY = 500
BATCHES_API = "The Message Batches API"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (id TEXT PRIMARY KEY, created_at REAL NOT NULL, requests INTEGER NOT NULL,
                                    collected INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, result TEXT NOT NULL, created_at REAL NOT NULL);
"""


class Deferred(ReplyError):
    """The call is queued for the next message batch: no reply yet (its task's fallback stands in)."""


def request_key(params: dict[str, Any]) -> str:
    """The SHA-256 (hex, 64 characters: a valid ``custom_id``) of a Messages API request."""
    canonical = json.dumps(params, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class BatchStore:
    """The batches submitted and the results collected, in one SQLite file of the cache folder."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / FILENAME
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0)
        with self._conn:
            self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def result(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put_results(self, results: dict[str, dict[str, Any]]) -> None:
        now = time.time()
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?)",
                [(k, json.dumps(v, ensure_ascii=False), now) for k, v in results.items()],
            )

    def add_batch(self, batch_id: str, requests: int) -> None:
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO batches (id, created_at, requests) VALUES (?, ?, ?)",
                (batch_id, time.time(), requests),
            )

    def collected(self, batch_id: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("UPDATE batches SET collected = 1 WHERE id = ?", (batch_id,))

    def pending(self) -> list[tuple[str, int]]:
        """The batches submitted whose results were not collected yet (oldest first)."""
        with self._lock:
            return [
                (r[0], r[1])
                for r in self._conn.execute("SELECT id, requests FROM batches WHERE collected = 0 ORDER BY created_at")
            ]


class BatchingBackend:
    """A claude backend whose calls are answered from batch results, or queued for the next batch."""

    def __init__(self, inner: Backend, run: BatchRun) -> None:
        self.inner = inner
        self._run = run
        # the same identity as the backend it wraps: a batched answer is cached as a direct one
        self.name = inner.name
        self.model = inner.model
        self.prompt_version = inner.prompt_version

    def __getattr__(self, name: str) -> Any:  # model_for, close, ...
        return getattr(self.inner, name)

    def params(self, task: Task[Any, Any], input: Any) -> dict[str, Any]:
        """The Messages API request the direct call would send."""
        inner = self.inner
        if hasattr(inner, "request") and hasattr(inner, "content"):
            from engines.llm.prompting import render_parts

            prefix, rest = render_parts(task.template, package=task.package, **task.context(input))
            params: dict[str, Any] = inner.request(task, inner.content(task, prefix, rest))
            return params
        from engines.llm.prompting import render_prompt, system_prompt

        prompt = render_prompt(task.template, package=task.package, **task.context(input))
        return {
            "model": self.model_for(task),  # the inner backend's (see __getattr__)
            "max_tokens": task.max_tokens,
            "system": system_prompt(),
            "messages": [{"role": "user", "content": prompt}],
        }

    def run(self, task: Task[I, O], input: I) -> Output[O]:
        params = self.params(task, input)
        key = request_key(params)
        found = self._run.store.result(key)
        if found is not None:
            out = self._answer(task, input, found)
            # a collect round's output is not shown: its usage is the final run's, once
            return dataclasses.replace(out, usage=NO_USAGE) if self._run.collecting else out
        if self._run.collecting:
            self._run.want(key, params)
            raise Deferred(f"{task.name}() is queued for the message batch")
        self._run.count_direct()
        return self.inner.run(task, input)

    def _answer(self, task: Task[I, O], input: I, found: dict[str, Any]) -> Output[O]:
        if found.get("type") != "succeeded":
            error = found.get("error") or {}
            raise ReplyError(
                f"The batch request of {task.name}() failed: {error.get('message') or error or found.get('type')}"
            )
        import httpx

        from engines.llm.claude import read_message

        reply = read_message(task.name, httpx.Response(200, json=found["message"]))
        if not reply.text.strip():
            raise ReplyError(f"Claude's batched {task.name}() reply has no text (stop reason: {reply.stop_reason}).")
        with speaking("Claude"):
            value = task.read(reply.text, input)
        model: str = reply.model or self.model_for(task)  # the inner backend's model_for (see __getattr__)
        return Output(value, reply.usage, model, batch=True)


class BatchRun:
    """One ``--batch`` run: the rounds, the batches, the store.  See the module docstring.

    ``client`` is a sync ``anthropic.Anthropic`` (tests point one at a stub); by default one is
    built from the settings (``ANTHROPIC_BASE_URL`` is the SDK's).  ``progress`` gets one line per
    poll; ``sleep`` waits between polls (a cancel interrupts :func:`pause`).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        client: Any | None = None,
        store: BatchStore | None = None,
        progress: Callable[[str], None] = lambda _line: None,
        sleep: Callable[[float], None] = pause,
    ) -> None:
        if settings.backend != "claude":
            raise ConfigurationError(
                f"--batch sends the calls through Anthropic's Message Batches API: it needs "
                f"--backend claude, not {settings.backend}."
            )
        if client is None:
            import anthropic

            if settings.anthropic_api_key is None:
                from engines.llm.claude import NO_KEY_MESSAGE

                raise ConfigurationError(NO_KEY_MESSAGE)
            client = anthropic.Anthropic(
                api_key=settings.anthropic_api_key.get_secret_value(),
                max_retries=settings.claude_max_retries,
                timeout=settings.claude_timeout_s,
                http_client=anthropic.DefaultHttpxClient(
                    event_hooks=sync_hooks(settings.llm_reply_max_bytes, BATCHES_API)
                ),
            )
        self.client = client
        self.line_max_bytes = settings.llm_reply_max_bytes
        self.timeout_s = settings.claude_timeout_s
        self.store = store if store is not None else BatchStore(settings.cache_dir)
        self.poll_s = settings.batch_poll_s
        self.rounds = settings.batch_rounds
        self.progress = progress
        self.sleep = sleep
        self.collecting = False
        self.direct = 0
        self.submitted: list[str] = []  # the batch ids of this run, in order
        self._wanted: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # -- what the wrapped backends report ---------------------------------------------------------

    def want(self, key: str, params: dict[str, Any]) -> None:
        with self._lock:
            self._wanted.setdefault(key, params)

    def count_direct(self) -> None:
        with self._lock:
            self.direct += 1

    # -- the rounds -------------------------------------------------------------------------------

    def run(
        self,
        work: Callable[[], T],
        *,
        before_round: Callable[[], None] = lambda: None,
        quiet: Callable[[], Any] | None = None,
    ) -> T:
        """Run ``work`` in collect rounds (each inside ``quiet()``, a context manager that hides its
        output), batch what they queue, and return the result of the last, answered, run."""
        with _activated(self):
            for pending, count in self.store.pending():
                self.progress(f"resuming message batch {pending} ({count:,} requests)")
                self._wait_and_collect(pending, count)
            for round_no in range(1, self.rounds + 1):
                with self._lock:
                    self._wanted = {}
                self.collecting = True
                before_round()
                try:
                    with quiet() if quiet is not None else _nothing():
                        try:
                            work()
                        except (LLMError, ReplyError) as e:  # an item without a fallback ended the run early
                            log.info("batch round %d: the run stopped early: %s", round_no, e)
                finally:
                    self.collecting = False
                with self._lock:
                    wanted = [(k, p) for k, p in self._wanted.items() if self.store.result(k) is None]
                if not wanted:
                    break
                self.progress(f"round {round_no}: {len(wanted):,} request{'s' if len(wanted) != 1 else ''} to batch")
                for start in range(0, len(wanted), MAX_PER_BATCH):
                    chunk = wanted[start : start + MAX_PER_BATCH]
                    batch_id = self._submit(chunk)
                    self._wait_and_collect(batch_id, len(chunk))
            before_round()
            result = work()
        if self.direct:
            self.progress(
                f"{self.direct:,} call{'s' if self.direct != 1 else ''} past the last batch round "
                f"(CS224V_BATCH_ROUNDS={self.rounds}) went directly, at the full price"
            )
        return result

    def _submit(self, chunk: list[tuple[str, dict[str, Any]]]) -> str:
        import anthropic

        try:
            batch = self.client.messages.batches.create(
                # our request dicts, built by ClaudeBackend.request: the SDK names their shape as a TypedDict
                requests=[
                    {"custom_id": key, "params": cast("MessageCreateParamsNonStreaming", params)}
                    for key, params in chunk
                ]
            )
        except anthropic.APIStatusError as e:
            raise LLMError(f"The Message Batches API refused the batch ({e.status_code}): {_message(e)}") from e
        except anthropic.AnthropicError as e:
            raise LLMError(f"Could not submit the message batch: {e}") from e
        self.store.add_batch(batch.id, len(chunk))  # saved first: a restart resumes from it
        self.submitted.append(batch.id)
        self.progress(f"submitted message batch {batch.id} ({len(chunk):,} requests; saved in {self.store.path})")
        return batch.id

    def _wait_and_collect(self, batch_id: str, count: int) -> None:
        import anthropic

        from engines.llm.claude import HTTP

        started = time.monotonic()
        try:
            while True:
                batch = self.client.messages.batches.retrieve(batch_id)
                c = batch.request_counts
                done = c.succeeded + c.errored + c.canceled + c.expired
                self.progress(
                    f"message batch {batch_id}: {batch.processing_status}, {done:,}/{count:,} done "
                    f"({c.succeeded:,} succeeded, {c.errored:,} errored), {time.monotonic() - started:.0f} s"
                )
                if batch.processing_status == "ended":
                    break
                self.sleep(self.poll_s)
            self._download(batch_id, count)
        except anthropic.NotFoundError:
            log.warning("message batch %s is gone (expired or deleted): its requests are asked again", batch_id)
            self.store.collected(batch_id)
            return
        except anthropic.APIStatusError as e:
            raise LLMError(
                f"The Message Batches API refused to report on batch {batch_id} ({e.status_code}): "
                f"{_message(e)}; run the command again to resume it"
            ) from e
        except (anthropic.AnthropicError, HTTP.RequestError) as e:  # the results body raises the latter
            cause = e.__cause__ if isinstance(e.__cause__, LLMError) else e  # a body past the cap, read by the SDK
            raise LLMError(
                f"Lost the Message Batches API while waiting for batch {batch_id}: {cause or type(cause).__name__}; "
                f"run the command again to resume it"
            ) from e
        self.store.collected(batch_id)

    def _download(self, batch_id: str, count: int) -> None:
        """The results of ``batch_id`` (``count`` requests), stored as they arrive; bounded (see the module)."""
        windows = max(1, -(-count // RESULTS_PER_TIMEOUT))
        seconds = self.timeout_s * windows
        deadline = time.monotonic() + seconds
        cap = self.line_max_bytes
        where = f"the results of message batch {batch_id}"
        results: dict[str, dict[str, Any]] = {}
        lines = 0
        try:
            # the hooks' cap for this one body (a bound client): every line at its cap, and their newlines
            with reply_limit(max(cap, (cap + 2) * count)):
                with self.client.messages.batches.with_streaming_response.results(batch_id) as response:
                    for line in _lines(response.iter_bytes(), cap, deadline, where):
                        if not line.strip():
                            continue
                        lines += 1
                        if lines > count:
                            raise LLMError(
                                f"{BATCHES_API} sent more result lines for {where} than its {count:,} requests; "
                                f"run the command again to resume it"
                            )
                        custom_id, kept = _entry(line, where)
                        if kept is not None:
                            results[custom_id] = kept
                        if len(results) >= STORE_EVERY:
                            self.store.put_results(results)
                            results = {}
        except _Late:
            raise LLMError(
                f"{BATCHES_API} did not finish sending {where} within {seconds:g}s (CS224V_CLAUDE_TIMEOUT_S "
                f"per {RESULTS_PER_TIMEOUT:,} requests, {count:,} here); the results read are kept: "
                f"run the command again to resume it"
            ) from None
        finally:
            self.store.put_results(results)  # what was read is kept, whatever stopped the download


class _Late(Exception):
    """A results download past its deadline."""


def _lines(chunks: Iterator[bytes], cap: int, deadline: float, where: str) -> Iterator[bytes]:
    """The lines of a JSON Lines body arriving in ``chunks``: each at most ``cap`` bytes (else
    :class:`ReplyTooLarge`, reading stopped there); :class:`_Late` once ``deadline`` has passed."""
    line = bytearray()
    for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            line += chunk[start:] if end < 0 else chunk[start:end]
            if len(line) > cap:
                raise ReplyTooLarge(BATCHES_API, cap, len(line), what=f"a line of {where}")
            if end < 0:
                break
            yield bytes(line)
            line.clear()
            start = end + 1
        if time.monotonic() > deadline:
            raise _Late()
    if line:
        yield bytes(line)


def _entry(line: bytes, where: str) -> tuple[str, dict[str, Any] | None]:
    """(custom id, what is stored of it) of one results line."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        raise LLMError(
            f"{BATCHES_API} sent a line of {where} that is not JSON: {excerpt(line.decode('utf-8', 'replace'))}"
        ) from None
    if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
        raise LLMError(
            f"{BATCHES_API} sent a line of {where} that is not a result: {excerpt(line.decode('utf-8', 'replace'))}"
        )
    result = entry.get("result")
    return entry["custom_id"], _kept(result if isinstance(result, dict) else {})


def _kept(result: dict[str, Any]) -> dict[str, Any] | None:
    """What of one batch result (as sent) is stored: a reply, or an error that asking again would repeat
    (an invalid request); expired, canceled and transient errors are not kept, so they are asked again."""
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return {"type": "succeeded", "message": result["message"]}
    if kind == "errored":
        outer = result.get("error")
        error = outer.get("error") if isinstance(outer, dict) else None
        if isinstance(error, dict) and error.get("type") == "invalid_request_error":
            return {"type": "errored", "error": {"type": error["type"], "message": error.get("message") or ""}}
    return None


def _message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return brief(str(body["error"].get("message", "")))
    return brief(str(error))


@contextmanager
def _nothing() -> Iterator[None]:
    yield


# --- the hook ---------------------------------------------------------------------------------

_active: BatchRun | None = None
_active_lock = threading.Lock()


@contextmanager
def _activated(run: BatchRun) -> Iterator[None]:
    global _active
    with _active_lock:
        if _active is not None:
            raise ConfigurationError("a --batch run is already going on in this process")
        _active = run
    try:
        yield
    finally:
        with _active_lock:
            _active = None


def active() -> BatchRun | None:
    return _active


def wrap(backend: Backend) -> Backend:
    """``backend`` wrapped for the active batch run (itself when there is none)."""
    run = _active
    return backend if run is None else BatchingBackend(backend, run)


class _BatchCache:
    """The answer cache of a batched run: read as always, written only by the final run.

    A collect round's answers are served from batch results and reported without usage; the final
    run serves them again from the results, with their usage (at the batch price), and stores them.
    So the usage of the final run -- the one whose output is printed -- is every call it relied on.
    """

    def __init__(self, cache: AnswerStore, run: BatchRun) -> None:
        self._cache = cache
        self._run = run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def get(self, function: str, text: str, question: str, backend: str) -> dict[str, Any] | None:
        return self._cache.get(function, text, question, backend)

    def put(self, function: str, text: str, question: str, backend: str, payload: dict[str, Any]) -> None:
        if not self._run.collecting:
            self._cache.put(function, text, question, backend, payload)


def wrap_cache(cache: AnswerStore | None) -> AnswerStore | None:
    """The answer cache for the active batch run (itself when there is none, or no cache)."""
    run = _active
    return cache if run is None or cache is None else _BatchCache(cache, run)
